"""Batch validation speed: `planaudit validate --batch` against unified-planning.

Both sides do the same work on the PlanBench conformance corpus (6,355 LLM
plans over 1,459 problems): read each problem once, then validate each of its
plans. Ours runs end to end as the CLI does (process start-up and parsing
included). unified-planning runs `PDDLReader` once per problem, then
`SequentialPlanValidator` on each plan; by default on a seeded random sample of
problems (all plans of each), since the whole corpus takes it several minutes;
`--full` runs all of it. Prints plans per second for both and the ratio.

The corpus has no numbers. `--numeric` runs the same comparison on plans over a
generated domain of decimal and fractional quantities (0.1, 0.25, (/ 1 3), halving),
where planaudit's values are exact rationals, not ints: the rate that exact arithmetic
costs; agreement there is with unified-planning's verdicts (it computes with
Fractions too), since VAL recorded none.

    .venv/bin/python benchmarks/validate_batch.py [--sample 60] [--full] [--numeric [--plans 1000]]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import record

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "conformance" / "planbench"


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def ours(records: list[dict]) -> tuple[float, float, list[bool]]:
    """(wall s, CPU s, verdicts): the CLI's process, start-up included."""
    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "records.jsonl"
        batch.write_text("".join(json.dumps({"domain": str(CORPUS / r["domain"]),
                                             "problem": str(CORPUS / r["problem"]),
                                             "plan": r["plan"]}) + "\n" for r in records))
        out = Path(tmp) / "verdicts.jsonl"
        start, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "planaudit"), "validate", "--batch",
                               str(batch), "--out", str(out)])
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
        assert done.returncode in (0, 2), done.returncode  # 2: some plan files were refused
        # a refused plan file has an "error" line: VAL's "Bad plan description", recorded invalid
        verdicts = [json.loads(line).get("valid", False) for line in out.read_text().splitlines()]
    return seconds, cpu, verdicts


def unified_planning(records: list[dict]) -> tuple[float, float, list[bool]]:
    """(wall s, CPU s, verdicts) of unified-planning in this process."""
    from unified_planning.engines import ValidationResultStatus
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    by_problem = defaultdict(list)
    for i, r in enumerate(records):
        by_problem[(r["domain"], r["problem"])].append(i)
    verdicts = [False] * len(records)
    reader = PDDLReader()
    start, cpu = time.perf_counter(), time.process_time()
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
    return time.perf_counter() - start, time.process_time() - cpu, verdicts


TANKS = (ROOT / "tests" / "data" / "tanks-domain.pddl").read_text()  # shared with the tests


def numeric_records(folder: Path, problems: int = 20, plans: int = 20,
                    seed: int = 0) -> list[dict]:
    """Random plans (mostly applicable steps, some not) over generated tank problems."""
    sys.path.insert(0, str(ROOT / "src"))
    from planaudit.formal.ground import Task
    from planaudit.formal.syntax import parse_domain, parse_problem

    rng = random.Random(seed)
    domain_file = folder / "tanks.pddl"
    domain_file.write_text(TANKS)
    domain = parse_domain(TANKS)
    records = []
    for k in range(problems):
        tanks = [f"t{i}" for i in range(rng.randint(2, 4))]
        init = " ".join(f"(= (level {t}) {rng.choice(('0', '0.5', '1.2'))}) "
                        f"(= (cap {t}) {rng.choice(('1', '1.5', '2.3'))})" for t in tanks)
        goal = " ".join(f"({rng.choice(('>=', '=', '<='))} (level {t}) "
                        f"{rng.choice(('0.3', '0.6', '0.15', '1'))})" for t in tanks[:2])
        text = (f"(define (problem p{k}) (:domain tanks) (:objects {' '.join(tanks)} - tank)"
                f" (:init {init} (= (total-cost) 0)) (:goal (and {goal}))"
                f" (:metric minimize (total-cost)))")
        problem_file = folder / f"p{k}.pddl"
        problem_file.write_text(text)
        task = Task(domain, parse_problem(text, domain))
        steps = [("fill", (t,)) for t in tanks] + [("halve", (t,)) for t in tanks] + [
            ("pour", (a, b)) for a in tanks for b in tanks if a != b]
        for _ in range(plans):
            state, plan = task.init, []
            for _ in range(rng.randint(5, 40)):
                ops = [task.operator(*st) for st in steps]
                ok = [op for op in ops if op.applicable(state)]
                op = rng.choice(ok) if ok and rng.random() < 0.95 else rng.choice(ops)
                plan.append(op.name)
                if not op.applicable(state):
                    break
                state = op.apply(state)
            records.append({"domain": str(domain_file), "problem": str(problem_file),
                            "plan": "\n".join(plan)})
    return records


def numeric(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        records = numeric_records(Path(tmp), plans=args.plans, seed=args.seed)
        t_ours, c_ours, v_ours = ours(records)
        sample = records[:400]  # unified-planning on the first 4 problems' plans
        t_up, c_up, v_up = unified_planning(sample)
    agree = sum(a == b for a, b in zip(v_ours, v_up, strict=False))
    rate_ours, rate_up = len(records) / t_ours, len(sample) / t_up
    print(f"numeric (decimal and fractional tanks): planaudit {len(records)} plans "
          f"({sum(v_ours)} valid) in {t_ours:.2f} s = {rate_ours:,.0f} plans/s; unified-planning "
          f"{len(sample)} of them in {t_up:.2f} s = {rate_up:,.1f} plans/s "
          f"(verdicts agree on {agree}/{len(sample)})")
    print(ratio(len(records), t_ours, c_ours, len(sample), t_up, c_up))
    figures = _figures(len(records), t_ours, c_ours, len(sample), t_up, c_up)
    figures["agree"] = record.figure(agree, "plans", f"verdicts equal of the {len(sample)} compared")
    record.write("validate_batch", figures, variant="numeric", anchor=_anchor(figures),
                 notes=[f"{len(records)} generated plans ({sum(v_ours)} valid) over 20 problems"])


def _figures(n_ours: int, t_ours: float, c_ours: float, n_up: int, t_up: float,
             c_up: float) -> dict:
    """Both rates and both ratios, as `ratio` prints them."""
    return {"ours_rate": record.figure(n_ours / t_ours, "plans/s",
                                       "planaudit validate --batch, start-up included"),
            "up_rate": record.figure(n_up / t_up, "plans/s", "unified-planning"),
            "ratio_wall": record.figure((n_ours / t_ours) / (n_up / t_up), "×", "by wall time"),
            "ratio_cpu": record.figure((n_ours / c_ours) / (n_up / c_up), "×", "by CPU time"),
            "ours_plans": record.figure(n_ours, "plans", "validated by planaudit"),
            "up_plans": record.figure(n_up, "plans", "validated by unified-planning")}


def _anchor(figures: dict) -> dict:
    return {"name": "unified-planning: PDDLReader per problem, SequentialPlanValidator per plan",
            "ratio": round(figures["ratio_cpu"]["value"], 1),
            "about": "planaudit's plans/s over unified-planning's, by CPU time (goal: at least 50×)"}


def ratio(n_ours: int, t_ours: float, c_ours: float, n_up: int, t_up: float, c_up: float) -> str:
    """The rate ratio by wall time and by CPU time: on a shared machine the wall clock
    charges each side with whatever else ran meanwhile, CPU time much less so."""
    wall = (n_ours / t_ours) / (n_up / t_up)
    cpu = (n_ours / c_ours) / (n_up / c_up)
    return (f"ratio: {wall:,.0f}x unified-planning's rate by wall time, {cpu:,.0f}x by CPU time "
            f"(goal: at least 50x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=60, help="problems for unified-planning")
    ap.add_argument("--full", action="store_true", help="unified-planning on the whole corpus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--numeric", action="store_true",
                    help="generated decimal and fractional plans instead of the corpus")
    ap.add_argument("--plans", type=int, default=1000,
                    help="--numeric: plans per generated problem (20 problems); a few hundred "
                         "at least, or the process's start-up dominates the rate")
    args = ap.parse_args()
    if args.numeric:
        return numeric(args)
    records = [json.loads(x) for x in (CORPUS / "plans.jsonl").read_text().splitlines()]
    problems = sorted({(r["domain"], r["problem"]) for r in records})

    t_ours, c_ours, v_ours = ours(records)
    agree = sum(v == r["val_valid"] for v, r in zip(v_ours, records, strict=True))
    rate_ours = len(records) / t_ours
    print(f"planaudit validate --batch: {len(records)} plans over {len(problems)} problems "
          f"in {t_ours:.2f} s = {rate_ours:,.0f} plans/s (agrees with VAL on {agree}/{len(records)})")

    if args.full:
        sample = records
    else:
        chosen = set(random.Random(args.seed).sample(problems, min(args.sample, len(problems))))
        sample = [r for r in records if (r["domain"], r["problem"]) in chosen]
    t_up, c_up, v_up = unified_planning(sample)
    rate_up = len(sample) / t_up
    up_agree = sum(v == r["val_valid"] for v, r in zip(v_up, sample, strict=True))
    n_problems = len({(r["domain"], r["problem"]) for r in sample})
    print(f"unified-planning (PDDLReader per problem + SequentialPlanValidator per plan): "
          f"{len(sample)} plans over {n_problems} problems in {t_up:.2f} s = "
          f"{rate_up:,.1f} plans/s (agrees with VAL on {up_agree}/{len(sample)})")
    print(ratio(len(records), t_ours, c_ours, len(sample), t_up, c_up))
    figures = _figures(len(records), t_ours, c_ours, len(sample), t_up, c_up)
    figures["ours_agree_val"] = record.figure(agree, "plans", "planaudit's verdicts equal to "
                                              f"VAL's recorded ones, of {len(records)}")
    figures["up_agree_val"] = record.figure(up_agree, "plans", "unified-planning's equal to VAL's, "
                                            f"of {len(sample)}")
    record.write("validate_batch", figures, anchor=_anchor(figures),
                 notes=[f"PlanBench conformance corpus: {len(records)} plans over {len(problems)} "
                        f"problems; unified-planning on {n_problems} problems"
                        + (" (all)" if args.full else f" (a seeded sample, seed {args.seed})")])


if __name__ == "__main__":
    sys.exit(main())
