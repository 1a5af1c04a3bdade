"""The project's own optimal search: breadth-first, then A* past a state limit.

Breadth-first search over the reachable state space gives optimal plan lengths
and, when it exhausts the space, a proof of unsolvability (the closed set is the
certificate). Past `max_states` it gives up and A* with an admissible heuristic
(LM-cut, `heuristics.py`) takes over; A* minimises cost, which is length on unit-cost
tasks. Breadth-first search detects duplicates on generation; A* reopens a
state when it finds a cheaper path, so an inconsistent heuristic is safe.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from planaudit.formal import number
from planaudit.formal.ground import Task
from planaudit.formal.number import Number
from planaudit.formal.task import Operator, State, atom_indices


@dataclass
class SearchResult:
    status: str  # "solved", "unsolvable" or "limit"
    method: str
    plan: list[Operator] | None = None
    cost: Number | None = None  # exact (`number.py`)
    expanded: int = 0
    generated: int = 0  # distinct states seen
    seconds: float = 0.0
    closed: set | None = field(default=None, repr=False)  # every reachable state, on exhaustion
    # A* on exhaustion: `closed` holds the states it expanded, `dead_ends` those it pruned
    # because the heuristic is infinite there (the unsolvability certificate's two parts)
    dead_ends: set | None = field(default=None, repr=False)

    @property
    def length(self) -> int | None:
        return None if self.plan is None else len(self.plan)


def unit_cost(task: Task, ops: list[Operator]) -> bool:
    """Whether every operator costs exactly 1 (or the task has no costs at all)."""
    if not task.has_cost:
        return True
    return all(op.constant_cost == 1 for op in ops)  # conditional costs vary: not unit


def _extract(parent: dict, state, ops: list[Operator]) -> list[Operator]:
    plan = []
    while True:
        entry = parent[state]
        if entry is None:
            break
        state, i = entry
        plan.append(ops[i])
    plan.reverse()
    return plan


Progress = Callable[[str], None]


def quiet(_msg: str) -> None:
    pass


def breadth_first(task: Task, max_states: int = 2_000_000,
                  progress: Progress = quiet) -> SearchResult:
    """Optimal-length plan, or exhaustive proof of unsolvability, within `max_states`.

    `progress` hears about each finished layer (depth and states so far)."""
    start = time.perf_counter()
    ops = task.all_operators()
    if not task.init[1] and all(op.simple for op in ops):
        result = _bfs_bits(task, ops, max_states, progress)
    else:
        result = _bfs_general(task, ops, max_states, progress)
    result.seconds = time.perf_counter() - start
    if result.plan is not None:
        result.cost = plan_cost(task, result.plan)
    return result


def successor_index(ops: list[Operator]) -> tuple[int, list[list[tuple]], list[tuple]]:
    """Operators grouped under one key precondition atom each.

    The key is the operator's positive precondition shared by the fewest other
    operators (in Blocksworld, `(on a b)` for `unstack a b`), so that a state
    only looks at the groups of atoms it makes true. Returns the mask of key
    atoms, the groups (indexed by atom) and the operators without positive
    preconditions (looked at in every state). Each entry is
    (pre_pos, pre_neg, keep_mask, add_mask, operator index).
    """
    uses: dict[int, int] = {}
    pres = []
    for op in ops:
        bits = atom_indices(op.pre_pos)
        pres.append(bits)
        for a in bits:
            uses[a] = uses.get(a, 0) + 1
    n = max(uses, default=-1) + 1
    groups: list[list[tuple]] = [[] for _ in range(n)]
    always: list[tuple] = []
    keys = 0
    for i, (op, bits) in enumerate(zip(ops, pres, strict=True)):
        entry = (op.pre_pos, op.pre_neg, ~op.delete, op.add, i)
        if not bits:
            always.append(entry)
            continue
        key = min(bits, key=lambda a: (uses[a], a))
        groups[key].append(entry)
        keys |= 1 << key
    return keys, groups, always


def _bfs_bits(task: Task, ops: list[Operator], max_states: int,
              progress: Progress) -> SearchResult:
    """STRIPS fast path: a state is one int; an operator is four masks."""
    keys, groups, always = successor_index(ops)
    gp, gn = task.goal_pos, task.goal_neg
    rest = task.goal_rest
    nums = task.init[1]

    def is_goal(s: int) -> bool:
        return s & gp == gp and not s & gn and (rest is None or task.goal_holds((s, nums)))

    init = task.init[0]
    parent: dict[int, tuple[int, int] | None] = {init: None}
    if is_goal(init):
        return SearchResult("solved", "bfs", [], expanded=0, generated=1)
    layer = [init]
    expanded = depth = 0
    while layer:
        nxt = []
        for s in layer:
            expanded += 1
            m = s & keys
            candidates = always
            while True:
                for pp, pn, keep, add, i in candidates:
                    if s & pp == pp and not s & pn:
                        t = (s & keep) | add
                        if t not in parent:
                            parent[t] = (s, i)
                            if is_goal(t):
                                plan = _extract(parent, t, ops)
                                return SearchResult("solved", "bfs", plan, expanded=expanded,
                                                    generated=len(parent))
                            nxt.append(t)
                if not m:
                    break
                low = m & -m
                m ^= low
                candidates = groups[low.bit_length() - 1]
            if len(parent) > max_states:
                return SearchResult("limit", "bfs", expanded=expanded, generated=len(parent))
        layer = nxt
        depth += 1
        progress(f"breadth-first: depth {depth} done, {len(parent)} states")
    closed = {(s, nums) for s in parent}
    return SearchResult("unsolvable", "bfs", expanded=expanded, generated=len(parent),
                        closed=closed)


def _bfs_general(task: Task, ops: list[Operator], max_states: int,
                 progress: Progress) -> SearchResult:
    """Any supported PDDL: numeric fluents, disjunctions, conditional effects."""
    init = task.init
    parent: dict[State, tuple[State, int] | None] = {init: None}
    if task.goal_holds(init):
        return SearchResult("solved", "bfs", [], expanded=0, generated=1)
    keys, groups, always = successor_index(ops)
    simple = _mask_applied(ops)
    layer = [init]
    expanded = depth = 0
    while layer:
        nxt = []
        for s in layer:
            expanded += 1
            # in operator order, as trying every operator would: the same plan and count
            for i, t in sorted(_successors(s, ops, simple, keys, groups, always)):
                if t not in parent:
                    parent[t] = (s, i)
                    if task.goal_holds(t):
                        plan = _extract(parent, t, ops)
                        return SearchResult("solved", "bfs", plan, expanded=expanded,
                                            generated=len(parent))
                    nxt.append(t)
            if len(parent) > max_states:
                return SearchResult("limit", "bfs", expanded=expanded, generated=len(parent))
        layer = nxt
        depth += 1
        progress(f"breadth-first: depth {depth} done, {len(parent)} states")
    return SearchResult("unsolvable", "bfs", expanded=expanded, generated=len(parent),
                        closed=set(parent))


def plan_cost(task: Task, plan: list[Operator]) -> Number:
    """The exact cost of a plan as the validator counts it (its length without costs)."""
    if not task.has_cost:
        return len(plan)
    state, cost = task.init, 0
    for op in plan:
        cost += op.step_cost(state)
        state = op.apply(state)
    return cost


class Estimator(Protocol):
    """A heuristic A* can hand a state's findings down to its successors."""

    def estimate(self, state: State, parent: Any, op: int) -> tuple[float, Any]:
        """h(state) and a memo, given the memo of the parent it was reached from by
        operator index `op` (None, -1 at the root)."""
        ...

    def bound(self, memo: Any, op: int, step: float, state: State) -> float:
        """A cheap lower bound on h of `state`, the successor by `op`, from the parent's memo."""
        ...


class Plain:
    """A plain function state -> h as an `Estimator`: its memo is h itself."""

    def __init__(self, h: Callable[[State], float]):
        self.h = h

    def estimate(self, state: State, parent: Any, op: int) -> tuple[float, float]:
        h = self.h(state)
        return h, h

    def bound(self, memo: float, op: int, step: float, state: State) -> float:
        return max(0, memo - step)  # h(parent) <= step + h*(child)


def astar(task: Task, heuristic: Callable[[State], float] | Estimator, name: str,
          max_states: int = 5_000_000, max_seconds: float | None = None,
          progress: Progress = quiet) -> SearchResult:
    """A* on cost (length when unit); optimal for an admissible heuristic.

    The heuristic is evaluated lazily, when a state is first popped: until then
    its key is g plus the bound its parent gives (`Estimator.bound`). A state
    whose true f exceeds its key goes back on the heap. Ties go to the deeper
    state. Step costs are evaluated in the state the action is applied in.

    `max_seconds` counts this process's CPU time, not the clock: on a shared
    machine a busy neighbour must not turn a proof into a timeout.
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    est = heuristic if hasattr(heuristic, "estimate") else Plain(heuristic)
    ops = task.all_operators()
    unit = unit_cost(task, ops)
    init = task.init
    parent: dict[State, tuple[State, int] | None] = {init: None}
    g: dict[State, Number] = {init: 0}  # exact costs: a float sum could miss the optimum
    hval: dict[State, Number | float] = {}
    memo: dict[State, Any] = {}
    heap = [(0, 0, 0, init)]
    counter = 0
    expanded = 0
    inf = float("inf")
    last_report = start
    keys, groups, always = successor_index(ops)
    simple = _mask_applied(ops)
    while heap:
        f, neg_g, _, s = heapq.heappop(heap)
        gs = -neg_g
        if gs > g[s]:
            continue  # a stale entry: s was reached more cheaply since
        h = hval.get(s)
        if h is None:
            via = parent[s]
            h, memo[s] = (est.estimate(s, None, -1) if via is None
                          else est.estimate(s, memo[via[0]], via[1]))
            hval[s] = h
            if h == inf:
                continue  # a dead end
            if gs + h > f:
                counter += 1
                heapq.heappush(heap, (gs + h, neg_g, counter, s))
                continue
        if task.goal_holds(s):
            plan = _extract(parent, s, ops)
            return SearchResult("solved", name, plan, cost=plan_cost(task, plan),
                                expanded=expanded, generated=len(g),
                                seconds=time.perf_counter() - start)
        expanded += 1
        now = time.perf_counter()
        if now - last_report > 10.0:
            progress(f"{name}: {expanded} expanded, {len(g)} states, f = {number.render(f)}")
            last_report = now
        if len(g) > max_states or (max_seconds is not None
                                   and time.process_time() - cpu_start > max_seconds):
            return SearchResult("limit", name, expanded=expanded, generated=len(g),
                                seconds=time.perf_counter() - start)
        m = memo[s]
        for i, t in _successors(s, ops, simple, keys, groups, always):
            step = 1 if unit else ops[i].step_cost(s)
            if step < 0:
                raise ValueError(f"{ops[i].name} costs {number.render(step)} here: "
                                 "A* needs costs of at least 0")
            gt = gs + step
            if gt >= g.get(t, inf):
                continue  # reopening happens when a cheaper path turns up
            g[t] = gt
            parent[t] = (s, i)
            counter += 1
            bound = hval.get(t)
            if bound is None:
                bound = est.bound(m, i, step, t)
            elif bound == inf:
                continue
            heapq.heappush(heap, (gt + bound, -gt, counter, t))
    # exhausted: every state seen was expanded or found a dead end (each entry is popped)
    dead = {s for s, h in hval.items() if h == inf}
    return SearchResult("unsolvable", name, expanded=expanded, generated=len(g),
                        seconds=time.perf_counter() - start, closed=set(g) - dead,
                        dead_ends=dead)


def _mask_applied(ops: list[Operator]) -> list[bool]:
    """Which operators `_successors` may decide and apply by their masks alone: STRIPS
    ones whose step can never fail (the others decide for themselves)."""
    return [op.simple and not op.may_fail for op in ops]


def _successors(s: State, ops: list[Operator], simple: list[bool], keys: int,
                groups: list[list[tuple]], always: list[tuple]):
    """(index, successor) for every operator applicable in `s`: the key-atom index
    (`successor_index`) and the literal masks narrow the candidates; a STRIPS operator's
    masks decide and make the successor, any other operator decides itself."""
    bits, nums = s
    m = bits & keys
    candidates = always
    while True:
        for pp, pn, keep, add, i in candidates:
            if bits & pp == pp and not bits & pn:
                if simple[i]:
                    yield i, ((bits & keep) | add, nums)
                else:
                    op = ops[i]
                    if op.applicable(s):
                        yield i, op.apply(s)
        if not m:
            return
        low = m & -m
        m ^= low
        candidates = groups[low.bit_length() - 1]
