"""The semantics cases of ../shared/conformance/semantics: every verdict, cost and truth
they require, through the command line (exit codes included) and through --batch."""

from __future__ import annotations

import json
import os

import pytest

from planaudit.cli import main
from planaudit.formal import load_task, parse_plan, validate
from tests.conftest import SEMANTICS

EXPECTED = SEMANTICS / "expected.jsonl"
# CI always lays shared/ beside the checkout: there a missing case file is a failure, not a skip.
pytestmark = pytest.mark.skipif(not EXPECTED.exists() and not os.environ.get("CI"),
                                reason="../shared/conformance/semantics not present")
CASES = ([json.loads(x) for x in EXPECTED.read_text().splitlines() if x.strip()]
         if EXPECTED.exists() else [])
TRUTH_KEYS = ("solvable", "optimal_length", "optimal_cost")


def _files(case: dict) -> tuple[str, str, str]:
    d = SEMANTICS / case["case"]
    return str(d / "domain.pddl"), str(d / "problem.pddl"), str(d / case["plan"])


def _id(case: dict) -> str:
    return f"{case['case']}/{case['plan']}"


def test_the_cases_are_all_there():
    assert len(CASES) >= 24
    assert {c["valid"] for c in CASES} == {True, False, None}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_validate_gives_the_required_verdict(case, capsys):
    code = main(["validate", *_files(case), "--json"])
    out = capsys.readouterr()
    if case["valid"] is None:  # the plan file is refused as unreadable, naming its line
        assert code == 2, out.out
        assert case["plan"] in out.err and "not a plan VAL reads" in out.err
        return
    verdict = json.loads(out.out)
    assert code == (0 if case["valid"] else 1)
    assert verdict["valid"] is case["valid"], case["why"]
    if "cost" in case:
        assert verdict["cost"] == case["cost"], case["why"]
    if "step" in case:
        assert verdict["failure"]["step"] == case["step"], verdict["failure"]
    if "kind" in case:
        assert verdict["failure"]["kind"] == case["kind"], verdict["failure"]
    if not case["valid"]:  # every negative verdict says what failed, never '(or)' or '(and)'
        f = verdict["failure"]
        assert f["detail"] and "(or)" not in f["unsatisfied"] and "(and)" not in f["unsatisfied"]
        if f["kind"] in ("precondition", "goal"):
            assert f["unsatisfied"], f


@pytest.mark.parametrize("case", [c for c in CASES if any(k in c for k in TRUTH_KEYS)], ids=_id)
def test_solve_finds_the_required_truth(case, capsys):
    domain, problem, _ = _files(case)
    code = main(["solve", domain, problem, "--json", "--no-external"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in TRUTH_KEYS:
        if key in case:
            assert record[key] == case[key], (key, case["why"], record["methods"])
    if record["solvable"]:  # the plan it reports is valid here, at the optimal cost
        verdict = validate(load_task(domain, problem), parse_plan("\n".join(record["plan"])))
        assert verdict.valid and verdict.cost == record["optimal_cost"], verdict


def test_batch_gives_every_case_its_own_line(tmp_path, capsys):
    """One record a case, refused plans and all: each gets its line, in order, and the
    verdicts are those of single runs; an unreadable plan never stops the batch."""
    lines = []
    for c in CASES:
        domain, problem, plan = _files(c)
        lines.append(json.dumps({"domain": domain, "problem": problem, "plan_file": plan}))
    batch = tmp_path / "records.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    code = main(["validate", "--batch", str(batch)])
    out = capsys.readouterr()
    verdicts = [json.loads(x) for x in out.out.splitlines()]
    assert [v["line"] for v in verdicts] == list(range(1, len(CASES) + 1))
    refused = sum(c["valid"] is None for c in CASES)
    assert code == (2 if refused else 0)
    for c, v in zip(CASES, verdicts, strict=True):
        if c["valid"] is None:
            assert "not a plan VAL reads" in v["error"], v
        else:
            assert v["valid"] is c["valid"] and v.get("cost", None) == c.get("cost", v["cost"]), (c, v)
