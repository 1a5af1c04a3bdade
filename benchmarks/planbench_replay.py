"""PlanBench replay throughput and curriculum generation time, in one run.

1. Replay: every results file under ../shared/planbench (13,202 responses), each
   scored in its default dialect from a cold start (JSON parsing, config and
   instance parsing, query reading, response reading, simulation all included),
   then again with every applicable dialect. Responses per second on one core.
2. Generation: the t1-t8 curriculum (10 tests, one-shot) on PlanBench Blocksworld,
   blocksworld (500 instances) + blocksworld_3 (100), with ground truth from formal/.

    PYTHONPATH=src .venv/bin/python benchmarks/planbench_replay.py [--skip-generation]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "planbench"
sys.path.insert(0, str(ROOT / "src"))

import record  # noqa: E402
from planaudit.planbench.cases import TESTS  # noqa: E402
from planaudit.planbench.generate import cases  # noqa: E402
from planaudit.planbench.replay import replay  # noqa: E402


def replay_rate(files: list[Path], all_dialects: bool) -> tuple[int, float, int]:
    start = time.process_time()
    n = agree = 0
    for f in files:
        s = replay(f, all_dialects=all_dialects)
        n += s["instances"]
        agree += s["agree"]
    return n, time.process_time() - start, agree


def _children() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-generation", action="store_true")
    args = ap.parse_args()
    if not SHARED.exists():
        print(f"no PlanBench material at {SHARED}")
        return 1
    files = sorted(SHARED.glob("*/results/*/*/*.json"))
    total = sum(len(json.loads(f.read_text())["instances"]) for f in files)
    n, cpu, agree = replay_rate(files, all_dialects=False)
    cold = n / cpu
    print(f"replay, default dialect, cold: {n} responses in {len(files)} files, {cpu:.2f} s CPU, "
          f"{n / cpu:,.0f} responses/s; agree with the record on {agree}")
    n, cpu, _ = replay_rate(files, all_dialects=False)
    print(f"replay, default dialect, warm (configs and tasks cached): {n / cpu:,.0f} responses/s")
    figures = {
        "responses": record.figure(n, "responses", f"every recorded response, {len(files)} files"),
        "agree": record.figure(agree, "responses", "scored as the file records it"),
        "cold": record.figure(cold, "responses/s", "default dialect, cold start, one core (CPU)"),
        "warm": record.figure(n / cpu, "responses/s", "default dialect, configs and tasks cached"),
    }
    n2, cpu2, _ = replay_rate(files, all_dialects=True)
    print(f"replay, every applicable dialect: {n2} responses, {cpu2:.2f} s CPU "
          f"({n2 / cpu2:,.0f} responses/s, each scored in 3-6 dialects)")
    figures["every_dialect"] = record.figure(n2 / cpu2, "responses/s",
                                             f"every applicable dialect ({n2} scorings)")
    assert n == total
    if args.skip_generation:
        record.write("planbench_replay", figures)
        return 0
    pb = SHARED / "plan-bench"
    start, wall, kids = time.process_time(), time.perf_counter(), _children()
    count = 0
    per_test = {}
    for test in TESTS:
        t0 = time.perf_counter()
        for config, k in (("blocksworld", 500), ("blocksworld_3", 100)):
            count += len(cases(pb, config, test, k, shots=1))
        per_test[test] = time.perf_counter() - t0
    wall, start, kids = time.perf_counter() - wall, time.process_time() - start, _children() - kids
    print(f"generation: {count} cases (600 instances x {len(TESTS)} tests, one-shot, with ground truth) "
          f"in {wall:.1f} s wall, {start:.1f} s CPU "
          f"+ {kids:.1f} s CPU in subprocesses (Fast Downward's example plans)")
    print("  per test (s): " + ", ".join(f"{t} {s:.1f}" for t, s in per_test.items()))
    figures |= {"cases": record.figure(count, "cases", "t1-t8 curriculum, one-shot, with truth"),
                "generation_wall": record.figure(wall, "s", "generation, wall"),
                "generation_cpu": record.figure(start, "CPU s", "generation, this process"),
                "generation_children": record.figure(kids, "CPU s",
                                                     "generation, Fast Downward's processes")}
    record.write("planbench_replay", figures, tables={"tests": record.table(
        ["test", "wall s"], per_test.items(), "Generation per test case (600 instances)")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
