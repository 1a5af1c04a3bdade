"""Plan validation with a diagnosis of the first failure.

The semantics are those of VAL for sequential plans: each step must name a
known action with objects of the right types, its precondition must hold in the
state where it runs, its effects must be defined there (no undefined value, no
division by zero, no conflicting updates), and the goal must hold at the end.
The verdict names the first failing step, what kind of failure it is, and which
conditions were false; its cost is what VAL reports as the plan's value.
"""

from __future__ import annotations

from dataclasses import dataclass

from planaudit.formal import number
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.number import Number
from planaudit.formal.plan import Step, format_step
from planaudit.formal.task import State

FAILURE_KINDS = ("unknown-action", "wrong-arity", "unknown-object", "type-mismatch",
                 "precondition", "effect", "goal")


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
    cost: Number | None  # the metric's exact final value (VAL's "Final value"); the length without one
    failure: Failure | None

    def to_json(self) -> dict:
        """As JSON: the cost an int when integral, else the nearest float (the boundary).
        Built field by field: `dataclasses.asdict`'s deep copy was a fifth of a batch
        validation's time."""
        f = self.failure
        return {"valid": self.valid, "executable": self.executable,
                "goal_reached": self.goal_reached, "length": self.length,
                "cost": number.to_json(self.cost),
                "failure": None if f is None else {
                    "step": f.step, "action": f.action, "kind": f.kind, "detail": f.detail,
                    "unsatisfied": list(f.unsatisfied)}}


def _undefined_note(task: Task, formula: tuple, state: State) -> str:
    missing = task.undefined(formula, state)
    return f" (undefined: {', '.join(missing)})" if missing else ""


def validate(task: Task, steps: list[Step]) -> Verdict:
    state = task.init
    cost: Number = 0
    for i, step in enumerate(steps, 1):
        try:
            op = task.operator(*step)
        except GroundingError as e:
            return Verdict(False, False, False, len(steps), None,
                           Failure(i, format_step(step), e.kind, e.detail, []))
        if not op.applicable(state):
            if op.precondition_holds(state):
                return Verdict(False, False, False, len(steps), None,
                               Failure(i, op.name, "effect",
                                       f"step {i} {op.name}: cannot be applied: "
                                       f"{task.effect_problem(op, state)}", []))
            schema = task.domain.actions[op.action]
            false = task.unsatisfied(schema.precondition, task.binding(op), state)
            return Verdict(False, False, False, len(steps), None,
                           Failure(i, op.name, "precondition",
                                   f"step {i} {op.name}: precondition not satisfied"
                                   + _undefined_note(task, op.pre, state), false))
        cost += op.step_cost(state)
        state = op.apply(state)
    plan_cost = task.plan_value(state, len(steps), cost)
    if task.goal_holds(state):
        return Verdict(True, True, True, len(steps), plan_cost, None)
    false = task.unsatisfied(task.problem.goal, {}, state)
    return Verdict(False, True, False, len(steps), plan_cost,
                   Failure(None, None, "goal", "the goal does not hold after the last step"
                           + _undefined_note(task, task.goal, state), false))
