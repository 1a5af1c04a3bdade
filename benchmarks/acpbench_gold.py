"""The time to compute ACPBench's gold answers by proof for every dev gen item, per
question type and in total, in one run (`planaudit acpbench gold` on each type's file).

    .venv/bin/python benchmarks/acpbench_gold.py [--root ../shared/acpbench]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planaudit.acpbench.commands import run
from planaudit.acpbench.items import ORDER

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(ROOT.parent / "shared" / "acpbench"))
    args = ap.parse_args()
    total, items, agree = 0.0, 0, 0
    print(f"{'type':8} {'items':>5} {'agree':>5} {'limit':>5} {'seconds':>8}")
    for task in ORDER:
        path = Path(args.root) / "dataset" / task / "dev.gen.json"
        start = time.perf_counter()
        _, summary = run(path)
        seconds = time.perf_counter() - start
        s = summary[task]
        total += seconds
        items += s["items"]
        agree += s["agree"]
        print(f"{task:8} {s['items']:5} {s['agree']:5} {s['limit_hit']:5} {seconds:8.1f}")
    print(f"{'total':8} {items:5} {agree:5} {'':5} {total:8.1f}")


if __name__ == "__main__":
    main()
