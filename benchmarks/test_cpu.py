"""Where `make test`'s time goes: CPU and wall seconds per test file, from the lines that
tests/conftest.py appends under PLANAUDIT_TEST_CPU=<file>. On two cores the suite is bound
by CPU (its wall time is about its CPU time over the workers), so CPU says what to cut.

    PLANAUDIT_TEST_CPU=/tmp/cpu.jsonl make test
    .venv/bin/python benchmarks/test_cpu.py /tmp/cpu.jsonl [--top 25] [--tests 20]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import record


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lines", type=Path)
    ap.add_argument("--top", type=int, default=25, help="files shown")
    ap.add_argument("--tests", type=int, default=20, help="single tests shown")
    ap.add_argument("--variant", help="the record's variant (test_cpu-VARIANT.json): "
                    "before and after a change, or under CI")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.lines.read_text().splitlines() if line.strip()]
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        f = files[r["test"].split("::")[0]]
        f[0] += r["cpu"]
        f[1] += r["wall"]
        f[2] += 1
    cpu = sum(f[0] for f in files.values())
    wall = sum(f[1] for f in files.values())
    print(f"{len(rows)} tests in {len(files)} files: {cpu:,.0f} s of CPU, {wall:,.0f} s of "
          f"wall summed over the workers")
    print(f"\n{'cpu s':>8}{'wall s':>8}{'tests':>6}  file")
    for name, (c, w, n) in sorted(files.items(), key=lambda kv: -kv[1][0])[: args.top]:
        print(f"{c:8.1f}{w:8.1f}{n:6d}  {name}")
    # each worker's share: the file order and --dist loadfile decide which one ends last
    workers: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, float("inf"), 0.0])
    for r in rows:
        w = workers[r.get("worker", "?")]
        w[0] += r["cpu"]
        w[1] += r["wall"]
        if "end" in r:
            w[2] = min(w[2], r["end"] - r["wall"])
            w[3] = max(w[3], r["end"])
    first = min(w[2] for w in workers.values())
    print(f"\n{'cpu s':>8}{'busy s':>8}{'ends s':>8}  worker (ends: after the first test began)")
    for name, (c, w, _, end) in sorted(workers.items()):
        print(f"{c:8.1f}{w:8.1f}{end - first if end else float('nan'):8.1f}  {name}")
    print(f"\n{'cpu s':>8}{'wall s':>8}  test")
    for r in sorted(rows, key=lambda r: -r["cpu"])[: args.tests]:
        print(f"{r['cpu']:8.1f}{r['wall']:8.1f}  {r['test']}")
    record.write("test_cpu", {
        "tests": record.figure(len(rows), "tests", f"in {len(files)} files"),
        "cpu": record.figure(cpu, "CPU s", "summed over the workers"),
        "wall": record.figure(wall, "s", "summed over the workers"),
        "workers": record.figure(len(workers), "workers"),
        "last_worker_ends": record.figure(max(w[3] for w in workers.values()) - first, "s",
                                          "wall, from the first test's start to the last end"),
    }, tables={"files": record.table(["file", "CPU s", "wall s", "tests"],
                                     [(n, c, w, k) for n, (c, w, k) in
                                      sorted(files.items(), key=lambda kv: -kv[1][0])[: args.top]],
                                     "The costliest test files"),
               "tests": record.table(["test", "CPU s", "wall s"],
                                     [(r["test"], r["cpu"], r["wall"]) for r in
                                      sorted(rows, key=lambda r: -r["cpu"])[: args.tests]],
                                     "The costliest tests")},
        variant=args.variant,
        argv=[sys.argv[0], "CPU.jsonl", *sys.argv[2:]],
        notes=["CPU.jsonl: the lines of `PLANAUDIT_TEST_CPU=CPU.jsonl make test`"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
