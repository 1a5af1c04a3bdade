"""Generated t1/t2 PlanBench prompts against the recorded `query` of every t1/t2 results
file under ../shared/planbench: per file, how many are equal character for character,
and how many equal from `[STATEMENT]` on (the intro aside, trailing newlines stripped).

    PYTHONPATH=src .venv/bin/python benchmarks/planbench_prompts.py [--era auto|none] [--plans ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "planbench"
sys.path.insert(0, str(ROOT / "src"))

from planaudit.planbench.generate import cases  # noqa: E402


def files() -> list[Path]:
    out = sorted(SHARED.glob("*/results/*/*/task_1_plan_generation*.json"))
    out += sorted(SHARED.glob("*/results/*/*/task_2_plan_optimality.json"))
    return out


def measure(path: Path, **kw) -> tuple[int, int, int]:
    data = json.loads(path.read_text())
    recs = data["instances"]
    test = "t2" if "task_2" in path.name else "t1"
    shots = 0 if path.stem.endswith("zero_shot") else 1
    got = cases(path.parents[3], path.parents[1].name, test, [r["instance_id"] for r in recs],
                shots=shots, **kw)
    exact = tail = 0
    for c, r in zip(got, recs, strict=True):
        q = r["query"]
        exact += c.prompt == q
        tail += c.prompt[c.prompt.find("[STATEMENT]"):] == q[q.find("[STATEMENT]"):].rstrip("\n")
    return exact, tail, len(recs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grep", default="", help="only files whose path contains this")
    args = ap.parse_args()
    tot = [0, 0, 0]
    for f in files():
        rel = str(f.relative_to(SHARED))
        if args.grep not in rel:
            continue
        e, t, n = measure(f)
        tot = [tot[0] + e, tot[1] + t, tot[2] + n]
        print(f"{e:4d} {t:4d} / {n:4d}  {rel}", flush=True)
    print(f"{tot[0]:4d} {tot[1]:4d} / {tot[2]:4d}  total (exact, from [STATEMENT] on)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
