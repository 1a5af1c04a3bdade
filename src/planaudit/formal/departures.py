"""Where planaudit departs from VAL on purpose, and which departure explains a disagreement.

docs/explain/pddl.md documents the departures. planaudit and VAL disagree
when one accepts a plan the other does not; `classify` names the departure that
explains it from what the two said (planaudit's failure kind and detail, VAL's report
line, as `witness.ValVerdict.describe` writes it), or says `unexplained`: a bug to
chase in one of the two. It reads words, not states, so `tolerance` means "a numeric
comparison decided it", where VAL's tolerance can turn the verdict; the differential
test checks that exactly on its random domains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from planaudit.formal.ground import Task
from planaudit.formal.plan import parse_plan
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.validate import validate
from planaudit.formal.witness import ValVerdict, run_val

DEPARTURES = {
    "tolerance": "VAL compares numbers with a tolerance of 0.0001 (for VAL (< 2 2) holds); "
                 "planaudit compares exactly",
    "extra-argument": "VAL ignores arguments beyond those an action declares; planaudit "
                      "reports wrong-arity",
    "undefined-order": "VAL evaluates conditions in order and fails at the first undefined "
                       "value it meets; planaudit's three-valued logic does not depend on the order",
    "equal-timestamps": "VAL runs steps with equal timestamps as one happening; planaudit "
                        "reads sequential plans only and refuses timestamps that do not increase",
}
UNEXPLAINED = "unexplained"
CLASSES = (*DEPARTURES, UNEXPLAINED)

# a comparison with a number or a function term as an argument: (< (f) 2), not (= o1 o2)
_NUMERIC = re.compile(r"\((?:<|<=|>|>=|=)\s+(?:\(|-?\d)")
# VAL advises "(Satisfy ...)" or "(Do NOT satisfy ...)" for a comparison, "(Set ...)" for a fact
_VAL_NUMERIC = re.compile(r"\b[Ss]atisfy ")
_ARITY = re.compile(r"takes (\d+) arguments?, given (\d+)")


def classify(ours_valid: bool, val_valid: bool, *, kind: str | None = None,
             detail: str | None = None, val_detail: str | None = None) -> str | None:
    """None when both accept or both reject the plan; else one of CLASSES.

    `kind` is planaudit's failure kind (`unreadable` for a plan file it refused) and
    `detail` its words, with the unsatisfied conditions; `val_detail` is VAL's line.
    """
    if ours_valid == val_valid:
        return None
    detail, val_detail = detail or "", val_detail or ""
    if not ours_valid:  # planaudit rejects what VAL accepts
        if kind == "unreadable" and "does not come after" in detail:
            return "equal-timestamps"
        if kind == "wrong-arity" and (m := _ARITY.search(detail)) and int(m[2]) > int(m[1]):
            return "extra-argument"
        if "undefined" in detail or "division by zero" in detail:
            return "undefined-order"
        if kind in ("precondition", "goal") and _NUMERIC.search(detail):
            return "tolerance"
    else:  # VAL rejects what planaudit accepts
        if "undefined" in val_detail:
            return "undefined-order"
        if _VAL_NUMERIC.search(val_detail):
            return "tolerance"
    return UNEXPLAINED


def failure_words(failure) -> str:
    """A `validate` failure as `classify` reads it: its detail and unsatisfied conditions."""
    if failure is None:
        return ""
    text = failure.detail
    if failure.unsatisfied:
        text += "; unsatisfied: " + " ".join(failure.unsatisfied)
    return text


@dataclass(frozen=True)
class Comparison:
    """planaudit's verdict on a plan beside VAL's."""

    ours_valid: bool
    kind: str | None  # planaudit's failure kind; "unreadable" for a plan file it refused
    detail: str  # planaudit's words (failure_words), or why it refused the file
    step: int | None  # planaudit's failing step
    val: ValVerdict

    @property
    def agree(self) -> bool | None:
        """Both accept or both reject; None when VAL gave no verdict."""
        return None if self.val.valid is None else self.ours_valid == self.val.valid

    @property
    def departure(self) -> str | None:
        if self.val.valid is None:
            return None
        return classify(self.ours_valid, self.val.valid, kind=self.kind, detail=self.detail,
                        val_detail=self.val.describe())

    def fields(self) -> dict:
        """What `planaudit validate --witness val` adds to a JSON verdict."""
        return {"val_valid": self.val.valid, "val_detail": self.val.describe(),
                "agree": self.agree, "departure": self.departure}


def compare(task: Task, domain: str | Path, problem: str | Path, plan_text: str,
            source: str = "<plan>") -> Comparison:
    """Judge a plan file with planaudit (a refused file rejects the plan, as VAL's "Bad
    plan description" does) and with VAL."""
    try:
        verdict = validate(task, parse_plan(plan_text, source))
    except PDDLError as e:
        ours = (False, "unreadable", str(e), None)
    else:
        f = verdict.failure
        ours = (verdict.valid, f and f.kind, failure_words(f), f and f.step)
    return Comparison(*ours, run_val(domain, problem, plan_text))
