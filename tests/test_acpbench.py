"""ACPBench gold answers by proof: each type's agreement with the dev gen files,
and answers on a tiny hand-written task where they are known."""

from __future__ import annotations

import json
import os

import pytest

from planaudit.acpbench.agree import compare
from planaudit.acpbench.commands import run
from planaudit.acpbench.gold import gold
from planaudit.acpbench.items import Item
from planaudit.cli import main
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "acpbench"
needs_shared = pytest.mark.skipif(not SHARED.exists() and not os.environ.get("CI"),
                                  reason="../shared/acpbench not present")

# agreement with the file's answers, measured; every disagreement is explained in the
# docs/howto/acpbench.md (the file's side is wrong by PDDL semantics in each)
AGREE = {"app": 40, "val": 40, "prog": 40, "reach": 36, "areach": 40, "just": 39, "land": 27,
         "nexta": 40}


@needs_shared
@pytest.mark.parametrize("task", sorted(AGREE))
def test_agreement_with_the_dev_gen_file(task):
    rows, summary = run(SHARED / "dataset" / task / "dev.gen.json")
    assert summary[task]["items"] == 40
    assert summary[task]["agree"] == AGREE[task], [r["reason"] for r in rows if not r["agree"]]


# a line of three rooms r1 - r2 - r3 and a locked room r4 no action enters; a ball in r1
DOMAIN = """(define (domain line) (:requirements :strips :typing)
  (:types room ball)
  (:predicates (at-robot ?r - room) (adj ?a ?b - room) (at ?b - ball ?r - room) (holding ?b - ball)
               (free))
  (:action move :parameters (?a ?b - room) :precondition (and (at-robot ?a) (adj ?a ?b))
    :effect (and (at-robot ?b) (not (at-robot ?a))))
  (:action pick :parameters (?b - ball ?r - room) :precondition (and (at ?b ?r) (at-robot ?r) (free))
    :effect (and (holding ?b) (not (at ?b ?r)) (not (free))))
  (:action drop :parameters (?b - ball ?r - room) :precondition (and (holding ?b) (at-robot ?r))
    :effect (and (at ?b ?r) (free) (not (holding ?b)))))"""
PROBLEM = """(define (problem p) (:domain line)
  (:objects r1 r2 r3 r4 - room b - ball)
  (:init (at-robot r1) (at b r1) (free) (adj r1 r2) (adj r2 r1) (adj r2 r3) (adj r3 r2))
  (:goal (at b r3)))"""


def _item(task: str, question: str = "", answer=None) -> Item:
    return Item("t", task, question, DOMAIN, PROBLEM, answer)


def test_tiny_task_answers():
    assert gold(_item("app")).answer == ["(move r1 r2)", "(pick b r1)"]
    assert gold(_item("val", 'sequence: "(pick b r1) (move r1 r2) (move r1 r2)"?')).answer == 2
    g = gold(_item("prog", 'the action "pick up the ball b in room r1"'))
    assert {k: sorted(v) for k, v in g.answer.items()} == {"pos": ["(holding b)"],
                                                            "neg": ["(at b r1)", "(free)"]}
    reach = gold(_item("reach")).answer
    assert "at-robot r4" in reach and "at b r4" in reach and "at b r2" not in reach
    areach = gold(_item("areach")).answer
    assert "(move r1 r3)" in areach and "(move r2 r3)" not in areach
    plan = '"(pick b r1) (move r1 r2) (move r2 r1) (move r1 r2) (move r2 r3) (drop b r3)"'
    options = gold(_item("just", f"Simplify the plan {plan}")).answer
    assert options == [["(move r1 r2)", "(move r2 r1)", "-1"],
                       ["(move r2 r1)", "(move r1 r2)", "-1"]]


def test_tiny_task_agreement_rules():
    g = gold(_item("reach"))
    assert compare("reach", g, ["at b r4"]).agree
    assert not compare("reach", g, ["at b r2"]).agree  # reachable
    assert not compare("reach", g, []).agree  # there are unreachable atoms
    assert compare("app", gold(_item("app")), ["(PICK b r1)", "(move r1 r2)"]).agree


@needs_shared
def test_cli_json(capsys):
    assert main(["acpbench", "gold", str(SHARED / "dataset" / "val" / "dev.gen.json"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["items"]) == 40 and set(out["items"][0]) == {"id", "task", "answer"}
    assert out["summary"]["val"]["agree"] == 40


def test_reads_gzip_and_rejects_other_files(tmp_path, capsys):
    import gzip

    row = {"id": 1, "group": "applicable_actions_gen", "context": "", "question": "",
           "answer": ["(move r1 r2)", "(pick b r1)"], "PDDL_domain": DOMAIN,
           "PDDL_problem": PROBLEM}
    path = tmp_path / "dev.gen.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump([row], f)
    assert main(["acpbench", "gold", str(path)]) == 0
    assert "app: 1/1 agree" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": 1}]))
    assert main(["acpbench", "gold", str(bad)]) == 2


def test_projection_past_the_limit():
    from planaudit.acpbench.gold import areach, reach

    item = _item("reach")
    small = reach(item, item.planning_task(), max_states=1)
    assert "at b r4" in small.answer and "at b r2" not in small.answer
    assert "at b r2" not in small.undecided or small.limits
    item = _item("areach")
    small = areach(item, item.planning_task(), max_states=1)
    assert "(move r1 r3)" in small.answer and "(drop b r4)" in small.answer
