"""A participant's phase-1 text read as a model's reply is: a fenced block by the output
contract, anything else line by line, first by the strict reading of plans in words, on
the task's own names (as written in the action list, or in words) or on PlanBench's words
for a PlanBench instance; prose lines are skipped; a text with no line read as a step is
unreadable and says why (its first unreadable line). People's own phrasing, and lines
marked one by one: tests/test_human_paraphrase.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from planaudit.formal.load import load_task
from planaudit.human.reading import read_text

ROOT = Path(__file__).resolve().parents[1]
P02 = load_task(ROOT / "domains/blocksworld/domain.pddl", ROOT / "domains/blocksworld/problems/p02.pddl")
PLANBENCH = ROOT.parent / "shared" / "planbench" / "plan-bench"


@pytest.mark.parametrize("text, steps", [
    ("(unstack c a)\n(put-down c)", [("unstack", ("c", "a")), ("put-down", ("c",))]),
    ("1. unstack c a\n2. put-down c\n3. pick up b",
     [("unstack", ("c", "a")), ("put-down", ("c",)), ("pick-up", ("b",))]),
    ("First I clear a.\nUnstack c from a.\nPut down c.", [("unstack", ("c", "a")), ("put-down", ("c",))]),
    ("Pick up b and stack b on c.", [("pick-up", ("b",)), ("stack", ("b", "c"))]),
    ("Plan:\n```\n(unstack c a)\n(put-down c)\n```", [("unstack", ("c", "a")), ("put-down", ("c",))]),
])
def test_plans_in_words_and_in_pddl_are_read(text, steps):
    got = read_text(text, P02)
    assert got.kind == "plan" and got.steps == steps, got


@pytest.mark.parametrize("text, reason", [
    ("Move the blocks until the tower stands.", "no line reads as an action"),
    ("Pick up b and c.", "line 1: 'Pick up b and c.' (at 'c') names objects but no action"),
    ("Stack b on c on a.", "line 1: 'Stack b on c on a.' is not one action"),
    ("stack a a", "is not one action"),  # the same object twice
    ("", "no text"),
])
def test_unreadable_texts_say_why(text, reason):
    got = read_text(text, P02)
    assert got.kind == "malformed" and reason in got.reason, got


def test_an_object_named_a_is_not_the_a_of_a_word():
    # substring matching would find `a` in "stack" and "table"
    got = read_text("put down a on the table", P02)
    assert got.kind == "plan" and got.steps == [("put-down", ("a",))]


@pytest.mark.skipif(not (PLANBENCH / "configs" / "blocksworld.yaml").is_file(),
                    reason="PlanBench's material is not in ../shared")
def test_a_planbench_instance_is_read_in_planbenchs_words():
    from planaudit.planbench.material import load_config

    cfg = load_config(PLANBENCH, "blocksworld")
    task = cfg.task(2)
    obj = sorted(task.problem.objects)[0]
    words = cfg.object_text(obj)  # e.g. "red block"
    got = read_text(f"1. pick up the {words}\n2. put down the {words}", task, cfg)
    assert got.kind == "plan" and got.steps == [("pick-up", (obj,)), ("put-down", (obj,))], got
