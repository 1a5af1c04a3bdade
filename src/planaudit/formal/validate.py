"""Plan validation with a diagnosis of the first failure.

The semantics are those of VAL for sequential plans: each step must name a
known action with objects of the right types, its precondition must hold in the
state where it runs, and the goal must hold at the end. The verdict names the
first failing step, what kind of failure it is, and which conditions were false.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import Step, format_step
from planaudit.formal.task import State, conjuncts, holds

FAILURE_KINDS = ("unknown-action", "wrong-arity", "unknown-object", "type-mismatch",
                 "precondition", "goal")


@dataclass
class Failure:
    step: int | None  # 1-based; None for a goal failure
    action: str | None
    kind: str
    detail: str
    unsatisfied: list[str]


@dataclass
class Verdict:
    valid: bool
    executable: bool
    goal_reached: bool
    length: int
    cost: float | None
    failure: Failure | None

    def to_json(self) -> dict:
        d = asdict(self)
        if d["cost"] is not None and float(d["cost"]).is_integer():
            d["cost"] = int(d["cost"])
        return d


def unsatisfied(task: Task, formula: tuple, state: State) -> list[str]:
    """The top-level conjuncts of `formula` that are false in `state`."""
    return [task.describe(c) for c in conjuncts(formula) if not holds(c, state)]


def validate(task: Task, steps: list[Step]) -> Verdict:
    state = task.init
    cost = 0.0
    for i, step in enumerate(steps, 1):
        try:
            op = task.operator(*step)
        except GroundingError as e:
            return Verdict(False, False, False, len(steps), None,
                           Failure(i, format_step(step), e.kind, e.detail, []))
        if not op.applicable(state):
            false = unsatisfied(task, op.pre, state)
            return Verdict(False, False, False, len(steps), None,
                           Failure(i, op.name, "precondition",
                                   f"step {i} {op.name}: precondition not satisfied", false))
        cost += op.step_cost(state)
        state = op.apply(state)
    plan_cost = cost if task.metric_is_cost or task.has_cost else float(len(steps))
    if task.goal_holds(state):
        return Verdict(True, True, True, len(steps), plan_cost, None)
    false = unsatisfied(task, task.goal, state)
    return Verdict(False, True, False, len(steps), plan_cost,
                   Failure(None, None, "goal", "the goal does not hold after the last step", false))
