"""`planaudit calibrate` speed: wall time end to end, and where the time goes.

Runs the command as a user does (process start-up included) on 2,000 experiments per
true difference of 50 tasks and 20 comparisons, bootstrap included; then the same
design in process with the time split between simulation, McNemar + Holm (the report's
`paired_family`, one call per experiment), the bootstrap intervals and the predicted
power. Finally it measures what the bootstrap would cost through
scipy.stats.bootstrap, one call per interval as before, on a sample of the intervals.

    .venv/bin/python benchmarks/calibrate.py [--experiments 2000] [--tasks 50] [--comparisons 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import record

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiments", type=int, default=2000)
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--comparisons", type=int, default=20)
    args = ap.parse_args()
    design_args = ["--tasks", str(args.tasks), "--comparisons", str(args.comparisons),
                   "--experiments", str(args.experiments)]

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "planaudit.cli", "calibrate", *design_args,
                           "--json"], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    print(f"planaudit calibrate {' '.join(design_args)} --json: {wall:.1f} s wall "
          f"(os.cpu_count() = {os.cpu_count()}, load average {os.getloadavg()[0]:.1f})")

    sys.path.insert(0, str(ROOT / "src"))
    from scipy.stats import bootstrap

    from planaudit.analysis.calibrate import Design, calibrate

    design = Design(tasks=args.tasks, comparisons=args.comparisons, experiments=args.experiments)
    start = time.perf_counter()
    cal = calibrate(design)
    total = time.perf_counter() - start
    t = cal.timing
    scenarios = len(cal.result["rows"])
    intervals = cal.result["coverage_intervals"]
    split = {"simulation": t.simulate, "McNemar + Holm": t.mcnemar_holm,
             "bootstrap": t.bootstrap, "predicted power": t.predict}
    print(f"in process: {total:.1f} s for {scenarios} true differences x {args.experiments} "
          f"experiments ({scenarios * args.experiments} experiments, "
          f"{scenarios * args.experiments * args.comparisons} comparisons, {intervals} intervals)")
    for name, seconds in split.items():
        print(f"  {name:<16} {seconds:6.2f} s  {100 * seconds / total:4.0f}%")

    sample = (np.random.default_rng(0).random((100, args.tasks)) < 0.5).astype(float)
    start = time.perf_counter()
    for row in sample:
        bootstrap((row,), np.mean, n_resamples=2000, method="percentile",
                  rng=np.random.default_rng(0))
    per = (time.perf_counter() - start) / len(sample)
    print(f"scipy.stats.bootstrap, one call per interval: {1000 * per:.1f} ms each, so "
          f"{per * intervals:.0f} s for these {intervals} intervals "
          f"({per * intervals / max(t.bootstrap, 1e-9):.0f}x the counting path)")
    record.write("calibrate", {
        "wall": record.figure(wall, "s", f"planaudit calibrate {' '.join(design_args)}, "
                                         "process start-up included"),
        "in_process": record.figure(total, "s", "the same design in process"),
        "experiments": record.figure(scenarios * args.experiments, "experiments", ""),
        "intervals": record.figure(intervals, "intervals", "bootstrap intervals"),
        "scipy_per_interval": record.figure(1000 * per, "ms", "scipy.stats.bootstrap, one call"),
        "scipy_all": record.figure(per * intervals, "s", "scipy's bootstrap for every interval "
                                                         "(estimated from a sample of 100)"),
    }, anchor={"name": "scipy.stats.bootstrap, one call per interval",
               "ratio": round(per * intervals / max(t.bootstrap, 1e-9), 1),
               "about": "scipy's estimated seconds over the counting path's bootstrap seconds"},
        tables={"split": record.table(["part", "s", "share"],
                                      [(k, v, f"{100 * v / total:.0f}%") for k, v in split.items()],
                                      "Where the in-process time goes")})


if __name__ == "__main__":
    main()
