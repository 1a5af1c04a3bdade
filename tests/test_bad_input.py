"""Bad input gets a clear error naming the file and line, or a verdict; never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from planaudit.cli import main
from tests.conftest import DATA

DOMAIN = DATA / "mixed-domain.pddl"
PROBLEM = DATA / "mixed-problem.pddl"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unbalanced_parenthesis_names_file_and_line(write, capsys):
    text = DOMAIN.read_text().replace("(increase (total-cost) 1)))", "(increase (total-cost) 1))", 1)
    bad = write("bad-domain.pddl", text)
    plan = write("p.plan", "(move r1 hall kitchen)\n")
    code, _, err = run(capsys, "validate", bad, PROBLEM, plan)
    assert code == 2
    assert "bad-domain.pddl:3: unclosed" in err  # the (define ... that never closes
    assert "Traceback" not in err


def test_extra_closing_parenthesis_names_its_line(write, capsys):
    bad = write("bad-problem.pddl", PROBLEM.read_text().replace("(Free R1)", "(Free R1))"))
    code, _, err = run(capsys, "validate", DOMAIN, bad, write("p.plan", ""))
    assert code == 2
    assert "bad-problem.pddl:9:" in err and "unbalanced" in err


def test_unknown_requirement_is_named(write, capsys):
    bad = write("req.pddl", DOMAIN.read_text().replace(":equality", ":equality :teleportation"))
    code, _, err = run(capsys, "validate", bad, PROBLEM, write("p.plan", ""))
    assert code == 2
    assert "unknown requirement :teleportation" in err and "req.pddl:5" in err


def test_unsupported_requirement_is_named(write, capsys):
    bad = write("dur.pddl", DOMAIN.read_text().replace(":equality", ":durative-actions"))
    code, _, err = run(capsys, "validate", bad, PROBLEM, write("p.plan", ""))
    assert code == 2 and "requirement :durative-actions is not supported" in err


def test_undeclared_predicate_in_action(write, capsys):
    bad = write("typo.pddl", DOMAIN.read_text().replace("(Lit ?x)", "(Lt ?x)", 1))
    code, _, err = run(capsys, "validate", bad, PROBLEM, write("p.plan", ""))
    assert code == 2 and "unknown predicate lt" in err and "typo.pddl:" in err


def test_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "validate", DOMAIN, PROBLEM, tmp_path / "nope.plan")
    assert code == 2 and "nope.plan: no such file" in err


def test_empty_plan_is_a_verdict(write, capsys):
    code, out, _ = run(capsys, "validate", DOMAIN, PROBLEM, write("empty.plan", "; nothing\n"),
                       "--json")
    verdict = json.loads(out)
    assert code == 1
    assert verdict["length"] == 0 and verdict["executable"] and not verdict["goal_reached"]
    assert verdict["failure"]["kind"] == "goal"
    assert verdict["failure"]["unsatisfied"] == ["(in box hall)", "(not (in cup hall))"]


def test_unknown_names_are_verdicts(write, capsys):
    cases = {
        "(fly r1 hall kitchen)": ("unknown-action", 1),
        "(move r1 hall)": ("wrong-arity", 1),
        "(move r1 hall garage)": ("unknown-object", 1),
        "(move box hall kitchen)": ("type-mismatch", 1),
        "(move r1 hall kitchen)\n(move r1 kitchen store)": ("precondition", 2),
    }
    for plan, (kind, step) in cases.items():
        code, out, _err = run(capsys, "validate", DOMAIN, PROBLEM, write("x.plan", plan), "--json")
        verdict = json.loads(out)
        assert code == 1, plan
        assert verdict["failure"]["kind"] == kind, plan
        assert verdict["failure"]["step"] == step, plan
        assert not verdict["executable"]


def test_precondition_failure_lists_what_was_false(write, capsys):
    plan = write("x.plan", "(move r1 hall store)")
    _, out, _ = run(capsys, "validate", DOMAIN, PROBLEM, plan, "--json")
    assert json.loads(out)["failure"]["unsatisfied"] == ["(not (locked store))"]


def test_bad_batch_record_is_reported_and_the_rest_validated(write, capsys, tmp_path):
    plan = "(move r1 hall kitchen)(pick r1 box kitchen)(move r1 kitchen hall)(drop r1 box hall)"
    recs = [
        {"domain": str(DOMAIN), "problem": str(PROBLEM), "plan": plan},
        {"domain": str(DOMAIN), "plan": plan},
        "not json {",
        {"domain": str(DOMAIN), "problem": str(tmp_path / "missing.pddl"), "plan": plan},
        {"domain": str(DOMAIN), "problem": str(PROBLEM), "plan": "(switch r1 hall)"},
    ]
    batch = write("recs.jsonl", "\n".join(r if isinstance(r, str) else json.dumps(r)
                                          for r in recs))
    code, out, err = run(capsys, "validate", "--batch", batch)
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 2 and "3 record(s) could not be validated" in err
    assert len(lines) == 5
    assert "recs.jsonl:2: bad record" in lines[1]["error"]
    assert "recs.jsonl:3: bad record" in lines[2]["error"]
    assert "missing.pddl: no such file" in lines[3]["error"]
    assert lines[0]["executable"] and lines[4]["failure"]["kind"] == "goal"


def test_console_script_runs(tmp_path):
    plan = tmp_path / "p.plan"
    plan.write_text("0: (Move R1 Hall Kitchen) ; timestamps and comments are ignored\n")
    proc = subprocess.run([sys.executable, "-m", "planaudit.cli", "validate", str(DOMAIN),
                           str(PROBLEM), str(plan)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "invalid (goal)" in proc.stdout and "(in box hall)" in proc.stdout


def test_unknown_object_in_goal_is_named_with_its_line(write, capsys):
    bad = write("goal.pddl", PROBLEM.read_text().replace("(In box hall)", "(In crate hall)"))
    code, _, err = run(capsys, "validate", DOMAIN, bad, write("p.plan", ""))
    assert code == 2 and "goal.pddl:8: unknown object crate in :goal" in err


def test_problem_without_goal(write, capsys):
    text = PROBLEM.read_text()
    bad = write("nogoal.pddl", text[: text.index("(:goal")] + ")")
    code, _, err = run(capsys, "validate", DOMAIN, bad, write("p.plan", ""))
    assert code == 2 and "nogoal.pddl: the problem has no :goal" in err


@pytest.mark.parametrize(("text", "line", "why"), [
    ("(move r1 hall kitchen)\n(pick r1 box\n(drop r1 box hall)\n", 3, "unclosed step from line 2"),
    ("((move r1 hall kitchen))\n", 1, "a step inside a step"),
    ("[PDDL PLAN]\n(move r1 hall kitchen)\n[PDDL PLAN END]\n", 1, "'[' outside a step"),
    ("Step 1: (move r1 hall kitchen)\n", 1, "'step' outside a step"),
    ("(move r1 hall kitchen)\n()\n", 2, "an empty step"),
    ("2: (move r1 hall kitchen)\n1: (pick r1 box kitchen)\n", 2, "does not come after 2"),
    ("(move r1 hall kitchen) [x]\n", 1, "does not open a duration"),
    ("(move r1 hall kitchen)\n(pick r1 box", 2, "never closed"),
])
def test_unreadable_plan_files_are_refused_naming_the_line(write, capsys, text, line, why):
    plan = write("bad.plan", text)
    code, out, err = run(capsys, "validate", DOMAIN, PROBLEM, plan)
    assert code == 2 and not out
    assert f"bad.plan:{line}: not a plan VAL reads" in err and why in err


def test_what_val_reads_around_steps_is_accepted(write, capsys):
    text = ("; a comment\n0.000: (Move R1 Hall Kitchen) [1.000]\n1: (pick r1, box kitchen)\n"
            "time 0.5\n(move r1 kitchen hall)\n")
    code, out, _ = run(capsys, "validate", DOMAIN, PROBLEM, write("ok.plan", text), "--json")
    verdict = json.loads(out)
    assert code == 1 and verdict["executable"] and verdict["length"] == 3


def test_an_unreadable_plan_in_a_batch_gets_its_line_and_the_rest_go_on(write, capsys):
    good = "(move r1 hall kitchen)"
    recs = [{"domain": str(DOMAIN), "problem": str(PROBLEM), "plan": p}
            for p in (good, "(move r1 hall kitchen", good)]
    batch = write("recs.jsonl", "\n".join(json.dumps(r) for r in recs))
    code, out, _ = run(capsys, "validate", "--batch", batch)
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 2 and len(lines) == 3
    assert "recs.jsonl:2:1: not a plan VAL reads" in lines[1]["error"]
    assert lines[0]["executable"] and lines[2]["executable"]
