"""ACPBench's questions generated on the built-in suite: how many per domain, type and
form, what was not posed and why, and the time to generate them (every gold answer
proven on the state graph), in one run. The default is the default run's section (the
first 2 solvable tasks of each domain, 2 states each); `--tasks 0` takes every task.

    .venv/bin/python benchmarks/acpbench_questions.py [--suite results/suite] [--tasks N]
        [--states N] [--seed N]

Needs the prepared suite (`snakemake --cores 2 suite`).
"""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

import record
from planaudit.acpbench.generate import Skipped, questions
from planaudit.acpbench.questions import FORMS, TYPES

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ("blocksworld", "gripper", "hospital", "loadbalancing", "logistics")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(ROOT / "results" / "suite"))
    ap.add_argument("--tasks", type=int, default=2, help="0: every solvable task")
    ap.add_argument("--states", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{'domain':14} {'tasks':>5} {'posed':>6} {'skipped':>7} {'seconds':>8}   "
          + " ".join(f"{t:>6}" for t in TYPES))
    total = skipped_total = 0
    seconds_total = 0.0
    reasons: collections.Counter = collections.Counter()
    rows = []
    for domain in DOMAINS:
        skipped = Skipped()
        start = time.perf_counter()
        qs = questions(args.suite, domain, TYPES, FORMS, args.tasks or None, args.states,
                       args.seed, skipped=skipped)
        seconds = time.perf_counter() - start
        per_type = collections.Counter(q.type for q in qs)
        n_tasks = len({q.task for q in qs})
        n_skip = sum(skipped.counts.values())
        for (_, t, f, why), n in skipped.counts.items():
            reasons[(t, f, why)] += n
        total, skipped_total, seconds_total = total + len(qs), skipped_total + n_skip, \
            seconds_total + seconds
        print(f"{domain:14} {n_tasks:5} {len(qs):6} {n_skip:7} {seconds:8.2f}   "
              + " ".join(f"{per_type[t]:6}" for t in TYPES))
        rows.append((domain, n_tasks, len(qs), n_skip, seconds, *(per_type[t] for t in TYPES)))
    print(f"{'total':14} {'':5} {total:6} {skipped_total:7} {seconds_total:8.2f}")
    print(f"(each type in {len(FORMS)} forms: {', '.join(FORMS)})")
    for (t, f, why), n in sorted(reasons.items()):
        print(f"  not posed: {t} {f}: {n} ({why})")
    record.write("acpbench_questions", {
        "questions": record.figure(total, "questions", f"posed ({args.tasks or 'every'} tasks a "
                                                       f"domain, {args.states} states each)"),
        "skipped": record.figure(skipped_total, "questions", "not posed"),
        "seconds": record.figure(seconds_total, "s", "generation, every gold answer proven"),
    }, variant=None if (args.tasks, args.states) == (2, 2) else f"tasks{args.tasks}-states{args.states}",
        tables={"domains": record.table(["domain", "tasks", "posed", "skipped", "seconds", *TYPES],
                                        rows, f"Per domain and type (each in {len(FORMS)} forms)"),
                "not_posed": record.table(["type", "form", "questions", "why"],
                                          [(t, f, n, why) for (t, f, why), n in sorted(reasons.items())],
                                          "Not posed, and why")})


if __name__ == "__main__":
    main()
