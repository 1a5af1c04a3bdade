"""A domain of one's own under the curriculum (issue 37, finding 15): a test case that
cannot be generated on it is left out when the workflow is built, named there, in the
job's log and in the report, and never fails a job after others have paid for their
calls; a t5 family declared beside the domain (family.yaml) makes t5 run on it without
editing planaudit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.conftest import blocksworld_config, snakemake

FERRY = """(define (domain ferry)
  (:requirements :strips :typing)
  (:types car location)
  (:predicates (at-ferry ?l - location) (at ?c - car ?l - location) (empty-ferry) (on ?c - car))
  (:action sail :parameters (?from ?to - location)
    :precondition (at-ferry ?from)
    :effect (and (at-ferry ?to) (not (at-ferry ?from))))
  (:action board :parameters (?c - car ?l - location)
    :precondition (and (at ?c ?l) (at-ferry ?l) (empty-ferry))
    :effect (and (on ?c) (not (at ?c ?l)) (not (empty-ferry))))
  (:action debark :parameters (?c - car ?l - location)
    :precondition (and (on ?c) (at-ferry ?l))
    :effect (and (at ?c ?l) (empty-ferry) (not (on ?c)))))
"""
PROBLEMS = {
    "p01": ("(c1 - car left right - location)", "(at-ferry left) (empty-ferry) (at c1 left)",
            "(at c1 right)", "solvable", 3),
    "p02": ("(c1 c2 - car left right - location)",
            "(at-ferry left) (empty-ferry) (at c1 left) (at c2 left)",
            "(and (at c1 right) (at c2 right))", "solvable", 7),
    # the ferry carries one car: both on board at once never holds
    "p03": ("(c1 c2 - car left - location)",
            "(at-ferry left) (empty-ferry) (at c1 left) (at c2 left)",
            "(and (on c1) (on c2))", "unsolvable", None),
}
NL = {"world": "A ferry carries cars, one at a time, between the banks of a river.",
      "types": {"car": "a car", "location": "a bank"},
      "predicates": {"at-ferry": "the ferry is at {0}", "at": "car {0} is at {1}",
                     "empty-ferry": "the ferry is empty", "on": "car {0} is on the ferry"},
      "actions": {"sail": "Sail the ferry from one bank to another.",
                  "board": "Drive a car onto the empty ferry where both are.",
                  "debark": "Drive a car off the ferry at the bank where it is."}}
# member n: n cars on the left bank, all to go right; one crossing and back per car
FAMILY = {
    "objects": ["car{i} - car  for i in 1..n", "left right - location"],
    "init": ["(at-ferry left)", "(empty-ferry)", "(at car{i} left)  for i in 1..n"],
    "goal": ["(at car{i} right)  for i in 1..n"],
    "plan": ["(board car{i} left) (sail left right) (debark car{i} right) (sail right left)"
             "  for i in 1..n-1",
             "(board car{n} left) (sail left right) (debark car{n} right)"],
    "unit": ["board", "sail", "debark", "sail"],
}


def ferry(root: Path, solvable: tuple[str, ...] = ("p01", "p02", "p03")) -> Path:
    """The user's own three-task domain, as `planaudit suite new` and its filling leave it."""
    folder = root / "ferry"
    (folder / "problems").mkdir(parents=True)
    (folder / "domain.pddl").write_text(FERRY)
    tasks = []
    for tid in solvable:
        objects, init, goal, label, length = PROBLEMS[tid]
        (folder / "problems" / f"{tid}.pddl").write_text(
            f"(define (problem ferry-{tid}) (:domain ferry)\n  (:objects {objects[1:-1]})\n"
            f"  (:init {init})\n  (:goal {goal}))\n")
        tasks.append({"id": tid, "problem": f"problems/{tid}.pddl", "label": label,
                      "optimal_length": length, "tests": "fixture"})
    (folder / "tasks.yaml").write_text(yaml.safe_dump({"domain": "ferry", "tasks": tasks}))
    (folder / "nl.yaml").write_text(yaml.safe_dump(NL))
    return folder


def _config(tmp: Path, **curriculum) -> Path:
    cfg = blocksworld_config(tmp, {"p01": "solvable", "p02": "solvable"},
                             curriculum={"tests": ["t1", "t5"], "instances": 1, "shots": 1,
                                         **curriculum},
                             acpbench={"types": []}, formalize={"methods": []})
    if not (tmp / "domains" / "ferry").exists():
        ferry(tmp / "domains")
    data = yaml.safe_load(cfg.read_text())
    data["suite"]["domains"] = ["blocksworld", "ferry"]
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def _said(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


SKIP_T5 = "curriculum: t5 is not run on ferry: t5 needs an instance family"


def test_a_test_without_a_family_is_left_out_when_the_workflow_is_built(tmp_path):
    cfg = _config(tmp_path)
    dry = snakemake(cfg, "-n", timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    said = _said(dry)
    family = tmp_path / "domains" / "ferry" / "family.yaml"
    assert f"{SKIP_T5} and the domain has none: declare one in {family}" in said
    assert "t1 is not run on ferry" not in said
    assert said.count("rule curriculum_oracle:") == 2  # t1 and t5 (on blocksworld)


def test_the_t5_job_runs_its_other_domains_and_sends_nothing_for_the_skipped_one(tmp_path):
    cfg = _config(tmp_path)
    res = tmp_path / "results" / "episodes" / "curriculum" / "oracle" / "t5"
    done = snakemake(cfg, str(res / "blocksworld.parquet"), str(res / "ferry.parquet"),
                     timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    log = (tmp_path / "results" / "logs" / "curriculum" / "oracle" / "t5.log").read_text()
    assert SKIP_T5 in log
    assert pl.read_parquet(res / "ferry.parquet").height == 0
    rows = pl.read_parquet(res / "blocksworld.parquet")
    assert rows.height == 1 and rows["success"].all()
    transcripts = tmp_path / "results" / "transcripts" / "curriculum" / "oracle" / "t5"
    assert not (transcripts / "ferry").exists()  # no call was made for it
    # the report says what was left out
    from planaudit.analysis.report import curriculum_skips_sentence

    text = curriculum_skips_sentence(yaml.safe_load(cfg.read_text()))
    assert "t5 on ferry" in text and "family.yaml" in text


def test_a_family_declared_beside_the_domain_runs_t5_on_it(tmp_path):
    from planaudit.curriculum.generate import cases
    from planaudit.curriculum.score import oracle_answer, score
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import load_domain_tasks
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth

    cfg = _config(tmp_path, tests=["t5"])
    (tmp_path / "domains" / "ferry" / "family.yaml").write_text(yaml.safe_dump(FAMILY))
    dry = snakemake(cfg, "-n", timeout=600)
    assert dry.returncode == 0 and "is not run on ferry" not in _said(dry), dry.stderr[-3000:]
    suite = tmp_path / "suite"
    for entry in load_domain_tasks(tmp_path / "domains", "ferry"):
        prepare(entry, suite / "ferry" / entry.id, True, 0)  # obfuscated, as hardest
        make_truth(entry, suite / "ferry" / entry.id, Limits(external=False))
    found = cases(suite, "ferry", "t5", 2, seed=0, shots=1)
    assert [c.truth["family"] for c in found] == [
        {"size": 3, "unit": FAMILY["unit"]}, {"size": 4, "unit": FAMILY["unit"]}]
    for case in found:
        assert score(case, oracle_answer(case)).correct
        assert "car1" not in case.prompt  # the suite's renaming reaches the members too
        assert len(case.truth["plan"]) == 4 * case.truth["family"]["size"] - 1


@pytest.mark.parametrize("change, message", [
    ({"plan": ["(board car{i} left)  for i in 1..n"]}, "family's plan for member 1 is not valid"),
    ({"goal": ["(at car{j} right)  for i in 1..n"]}, r"goal\[0\]: 'j' is not a number"),
    ({"objects": []}, "objects: missing"),
    ({"steps": []}, "unknown field"),
])
def test_a_bad_family_file_is_named_with_its_field(tmp_path, change, message):
    from planaudit.curriculum.families import member
    from planaudit.curriculum.world import CurriculumError
    from planaudit.formal.load import domain_at

    folder = ferry(tmp_path)
    (folder / "family.yaml").write_text(yaml.safe_dump({**FAMILY, **change}))
    with pytest.raises(CurriculumError, match=message) as err:
        member("ferry", domain_at(folder / "domain.pddl"), 1, 0, folder)
    assert "family.yaml" in str(err.value)


def test_a_domain_with_one_solvable_task_skips_the_tests_that_show_examples(tmp_path):
    from planaudit.curriculum.regime import planned_skips

    ferry(tmp_path / "domains", solvable=("p01", "p03"))
    config = {"suite": {"source": "builtin", "root": str(tmp_path / "domains")},
              "curriculum": {"tests": ["t1", "t3", "t5"], "shots": 1,
                             "params": {"t1": {"shots": 0}}}}
    found = planned_skips(config)
    assert sorted(found) == [("t3", "ferry"), ("t5", "ferry")]
    assert "1 solvable task" in found[("t3", "ferry")]
