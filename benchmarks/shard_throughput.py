"""Shard throughput against the ideal: calls x delay / concurrency.

A local OpenAI-compatible server, in a process of its own as a remote API would
be, answers every call after a fixed delay; one
shard of 50 `direct` episodes (all 50 prepared suite tasks gathered into one
shard folder; a fresh cache, so every call reaches the server) runs through the
real litellm path with the model's concurrency limit. Prints the measured wall
time, the ideal, and their ratio (goal: at least 0.8 of the ideal).

    .venv/bin/python benchmarks/shard_throughput.py [--delays 0.5 1 2] [--concurrency 10]

Each delay runs in a fresh process, as a workflow job does, so litellm's
first-call set-up (about 0.2 s) is counted every time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_openai import delay, serve_in_subprocess  # noqa: E402

import planaudit.llm  # noqa: E402, F401
import record  # noqa: E402
from planaudit.experiment import Experiment  # noqa: E402
from planaudit.shard import run_shard  # noqa: E402


def measure(delay_s: float, concurrency: int, suite: Path) -> tuple[int, int, float]:
    """(episodes, calls, wall seconds) of one shard in this process."""
    domains = sorted(p.name for p in suite.iterdir() if p.is_dir())
    tasks = sum(len(list((suite / d).glob("*/truth.json"))) for d in domains)
    if tasks == 0:
        sys.exit(f"{suite}: no prepared tasks; run `make suite` first")
    import litellm  # noqa: F401  (import cost is paid once per shard process, not per call)

    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    server, api_base = serve_in_subprocess([delay(delay_s)] * tasks)
    with tempfile.TemporaryDirectory() as tmp:
        shard_suite = Path(tmp) / "suite"
        (shard_suite / "all").mkdir(parents=True)
        for d in domains:
            for t in sorted((suite / d).glob("*/truth.json")):
                (shard_suite / "all" / f"{d}-{t.parent.name}").symlink_to(t.parent.resolve())
        config = {"models": [{"name": "bench", "model": "openai/bench", "api_base": api_base,
                              "max_concurrency": concurrency, "input_price": 0,
                              "output_price": 0}],
                  "offline": {"methods": ["direct"]}, "cache": str(Path(tmp) / "cache")}
        start = time.perf_counter()
        experiment = Experiment.from_dict(config)
        frame = run_shard(experiment, experiment.model("bench"),
                          experiment.method("offline", "direct"), "all", shard_suite,
                          Path(tmp) / "rows.parquet", Path(tmp) / "transcripts")["all"]
        wall = time.perf_counter() - start
    server.terminate()
    return frame.height, int(frame["n_calls"].sum()), wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--delays", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--suite", default=str(ROOT / "results" / "suite"))
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:  # the child: one shard, in a fresh process as the workflow runs it
        print(json.dumps(measure(args.delays[0], args.concurrency, Path(args.suite))))
        return
    rows = []
    for d in args.delays:
        child = subprocess.run([sys.executable, __file__, "--one", "--delays", str(d),
                                "--concurrency", str(args.concurrency), "--suite", args.suite],
                               capture_output=True, text=True, check=True)
        episodes, calls, wall = json.loads(child.stdout.strip().splitlines()[-1])
        ideal = calls * d / args.concurrency
        print(f"one shard of {episodes} episodes, {calls} calls, delay {d} s, concurrency "
              f"{args.concurrency}: wall {wall:.2f} s, ideal {ideal:.2f} s "
              f"(calls x delay / concurrency): ratio {ideal / wall:.2f} (goal: at least 0.8)")
        rows.append((d, episodes, calls, wall, ideal, ideal / wall))
    worst = min(rows, key=lambda r: r[5])
    record.write("shard_throughput", {
        "worst_ratio": record.figure(worst[5], "of ideal", f"lowest ratio (delay {worst[0]} s)"),
        "concurrency": record.figure(args.concurrency, "calls", "the model's concurrency limit"),
    }, anchor={"name": "the ideal: calls × delay / concurrency", "ratio": round(worst[5], 2),
               "about": "ideal over measured wall time, at the delay where it is lowest "
                        "(goal: at least 0.8)"},
        tables={"delays": record.table(["delay s", "episodes", "calls", "wall s", "ideal s",
                                        "ideal / wall"], rows, "One shard per delay")})


if __name__ == "__main__":
    main()
