"""The default pipeline end to end: wall time, the share spent starting processes,
and a rerun with nothing changed.

Runs `snakemake --cores N` on config/config.yaml (reference models, every
strategy and architecture, all 50 tasks) into a fresh results folder and a fresh
reply cache, so every job runs. The share spent starting processes is estimated
as: for each job, the time a fresh interpreter needs to import what that job's
command imports (measured here, per kind of job), summed over jobs, divided by
wall time x cores. Then the same command again must run no job.

    .venv/bin/python benchmarks/pipeline.py [--cores 2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

# what each kind of job imports before it does any work (see cli.py)
IMPORTS = {
    "suite": "import planaudit.cli, planaudit.suite.commands, planaudit.suite.prepare, "
             "planaudit.suite.records, unified_planning",
    "shard": "import planaudit.cli, planaudit.shard, planaudit.offline.run, "
             "planaudit.online.run, litellm",
    "analysis": "import planaudit.cli, planaudit.analysis.tables, planaudit.analysis.figures, "
                "planaudit.analysis.report, polars, matplotlib.pyplot",
}


def kind(rule: str) -> str:
    if rule.startswith(("offline_", "online_")):
        return "shard"
    if rule in ("collect", "tables", "figures", "report"):
        return "analysis"
    return "suite"


def startup(code: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(BIN / "snakemake"), "--cores", str(args.cores), "--config",
               f"results={tmp}/results", f"cache={tmp}/cache"]
        start = time.perf_counter()
        first = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if first.returncode != 0:
            sys.exit(first.stderr[-3000:])
        jobs = Counter(re.findall(r"^(?:localrule|rule) (\w[\w.-]*):", first.stderr, re.M))
        jobs.pop("all", None)
        start = time.perf_counter()
        second = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        rerun = time.perf_counter() - start
        ran_again = re.findall(r"^(?:localrule|rule) (\w[\w.-]*):", second.stderr, re.M)
    per_kind = {k: startup(code) for k, code in IMPORTS.items()}
    counts = Counter()
    for rule, n in jobs.items():
        counts[kind(rule)] += n
    spent = sum(per_kind[k] * n for k, n in counts.items())
    print(f"default pipeline, --cores {args.cores}: {sum(jobs.values())} jobs in {wall:,.0f} s")
    for k in IMPORTS:
        print(f"  {counts[k]:4d} {k} jobs, {per_kind[k]:.2f} s each to start")
    print(f"share of the {args.cores} cores' time spent starting processes: "
          f"{spent / (wall * args.cores):.1%}")
    verdict = "runs no job" if not ran_again and "Nothing to be done" in second.stderr \
        else f"ran {len(ran_again)} jobs: {sorted(set(ran_again))}"
    print(f"second run with nothing changed: {rerun:.1f} s, {verdict}")


if __name__ == "__main__":
    main()
