"""Shard throughput against the ideal: calls x delay / concurrency.

A local OpenAI-compatible server answers every call after a fixed delay; one
shard of 50 `direct` episodes (all 50 prepared suite tasks gathered into one
shard folder; a fresh cache, so every call reaches the server) runs through the
real litellm path with the model's concurrency limit. Prints the measured wall
time, the ideal, and their ratio (goal: at least 0.8 of the ideal).

    .venv/bin/python benchmarks/shard_throughput.py [--delay 0.5] [--concurrency 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI, delay  # noqa: E402

import planaudit.llm  # noqa: E402, F401
from planaudit.shard import run_shard  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=10)
    ap.add_argument("--suite", default=str(ROOT / "results" / "suite"))
    args = ap.parse_args()
    suite = Path(args.suite)
    domains = sorted(p.name for p in suite.iterdir() if p.is_dir())
    tasks = sum(len(list((suite / d).glob("*/truth.json"))) for d in domains)
    if tasks == 0:
        sys.exit(f"{suite}: no prepared tasks; run `make suite` first")
    import litellm  # noqa: F401  (import cost is paid once per shard process, not per call)

    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    with FakeOpenAI([delay(args.delay)] * tasks) as srv, tempfile.TemporaryDirectory() as tmp:
        shard_suite = Path(tmp) / "suite"
        (shard_suite / "all").mkdir(parents=True)
        for d in domains:
            for t in sorted((suite / d).glob("*/truth.json")):
                (shard_suite / "all" / f"{d}-{t.parent.name}").symlink_to(t.parent.resolve())
        config = {"models": [{"name": "bench", "model": "openai/bench", "api_base": srv.api_base,
                              "max_concurrency": args.concurrency, "input_price": 0,
                              "output_price": 0}],
                  "offline": {"methods": ["direct"]}, "cache": str(Path(tmp) / "cache")}
        start = time.perf_counter()
        frame = run_shard(config, "offline", "bench", "direct", "all", shard_suite,
                          Path(tmp) / "rows.parquet", Path(tmp) / "transcripts")
        wall = time.perf_counter() - start
        calls = int(frame["n_calls"].sum())
    ideal = calls * args.delay / args.concurrency
    print(f"one shard of {frame.height} episodes, {calls} calls, delay {args.delay} s, "
          f"concurrency {args.concurrency}: wall {wall:.2f} s, ideal {ideal:.2f} s "
          f"(calls x delay / concurrency)")
    print(f"throughput ratio: {ideal / wall:.2f} of the ideal (goal: at least 0.8)")


if __name__ == "__main__":
    main()
