"""Heuristic mode: what a repair costs, and how much of it is starting LPG.

Repairs (LPG seeded with each plan, `planaudit planbench repair`'s code, one LPG at a
time) every GPT-4 t1 response of PlanBench's Blocksworld (blocksworld's 500 and
blocksworld_3's 100 instances: 600 plans, 598 with a response) and prints the wall time per plan
(median, 95th percentile) and the CPU time of LPG's processes, with the mean distance to
LPG's plan as LPG returned it (PlanBench's measure) and, beside it, to the same actions
reordered towards the seed; then times LPG on a
trivial problem (one block to pick up, no seed) the same way: LPG's start-up, parsing
and preprocessing with next to no search, the floor under every repair.

    PYTHONPATH=src python benchmarks/repair.py [--seed N] [--trivial N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

import record
from planaudit.formal.repair import run_lpg
from planaudit.planbench.repair import repair_file

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT.parent / "shared" / "planbench" / "plan-bench" / "results"
FILES = [RESULTS / c / "gpt-4_chat" / "task_1_plan_generation.json"
         for c in ("blocksworld", "blocksworld_3")]

TRIVIAL_DOMAIN = ROOT / "domains" / "blocksworld" / "domain.pddl"
TRIVIAL_PROBLEM = """(define (problem trivial) (:domain blocksworld) (:objects a - block)
  (:init (ontable a) (clear a) (handempty)) (:goal (holding a)))
"""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trivial", type=int, default=50, help="runs of LPG on the trivial problem")
    args = ap.parse_args()

    rows, cpu0, wall0 = [], _children_cpu(), time.perf_counter()
    per_file = []
    for f in FILES:
        s = repair_file(f, seed=args.seed, jobs=1)
        rows += s["rows"]
        per_file.append((f.parent.parent.name, s["instances"], s["valid_after_repair"],
                         s["mean_distance"], s["mean_distance_reordered"],
                         s["mean_repaired_length"], s["valid_seeds"], s["valid_seeds_unchanged"]))
        print(f"{f.parent.parent.name}: {s['instances']} plans, {s['valid_after_repair']} valid "
              f"after repair, mean distance {s['mean_distance']} to LPG's plan as returned "
              f"({s['mean_distance_reordered']} reordered towards the seed), mean length "
              f"{s['mean_repaired_length']}; {s['valid_seeds_unchanged']} of {s['valid_seeds']} "
              f"valid plans back unchanged ({s['valid_seeds_unchanged_reordered']} reordered)")
    cpu, wall = _children_cpu() - cpu0, time.perf_counter() - wall0
    secs = [r["seconds"] for r in rows]
    print(f"repair: {len(secs)} plans, wall per plan median {1000 * statistics.median(secs):.0f} ms, "
          f"p95 {1000 * _pct(secs, 0.95):.0f} ms, max {1000 * max(secs):.0f} ms; LPG CPU "
          f"{1000 * cpu / len(secs):.0f} ms a plan; {wall:.1f} s in all")

    with tempfile.TemporaryDirectory() as scratch:
        problem = Path(scratch) / "trivial.pddl"
        problem.write_text(TRIVIAL_PROBLEM)
        t_cpu0, t = _children_cpu(), []
        for _ in range(args.trivial):
            status, steps, seconds, _ = run_lpg(TRIVIAL_DOMAIN, problem, [], seed=args.seed)
            assert status == "repaired" and steps == [("pick-up", ("a",))], (status, steps)
            t.append(seconds)
        t_cpu = (_children_cpu() - t_cpu0) / args.trivial
    start = statistics.median(t)
    print(f"LPG on a trivial problem: wall median {1000 * start:.0f} ms, p95 "
          f"{1000 * _pct(t, 0.95):.0f} ms; CPU {1000 * t_cpu:.0f} ms a run")
    print(f"start-up share of a repair: {100 * start / statistics.median(secs):.0f}% of the median "
          f"wall time, {100 * t_cpu / (cpu / len(secs)):.0f}% of the mean CPU time")
    record.write("repair", {
        "plans": record.figure(len(secs), "plans", "GPT-4 t1 Blocksworld plans repaired"),
        "median": record.figure(1000 * statistics.median(secs), "ms", "wall a plan, median"),
        "p95": record.figure(1000 * _pct(secs, 0.95), "ms", "wall a plan, 95th percentile"),
        "max": record.figure(1000 * max(secs), "ms", "wall a plan, max"),
        "lpg_cpu": record.figure(1000 * cpu / len(secs), "ms", "LPG's CPU a plan"),
        "trivial_median": record.figure(1000 * start, "ms", "LPG on a trivial problem, wall median"),
        "trivial_cpu": record.figure(1000 * t_cpu, "ms", "LPG on a trivial problem, CPU a run"),
        "startup_share_cpu": record.figure(100 * t_cpu / (cpu / len(secs)), "%",
                                           "start-up's share of a repair's mean CPU time"),
    }, anchor={"name": "LPG on a trivial problem (its start-up)",
               "ratio": round(start / statistics.median(secs), 2),
               "about": "start-up's share of a repair's median wall time"},
        tables={"files": record.table(
            ["config", "plans", "valid after repair", "mean distance", "mean distance reordered",
             "mean length", "valid seeds", "valid seeds unchanged"], per_file,
            "Per results file (seed " + str(args.seed) + ")")})


if __name__ == "__main__":
    main()
