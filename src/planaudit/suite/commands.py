"""`planaudit suite ...`: the suite rules' command-line side, and `suite show`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from planaudit.formal.truth import Limits


def _suite_args(p) -> None:
    p.add_argument("--source", choices=("builtin", "external"), default="builtin",
                   help="builtin: planaudit's domain layout (domain.pddl, problems/, tasks.yaml); "
                        "external: a suite in the published layout (problems_pddl/, prompts.json)")
    p.add_argument("--root", default="domains", help="folder holding one folder per domain")


def _truth_args(p) -> None:
    p.add_argument("--bfs-states", type=int, default=2_000_000,
                   help="breadth-first search gives way to A* past this many states")
    p.add_argument("--astar-seconds", type=float, default=300.0, help="CPU seconds for A*")
    p.add_argument("--external-seconds", type=float, default=600.0,
                   help="wall-clock seconds for Fast Downward (ENHSP for a numeric domain)")
    p.add_argument("--no-external", action="store_true",
                   help="skip Fast Downward / ENHSP (own search only: one method)")
    p.add_argument("--audit", choices=("strict", "warn"), default="strict",
                   help="warn: an external suite's wrong solvability label, or its unsolvable "
                        "task past the certificate limit proven by two methods, or by one while "
                        "the other stopped at its limit, does not fail")


def _limits(args) -> Limits:
    return Limits(args.bfs_states, args.astar_seconds, args.external_seconds, not args.no_external)


def add_parser(sub, func) -> None:
    s = sub.add_parser("suite", help="prepare tasks, prove their truth, audit labels, show them")
    ss = s.add_subparsers(dest="suite_command", required=True)

    pr = ss.add_parser("prepare", help="hidden model (obfuscated if asked), names, briefs")
    _suite_args(pr)
    pr.add_argument("--domain", required=True, help="a domain folder's name under --root")
    pr.add_argument("--task", required=True, help="a task of the domain (p03)")
    pr.add_argument("--outdir", required=True, help="the prepared task's folder (written)")
    pr.add_argument("--obfuscate", action="store_true",
                    help="give the task's objects random names")
    pr.add_argument("--seed", type=int, default=0, help="seeds the random names")
    pr.add_argument("--description", choices=("templates", "generic"), default="templates",
                    help="generic: describe from the PDDL alone even where nl.yaml exists")
    pr.add_argument("--disguise", choices=("none", "deceptive", "randomized"), default="none",
                    help="pose the task under renamed actions, predicates, functions and "
                         "types: deceptive (unrelated words) or randomized (random strings)")
    pr.set_defaults(func=func)

    t = ss.add_parser("truth", help="prove one prepared task and audit its label")
    _suite_args(t)
    t.add_argument("--domain", required=True, help="a domain folder's name under --root")
    t.add_argument("--task", required=True, help="a task of the domain (p03)")
    t.add_argument("--outdir", required=True, help="the prepared task's folder")
    _truth_args(t)
    t.set_defaults(func=func)

    b = ss.add_parser("build", help="prepare and prove every task of a domain in one process "
                                    "(the workflow's suite job)")
    _suite_args(b)
    b.add_argument("--domain", required=True, help="a domain folder's name under --root")
    b.add_argument("--task", action="append", help="only this task (repeatable; default: all)")
    b.add_argument("--suite-dir", required=True, help="tasks go to SUITE_DIR/<domain>/<task>/")
    b.add_argument("--obfuscate", action="store_true",
                   help="give the tasks' objects random names")
    b.add_argument("--seed", type=int, default=0, help="seeds the random names")
    b.add_argument("--description", choices=("templates", "generic"), default="templates",
                   help="generic: describe from the PDDL alone even where nl.yaml exists")
    b.add_argument("--disguise", choices=("deceptive", "randomized"), default=None,
                   help="build the disguised variants SUITE_DIR/<domain>/<task>@<disguise>/, "
                        "checked against the undisguised tasks' truth (built first)")
    _truth_args(b)
    b.set_defaults(func=func)

    m = ss.add_parser("summary", help="gather truth records into summary.csv and audit.csv")
    m.add_argument("truths", nargs="+", metavar="TRUTH.json", help="in the order of the rows")
    m.add_argument("--out", default="results/suite/summary.csv",
                   help="the summary: one row per task (solvability, optimal length, methods)")
    m.add_argument("--audit-out", default=None,
                   help="also write the label audit here, one row per finding (audit.csv)")
    m.set_defaults(func=func)

    nw = ss.add_parser("new", help="write tasks.yaml and nl.yaml for a domain folder of your "
                                   "own (domain.pddl and problems/*.pddl), every value to fill "
                                   "marked TODO")
    nw.add_argument("folder", metavar="PATH", help="the domain folder, e.g. domains/mydomain")
    nw.set_defaults(func=func)

    sh = ss.add_parser("show", help="print a task's briefs, truth and label")
    sh.add_argument("task", metavar="DOMAIN/TASK", help="a task of the suite (gripper/p03)")
    sh.add_argument("--results", default="results", help="the results folder")
    sh.set_defaults(func=func)


def run(args) -> int:
    from planaudit.suite.brief import BriefError
    from planaudit.suite.catalog import CatalogError, find_entry
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import LabelError, make_truth, write_summary

    try:
        cmd = args.suite_command
        if cmd == "new":
            from planaudit.suite.skeleton import new_domain

            written = new_domain(Path(args.folder))
            print("wrote " + " and ".join(map(str, written)) + ": replace every TODO, then run "
                  "`snakemake --cores 2 suite` (the suite refuses to run while a TODO is left)",
                  file=sys.stderr)
            return 0
        if cmd in ("prepare", "truth"):
            entry = find_entry({"source": args.source, "root": args.root}, args.domain,
                               args.task)
        if cmd == "prepare":
            brief = prepare(entry, Path(args.outdir), args.obfuscate, args.seed,
                            args.description, args.disguise)
            print(f"{args.domain}/{args.task}: prepared (obfuscated={args.obfuscate}, "
                  f"facts covered={brief['facts_covered']})", file=sys.stderr)
            return 0
        if cmd == "build":
            return build(args)
        if cmd == "truth":
            rec = make_truth(entry, Path(args.outdir), _limits(args), args.audit, _stderr)
            own = rec["methods"]["own"]
            print(f"{args.domain}/{args.task}: solvable={rec['solvable']} "
                  f"optimal_length={rec['optimal_length']} proven_by={rec['proven_by']} "
                  f"(own {own['method']} {own['status']} in {own['seconds']}s)", file=sys.stderr)
            for a in rec["audit"]:
                print(f"audit: {a['message']}", file=sys.stderr)
            return 0
        if cmd == "summary":
            audit_out = Path(args.audit_out) if args.audit_out else None
            rows = write_summary([Path(t) for t in args.truths], Path(args.out), audit_out)
            single = [f"{r['domain']}/{r['task']}" for r in rows if r["single_witness"]]
            uncertified = [f"{r['domain']}/{r['task']}" for r in rows
                           if r["certificate"] == "missing"]
            one_proof = [f"{r['domain']}/{r['task']}" for r in rows
                         if "single-proof" in r["audit"].split("+")]
            print(f"{len(rows)} tasks in {args.out}; proven by one method only: "
                  f"{', '.join(single) or 'none'}; unsolvable without a certificate: "
                  f"{', '.join(uncertified) or 'none'}"
                  + (f" (kept on one proof under audit: warn: {', '.join(one_proof)})"
                     if one_proof else ""), file=sys.stderr)
            if audit_out is not None:
                import csv

                with audit_out.open(newline="") as fh:
                    n = sum(1 for _ in csv.DictReader(fh))
                print(f"label audit: {n} disagreement(s) between claimed and proven labels"
                      + (f", listed in {audit_out}" if n else ""), file=sys.stderr)
            return 0
        return show(args.task, Path(args.results))
    except (CatalogError, LabelError, BriefError) as e:
        print(f"planaudit suite: {e}", file=sys.stderr)
        return 2


def build(args) -> int:
    """Every task of a domain, prepared and proven in one process: the suite's imports
    and Fast Downward's set-up are paid once per domain, not once per task. Every task
    is proven before a label problem fails the job, so the log names all of them."""
    import time

    from planaudit.suite.catalog import find_entry, load_suite
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import LabelError, make_disguised_truth, make_truth

    suite = {"source": args.source, "root": args.root}
    entries = ([find_entry(suite, args.domain, t) for t in args.task] if args.task
               else load_suite(dict(suite, domains=[args.domain])))
    failed = []
    start = time.perf_counter()
    for i, entry in enumerate(entries, 1):
        base = Path(args.suite_dir) / entry.domain / entry.id
        disguise = args.disguise or "none"
        outdir = base if disguise == "none" else base.with_name(f"{entry.id}@{disguise}")
        prepare(entry, outdir, args.obfuscate, args.seed, args.description, disguise)
        try:
            rec = (make_truth(entry, outdir, _limits(args), args.audit, _stderr)
                   if disguise == "none" else
                   make_disguised_truth(entry, outdir, base, disguise, _limits(args),
                                        args.audit, _stderr))
        except LabelError as e:
            failed.append(str(e))
            print(f"audit: {e}", file=sys.stderr, flush=True)
            continue
        cert = (f" certificate={rec['certificate'] or 'none'}" if rec["solvable"] is False
                else "")
        print(f"{outdir.parent.name}/{outdir.name}: solvable={rec['solvable']} optimal_length="
              f"{rec['optimal_length']} proven_by={rec['proven_by']}{cert}", file=sys.stderr,
              flush=True)
        for a in rec["audit"]:
            print(f"audit: {a['message']}", file=sys.stderr)
        print(f"suite {args.domain}: {i}/{len(entries)} tasks proven "
              f"({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    print(f"suite {args.domain}: {len(entries) - len(failed)} of {len(entries)} tasks proven "
          f"in {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        raise LabelError("; ".join(failed))
    return 0


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def show(name: str, results: Path) -> int:
    folder = results / "suite" / name
    if not (folder / "brief.json").is_file():
        print(f"planaudit suite show: {folder}/brief.json not found (run `snakemake suite`)",
              file=sys.stderr)
        return 2
    brief = json.loads((folder / "brief.json").read_text())
    print(f"== {name}: preamble ==\n{brief['preamble']}\n")
    print(f"== domain brief ==\n{brief['domain']}\n")
    print(f"== instance brief ==\n{brief['instance']}\n")
    truth_path = folder / "truth.json"
    if truth_path.is_file():
        t = json.loads(truth_path.read_text())
        print(f"== truth ==\nlabel: {t['label']} (claimed optimum {t['claimed_optimal']})")
        print(f"proven: solvable={t['solvable']} optimal_length={t['optimal_length']} "
              f"optimal_cost={t['optimal_cost']} by {', '.join(t['proven_by']) or 'none'}")
        if t.get("certificate"):
            print(f"certificate: {t['certificate']}")
        elif t.get("solvable") is False:
            print(f"certificate: none ({t.get('certificate_missing', 'not made')})")
        if t.get("plan"):
            print("optimal plan:\n" + "\n".join(t["plan"]))
        for a in t.get("audit", []):
            print(f"audit: {a['message']}")
    else:
        print("== truth ==\nnot computed yet")
    return 0
