"""Batch validation speed: `planaudit validate --batch` against unified-planning.

Both sides do the same work on the PlanBench conformance corpus (6,355 LLM
plans over 1,459 problems): read each problem once, then validate each of its
plans. Ours runs end to end as the CLI does (process start-up and parsing
included). unified-planning runs `PDDLReader` once per problem, then
`SequentialPlanValidator` on each plan; by default on a seeded random sample of
problems (all plans of each), since the whole corpus takes it several minutes;
`--full` runs all of it. Prints plans per second for both and the ratio.

    .venv/bin/python benchmarks/validate_batch.py [--sample 60] [--full]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "planbench"


def ours(records: list[dict]) -> tuple[float, list[bool]]:
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "records.jsonl"
        batch.write_text("".join(json.dumps({"domain": str(CORPUS / r["domain"]),
                                             "problem": str(CORPUS / r["problem"]),
                                             "plan": r["plan"]}) + "\n" for r in records))
        out = Path(tmp) / "verdicts.jsonl"
        start = time.perf_counter()
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "planaudit"), "validate", "--batch",
                               str(batch), "--out", str(out)])
        seconds = time.perf_counter() - start
        assert done.returncode in (0, 2), done.returncode  # 2: some plan files were refused
        # a refused plan file has an "error" line: VAL's "Bad plan description", recorded invalid
        verdicts = [json.loads(line).get("valid", False) for line in out.read_text().splitlines()]
    return seconds, verdicts


def unified_planning(records: list[dict]) -> tuple[float, list[bool]]:
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    by_problem = defaultdict(list)
    for i, r in enumerate(records):
        by_problem[(r["domain"], r["problem"])].append(i)
    verdicts = [False] * len(records)
    reader = PDDLReader()
    start = time.perf_counter()
    with PlanValidator(name="sequential_plan_validator") as validator:
        for (dom, prob), idx in by_problem.items():
            problem = reader.parse_problem(str(CORPUS / dom), str(CORPUS / prob))
            for i in idx:
                try:
                    plan = reader.parse_plan_string(problem, records[i]["plan"])
                    res = validator.validate(problem, plan)
                    verdicts[i] = res.status == ValidationResultStatus.VALID
                except Exception:  # unknown action or object: invalid, as VAL says
                    verdicts[i] = False
    return time.perf_counter() - start, verdicts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=60, help="problems for unified-planning")
    ap.add_argument("--full", action="store_true", help="unified-planning on the whole corpus")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    records = [json.loads(x) for x in (CORPUS / "plans.jsonl").read_text().splitlines()]
    problems = sorted({(r["domain"], r["problem"]) for r in records})

    t_ours, v_ours = ours(records)
    agree = sum(v == r["val_valid"] for v, r in zip(v_ours, records, strict=True))
    rate_ours = len(records) / t_ours
    print(f"planaudit validate --batch: {len(records)} plans over {len(problems)} problems "
          f"in {t_ours:.2f} s = {rate_ours:,.0f} plans/s (agrees with VAL on {agree}/{len(records)})")

    if args.full:
        sample = records
    else:
        chosen = set(random.Random(args.seed).sample(problems, min(args.sample, len(problems))))
        sample = [r for r in records if (r["domain"], r["problem"]) in chosen]
    t_up, v_up = unified_planning(sample)
    rate_up = len(sample) / t_up
    up_agree = sum(v == r["val_valid"] for v, r in zip(v_up, sample, strict=True))
    n_problems = len({(r["domain"], r["problem"]) for r in sample})
    print(f"unified-planning (PDDLReader per problem + SequentialPlanValidator per plan): "
          f"{len(sample)} plans over {n_problems} problems in {t_up:.2f} s = "
          f"{rate_up:,.1f} plans/s (agrees with VAL on {up_agree}/{len(sample)})")
    print(f"ratio: {rate_ours / rate_up:,.0f}x unified-planning's rate (goal: at least 50x)")


if __name__ == "__main__":
    sys.exit(main())
