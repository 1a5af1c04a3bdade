"""The reachable state space of a STRIPS task, explored exactly within a state limit.

Questions about a state rather than a plan (which atoms or actions can ever hold or
become applicable from here, whether a fact is a landmark, the optimal cost to go)
are answered by breadth-first search over the states reachable from a given state,
with the task's own operators (`Task.all_operators`, applicability and effects from
`task.py`). Each search stops at `max_states` distinct states and says so ("limit"),
never guessing. Only STRIPS operators on the bitset fast path are explored here;
`Unsupported` says when a task has others.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from planaudit.formal.ground import Task
from planaudit.formal.heuristics import lmcut
from planaudit.formal.search import astar, successor_index
from planaudit.formal.task import Operator, atom_indices

MAX_STATES = 200_000


class Unsupported(Exception):
    """The task has operators beyond plain STRIPS (numbers, conditional effects)."""


def strips_operators(task: Task) -> list[Operator]:
    ops = task.all_operators()
    if task.init[1] or not all(op.simple for op in ops):
        raise Unsupported("only STRIPS tasks without numeric fluents are explored")
    return ops


def ground_atoms(task: Task, fluent_only: bool = True) -> list[tuple[str, tuple[str, ...]]]:
    """Every type-correct ground atom of the domain's predicates (of the predicates
    some action changes, with `fluent_only`)."""
    static = task.static_predicates() if fluent_only else frozenset()
    out = []
    for pred, params in task.domain.predicates.items():
        if pred in static:
            continue
        pools = [task.objects_of(types) for _, types in params]
        out.extend((pred, args) for args in product(*pools))
    return out


def ground_actions(task: Task) -> list[tuple[str, tuple[str, ...]]]:
    """Every type-correct grounding (action, args) of the domain's actions."""
    out = []
    for name, schema in task.domain.actions.items():
        pools = [task.objects_of(types) for _, types in schema.params]
        out.extend((name, args) for args in product(*pools))
    return out


@dataclass
class Exploration:
    status: str  # "exhausted", "covered" (every candidate seen before the limit) or "limit"
    atoms: int  # bitmask of atoms true in some state seen
    applicable: set[int]  # indices (into ops) of operators applicable in some state seen
    states: int


def _successors(s: int, index: tuple) -> Iterator[tuple[int, int]]:
    """(operator index, successor) for every operator applicable in `s`; the index from
    `search.successor_index` visits only operators whose first precondition atom holds."""
    keys, groups, always = index
    m = s & keys
    candidates = always
    while True:
        for pp, pn, keep, add, i in candidates:
            if s & pp == pp and not s & pn:
                yield i, (s & keep) | add
        if not m:
            return
        low = m & -m
        m ^= low
        candidates = groups[low.bit_length() - 1]


def explore(task: Task, start: int, ops: list[Operator], want_atoms: int = 0,
            want_ops: frozenset[int] = frozenset(), max_states: int = MAX_STATES) -> Exploration:
    """Every state reachable from `start` (a bitset): the atoms that hold and the operators
    that are applicable in some of them. Stops early once every atom of `want_atoms` and
    every operator of `want_ops` has been seen (then status "covered")."""
    index = successor_index(ops)
    seen = {start}
    layer = [start]
    atoms = start
    applicable: set[int] = set()

    def covered() -> bool:
        return (want_atoms or want_ops) and atoms & want_atoms == want_atoms \
            and want_ops <= applicable

    while layer:
        nxt = []
        for s in layer:
            for i, t in _successors(s, index):
                applicable.add(i)
                if t not in seen:
                    seen.add(t)
                    atoms |= t
                    nxt.append(t)
            if covered():
                return Exploration("covered", atoms, applicable, len(seen))
            if len(seen) > max_states:
                return Exploration("limit", atoms, applicable, len(seen))
        layer = nxt
    return Exploration("exhausted", atoms, applicable, len(seen))


def goal_distance(task: Task, start: int, ops: list[Operator], forbidden: int = 0,
                  max_states: int = MAX_STATES, max_depth: int | None = None) -> int | str:
    """The length of a shortest plan from `start` (unit costs) that never passes through a
    state where an atom of `forbidden` holds; "unsolvable" when the search exhausts the
    reachable states without reaching the goal, "beyond" when no plan is at most
    `max_depth` long, "limit" when it stops at `max_states`."""
    if task.has_cost and not all(op.constant_cost == 1 for op in ops):
        raise Unsupported("goal distances here count steps; the task has other costs")
    gp, gn, rest = task.goal_pos, task.goal_neg, task.goal_rest
    nums = task.init[1]

    def is_goal(s: int) -> bool:
        return s & gp == gp and not s & gn and (rest is None or task.goal_holds((s, nums)))

    if start & forbidden:
        return "unsolvable"
    if is_goal(start):
        return 0
    index = successor_index(ops)
    seen = {start}
    layer = [start]
    depth = 0
    while layer:
        depth += 1
        if max_depth is not None and depth > max_depth:
            return "beyond"
        nxt = []
        for s in layer:
            for _i, t in _successors(s, index):
                if t not in seen and not t & forbidden:
                    if is_goal(t):
                        return depth
                    seen.add(t)
                    nxt.append(t)
            if len(seen) > max_states:
                return "limit"
        layer = nxt
    return "unsolvable"


def atom_names(task: Task, mask: int) -> list[str]:
    return [_name(*task.atoms[i]) for i in atom_indices(mask)]


def _name(pred: str, args: tuple[str, ...]) -> str:
    return "(" + " ".join((pred, *args)) + ")"


def from_state(task: Task, start: int, ops: list[Operator] | None = None) -> Task:
    """The same task asked from another state (a shallow copy sharing the operators: the
    ones reachable from the task's own state cover every state reachable from there),
    with only `ops` among its operators if given."""
    other = copy.copy(task)
    other.init = (start, task.init[1])
    if ops is not None:
        other._all = list(ops)
    return other


def optimal_cost(task: Task, start: int, ops: list[Operator], max_states: int = MAX_STATES,
                 astar_states: int = MAX_STATES) -> int | str:
    """The optimal cost to go from `start` (unit costs): breadth-first search, then A* with
    LM-cut (admissible: still exact) past its limit; "unsolvable" or "limit" otherwise."""
    d = goal_distance(task, start, ops, max_states=max_states)
    if d != "limit":
        return d
    return astar_cost(task, start, astar_states)


def astar_cost(task: Task, start: int, max_states: int = MAX_STATES,
               ops: list[Operator] | None = None) -> int | str:
    """The optimal cost to go from `start` by A* with LM-cut (unit costs), with only `ops`
    if given (LM-cut proves a dead end where the goal is relaxed-unreachable)."""
    other = from_state(task, start, ops)
    res = astar(other, lmcut(other), "astar-lmcut", max_states=max_states)
    if res.status == "solved":
        return len(res.plan)
    return res.status


def astar_plan(task: Task, start: int, max_states: int = MAX_STATES) -> list[Operator] | str:
    """An optimal plan from `start` by A* with LM-cut, or "unsolvable" or "limit"."""
    res = astar(from_state(task, start), lmcut(task), "astar-lmcut", max_states=max_states)
    return res.plan if res.status == "solved" else res.status


def relaxed_goal_reachable(task: Task, start: int, ops: list[Operator]) -> bool:
    """Whether the goal's atoms are reachable from `start` ignoring deletes (and negative
    preconditions): when not, no plan exists with `ops` (a sound proof of unsolvability)."""
    reached = start
    changed = True
    while changed:
        changed = False
        for op in ops:
            if reached & op.pre_pos == op.pre_pos and op.add & ~reached:
                reached |= op.add
                changed = True
    return reached & task.goal_pos == task.goal_pos


@dataclass(frozen=True)
class _Projected:
    pre_pos: int
    pre_neg: int
    add: int
    delete: int


def never_in_projection(task: Task, start: int, ops: list[Operator], keep: int, pos: int,
                        neg: int = 0, max_states: int = MAX_STATES) -> bool | None:
    """Whether no state reachable from `start` has every atom of `pos` and none of `neg`,
    proven on the projection onto the atoms of `keep` (each operator restricted to them:
    every reachable state's projection is reachable there, so what the projection never
    reaches no state reaches). True: proven never; False: not proven (the projection
    reaches it); None: the projection's states exceed `max_states`."""
    pos &= keep
    neg &= keep
    abstract = list({(op.pre_pos & keep, op.pre_neg & keep, op.add & keep, op.delete & keep)
                     for op in ops})
    projected = [_Projected(*t) for t in abstract]
    index = successor_index(projected)
    s0 = start & keep
    if s0 & pos == pos and not s0 & neg:
        return False
    seen = {s0}
    layer = [s0]
    while layer:
        nxt = []
        for s in layer:
            for _i, t in _successors(s, index):
                if t not in seen:
                    if t & pos == pos and not t & neg:
                        return False
                    seen.add(t)
                    nxt.append(t)
            if len(seen) > max_states:
                return None
        layer = nxt
    return True
