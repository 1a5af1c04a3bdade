"""The output contract and offline outcomes, end to end with the validator."""

from __future__ import annotations

import pytest

from planaudit.contract import extract, parse_action
from planaudit.episode import offline_outcome
from planaudit.formal import load_task, parse_plan, validate
from planaudit.formal.truth import Limits, solve
from tests.conftest import DOMAINS

BW = DOMAINS / "blocksworld"
ACTIONS = frozenset({"pick-up", "put-down", "stack", "unstack"})


@pytest.mark.parametrize("line", [
    "(stack a b)", "stack a b", "stack(a, b)", "1. stack a b", "2) (stack a b)",
    "Step 3: (STACK A B)", "- stack a b", "* Stack(A,B)", "(stack a b).", "  stack  a   b ",
    "step 4 - stack a b",
])
def test_the_ways_models_write_an_action(line):
    assert parse_action(line) == ("stack", ("a", "b"))


def test_zero_argument_actions_and_unreadable_lines():
    assert parse_action("(handempty-check)") == ("handempty-check", ())
    assert parse_action("Then I would stack a on b", ACTIONS) is None
    assert parse_action("stack a b", ACTIONS) == ("stack", ("a", "b"))
    assert parse_action("(stack a (b))") is None


def test_last_fenced_block_counts():
    reply = "Draft:\n```\n(pick-up a)\n```\nBetter:\n```pddl\n(pick-up b)\n(stack b a)\n```\n"
    ex = extract(reply)
    assert ex.kind == "plan" and ex.steps == [("pick-up", ("b",)), ("stack", ("b", "a"))]


def test_unsolvable_forms():
    for reply in ("UNSOLVABLE", "unsolvable.", "**UNSOLVABLE**", "```\nUNSOLVABLE\n```",
                  "The goal needs a cycle.\n\nUNSOLVABLE"):
        assert extract(reply).kind == "unsolvable", reply


def test_contract_breaches_say_why():
    assert extract("").reason == "empty reply"
    assert extract(None).reason == "empty reply"
    assert "no fenced block" in extract("pick-up a then stack a b").reason
    assert "never closed" in extract("```\n(pick-up a)\n").reason
    ex = extract("```\n(pick-up a)\nnow stack it on b please\n```", ACTIONS)
    assert ex.kind == "malformed" and "line 2" in ex.reason


def test_comments_inside_the_block_are_ignored():
    ex = extract("```\n; the plan\n(unstack c a) ; clear a\n# put it down\n(put-down c)\n```")
    assert ex.steps == [("unstack", ("c", "a")), ("put-down", ("c",))]


def _outcome(task, solvable, reply):
    ex = extract(reply)
    failure = None
    if ex.kind == "plan":
        v = validate(task, parse_plan(ex.plan_text))
        failure = v.failure.kind if v.failure else None
    return offline_outcome(solvable, ex.kind, failure)


def test_outcomes_on_a_real_task():
    task = load_task(BW / "domain.pddl", BW / "problems" / "p01.pddl")
    truth = solve(str(BW / "domain.pddl"), str(BW / "problems" / "p01.pddl"),
                  Limits(external=False))
    plan = truth["plan"]
    styles = {
        "parens": "\n".join(plan),
        "numbered": "\n".join(f"{i}. {p.strip('()')}" for i, p in enumerate(plan, 1)),
        "calls": "\n".join(f"{p.strip('()').split()[0]}({', '.join(p.strip('()').split()[1:])})"
                           for p in plan),
    }
    for name, body in styles.items():
        assert _outcome(task, True, f"Here is my plan:\n```\n{body}\n```") == "success", name
    assert _outcome(task, True, "```\n" + "\n".join(plan[:-1]) + "\n```") == "goal-not-reached"
    assert _outcome(task, True, "```\n" + "\n".join(plan[1:]) + "\n```") == "inapplicable-action"
    assert _outcome(task, True, "```\n(fly a b)\n```") == "malformed"
    assert _outcome(task, True, "UNSOLVABLE") == "false-abstention"
    assert _outcome(task, False, "UNSOLVABLE") == "detected"
    assert _outcome(task, False, "```\n" + "\n".join(plan) + "\n```") == "missed-unsolvable"
    assert _outcome(task, True, "I am not sure.") == "malformed"


PROBLEM = "(define (problem p) (:domain d)\n  (:objects a - block)\n  (:init) (:goal (and)))"
DOMAIN = "(define (domain d) (:predicates (on ?x ?y)))"


@pytest.mark.parametrize(("reply", "need", "kind", "texts", "reason"), [
    (f"Here it is:\n```pddl\n{PROBLEM}\n```", ("problem",), "files", {"problem": PROBLEM}, None),
    # a draft first, then the answer: the last problem counts
    (f"```\n{PROBLEM.replace('(p)', '(draft)')}\n```\nbetter:\n```lisp\n{PROBLEM}\n```",
     ("problem",), "files", {"problem": PROBLEM}, None),
    (f"```pddl\n{DOMAIN}\n```\n```pddl\n{PROBLEM}\n```", ("domain", "problem"), "files",
     {"domain": DOMAIN, "problem": PROBLEM}, None),
    # both files in one block, the problem first: each told by its head
    (f"```\n{PROBLEM}\n\n; the domain\n{DOMAIN}\n```", ("domain", "problem"), "files",
     {"domain": DOMAIN, "problem": PROBLEM + "\n\n; the domain"}, None),
    (f"```pddl\n{DOMAIN}\n```", ("domain", "problem"), "malformed", {"domain": DOMAIN},
     "no fenced block holds a (define (problem ..."),
    (PROBLEM, ("problem",), "malformed", {}, "no fenced block"),
    (f"```pddl\n{PROBLEM}", ("problem",), "malformed", {}, "a fenced block is opened but never closed"),
    ("", ("problem",), "malformed", {}, "empty reply"),
    ("```\nUNSOLVABLE\n```", ("domain", "problem"), "malformed", {},
     "no fenced block holds a (define (domain ... or a (define (problem ..."),
])
def test_a_formalizers_files_are_read_from_fenced_blocks(reply, need, kind, texts, reason):
    from planaudit.contract import extract_pddl

    got = extract_pddl(reply, need)
    assert (got.kind, got.reason) == (kind, reason)
    assert {k: v.strip() for k, v in got.texts.items()} == {k: v.strip() for k, v in texts.items()}
