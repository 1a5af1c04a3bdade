"""Resilience figures: kill -9 mid-run then rerun, and provider faults at scale.

Repeats what tests/test_resilience.py checks, several times, and prints the figures:
kills survived (and where each landed), calls repeated after a kill (those in the
in-flight window, between the server's reply and the cache write, apart from any
loss), episodes lost, faults injected by kind, errors against the episodes whose
fault schedule exhausts the retries, wall time against the retry budget (printed only:
the test asserts behaviour, never a duration).

    PYTHONPATH=src .venv/bin/python benchmarks/resilience.py [--kills 2] [--faults 1]
        [--episodes 1000] [--seed 0]

Every assertion of the test holds on each repetition (a failed one stops the script).
On 2 shared cores a kill run takes about 4 min, a fault run about 2 min.

Measured 2026-11-30 (2 cores, load average ~11 from other work; `--kills 2 --faults 1`):
10 of 10 kills survived (suite, mid-shard offline, mid-shard online, collect, figures,
twice); 20 episodes, 47 calls uninterrupted; the interrupted runs sent 47 and 48:
1 repeat, in the in-flight window, 0 lost, 0 episodes lost; every suite kill left one
temporary file (a write cut short) that nothing read. Faults: 1,000 offline episodes,
1,557 requests, 574 faults (429 62, 429 with Retry-After 60, 500 61, 502 51, 503 51,
time-out 24, reset 69, truncated 69, invalid JSON 63, empty choices 64), 17 errors =
the 17 schedules that exhaust 3 retries, 983 cache entries, no failure among them;
wall 44 s (28 s in the test run) against 10.9 s of retry budget (the rest is the
episodes' own CPU on a loaded machine). Online react, 200 episodes: 192 faults, 152
tool calls with broken arguments, every episode a defined outcome, 7 errors.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_openai import serve_in_subprocess  # noqa: E402
from tests.test_resilience import fault_run, kill_and_rerun, prepared_suite  # noqa: E402

import record  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=2, help="repetitions of the kill-and-rerun run")
    ap.add_argument("--faults", type=int, default=1, help="repetitions of the fault run")
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0, help="the first fault schedule's seed")
    args = ap.parse_args()
    summary = {"kills_survived": 0, "repeated_in_flight": 0, "repeated_lost": 0,
               "repeated_undelivered": 0, "episodes_lost": 0}
    fault_rows = []
    for i in range(args.kills):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            log = tmp / "server.jsonl"
            proc, api_base = serve_in_subprocess([], responder={"latency": 0.15}, log=str(log))
            try:
                fig = kill_and_rerun(tmp, api_base, log)
            finally:
                proc.terminate()
                proc.wait()
        print(f"kill run {i + 1}:", json.dumps(fig), flush=True)
        summary["kills_survived"] += sum(k.get("landed") != "run had ended" for k in fig["kills"])
        for k in ("repeated_in_flight", "repeated_lost", "repeated_undelivered", "episodes_lost"):
            summary[k] += fig[k]
    for i in range(args.faults):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            start = time.monotonic()
            results = prepared_suite(tmp)
            offline = fault_run(tmp, episodes=args.episodes, seed=args.seed + i, results=results)
            online = fault_run(tmp, "online", "react", episodes=max(args.episodes // 5, 50),
                               seed=args.seed + i, broken_tool_args=0.3, results=results)
        print(f"fault run {i + 1} ({time.monotonic() - start:.0f} s):",
              json.dumps([offline, online]), flush=True)
        fault_rows += [(i + 1, r["regime"], r["episodes"], r["requests"], r["faults_total"],
                        r["broken_tool_args"], r["errors"], r["must_fail"], r["cache_entries"],
                        r["wall_s"], r["budget_s"]) for r in (offline, online)]
    print("summary:", json.dumps(summary))
    about = {"kills_survived": "kills survived (the rerun ends with the uninterrupted rows)",
             "repeated_in_flight": "calls sent again that were in flight at the kill",
             "repeated_lost": "calls sent again that the cache had lost",
             "repeated_undelivered": "calls sent again whose reply never arrived",
             "episodes_lost": "episodes lost"}
    figures = {k: record.figure(v, "episodes" if k == "episodes_lost" else
                                "kills" if k == "kills_survived" else "calls", about[k])
               for k, v in summary.items()}
    figures["kill_runs"] = record.figure(args.kills, "runs", "kill-and-rerun runs")
    record.write("resilience", figures, tables={"faults": record.table(
        ["run", "regime", "episodes", "requests", "faults", "broken tool args", "errors",
         "must fail", "cache entries", "wall s", "retry budget s"], fault_rows,
        "Provider faults at scale")})


if __name__ == "__main__":
    main()
