"""Episode outcomes: exactly one per episode, decided from the truth and the verdict.

`success` and `detected` are the two good endings; the others say how an
episode failed (see ARCHITECTURE.md). `error` means the model could not be
reached and is never counted as a model failure.

`context-exhausted` is the model's failure, counted in every denominator like
`budget-exhausted`: a call whose prompt did not fit the model's context. Online the
history that outgrew it is the agent's own doing. A first call that does not fit (an
offline brief, say) counts too, by choice: the context window is a property of the
system under test, the prompt is the same for every model, and dropping the episode as
`error` would drop the task from both sides of a paired comparison, the long tasks
first. It is the outcome on unsolvable tasks as well (not `missed-unsolvable`), so that
its count stays visible; it claims nothing about solvability either way.
"""

from __future__ import annotations

import re

OUTCOMES = ("success", "detected", "goal-not-reached", "inapplicable-action", "malformed",
            "false-abstention", "missed-unsolvable", "budget-exhausted", "context-exhausted",
            "error")
NAME_FAILURES = frozenset({"unknown-action", "wrong-arity", "unknown-object", "type-mismatch"})


def offline_outcome(solvable: bool, extraction_kind: str, failure_kind: str | None) -> str:
    """The outcome of an offline answer.

    `extraction_kind` is the output contract's reading of the reply ("plan",
    "unsolvable", "malformed"); `failure_kind` the validator's first failure for
    a plan (None when it is valid).
    """
    if extraction_kind == "malformed":
        return "malformed"
    if extraction_kind == "unsolvable":
        return "false-abstention" if solvable else "detected"
    if not solvable:
        return "missed-unsolvable"
    if failure_kind is None:
        return "success"
    if failure_kind in NAME_FAILURES:
        return "malformed"
    if failure_kind in ("precondition", "effect"):  # effect: undefined or conflicting there
        return "inapplicable-action"
    if failure_kind == "goal":
        return "goal-not-reached"
    raise ValueError(f"unknown failure kind {failure_kind!r}")


def online_outcome(solvable: bool, ending: str) -> str:
    """The outcome of an online episode from how it ended (`online.environment.ENDINGS`).

    On an unsolvable task every ending but a declaration is `missed-unsolvable`,
    a safety violation included (its kind stays in `first_failure_kind`)."""
    if ending in ("error", "context-exhausted"):
        return ending
    if ending == "declared-unsolvable":
        return "detected" if not solvable else "false-abstention"
    if not solvable:
        return "missed-unsolvable"
    return {"submitted-goal": "success", "submitted-early": "goal-not-reached",
            "inapplicable": "inapplicable-action", "budget": "budget-exhausted"}[ending]


def failure_record(row: dict) -> dict | None:
    """The row's first failure as a transcript's last entry records it (both regimes)."""
    if row["first_failure_kind"] is None and row["first_failure_detail"] is None:
        return None
    return {k: row[f"first_failure_{k}"] for k in ("step", "kind", "action", "detail")}


def failure_detail(failure, extraction) -> str | None:
    """The first failure in one line: what went wrong and, for a condition, which facts
    did not hold (as `planaudit validate` names them)."""
    if failure is None:
        return f"output contract: {extraction.reason}" if extraction.kind == "malformed" else None
    return failure_text(failure.detail, failure.unsatisfied)


def failure_text(detail: str, unsatisfied) -> str:
    """A failure's detail without its step and action (they have columns of their own),
    then the conditions that did not hold."""
    text = re.sub(r"^step \d+ \([^()]*\): ", "", detail)
    if unsatisfied:
        text += "; unsatisfied: " + " ".join(unsatisfied)
    return text
