"""ACPBench's questions answered by proof from an item's PDDL and question alone.

Each answer is in ACPBench's own format for its type (lower-case names: PDDL is
case-insensitive and the parser reads it lower-cased). Reachability, landmarks and
costs to go come from exact search over the reachable states (`formal/space.py`);
where a search stops at its state limit the item says so in `limits` and the
undecided atoms or actions are listed apart, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from planaudit.acpbench.bound import DEFAULT, Bound, Usage, bounded_each
from planaudit.acpbench.items import Item
from planaudit.acpbench.wording import read_action
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import format_step
from planaudit.formal.search import breadth_first
from planaudit.formal.space import (
    MAX_STATES,
    astar_cost,
    astar_plan,
    atom_names,
    explore,
    goal_distance,
    ground_actions,
    ground_atoms,
    never_in_projection,
    optimal_cost,
    relaxed_goal_reachable,
    strips_operators,
)

# breadth-first search first, up to this many states; past it A* with LM-cut (also
# exact), whose dead-end detection and guidance pay on the larger spaces
BFS_FIRST = 20_000


@dataclass
class Gold:
    answer: object
    limits: list[str] = field(default_factory=list)  # every search that stopped at its limit
    undecided: list = field(default_factory=list)  # what a limit left open
    notes: list[str] = field(default_factory=list)  # ambiguity, ungroundable names, ...


def plan_steps(question: str) -> list[tuple[str, tuple[str, ...]]]:
    """The actions of the sequence quoted in a val or just question, in order."""
    m = re.search(r'"([^"]*)"', question)
    if m is None:
        raise ValueError("no quoted action sequence in the question")
    steps = []
    for body in re.findall(r"\(([^()]*)\)", m.group(1).lower()):
        words = body.split()
        steps.append((words[0], tuple(words[1:])))
    return steps


def _applicable_names(task: Task) -> list[str]:
    return sorted(op.name for op in task.all_operators() if op.applicable(task.init))


def app(item: Item, task: Task) -> Gold:
    return Gold(_applicable_names(task))


def _run(task: Task, steps) -> tuple[int | None, object, str]:
    """The index of the first inapplicable step (None if all apply), the state reached
    before it and why it does not apply."""
    state = task.init
    for i, (action, args) in enumerate(steps):
        try:
            op = task.operator(action, args)
        except GroundingError as e:
            return i, state, f"{format_step((action, args))} cannot be grounded: {e.detail}"
        if not op.applicable(state):
            return i, state, f"{op.name} is not applicable"
        state = op.apply(state)
    return None, state, ""


def val(item: Item, task: Task) -> Gold:
    first, _, why = _run(task, plan_steps(item.question))
    if first is None:
        return Gold(-1, notes=["every action of the sequence is applicable"])
    return Gold(first, notes=[why])


def prog(item: Item, task: Task) -> Gold:
    reading = read_action(item.question, task)
    if reading.op is None:
        return Gold(None, notes=[reading.note])
    op, s = reading.op, task.init[0]
    notes = [reading.note] if reading.note else []
    if not op.applicable(task.init):
        notes.append(f"{op.name} is not applicable in the state")
    after = op.apply(task.init)[0]
    return Gold({"pos": atom_names(task, after & ~s), "neg": atom_names(task, s & ~after)},
                notes=notes)


def _unreached(task: Task, candidates: list[int], ops, want_ops=frozenset(), max_states=MAX_STATES):
    want = 0
    for i in candidates:
        want |= 1 << i
    return explore(task, task.init[0], ops, want, want_ops, max_states)


def reach(item: Item, task: Task, max_states: int = MAX_STATES) -> Gold:
    ops = strips_operators(task)
    cands = [task.atom(p, a) for p, a in ground_atoms(task)]
    # atoms no operator adds (relaxed reachability from the state) never hold unless they do now
    relaxed = task.init[0]
    for op in ops:
        relaxed |= op.add
    live = [i for i in cands if relaxed >> i & 1]
    ex = _unreached(task, live, ops, max_states=max_states)
    never = sorted(" ".join((task.atoms[i][0], *task.atoms[i][1])) for i in cands
                   if not ex.atoms >> i & 1 and (ex.status == "exhausted" or not relaxed >> i & 1))
    gold = Gold(never)
    if ex.status == "limit":
        # past the limit, a projection onto the atoms naming the same objects may still
        # prove an atom never holds
        open_ = []
        for i in live:
            if ex.atoms >> i & 1:
                continue
            text = " ".join((task.atoms[i][0], *task.atoms[i][1]))
            keep = _mentioning(task, set(task.atoms[i][1])) | 1 << i
            if never_in_projection(task, task.init[0], ops, keep, 1 << i, 0,
                                   max_states) is True:
                never.append(text)
            else:
                open_.append(text)
        never.sort()
        if open_:
            gold.limits.append(f"state space: limit hit at {ex.states} states")
            gold.undecided = sorted(open_)
    return gold


def areach(item: Item, task: Task, max_states: int = MAX_STATES) -> Gold:
    ops = strips_operators(task)
    index = {(op.action, op.args): k for k, op in enumerate(ops)}
    ex = explore(task, task.init[0], ops, 0, frozenset(range(len(ops))), max_states)
    never, open_ = [], []
    for action, args in ground_actions(task):
        k = index.get((action, args))
        if k is None or (ex.status == "exhausted" and k not in ex.applicable):
            never.append(format_step((action, args)))  # pruned by static facts or relaxed reachability
        elif k not in ex.applicable:
            open_.append(format_step((action, args)))
    if ex.status == "limit":
        # past the limit, a projection onto the atoms naming the action's objects may
        # still prove an action never applicable
        still = []
        for text in open_:
            op = task.operator(*_split(text))
            keep = _mentioning(task, set(op.args))
            if never_in_projection(task, task.init[0], ops, keep, op.pre_pos, op.pre_neg,
                                   max_states) is True:
                never.append(text)
            else:
                still.append(text)
        open_ = still
    gold = Gold(sorted(never))
    if ex.status == "limit" and open_:
        gold.limits.append(f"state space: limit hit at {ex.states} states")
        gold.undecided = sorted(open_)
    return gold


def _split(text: str) -> tuple[str, tuple[str, ...]]:
    words = text.strip("()").split()
    return words[0], tuple(words[1:])


def _mentioning(task: Task, objects: set[str]) -> int:
    """The mask of the interned atoms with an argument among `objects`."""
    mask = 0
    for i, (_, args) in enumerate(task.atoms):
        if objects.intersection(args):
            mask |= 1 << i
    return mask


def valid_plan(task: Task, steps) -> bool:
    first, state, _ = _run(task, steps)
    return first is None and task.goal_holds(state)


def just(item: Item, task: Task) -> Gold:
    steps = plan_steps(item.question)
    notes = [] if valid_plan(task, steps) else ["the given plan is not a plan from this state"]
    options = []
    for i in range(len(steps)):
        if valid_plan(task, steps[:i] + steps[i + 1:]):
            # ACPBench names a single removal by its action and that action's occurrence
            # (1-based) in the plan, not by its position
            options.append([format_step(steps[i]), str(steps[:i + 1].count(steps[i]))])
    for i in range(len(steps) - 1):
        if valid_plan(task, steps[:i] + steps[i + 2:]):
            options.append([format_step(steps[i]), format_step(steps[i + 1]), "-1"])
    return Gold(options, notes=notes)


def _trajectory_atoms(task: Task, plan) -> int:
    state, seen = task.init, task.init[0]
    for op in plan:
        state = op.apply(state)
        seen |= state[0]
    return seen


def land(item: Item, task: Task, max_states: int = MAX_STATES) -> Gold:
    """Non-trivial fact landmarks: atoms false in the state and not in the goal that hold
    in some state of every plan, i.e. without which (states where they hold forbidden)
    the goal is unreachable."""
    ops = strips_operators(task)
    s = task.init[0]
    goal_atoms = task.goal_pos
    cands = [task.atom(p, a) for p, a in ground_atoms(task)]
    cands = [i for i in cands if not s >> i & 1 and not goal_atoms >> i & 1]
    # any plan will do: an atom on none of its states is no landmark
    found = breadth_first(task, max_states=BFS_FIRST)
    plan = found.plan if found.status != "limit" else astar_plan(task, s, max_states)
    gold = Gold({"yes": [], "no": []})
    if plan == "limit":
        gold.limits.append(f"plan search: limit hit at {max_states} states")
        gold.undecided = atom_names(task, sum(1 << i for i in cands))
        return gold
    if plan is None or plan == "unsolvable":
        gold.notes.append("the goal is unreachable from this state: every atom is a landmark")
        gold.answer["yes"] = atom_names(task, sum(1 << i for i in cands))
        return gold
    on_plan = _trajectory_atoms(task, plan)
    yes, no, open_ = 0, 0, 0
    for i in cands:
        if not on_plan >> i & 1:
            no |= 1 << i
            continue
        # p is false now and STRIPS: forbidding states where it holds is dropping its adders
        without = [op for op in ops if not op.add >> i & 1]
        if not relaxed_goal_reachable(task, s, without):
            yes |= 1 << i  # not even the delete relaxation reaches the goal without p
            continue
        d = goal_distance(task, s, ops, forbidden=1 << i, max_states=BFS_FIRST)
        if d == "limit":
            d = astar_cost(task, s, max_states, without)
        if d == "unsolvable":
            yes |= 1 << i
        elif d == "limit":
            open_ |= 1 << i
        else:
            no |= 1 << i
    gold.answer = {"yes": atom_names(task, yes), "no": atom_names(task, no)}
    if open_:
        gold.undecided = atom_names(task, open_)
        gold.limits.append(f"landmark search: limit hit for {len(gold.undecided)} atoms")
    return gold


def nexta(item: Item, task: Task, max_states: int = MAX_STATES) -> Gold:
    """Each applicable action by the optimal cost to go after it, as ACPBench's scorer
    reads its classes: `yes` it lowers the optimal cost to go (it starts an optimal
    plan), `no` it does not (same, higher, or a dead end); `maybe` is the file's class
    for actions it left to a planner, and we decide every action, so ours stays empty
    but for actions a limit left undecided. `opt` is the optimal cost to go."""
    ops = strips_operators(task)
    s = task.init[0]
    here = optimal_cost(task, s, ops, max_states=max_states)
    gold = Gold({"yes": [], "no": [], "maybe": [], "opt": None})
    if here == "limit":
        gold.limits.append("cost to go from the state: limit hit")
        return gold
    gold.answer["opt"] = None if here == "unsolvable" else str(here)
    inf = float("inf")
    h0 = inf if here == "unsolvable" else here
    for op in ops:
        if not op.applicable(task.init):
            continue
        after = op.apply(task.init)[0]
        if h0 == inf:
            gold.answer["no"].append(op.name)
            continue
        # lowering means exactly h0 - 1: a bounded search to that depth decides it
        d = goal_distance(task, after, ops, max_states=BFS_FIRST, max_depth=h0 - 1)
        if d == "limit":
            d = astar_cost(task, after, max_states)
            if isinstance(d, int):
                d = d if d < h0 else "beyond"
        if d == "limit":
            gold.undecided.append(op.name)
            gold.answer["maybe"].append(op.name)
            continue
        gold.answer["yes" if isinstance(d, int) else "no"].append(op.name)
    if gold.undecided:
        gold.limits.append(f"cost to go after {len(gold.undecided)} actions: limit hit")
    for key in ("yes", "no", "maybe"):
        gold.answer[key].sort()
    return gold


ANSWER = {"app": app, "val": val, "prog": prog, "reach": reach, "areach": areach,
          "just": just, "land": land, "nexta": nexta}


def gold(item: Item) -> Gold:
    """The answer to `item` from its PDDL and question alone (never its `answer`)."""
    return ANSWER[item.task](item, item.planning_task())


def gold_each(items: Sequence[Item], bound: Bound = DEFAULT,
              ) -> Iterator[tuple[Item, Gold | None, BaseException | None, Usage]]:
    """`gold(item)` for each item within `bound`, so that no item's search can take the
    machine (one of ACPBench's alfred items grew past 23 GB): in one forked child for as
    many items as stay within it (`bound.bounded_each`). Yields (item, gold, error, usage),
    error the item's `PastBound` or the exception its proof raised (`Unsupported`)."""
    return bounded_each(lambda item, carry: (gold(item), carry), items, bound)
