"""The responsive calibrator's answer: the oracle's plan with seeded, separable faults.

Every fault touches its own steps of the optimal plan (no two share one), and the plan
is held as items aligned with the optimal plan's steps (a dropped step keeps an empty
item), so that repairing one fault restores exactly its steps and leaves the others
where they were. What each fault does to the answer:

- `drop_action`: a step left out;
- `swap_adjacent`: two neighbouring steps in the wrong order;
- `wrong_argument`: an argument replaced by another object of the same type;
- `unknown_object`: an argument replaced by a name the task does not have;
- `wrong_arity`: the last argument left out (an argument added to an action without one);
- `unsolvable_on_solvable`: `UNSOLVABLE` instead of a plan;
- `plan_on_unsolvable`: a plan of random actions on an unsolvable task.

`unknown_object` and `wrong_arity` are the mechanical faults: a check of names and
arities finds them without knowing the semantics.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from planaudit.reference.answers import plan_block

KINDS = ("drop_action", "swap_adjacent", "wrong_argument", "unknown_object", "wrong_arity",
         "unsolvable_on_solvable", "plan_on_unsolvable")
MECHANICAL = frozenset({"unknown_object", "wrong_arity"})
UNKNOWN_OBJECT = "obj_unknown"
UNSOLVABLE = "UNSOLVABLE"


@dataclass(frozen=True)
class Fault:
    index: int  # its place among the task's faults: names its own random decisions
    kind: str
    slot: int  # the first optimal-plan step it touches (-1: the whole answer)
    steps: tuple[str, ...]  # what it writes instead of those steps (empty for a drop)


@dataclass(frozen=True)
class Item:
    """One step of the optimal plan as the answer holds it."""

    text: str | None  # None: the step is dropped
    fault: int | None  # the fault that wrote it, if any
    slot: int


def split(step: str) -> tuple[str, tuple[str, ...]]:
    words = step.strip().strip("()").split()
    return words[0], tuple(words[1:])


def join(name: str, args: tuple[str, ...]) -> str:
    return "(" + " ".join((name, *args)) + ")"


def seed_faults(plan: list[str] | None, objects: dict[str, tuple[str, ...]], rates: dict,
                rng: random.Random, random_plan) -> list[Fault]:
    """The faults of one answer, each kind at most once, drawn at its rate (`plan` is the
    optimal plan, None on an unsolvable task; `objects` maps names to types;
    `random_plan(rng)` gives the steps of a plan on an unsolvable task)."""
    def hit(kind: str) -> bool:
        return rng.random() < float(rates.get(kind, 0.0))

    if plan is None:
        return [Fault(0, "plan_on_unsolvable", -1, tuple(random_plan(rng)))] if hit(
            "plan_on_unsolvable") else []
    if hit("unsolvable_on_solvable"):
        return [Fault(0, "unsolvable_on_solvable", -1, ())]
    free = set(range(len(plan)))
    faults: list[Fault] = []
    for kind in ("drop_action", "swap_adjacent", "wrong_argument", "unknown_object",
                 "wrong_arity"):
        if not hit(kind):
            continue
        width = 2 if kind == "swap_adjacent" else 1
        slots = sorted(i for i in free if all(i + k in free for k in range(width)))
        if kind != "drop_action" and kind != "swap_adjacent":
            slots = [i for i in slots if split(plan[i])[1] or kind == "wrong_arity"]
        if kind == "wrong_argument":
            slots = [i for i in slots if _alternatives(split(plan[i])[1], objects)]
        if kind == "swap_adjacent":  # a swap must change the text (one text, one fault set)
            slots = [i for i in slots if plan[i] != plan[i + 1]]
        if not slots:
            continue
        i = rng.choice(slots)
        name, args = split(plan[i])
        if kind == "drop_action":
            steps: tuple[str, ...] = ()
        elif kind == "swap_adjacent":
            steps = (plan[i + 1], plan[i])
        elif kind == "wrong_argument":
            j, other = rng.choice(_alternatives(args, objects))
            steps = (join(name, (*args[:j], other, *args[j + 1:])),)
        elif kind == "unknown_object":
            j = rng.randrange(len(args))
            steps = (join(name, (*args[:j], UNKNOWN_OBJECT, *args[j + 1:])),)
        else:
            steps = (join(name, args[:-1] if args else (sorted(objects)[0],)),)
        free -= set(range(i, i + width))
        faults.append(Fault(len(faults), kind, i, steps))
    return faults


def _alternatives(args: tuple[str, ...], objects: dict) -> list[tuple[int, str]]:
    """(position, object) pairs that replace one argument by another of its type."""
    return [(j, o) for j, a in enumerate(args) for o in sorted(objects)
            if o != a and a in objects and objects[o] == objects[a]]


def items(plan: list[str] | None, faults: list[Fault], remaining: frozenset[int]
          ) -> list[Item] | None:
    """The answer with the `remaining` faults: its items, or None for `UNSOLVABLE`."""
    live = [f for f in faults if f.index in remaining]
    if any(f.kind == "unsolvable_on_solvable" for f in live):
        return None
    if plan is None:
        wrong = next((f for f in live if f.kind == "plan_on_unsolvable"), None)
        return None if wrong is None else [Item(s, wrong.index, k)
                                           for k, s in enumerate(wrong.steps)]
    at = {f.slot: f for f in live}
    out: list[Item] = []
    i = 0
    while i < len(plan):
        f = at.get(i)
        if f is None:
            out.append(Item(plan[i], None, i))
        elif f.kind == "drop_action":
            out.append(Item(None, f.index, i))
        else:
            out += [Item(s, f.index, i + k) for k, s in enumerate(f.steps)]
            i += len(f.steps) - 1
        i += 1
    return out


def steps_of(answer: list[Item] | None) -> list[str] | None:
    return None if answer is None else [it.text for it in answer if it.text is not None]


def answer_text(answer: list[Item] | None, skip: int = 0) -> str:
    """The reply: the plan in one fenced block (without its first `skip` steps, already
    executed), or `UNSOLVABLE`."""
    steps = steps_of(answer)
    return UNSOLVABLE if steps is None else plan_block(steps[skip:])


def item_at(answer: list[Item], position: int) -> int:
    """The item of the plan's `position`-th step (0-based); len(answer) past the end."""
    seen = 0
    for k, it in enumerate(answer):
        if it.text is not None:
            if seen == position:
                return k
            seen += 1
    return len(answer)


def responsible(answer: list[Item], k: int) -> int | None:
    """The fault a failure at item `k` (len(answer): at the end) is put down to, in a
    written plan: the fault that wrote that item, else the nearest fault before it (a
    dropped step first: its absence is what a later step misses)."""
    if k < len(answer) and answer[k].fault is not None:
        return answer[k].fault
    before = [it for it in answer[:k] if it.fault is not None]
    dropped = [it for it in before if it.text is None]
    pick = (dropped or before or [None])[-1]
    return None if pick is None else pick.fault


def decide(key: str, mechanism: str, fault: Fault, rate: float) -> bool:
    """Whether the model corrects `fault` when `mechanism` meets it: one seeded draw per
    fault and mechanism, so a fault it does not correct it never corrects (a model at
    temperature 0 answers the same prompt the same way)."""
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    return random.Random(f"{key}:{mechanism}:{fault.index}").random() < rate
