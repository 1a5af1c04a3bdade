"""Generated t1/t2 PlanBench prompts against the recorded `query` of every t1/t2 results
file under ../shared/planbench. Per file: how many are equal character for character
(default prompts), how many with `era="2023"` (t1 files only), and how many equal from
`[STATEMENT]` on (the intro aside, trailing newlines stripped).

    PYTHONPATH=src .venv/bin/python benchmarks/planbench_prompts.py [--planner auto|formal|...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "planbench"
sys.path.insert(0, str(ROOT / "src"))

import record  # noqa: E402
from planaudit.planbench.generate import cases  # noqa: E402


def files() -> list[Path]:
    out = sorted(SHARED.glob("*/results/*/*/task_1_plan_generation*.json"))
    out += sorted(SHARED.glob("*/results/*/*/task_2_plan_optimality.json"))
    return out


def measure(path: Path, planner: str) -> tuple[int, int | None, int, int]:
    recs = json.loads(path.read_text())["instances"]
    test = "t2" if "task_2" in path.name else "t1"
    shots = 0 if path.stem.endswith("zero_shot") else 1
    ids = [r["instance_id"] for r in recs]
    root, config = path.parents[3], path.parents[1].name
    got = cases(root, config, test, ids, shots=shots, planner=planner)
    old = cases(root, config, test, ids, shots=shots, planner=planner, era="2023") \
        if test == "t1" else None
    exact = tail = era = 0
    for n, (c, r) in enumerate(zip(got, recs, strict=True)):
        q = r["query"]
        exact += c.prompt == q
        era += old is not None and old[n].prompt == q
        tail += c.prompt[c.prompt.find("[STATEMENT]"):] == q[q.find("[STATEMENT]"):].rstrip("\n")
    return exact, era if old else None, tail, len(recs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grep", default="", help="only files whose path contains this")
    ap.add_argument("--planner", default="auto", help="generate.PLANNERS (default: auto)")
    args = ap.parse_args()
    print(f"planner {args.planner}; columns: exact, exact with era 2023, from [STATEMENT] on / n")
    tot = [0, 0, 0, 0]
    best = 0
    rows = []
    for f in files():
        rel = str(f.relative_to(SHARED))
        if args.grep not in rel:
            continue
        e, old, t, n = measure(f, args.planner)
        tot = [tot[0] + e, tot[1] + (old or 0), tot[2] + t, tot[3] + n]
        best += max(e, old or 0)
        print(f"{e:4d} {'-' if old is None else old:>4} {t:4d} / {n:4d}  {rel}", flush=True)
        rows.append((rel, e, old, t, n))
    print(f"{tot[0]:4d} {tot[1]:4d} {tot[2]:4d} / {tot[3]:4d}  total")
    print(f"exact, the better of default and era 2023 per file: {best} / {tot[3]}")
    record.write("planbench_prompts", {
        "queries": record.figure(tot[3], "queries", "recorded t1/t2 queries compared"),
        "exact_best": record.figure(best, "queries", "equal, the better of default and era 2023 "
                                                     "per file"),
        "exact_default": record.figure(tot[0], "queries", "equal with default prompts"),
        "from_statement": record.figure(tot[2], "queries", "equal from [STATEMENT] on"),
    }, tables={"files": record.table(["file", "exact", "exact, era 2023", "from [STATEMENT]", "n"],
                                     rows, f"Per results file (planner {args.planner})")},
        notes=[f"only files matching {args.grep!r}"] if args.grep else [])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
