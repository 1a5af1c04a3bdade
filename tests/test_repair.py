"""Heuristic mode: LPG's plan repair seeded with a plan, run for real (the up-lpg binary).

The wheel is manylinux x86_64 only; elsewhere the tests that run LPG are skipped, saying so.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from planaudit.formal import load_task, validate
from planaudit.formal import repair as R
from planaudit.formal.plan import parse_plan
from planaudit.offline.run import repair_columns
from tests.processes import gone

DOMAINS = Path(__file__).resolve().parents[1] / "domains"
BW = DOMAINS / "blocksworld"
needs_lpg = pytest.mark.skipif(not R.available(),
                               reason="LPG not installed: the up-lpg wheel exists for Linux x86_64 only")

# blocksworld p03: reverse the tower a b c d (optimal, 8 steps)
PLAN = parse_plan("""(unstack a b) (put-down a) (unstack b c) (stack b a)
                     (unstack c d) (stack c b) (pick-up d) (stack d c)""")


def bw_task(problem: str = "p03"):
    return load_task(BW / "domain.pddl", BW / "problems" / f"{problem}.pddl")


def run(steps, seed=0, problem="p03", timeout=20.0):
    task = bw_task(problem)
    return task, R.repair(task, BW / "domain.pddl", BW / "problems" / f"{problem}.pddl", steps,
                          seed=seed, timeout=timeout)


def test_levenshtein_counts_whole_actions():
    a = [("x", ()), ("y", ()), ("z", ())]
    assert R.levenshtein(a, a) == 0
    assert R.levenshtein(a, a[:2]) == 1
    assert R.levenshtein(a, [a[1], a[0], a[2]]) == 2
    assert R.levenshtein([], a) == 3


def test_seed_file_is_lpgs_plan_format():
    assert R.seed_text(PLAN[:2]) == "0:   (UNSTACK A B) [1]\n1:   (PUT-DOWN A) [1]\n"
    assert R.read_plan("; Version LPG\n\n0:   (UNSTACK A B) [1]\n1: (PUT-DOWN A) [1]\n") == PLAN[:2]
    assert R.read_plan("0: (UNSTACK A B) [1]\nSegmentation fault\n") is None


@needs_lpg
def test_valid_seed_comes_back_unchanged():
    for seed in (0, 1, 2):
        task, r = run(PLAN, seed=seed)
        assert r.status == "repaired" and r.steps == PLAN
        assert validate(task, r.steps).valid


@needs_lpg
def test_almost_valid_seed_comes_back_close():
    """LPG really adapts the seed: planning from scratch (what up-lpg's lpg-repairer
    does) gives a 16-step plan here, far from the seed; repair stays one or two edits away."""
    dropped = PLAN[:1] + PLAN[2:]  # put-down a left out
    task, r = run(dropped)
    assert r.repaired and validate(task, r.steps).valid
    assert R.levenshtein(dropped, r.steps) <= 2
    swapped = [PLAN[1], PLAN[0], *PLAN[2:]]  # put-down before unstack
    task, r = run(swapped)
    assert r.repaired and validate(task, r.steps).valid
    assert R.levenshtein(swapped, r.steps) <= 2
    _, scratch = R.run_lpg(BW / "domain.pddl", BW / "problems" / "p03.pddl", [], seed=1)[:2]
    assert R.levenshtein(dropped, scratch) > 2


@needs_lpg
def test_deterministic_for_a_seed():
    broken = [PLAN[0], PLAN[3], PLAN[2], *PLAN[5:]]
    first = run(broken, seed=3)[1].steps
    assert first is not None and run(broken, seed=3)[1].steps == first


@needs_lpg
def test_unknown_objects_and_actions_are_dropped_not_handed_over():
    """LPG exits 1 on an object the problem lacks; such steps are dropped and counted."""
    steps = [("unstack", ("a", "zz")), *PLAN[:3], ("fly", ("a",)), ("stack", ("b",)), *PLAN[3:]]
    task, r = run(steps)
    assert [s for s in r.dropped] == [("unstack", ("a", "zz")), ("fly", ("a",)), ("stack", ("b",))]
    assert r.seed_length == len(PLAN)
    assert r.repaired and r.steps == PLAN and validate(task, r.steps).valid


@needs_lpg
def test_empty_seed_plans_from_scratch_instead_of_crashing():
    """An empty seed file makes LPG crash (SIGSEGV); with nothing to hand over it plans."""
    task, r = run([("fly", ("x",))])
    assert r.seed_length == 0 and len(r.dropped) == 1
    assert r.repaired and validate(task, r.steps).valid


@needs_lpg
def test_action_costs_are_stripped_for_lpg():
    """LPG crashes adapting a plan under action costs; total-cost is only increased in
    gripper, so LPG gets the domain without it and the plan is judged on the original."""
    folder = DOMAINS / "gripper"
    task = load_task(folder / "domain.pddl", folder / "problems" / "p01.pddl")
    assert R.lpg_files(folder / "domain.pddl", folder / "problems" / "p01.pddl") is not None
    plan = [("pick", ("ball1", "rooma", "left")), ("move", ("rooma", "roomb")),
            ("drop", ("ball1", "roomb", "left"))]
    r = R.repair(task, folder / "domain.pddl", folder / "problems" / "p01.pddl", plan[1:], seed=0)
    assert r.repaired and validate(task, r.steps).valid


@needs_lpg
def test_numeric_domain_is_repaired():
    """loadbalancing has numeric fluents (capacity, load) besides action costs: LPG repairs it."""
    folder = DOMAINS / "loadbalancing"
    task = load_task(folder / "domain.pddl", folder / "problems" / "p01.pddl")
    plan = parse_plan("(power-on s1) (start-service web s1) (assign-bucket b1 s1 eu web)")
    assert validate(task, plan).valid
    r = R.repair(task, folder / "domain.pddl", folder / "problems" / "p01.pddl", plan[1:], seed=0)
    assert r.repaired and validate(task, r.steps).valid


COST_READ_DOMAIN = """(define (domain budget) (:requirements :strips :action-costs)
  (:predicates (done))
  (:functions (total-cost) - number)
  (:action work :parameters () :precondition (< (total-cost) 5)
    :effect (and (done) (increase (total-cost) 1))))
"""
COST_READ_PROBLEM = """(define (problem b1) (:domain budget) (:init (= (total-cost) 0))
  (:goal (done)) (:metric minimize (total-cost)))
"""


def test_costs_read_by_the_domain_are_skipped_with_a_reason(tmp_path):
    """Action costs are stripped for LPG (it crashes adapting under them) only where nothing
    reads total-cost; otherwise the task is skipped, saying why."""
    (tmp_path / "d.pddl").write_text(COST_READ_DOMAIN)
    (tmp_path / "p.pddl").write_text(COST_READ_PROBLEM)
    task = load_task(tmp_path / "d.pddl", tmp_path / "p.pddl")
    r = R.repair(task, tmp_path / "d.pddl", tmp_path / "p.pddl", [("work", ())], seed=0)
    assert r.status == "skipped" and r.detail == R.COSTS_READ and r.steps is None


def fake_lpg(tmp_path: Path, monkeypatch, script: str) -> None:
    path = tmp_path / "lpg"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv(R.ENV, str(path))


def test_quirks_timeout_crash_garbage_no_plan(tmp_path, monkeypatch):
    task = bw_task()
    args = (task, BW / "domain.pddl", BW / "problems" / "p03.pddl", PLAN)
    # LPG past its limit: the process is killed (not left running) and the limit is
    # reported; the time it takes is printed by benchmarks/timings.py, not asserted
    pid_file = tmp_path / "lpg.pid"
    fake_lpg(tmp_path, monkeypatch, f"echo $$ > {pid_file}; exec sleep 30")
    r = R.repair(*args, timeout=0.5)
    assert r.status == "timeout" and r.steps is None
    assert r.detail == "no answer within 0.5 s"
    assert gone(int(pid_file.read_text()))
    fake_lpg(tmp_path, monkeypatch, "kill -SEGV $$")
    assert R.repair(*args).status == "crash"
    fake_lpg(tmp_path, monkeypatch, "echo 'constant name ZZ not found'; exit 1")
    assert R.repair(*args).status == "crash"
    fake_lpg(tmp_path, monkeypatch, 'echo "0: (UNSTACK A B) [1]\nlet me think" > plan.sol')
    assert R.repair(*args).status == "garbage"
    fake_lpg(tmp_path, monkeypatch, "echo 'The problem is unsolvable since at the fixpoint "
                                    "level the goals are mutex or not reachable'")
    assert R.repair(*args).status == "no-plan"
    monkeypatch.setenv(R.ENV, str(tmp_path / "absent"))
    with pytest.raises(R.RepairUnavailable):
        R.lpg_binary()


@needs_lpg
def test_row_columns(tmp_path):
    """The episode's repair columns: LPG's plan judged by formal/, never trusted."""
    folder = tmp_path / "task"
    folder.mkdir()
    os.symlink(BW / "domain.pddl", folder / "domain.pddl")
    os.symlink(BW / "problems" / "p03.pddl", folder / "problem.pddl")
    task = bw_task()
    settings = {"only_invalid": True, "seed": 0, "timeout": 20}
    broken = PLAN[:1] + PLAN[2:]
    row = repair_columns(task, folder, broken, True, False, settings)
    assert row["repaired"] is True and row["repair_valid"] is True
    assert row["repair_distance"] <= 2 and row["repair_length"] >= 8
    assert row["repair_skipped"] is None and row["repair_seconds"] > 0
    assert repair_columns(task, folder, PLAN, True, True, settings)["repair_skipped"] == \
        "valid plan (only_invalid)"
    row = repair_columns(task, folder, PLAN, True, True, {**settings, "only_invalid": False})
    assert row["repair_distance"] == 0
    assert repair_columns(task, folder, PLAN, False, False, settings)["repair_skipped"] == \
        "unsolvable task"
    assert repair_columns(task, folder, None, True, False, settings)["repair_skipped"] == \
        "no plan extracted"


def test_repair_table():
    import polars as pl

    from planaudit.analysis.tables import repair_table

    base = {"regime": "offline", "model": "flawed", "reference": True, "method": "direct",
            "domain": "blocksworld"}
    rows = [
        {**base, "task": "p01", "repaired": True, "repair_valid": True, "repair_distance": 1,
         "repair_distance_reordered": 1, "repair_length": 8, "repair_seconds": 0.2, "repair_skipped": None},
        {**base, "task": "p02", "repaired": True, "repair_valid": True, "repair_distance": 3,
         "repair_distance_reordered": 1, "repair_length": 12, "repair_seconds": 0.4, "repair_skipped": None},
        {**base, "task": "p03", "repaired": False, "repair_valid": None, "repair_distance": None,
         "repair_distance_reordered": None, "repair_length": None, "repair_seconds": 0.3,
         "repair_skipped": None},
        {**base, "task": "p04", "repaired": None, "repair_valid": None, "repair_distance": None,
         "repair_distance_reordered": None, "repair_length": None, "repair_seconds": None,
         "repair_skipped": "valid plan (only_invalid)"},
    ]
    t = repair_table(pl.DataFrame(rows)).row(0, named=True)
    assert t["model"] == "flawed (reference, not an LLM)"
    assert (t["plans"], t["skipped"], t["attempted"], t["repaired"], t["valid_after_repair"]) == \
        (4, 1, 3, 2, 2)
    assert t["repair_rate"] == pytest.approx(2 / 3)
    assert t["mean_distance"] == 2 and t["mean_repaired_length"] == 10
    assert t["mean_distance_reordered"] == 1  # LPG's own output is the main figure
    assert t["distance_per_length"] == pytest.approx(0.2)
    assert repair_table(pl.DataFrame([{**base, "task": "p01"}])).height == 0


def test_resequence_restores_the_seed_order_of_independent_actions():
    """LPG returns its plan by earliest start time; the seed's order comes back where valid."""
    folder = DOMAINS / "gripper"
    task = load_task(folder / "domain.pddl", folder / "problems" / "p02.pddl")
    seed = parse_plan("(pick ball1 rooma left) (pick ball2 rooma right) (move rooma roomb) "
                      "(drop ball1 roomb left) (drop ball2 roomb right)")
    lpg = [seed[1], seed[0], seed[2], seed[4], seed[3]]
    assert validate(task, lpg).valid and R.resequence(task, seed, lpg) == seed
    # an action the seed lacks stays just before the one it enables
    short = [seed[0], seed[1], seed[3], seed[4]]
    assert R.resequence(task, short, lpg) == seed
    # an order that cannot be kept leaves LPG's
    assert R.resequence(task, [seed[3], seed[0]], lpg) in (lpg, seed)
    assert validate(task, R.resequence(task, [seed[3], seed[0]], lpg)).valid


SHARED_ROOT = Path(__file__).resolve().parents[2] / "shared" / "planbench" / "plan-bench"


@needs_lpg
@pytest.mark.skipif(not SHARED_ROOT.is_dir(), reason="PlanBench material not at ../shared/planbench")
def test_planbench_repair_command(tmp_path, capsys):
    """`planaudit planbench repair --json` on a few recorded GPT-4 t1 plans (two valid, two not)."""
    import json

    from planaudit.cli import main

    source = SHARED_ROOT / "results" / "blocksworld_3" / "gpt-4_chat" / "task_1_plan_generation.json"
    data = json.loads(source.read_text())
    valid = [i for i in data["instances"] if i["llm_correct"]][:2]
    wrong = [i for i in data["instances"] if not i["llm_correct"]][:2]
    data["instances"] = valid + wrong
    path = tmp_path / "results" / "blocksworld_3" / "gpt-4_chat" / "task_1_plan_generation.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    assert main(["planbench", "repair", str(path), "--root", str(SHARED_ROOT), "--json",
                 "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["instances", "repaired", "valid_after_repair", "valid_seeds",
                         "valid_seeds_unchanged", "valid_seeds_unchanged_reordered",
                         "mean_distance", "mean_distance_reordered", "mean_repaired_length",
                         "mean_seconds"]
    assert out["instances"] == 4 and out["valid_seeds"] == 2 and out["valid_seeds_unchanged"] == 2
    assert out["repaired"] == out["valid_after_repair"] == 4
    assert out["mean_distance"] >= out["mean_distance_reordered"] > 0
    t3 = SHARED_ROOT / "results" / "blocksworld_3" / "gpt-4_chat" / "task_3_plan_verification.json"
    assert main(["planbench", "repair", str(t3), "--json"]) == 2
