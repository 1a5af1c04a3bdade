"""Judging a reply to a suite test case, by the case's truth and `formal/`.

Three kinds of answer, as the prompts ask for them:

- a plan (t1, t2, t4, t5, t6, t8_*): read with the output contract's action reader
  (`contract.extract`: the last fenced block, actions in any of the usual
  forms), validated on the case's problem; t2 also needs the optimal cost.
  Outcomes: success, goal-not-reached, inapplicable-action, malformed (unreadable,
  or an unknown action, object or arity), wrong-answer (t2: valid but dearer).
- a state (t7): the facts in the last fenced block (or, without one, the reply's
  lines), one a line, written as the task writes facts. A line is compared after
  lower-casing, dropping a leading bullet or number, a trailing full stop and extra
  spaces. Correct when the set equals the true one; else wrong-answer, naming the
  facts missed and the facts extra.
- a verdict (t3): the lines `verdict:`, `error:`, `step:` and `unmet:` (facts
  follow, one a line). Three scores: `binary` (valid/invalid right), `type`
  (binary and the kind of error), `explanation` (type, and for goal-not-reached the
  unmet goal facts, for inapplicable-action the step and its unmet preconditions,
  set-equal). `correct` is `binary`, as PlanBench's headline; the others are in
  `scores`.
"""

from __future__ import annotations

import re

from planaudit.contract import extract
from planaudit.formal import number
from planaudit.formal.ground import Task
from planaudit.formal.load import domain_at
from planaudit.formal.syntax import parse_problem
from planaudit.formal.validate import validate
from planaudit.planbench.cases import Case, Verdict

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.S)
_LEAD = re.compile(r"^\s*(?:[-*•]+|\d+\s*[.):])\s*")
PLAN_TESTS = ("t1", "t2", "t4", "t5", "t6", "t8_1", "t8_2", "t8_3")


def normal(line: str) -> str:
    """A fact line as compared: lower case, no bullet or number, no full stop, single spaces."""
    text = _LEAD.sub("", line.strip().lower(), count=1)
    return " ".join(text.rstrip(" .;,").split())


def _body(text: str) -> list[str]:
    blocks = _FENCE.findall(text or "")
    body = blocks[-1] if blocks else (text or "")
    return [ln for ln in body.splitlines() if ln.strip()]


def case_task(truth: dict) -> Task:
    domain = domain_at(truth["domain_file"])
    return Task(domain, parse_problem(truth["problem"], domain, "<curriculum case>"))


def score_plan(case: Case, text: str) -> Verdict:
    truth = case.truth
    task = case_task(truth)
    ex = extract(text, frozenset(task.domain.actions))
    if ex.kind != "plan":
        why = "UNSOLVABLE on a solvable task" if ex.kind == "unsolvable" else ex.reason
        return Verdict(False, "malformed", why or "", {"plan_length": None})
    v = validate(task, ex.steps)
    extra = {"plan_length": len(ex.steps), "executable": v.executable,
             "failure": v.failure.to_json() if hasattr(v.failure, "to_json") else (
                 None if v.failure is None else {"step": v.failure.step, "kind": v.failure.kind,
                                                 "action": v.failure.action,
                                                 "detail": v.failure.detail,
                                                 "unsatisfied": v.failure.unsatisfied})}
    if not v.valid:
        f = v.failure
        outcome = {"goal": "goal-not-reached", "precondition": "inapplicable-action",
                   "effect": "inapplicable-action"}.get(f.kind, "malformed")
        detail = f.detail + ("; unsatisfied: " + " ".join(f.unsatisfied) if f.unsatisfied else "")
        return Verdict(False, outcome, detail, extra)
    if truth.get("optimal") and v.cost is not None and v.cost > truth["optimal_cost"] + 1e-9:
        return Verdict(False, "wrong-answer", f"valid, cost {number.render(v.cost)} where the optimum is "
                       f"{number.render(truth['optimal_cost'])}", extra)
    return Verdict(True, "success", "", extra)


def score_state(case: Case, text: str) -> Verdict:
    want = {normal(f) for f in case.truth["facts"]}
    lines = _body(text)
    if not lines:
        return Verdict(False, "malformed", "no state in the reply")
    got = {normal(ln) for ln in lines} - {""}
    if got == want:
        return Verdict(True, "success")
    missed, extra = sorted(want - got), sorted(got - want)
    return Verdict(False, "wrong-answer",
                   f"missed {len(missed)}: {'; '.join(missed[:3])}; extra {len(extra)}: "
                   f"{'; '.join(extra[:3])}", {"missed": missed, "extra": extra})


def read_verdict(text: str) -> dict | None:
    """The `verdict:`/`error:`/`step:`/`unmet:` answer, or None when there is no verdict."""
    out: dict = {"valid": None, "error": None, "step": None, "unmet": []}
    in_unmet = False
    for line in _body(text):
        m = re.match(r"^\s*[-*]?\s*(verdict|error|step|unmet)\s*:\s*(.*)$", line, re.I)
        if m:
            key, value = m.group(1).lower(), m.group(2).strip().strip("`*").lower()
            in_unmet = key == "unmet"
            if key == "verdict":
                out["valid"] = {"valid": True, "invalid": False}.get(value.rstrip("."))
            elif key == "error":
                out["error"] = value.rstrip(".")
            elif key == "step":
                digits = re.search(r"\d+", value)
                out["step"] = int(digits.group()) if digits else None
            elif value:
                out["unmet"].append(normal(value))
        elif in_unmet:
            out["unmet"].append(normal(line))
    return out if out["valid"] is not None else None


def score_verdict(case: Case, text: str) -> Verdict:
    truth = case.truth
    got = read_verdict(text)
    if got is None:
        return Verdict(False, "malformed", "no `verdict: valid|invalid` line",
                       {"binary": False, "type": False, "explanation": False})
    binary = got["valid"] == truth["valid"]
    kind = binary and (truth["valid"] or got["error"] == truth["error"])
    if truth["valid"]:
        expl = kind
    else:
        same_facts = set(got["unmet"]) == {normal(u) for u in truth["unmet"]}
        same_step = truth["error"] != "inapplicable-action" or got["step"] == truth["step"]
        expl = kind and same_facts and same_step
    scores = {"binary": binary, "type": kind, "explanation": expl}
    if not binary:
        return Verdict(False, "wrong-answer", f"said {'valid' if got['valid'] else 'invalid'}, "
                       f"the plan is {'valid' if truth['valid'] else 'invalid'}", scores)
    why = "" if expl else (f"right verdict; {'wrong kind of error' if not kind else 'wrong explanation'}"
                           f" (truth: {truth['error']}, step {truth['step']}, unmet "
                           f"{'; '.join(truth['unmet'])})")
    return Verdict(True, "success", why, scores)


def score(case: Case, text: str | None) -> Verdict:
    """The verdict on one reply to a suite case."""
    kind = case.truth.get("kind")
    if kind == "plan":
        return score_plan(case, text or "")
    if kind == "state":
        return score_state(case, text or "")
    if kind == "verdict":
        return score_verdict(case, text or "")
    raise ValueError(f"case {case.test} {case.domain}/{case.instance}: unknown truth kind {kind!r}")


def oracle_answer(case: Case) -> str:
    """What a reply that scores full marks says (the reference oracle's answer)."""
    t = case.truth
    if t["kind"] == "plan":
        return "```\n" + "\n".join(t["plan"]) + "\n```"
    if t["kind"] == "state":
        return "```\n" + "\n".join(t["facts"]) + "\n```"
    from planaudit.curriculum.generate import Builder

    return Builder.verdict_text(t)


def wrong_verdict(case: Case) -> str:
    """A t3 answer with the verdict flipped (the flawed reference model's fault)."""
    t = case.truth
    if t["valid"]:
        return "```\nverdict: invalid\nerror: goal-not-reached\nunmet:\n```"
    return "```\nverdict: valid\n```"
