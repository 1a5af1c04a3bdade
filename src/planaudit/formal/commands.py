"""`planaudit validate`, `solve` and `certify-check`: the semantics on the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from planaudit import atomic
from planaudit.commandline import (
    EXIT_INPUT,
    EXIT_NEGATIVE,
    EXIT_OK,
    InputError,
)
from planaudit.formal.sexpr import PDDLError


def _dump(obj) -> str:
    return json.dumps(obj, sort_keys=False)


def add_parser(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("validate", help="validate a plan file against a domain and problem")
    v.add_argument("domain", nargs="?", help="the domain's PDDL file (not with --batch)")
    v.add_argument("problem", nargs="?", help="the problem's PDDL file (not with --batch)")
    v.add_argument("plan", nargs="?",
                   help="the plan file, as VAL reads one: (action arg1 arg2 ...) a step "
                        "(not with --batch)")
    v.add_argument("--json", action="store_true", help="print the verdict as JSON")
    v.add_argument("--batch", metavar="RECORDS.jsonl",
                   help="records {domain, problem, plan} (or plan_file), paths relative "
                        "to the records file")
    v.add_argument("--out", help="with --batch: write verdicts here instead of stdout")
    v.add_argument("--witness", choices=("val",),
                   help="also run VAL on the plan and say whether it agrees (JSON: val_valid, "
                        "val_detail, agree, departure); the exit code stays planaudit's")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("solve", help="prove solvability and the optimal plan length")
    s.add_argument("domain", help="the domain's PDDL file")
    s.add_argument("problem", help="the problem's PDDL file")
    s.add_argument("--json", action="store_true",
                   help="print the whole truth record as JSON (every method's status, the "
                        "plan, whether the methods agree)")
    s.add_argument("--state-limit", type=int, default=2_000_000,
                   help="breadth-first search gives way to A* past this many states")
    s.add_argument("--astar-seconds", type=float, default=300.0, help="CPU seconds for A*")
    s.add_argument("--external-seconds", type=float, default=600.0,
                   help="wall-clock seconds for Fast Downward (ENHSP for a numeric domain)")
    s.add_argument("--no-external", action="store_true",
                   help="skip Fast Downward / ENHSP (own search only)")
    s.add_argument("--certificate", metavar="FILE",
                   help="write the unsolvability certificate here")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("certify-check", help="check an unsolvability certificate")
    c.add_argument("domain", help="the domain's PDDL file")
    c.add_argument("problem", help="the problem's PDDL file")
    c.add_argument("certificate",
                   help="the certificate (JSON) that `planaudit solve --certificate` or the "
                        "suite's truth wrote")
    c.set_defaults(func=cmd_certify_check)


def _describe_verdict(v) -> str:
    if v.valid:
        return f"valid: {v.length} steps, cost {v.to_json()['cost']}"
    f = v.failure
    where = "goal" if f.kind == "goal" else f"step {f.step} {f.action}"
    text = f"invalid ({f.kind}) at {where}: {f.detail}"
    if f.unsatisfied:
        text += "\n  unsatisfied: " + " ".join(f.unsatisfied)
    return text


def _witness(domain, problem, plan: str, ours_valid: bool, kind: str | None,
             detail: str) -> dict:
    """VAL's verdict on the same plan, and whether it agrees with planaudit's: the fields
    `--witness val` adds (a disagreement names the departure that explains it)."""
    from planaudit.formal.departures import Comparison
    from planaudit.formal.witness import run_val

    return Comparison(ours_valid, kind, detail, None, run_val(domain, problem, plan)).fields()


def _describe_witness(w: dict) -> str:
    from planaudit.formal.departures import DEPARTURES

    text = f"VAL: {w['val_detail']}\n"
    if w["agree"] is None:
        return text + "VAL gave no verdict: nothing to compare"
    if w["agree"]:
        return text + "planaudit and VAL agree"
    why = DEPARTURES.get(w["departure"], "no documented departure explains it: a bug to chase")
    return text + f"planaudit and VAL DISAGREE ({w['departure']}: {why})"


def _require_witness(name: str | None) -> None:
    from planaudit.formal.witness import WitnessUnavailable, val_binary

    if name:
        try:
            val_binary()
        except WitnessUnavailable as e:
            raise InputError(f"--witness {name}: {e}") from None


def cmd_validate(args) -> int:
    from planaudit.formal import load_task, parse_plan, validate
    from planaudit.formal.departures import failure_words
    from planaudit.formal.sexpr import read_file

    _require_witness(args.witness)
    if args.batch:
        return _validate_batch(Path(args.batch), args.out, args.witness)
    if not (args.domain and args.problem and args.plan):
        raise InputError("validate needs DOMAIN PROBLEM PLAN, or --batch RECORDS.jsonl")
    task = load_task(args.domain, args.problem)
    text = read_file(args.plan)
    try:
        steps = parse_plan(text, args.plan)
    except PDDLError as e:  # refused, exit 2; VAL's opinion of the file goes beside it
        if args.witness:
            w = _witness(args.domain, args.problem, text, False, "unreadable", str(e))
            print(_describe_witness(w), file=sys.stderr)
        raise
    verdict = validate(task, steps)
    out = verdict.to_json()
    if args.witness:  # a disagreement is reported, never an exit code: that stays planaudit's
        f = verdict.failure
        out.update(_witness(args.domain, args.problem, text, verdict.valid, f and f.kind,
                            failure_words(f)))
    if args.json:
        print(_dump(out))
    else:
        print(_describe_verdict(verdict))
        if args.witness:
            print(_describe_witness(out))
    return EXIT_OK if verdict.valid else EXIT_NEGATIVE


def _validate_batch(records: Path, out: str | None, witness: str | None = None) -> int:
    """One verdict a line, in order; each distinct domain and problem parsed once. With a
    witness, VAL's verdict too, on every plan planaudit judged or refused as unreadable."""
    from planaudit.formal import Task, parse_plan, validate
    from planaudit.formal.departures import failure_words
    from planaudit.formal.load import domain_at
    from planaudit.formal.sexpr import read_file
    from planaudit.formal.syntax import load_problem

    if not records.is_file():
        raise InputError(f"{records}: no such records file")
    base = records.parent
    tasks: dict[tuple[str, str], Task | PDDLError] = {}
    errors = 0
    sink = open(out, "w") if out else sys.stdout
    try:
        with records.open() as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    dpath, ppath = rec["domain"], rec["problem"]
                    plan = rec["plan"] if "plan" in rec else read_file(base / rec["plan_file"])
                except PDDLError as e:
                    errors += 1
                    sink.write(_dump({"line": n, "error": str(e)}) + "\n")
                    continue
                except (json.JSONDecodeError, KeyError, TypeError) as e:
                    errors += 1
                    msg = (f"{records}:{n}: bad record ({type(e).__name__}: {e}); "
                           "needs domain, problem and plan (or plan_file)")
                    sink.write(_dump({"line": n, "error": msg}) + "\n")
                    continue
                key = (dpath, ppath)
                task = tasks.get(key)
                if task is None:
                    try:
                        dom = domain_at(base / dpath)
                        task = Task(dom, load_problem(base / ppath, dom))
                    except PDDLError as e:
                        task = e
                    except Exception as e:  # a bug: every record of this task says so
                        task = PDDLError(f"internal error, please report: {type(e).__name__}: {e}",
                                         str(base / ppath))
                    tasks[key] = task
                if isinstance(task, PDDLError):
                    errors += 1
                    sink.write(_dump({"line": n, "error": str(task)}) + "\n")
                    continue
                source = f"plan of {records}:{n}" if "plan" in rec else str(base / rec["plan_file"])
                try:
                    verdict = validate(task, parse_plan(plan, source))
                except PDDLError as e:
                    errors += 1
                    extra = _witness(base / dpath, base / ppath, plan, False, "unreadable",
                                     str(e)) if witness else {}
                    sink.write(_dump({"line": n, "error": str(e), **extra}) + "\n")
                    continue
                except Exception as e:  # a bug: this record says so, and the batch goes on
                    errors += 1
                    sink.write(_dump({"line": n, "error": f"internal error, please report: "
                                                          f"{type(e).__name__}: {e}"}) + "\n")
                    continue
                extra = {}
                if witness:
                    f = verdict.failure
                    extra = _witness(base / dpath, base / ppath, plan, verdict.valid,
                                     f and f.kind, failure_words(f))
                sink.write(_dump({"line": n, **verdict.to_json(), **extra}) + "\n")
    finally:
        if out:
            sink.close()
    if errors:
        print(f"planaudit validate: {errors} record(s) could not be validated "
              f"(see their 'error' lines)", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK




def cmd_solve(args) -> int:
    from planaudit.formal.certificate import dumps as dump_certificate
    from planaudit.formal.truth import Limits, solve

    limits = Limits(bfs_states=args.state_limit, astar_seconds=args.astar_seconds,
                    external_seconds=args.external_seconds, external=not args.no_external)
    record = solve(args.domain, args.problem, limits,
                   lambda msg: print(msg, file=sys.stderr, flush=True))
    cert = record.pop("certificate_data", None)
    if args.certificate and cert is not None:
        atomic.write_text(args.certificate, dump_certificate(cert))
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        if record["solvable"] is None:
            print("undecided: no method finished" if not record["methods"] else
                  "undecided or methods disagree")
        elif record["solvable"]:
            print(f"solvable: optimal length {record['optimal_length']}, "
                  f"cost {record['optimal_cost']}")
            print("\n".join(record["plan"] or []))
        else:
            print(f"unsolvable (certificate: {record['certificate']})")
        for name, m in record["methods"].items():
            print(f"  {name}: {m['method']} {m['status']} length={m['length']} "
                  f"states={m['states']} {m['seconds']}s {m.get('detail', '')}".rstrip())
        if not record["agree"]:
            print("  METHODS DISAGREE")
            for d in record["disagreements"]:
                print(f"    {d['kind']} (at fault: {d['at_fault']}): {d['message']}")
    return EXIT_OK if record["agree"] else EXIT_NEGATIVE


def cmd_certify_check(args) -> int:
    from planaudit.formal import load_task
    from planaudit.formal.certificate import CertificateError, check

    task = load_task(args.domain, args.problem)
    try:
        cert = json.loads(Path(args.certificate).read_text())
    except FileNotFoundError:
        raise InputError(f"{args.certificate}: no such file") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{args.certificate}:{e.lineno}: not JSON ({e.msg})") from None
    try:
        check(task, args.domain, args.problem, cert)
    except CertificateError as e:
        print(f"rejected: {e}")
        return EXIT_NEGATIVE
    print(f"certificate checks: {cert['kind']} proves the task unsolvable")
    return EXIT_OK
