"""`planaudit suite ...`: the suite rules' command-line side."""

from __future__ import annotations

import sys
from pathlib import Path

from planaudit.formal.truth import Limits


def add_parser(sub, func) -> None:
    s = sub.add_parser("suite", help="ground truth and label audit of suite tasks")
    ss = s.add_subparsers(dest="suite_command", required=True)

    t = ss.add_parser("truth", help="prove one task and audit its label")
    t.add_argument("--root", default="domains", help="folder of the built-in domains")
    t.add_argument("--domain", required=True)
    t.add_argument("--task", required=True)
    t.add_argument("--outdir", required=True)
    t.add_argument("--bfs-states", type=int, default=2_000_000)
    t.add_argument("--astar-seconds", type=float, default=300.0)
    t.add_argument("--external-seconds", type=float, default=600.0)
    t.add_argument("--no-external", action="store_true")
    t.set_defaults(func=func)

    m = ss.add_parser("summary", help="gather truth records into summary.csv")
    m.add_argument("truths", nargs="+", metavar="TRUTH.json", help="in the order of the rows")
    m.add_argument("--out", default="results/suite/summary.csv")
    m.set_defaults(func=func)


def run(args) -> int:
    from planaudit.suite.catalog import CatalogError, find_task
    from planaudit.suite.records import LabelError, make_truth, write_summary

    try:
        if args.suite_command == "truth":
            entry = find_task(args.root, args.domain, args.task)
            limits = Limits(args.bfs_states, args.astar_seconds, args.external_seconds,
                            not args.no_external)
            rec = make_truth(entry, Path(args.outdir), limits)
            own = rec["methods"]["own"]
            print(f"{args.domain}/{args.task}: solvable={rec['solvable']} "
                  f"optimal_length={rec['optimal_length']} proven_by={rec['proven_by']} "
                  f"(own {own['method']} {own['status']} in {own['seconds']}s)", file=sys.stderr)
            return 0
        rows = write_summary([Path(t) for t in args.truths], Path(args.out))
        single = [f"{r['domain']}/{r['task']}" for r in rows if r["single_witness"]]
        print(f"{len(rows)} tasks in {args.out}; proven by one method only: "
              f"{', '.join(single) or 'none'}", file=sys.stderr)
        return 0
    except (CatalogError, LabelError) as e:
        print(f"planaudit suite: {e}", file=sys.stderr)
        return 2
