"""The `planaudit` command. Each subcommand parses arguments and calls the library.

Exit codes: 0 success (a valid plan, a checked certificate), 1 a negative verdict
(an invalid plan, a rejected certificate), 2 bad input, named by file and line.
Heavy imports (unified-planning, snakemake) happen inside the subcommands that
need them, so that `validate` starts fast.
"""

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
    preflight,
    read_config,
)
from planaudit.commandline import config_arg as _config_arg
from planaudit.formal.sexpr import PDDLError


def _dump(obj) -> str:
    return json.dumps(obj, sort_keys=False)


# -- validate -------------------------------------------------------------------------


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


# -- solve and certificates -----------------------------------------------------------


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


# -- episodes -------------------------------------------------------------------------


def cmd_shard(args) -> int:
    from planaudit.experiment import ConfigError, model_entry
    from planaudit.formal.repair import RepairUnavailable
    from planaudit.formal.witness import WitnessUnavailable
    from planaudit.shard import ShardFailed, run_shard

    config = json.loads(args.spec) if args.spec else read_config(args)
    try:
        preflight([model_entry(config, args.model)])
        frames = run_shard(config, args.regime, args.model, args.method, args.domain,
                           Path(args.suite), args.out, args.transcripts,
                           setting=getattr(args, "setting", None),
                           disguises=tuple(args.disguise or ("none",)))
    except (ConfigError, FileNotFoundError, ValueError) as e:
        raise InputError(str(e)) from None
    except WitnessUnavailable as e:
        raise InputError(f"config {args.regime}.witness: {e} (or set witness: none)") from None
    except RepairUnavailable as e:
        raise InputError(f"config {args.regime}.repair: {e} (or set enabled: false)") from None
    except ShardFailed as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return EXIT_NEGATIVE
    for domain, frame in frames.items():
        counts = frame["outcome"].value_counts().sort("outcome")
        print(f"{args.regime}/{args.model}/{args.method}/{domain}: {frame.height} episodes: "
              + ", ".join(f"{o} {n}" for o, n in counts.iter_rows()), file=sys.stderr)
    return EXIT_OK


def cmd_episode(args) -> int:
    """Run one episode and print its transcript and row: the debugging tool."""
    import asyncio

    from planaudit.experiment import (
        ConfigError,
        method_params,
        model_config,
        model_entry,
        plan_settings,
        reference_meta,
        shard_hash,
    )
    from planaudit.formal.repair import RepairUnavailable
    from planaudit.formal.witness import WitnessUnavailable
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client
    from planaudit.shard import episode_runner, require_witness

    config = read_config(args)
    try:
        entry = model_entry(config, args.model)
        regime = args.regime or _regime_of(config, args.method)
        setting = args.setting or (plan_settings(config)[0] if regime == "online" else None)
        params = method_params(config, regime, args.method, setting)
        require_witness(params)
    except ConfigError as e:
        raise InputError(str(e)) from None
    except WitnessUnavailable as e:
        raise InputError(f"config {regime}.witness: {e} (or set witness: none)") from None
    except RepairUnavailable as e:
        raise InputError(f"config {regime}.repair: {e} (or set enabled: false)") from None
    folder = _prepared(config, args.task, Path(args.results or config.get("results", "results")))
    preflight([entry])
    run_episode = episode_runner(regime, entry)
    cache = Cache(config.get("cache", ".cache/planaudit"))
    try:
        cache.require_writable()
    except ValueError as e:
        raise InputError(str(e)) from None
    client = Client(model_config(entry), cache)
    row, transcript = asyncio.run(run_episode(
        client, args.method, params, folder, task_name=args.task,
        config_hash=shard_hash(entry, args.method, params),
        reference_meta=reference_meta(entry), tier=entry.get("tier", "")))
    from planaudit.transcript import render

    print(render(transcript, row, cut=args.cut))
    return EXIT_OK


def _regime_of(config: dict, method: str) -> str:
    """The regime whose methods in the config name `method`; InputError listing all."""
    for regime in ("offline", "online"):
        if method in config.get(regime, {}).get("methods", []):
            return regime
    have = {r: config.get(r, {}).get("methods", []) for r in ("offline", "online")}
    raise InputError(f"no method '{method}' in the config (offline: "
                     f"{', '.join(have['offline']) or 'none'}; online: "
                     f"{', '.join(have['online']) or 'none'})")


def _prepared(config: dict, name: str, results: Path) -> Path:
    """The task's prepared folder; a task not prepared yet is prepared and proven here,
    exactly as the suite rules would, so that one episode needs no full suite run."""
    from planaudit.suite.brief import BriefError
    from planaudit.suite.catalog import CatalogError
    from planaudit.suite.prepare import prepare_task
    from planaudit.suite.records import LabelError

    domain, _, task = name.partition("/")
    if not domain or not task:
        raise InputError(f"--task {name}: write DOMAIN/TASK, such as gripper/p03")
    folder = results / "suite" / domain / task
    if (folder / "truth.json").is_file():
        return folder
    print(f"{name}: not prepared yet; preparing and proving it (as `snakemake suite` would)",
          file=sys.stderr, flush=True)
    try:
        return prepare_task(config, domain, task, results,
                            lambda msg: print(f"  {msg}", file=sys.stderr, flush=True))
    except (CatalogError, BriefError, LabelError) as e:
        raise InputError(str(e)) from None


def cmd_check(args) -> int:
    """Before a paid run: every model's provider, credentials and server, in seconds."""
    from planaudit.llm.preflight import check_model, resource_name, server_tools

    config = json.loads(args.spec) if args.spec else read_config(args)
    entries = [m for m in config.get("models", []) if not args.model or m["name"] in args.model]
    if args.model and (unknown := set(args.model) - {m["name"] for m in entries}):
        raise InputError(f"no model named {', '.join(sorted(unknown))} in the config (have: "
                         f"{', '.join(m['name'] for m in config.get('models', [])) or 'none'})")
    failed = 0
    unwritable = False
    if "cache" in config:  # a full config (`--config`): its cache must take replies
        from planaudit.llm.cache import Cache

        try:
            Cache(config["cache"]).require_writable()
        except ValueError as e:
            print(f"planaudit check: {e}", file=sys.stderr)
            unwritable = True
    for entry in entries:
        problems = check_model(entry)
        failed += bool(problems)
        kind = "reference, not an LLM" if entry["model"].startswith("reference/") else "LLM"
        status = "ok" if not problems else "CANNOT RUN"
        print(f"{entry['name']:<24} {entry['model']:<32} {kind:<22} "
              f"resource {resource_name(entry['name'])}: {status}")
        for p in problems:
            print(f"  {p}")
        if not problems and (note := server_tools(entry)):
            print(f"  note: {note}")
    if args.out and not failed and not unwritable:
        atomic.write_text(args.out, json.dumps([m["name"] for m in entries]) + "\n")
    if failed:
        print(f"planaudit check: {failed} of {len(entries)} model(s) cannot run; nothing was sent "
              "(`planaudit check --config FILE` checks every model of a config at once)",
              file=sys.stderr)
    return EXIT_INPUT if failed or unwritable else EXIT_OK


def cmd_estimate(args) -> int:
    from planaudit.estimate import estimate, render
    from planaudit.experiment import ConfigError

    config = read_config(args)
    try:
        rows = estimate(config, Path(args.results or config.get("results", "results")) / "suite")
    except (ConfigError, FileNotFoundError, ValueError) as e:  # CurriculumError is a ValueError
        raise InputError(str(e)) from None
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=1))
    else:
        print(render(rows))
    return EXIT_OK


# -- compliance ---------------------------------------------------------------------


def cmd_compliance_score(args) -> int:
    from planaudit.compliance.external import (
        SequenceError,
        parse_expected,
        read_sequences,
        render,
        score_sequences,
    )

    try:
        expected = parse_expected(args.expected)
        result = score_sequences(read_sequences(Path(args.file)), expected)
    except SequenceError as e:
        raise InputError(str(e)) from None
    print(json.dumps(result, indent=2) if args.json else render(result))
    return EXIT_OK


# -- analysis -----------------------------------------------------------------------


def cmd_collect(args) -> int:
    from planaudit.analysis.collect import CollectError, collect, default_schema, load_schema, write

    try:
        schema = load_schema(Path(args.schema) if args.schema else default_schema())
        frame = collect([Path(s) for s in args.shards], schema)
    except CollectError as e:
        raise InputError(str(e)) from None
    write(frame, Path(args.out))
    print(f"collect: {frame.height} episodes from {len(args.shards)} shard(s) into {args.out}",
          file=sys.stderr)
    return EXIT_OK


def cmd_tables(args) -> int:
    from planaudit.analysis.tables import NEEDED, TABLES, write_tables

    if args.bootstrap < 1 or not 0 < args.alpha < 1:
        raise InputError("--bootstrap must be at least 1 and --alpha lie in (0, 1)")
    episodes = _read_episodes(args.episodes, NEEDED)
    write_tables(episodes, Path(args.out), args.seed, args.bootstrap, args.alpha)
    print(f"tables: {len(TABLES)} tables of {episodes.height} episodes in {args.out}", file=sys.stderr)
    return EXIT_OK


def cmd_power(args) -> int:
    from planaudit.analysis.stats import confirm_probability, detectable_difference

    try:
        pw = detectable_difference(args.tasks, args.comparisons, args.alpha)
        predicted = None if args.difference is None else confirm_probability(
            args.tasks, args.comparisons, args.difference / 100, args.baseline, args.correlation,
            args.alpha)
    except ValueError as e:
        raise InputError(str(e)) from None
    if predicted is not None:
        print(f"power at {args.difference:g} pp (baseline {args.baseline:g}, outcome correlation "
              f"{args.correlation:g}): {predicted:.4f}")
    bound = args.alpha / args.comparisons
    if pw.discordant is None:
        print(f"no difference detectable: even all {args.tasks} tasks discordant in one direction "
              f"give an exact McNemar p above alpha/M = {bound:.3g}")
        return EXIT_NEGATIVE
    print(f"smallest detectable difference: {pw.min_difference_pp:.1f} pp")
    print(f"discordant pairs needed: {pw.discordant} of {pw.tasks} tasks, all in one direction "
          f"(exact McNemar p = {pw.p:.3g} <= alpha/M = {bound:.3g}, Holm's first step)")
    return EXIT_OK


def cmd_calibrate(args) -> int:
    from planaudit.analysis.calibrate import Design, calibrate, render, table

    if args.spec:
        try:
            config = json.loads(args.spec)
        except json.JSONDecodeError as e:
            raise InputError(f"--spec: not JSON ({e})") from None
    elif args.config or Path("config/config.yaml").is_file():
        config = read_config(args)
    else:
        config = {}  # outside the project folder: the built-in defaults
    try:
        differences = None if args.differences is None else [
            float(d) for d in args.differences.split(",") if d.strip()]
    except ValueError:
        raise InputError(f"--differences: not a comma-separated list of numbers: "
                         f"{args.differences!r}") from None
    try:
        design = Design.from_config(config, tasks=args.tasks, comparisons=args.comparisons,
                                    experiments=args.experiments, baseline=args.baseline,
                                    correlation=args.correlation, differences=differences,
                                    alpha=args.alpha, seed=args.seed)
    except (ValueError, TypeError) as e:
        raise InputError(f"calibrate: {e}") from None
    cal = calibrate(design)
    result = {k: v for k, v in cal.result.items() if k not in ("rows", "curve")}
    if args.out:
        from planaudit.analysis.figures import draw_calibration, save
        from planaudit.analysis.tables import write_table

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic.write_text(out / "calibration.json", json.dumps(cal.result, indent=1) + "\n")
        write_table(table(cal.result), "table", out)
        save(draw_calibration(cal.result), out, "power")
    print(json.dumps(result) if args.json else render(cal.result))
    return EXIT_OK


FIGURE_COLUMNS = ("regime", "model", "reference", "method", "domain", "task", "solvable",
                  "outcome", "success", "detected", "cost_usd")


def _read_episodes(path: str, needed: tuple[str, ...] = FIGURE_COLUMNS):
    """The collected episode rows, or InputError naming the file."""
    import polars as pl

    episodes = Path(path)
    if not episodes.is_file():
        raise InputError(f"{episodes}: no such episodes file (run `planaudit collect` first)")
    try:
        frame = pl.read_parquet(episodes)
    except (pl.exceptions.PolarsError, OSError) as e:
        raise InputError(f"{episodes}: not a Parquet file ({e})") from None
    if missing := [c for c in needed if c not in frame.columns]:
        raise InputError(f"{episodes}: missing column(s) {', '.join(missing)}")
    return frame


def _without_curriculum(frame):
    """The rows figures and the report read, under the tasks' own names: the offline and
    online rows (every figure but ACPBench's and the design section are drawn on them),
    and the ACPBench rows, for ACPBench's figure only (analysis.tables.main_rows and
    acpbench_rows keep them apart there). The curriculum and the disguises have their own
    tables."""
    import polars as pl

    from planaudit.analysis.rows import ACPBENCH, MAIN_REGIMES
    from planaudit.analysis.tables import undisguised

    return undisguised(frame.filter(pl.col("regime").is_in([*MAIN_REGIMES, ACPBENCH])))


def cmd_figures(args) -> int:
    from planaudit.analysis.figures import draw_all

    frame = _without_curriculum(_read_episodes(args.episodes))
    notes: list[str] = []
    written = draw_all(frame, Path(args.out), notes,
                       {"seed": args.seed, "bootstrap": args.bootstrap, "alpha": args.alpha},
                       acpbench=True if args.acpbench else None)
    for note in notes:
        print(f"figures: {note}", file=sys.stderr)
    print(f"figures: {len(written)} files from {frame.height} episodes in {args.out}", file=sys.stderr)
    return EXIT_OK


def cmd_report(args) -> int:
    from planaudit.analysis.report import build

    frame = _without_curriculum(_read_episodes(args.episodes))
    try:
        config = json.loads(args.spec) if args.spec else read_config(args)
    except json.JSONDecodeError as e:
        raise InputError(f"--spec: not JSON ({e})") from None
    out = build(frame, config, Path(args.tables), Path(args.figures), Path(args.out))
    print(f"report: {out}", file=sys.stderr)
    return EXIT_OK


# -- suite --------------------------------------------------------------------------


def cmd_suite(args) -> int:
    from planaudit.suite import commands

    return commands.run(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="planaudit", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="validate a plan file against a domain and problem")
    v.add_argument("domain", nargs="?")
    v.add_argument("problem", nargs="?")
    v.add_argument("plan", nargs="?")
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
    s.add_argument("domain")
    s.add_argument("problem")
    s.add_argument("--json", action="store_true")
    s.add_argument("--state-limit", type=int, default=2_000_000,
                   help="breadth-first search gives way to A* past this many states")
    s.add_argument("--astar-seconds", type=float, default=300.0, help="CPU seconds for A*")
    s.add_argument("--external-seconds", type=float, default=600.0)
    s.add_argument("--no-external", action="store_true",
                   help="skip Fast Downward / ENHSP (own search only)")
    s.add_argument("--certificate", metavar="FILE",
                   help="write the unsolvability certificate here")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("certify-check", help="check an unsolvability certificate")
    c.add_argument("domain")
    c.add_argument("problem")
    c.add_argument("certificate")
    c.set_defaults(func=cmd_certify_check)

    for regime in ("offline", "online"):
        o = sub.add_parser(regime, help=f"the {regime} regime")
        osub = o.add_subparsers(dest=f"{regime}_command", required=True)
        sh = osub.add_parser("shard", help="run one model x method over the tasks of one or more "
                                           "domains")
        _config_arg(sh)
        sh.add_argument("--spec", help="the config slice as JSON (the workflow passes this)")
        sh.add_argument("--model", required=True)
        sh.add_argument("--method", required=True)
        sh.add_argument("--domain", required=True, action="append",
                        help="a domain of the prepared suite (repeatable)")
        sh.add_argument("--suite", default="results/suite", help="the prepared suite folder")
        sh.add_argument("--disguise", action="append", choices=("none", "deceptive", "randomized"),
                        help="run the tasks under this disguise (repeatable; default: none); "
                             "disguised tasks are the suite's <task>@<disguise> folders")
        sh.add_argument("--out", required=True,
                        help="each domain's Parquet file; {domain} stands for the domain's name")
        sh.add_argument("--transcripts", required=True,
                        help="folder for <task>.jsonl; {domain} stands for the domain's name")
        if regime == "online":
            sh.add_argument("--setting", help="the plan setting (config/plan_settings.yaml); "
                                              "default none")
        sh.set_defaults(func=cmd_shard, regime=regime)

    e = sub.add_parser("episode", help="run one episode (offline or online) and print it")
    e.add_argument("--regime", choices=("offline", "online"),
                   help="default: the regime whose methods in the config name the method")
    _config_arg(e)
    e.add_argument("--model", required=True)
    e.add_argument("--method", required=True)
    e.add_argument("--task", required=True, metavar="DOMAIN/TASK")
    e.add_argument("--results", help="where the prepared suite is, default: the config's "
                                      "results folder (a task not prepared yet is prepared there)")
    e.add_argument("--cut", type=int, default=0, metavar="N",
                   help="shorten each message to N characters, visibly (0: print all)")
    e.add_argument("--setting", help="online: the plan setting (default: the config's first "
                                      "online.plan_settings, or none)")
    e.set_defaults(func=cmd_episode)

    cp = sub.add_parser("compliance", help="plan compliance of phase sequences")
    cpsub = cp.add_subparsers(dest="compliance_command", required=True)
    cs = cpsub.add_parser("score", help="PPC, POC, PPF and PC of sequences in the paper's layout "
                                        "([{instance_id, resolution_status, languatory}])")
    cs.add_argument("file")
    cs.add_argument("--expected", required=True, help="the expected phases in order: N,R,P,V")
    cs.add_argument("--json", action="store_true")
    cs.set_defaults(func=cmd_compliance_score)

    ck = sub.add_parser("check", help="before spending: every model's provider, credentials "
                                      "and server, in seconds (sends no prompt)")
    _config_arg(ck)
    ck.add_argument("--spec", help="the models as JSON instead (the workflow passes this)")
    ck.add_argument("--model", action="append", help="check only this model (repeatable)")
    ck.add_argument("--out", help="on success, write the checked models' names here (the "
                                  "workflow's marker)")
    ck.set_defaults(func=cmd_check)

    es = sub.add_parser("estimate", help="expected calls, tokens and dollars of a config")
    _config_arg(es)
    es.add_argument("--results", help="where the prepared suite is (default: the config's "
                                       "results folder)")
    es.add_argument("--json", action="store_true")
    es.set_defaults(func=cmd_estimate)

    co = sub.add_parser("collect", help="every episode shard into one Parquet file, rows checked")
    co.add_argument("shards", nargs="*", metavar="SHARD", help="episode shards (.parquet)")
    co.add_argument("--out", required=True, help="the collected episodes (.parquet)")
    co.add_argument("--schema", help="the row schema (default: workflow/schemas/row.schema.yaml "
                                     "of this repository)")
    co.set_defaults(func=cmd_collect)

    ta = sub.add_parser("tables", help="the analysis tables as csv, Markdown and LaTeX")
    ta.add_argument("--episodes", default="results/episodes.parquet")
    ta.add_argument("--out", default="results/report", help="folder for the tables")
    ta.add_argument("--seed", type=int, default=0, help="seeds the bootstrap intervals")
    ta.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    ta.add_argument("--alpha", type=float, default=0.05, help="family-wise level of Holm")
    ta.set_defaults(func=cmd_tables)

    pw = sub.add_parser("power", help="smallest difference an exact McNemar test under Holm "
                                      "can confirm")
    pw.add_argument("--tasks", type=int, required=True, help="N paired tasks")
    pw.add_argument("--comparisons", type=int, required=True, help="M comparisons in the family")
    pw.add_argument("--alpha", type=float, default=0.05)
    pw.add_argument("--difference", type=float, metavar="PP",
                    help="also print the power to confirm this true difference, in points")
    pw.add_argument("--baseline", type=float, default=0.5,
                    help="with --difference: the baseline's success rate")
    pw.add_argument("--correlation", type=float, default=1.0,
                    help="with --difference: outcome correlation of two equal methods (1: the "
                         "most favourable split, all discordant pairs one way; 0: independent)")
    pw.set_defaults(func=cmd_power)

    ca = sub.add_parser("calibrate", help="controls for the statistics: simulated experiments "
                                          "with known truth through the report's own analysis",
                        description="Every option not given comes from the config's calibration "
                                    "section (alpha and the bootstrap from its analysis section); "
                                    "see the README's Calibration section for the model.")
    _config_arg(ca)
    ca.add_argument("--spec", help="the config as JSON instead (the workflow passes this)")
    ca.add_argument("--tasks", type=int, help="N paired tasks (default: calibration.tasks)")
    ca.add_argument("--comparisons", type=int, help="M comparisons in the Holm family")
    ca.add_argument("--experiments", type=int, help="simulated experiments per true difference")
    ca.add_argument("--baseline", type=float, help="the baseline's success rate")
    ca.add_argument("--correlation", type=float,
                    help="outcome correlation of two equal methods (shared task difficulty)")
    ca.add_argument("--differences", help="true differences in points, comma-separated "
                                          "(0 and the smallest confirmable one are added)")
    ca.add_argument("--alpha", type=float, help="family-wise level (default: analysis.alpha)")
    ca.add_argument("--seed", type=int, help="seeds the simulated outcomes")
    ca.add_argument("--out", help="also write calibration.json, table.{csv,md,tex} and "
                                  "power.{png,svg} in this folder")
    ca.add_argument("--json", action="store_true", help="print one JSON object")
    ca.set_defaults(func=cmd_calibrate)

    fi = sub.add_parser("figures", help="the report's figures as png and svg")
    fi.add_argument("--episodes", default="results/episodes.parquet")
    fi.add_argument("--out", default="results/report/figures", help="folder for the figures")
    fi.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (as for tables)")
    fi.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    fi.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate")
    fi.add_argument("--acpbench", action="store_true",
                    help="write ACPBench's figures even with no ACPBench rows (as placeholders)")
    fi.set_defaults(func=cmd_figures)

    rp = sub.add_parser("report", help="the standalone report (index.html): design, tables, figures")
    rp.add_argument("--episodes", default="results/episodes.parquet")
    _config_arg(rp)
    rp.add_argument("--spec", help="the config as JSON instead (the workflow passes this)")
    rp.add_argument("--tables", default="results/report", help="folder with the table csvs")
    rp.add_argument("--figures", default="results/report/figures")
    rp.add_argument("--out", default="results/report/index.html")
    rp.set_defaults(func=cmd_report)

    from planaudit.suite.commands import add_parser as add_suite

    add_suite(sub, cmd_suite)

    from planaudit.curriculum.commands import add_curriculum_parser, add_show_parser
    from planaudit.planbench.cli_args import add_parser as add_planbench

    add_curriculum_parser(sub, _config_arg)
    _, planbench = add_planbench(sub)
    add_show_parser(planbench, _config_arg)

    from planaudit.acpbench.commands import add_parser as add_acpbench

    add_acpbench(sub, _config_arg)

    from planaudit.interop.commands import add_parser as add_interop

    add_interop(sub)
    _finish_help(p)
    return p


EXAMPLES = {
    "validate": "planaudit validate domains/gripper/domain.pddl domains/gripper/problems/p01.pddl "
                "plan.txt --json",
    "solve": "planaudit solve domains/gripper/domain.pddl domains/gripper/problems/p03.pddl",
    "certify-check": "planaudit certify-check domain.pddl problem.pddl "
                     "results/suite/gripper/p09/certificate.json",
    "offline": "planaudit offline shard --model oracle --method direct --domain gripper "
               "--out rows.parquet --transcripts transcripts/",
    "online": "planaudit online shard --model oracle --method react --domain gripper "
              "--out rows.parquet --transcripts transcripts/",
    "episode": "planaudit episode --model flawed --method modulo --task gripper/p03",
    "check": "planaudit check --config config/paper.yaml",
    "estimate": "planaudit estimate --config config/paper.yaml",
    "collect": "planaudit collect results/episodes/*/*/*/*.parquet --out results/episodes.parquet",
    "tables": "planaudit tables --episodes results/episodes.parquet --out results/report",
    "power": "planaudit power --tasks 40 --comparisons 20 --difference 30 --correlation 0.5",
    "calibrate": "planaudit calibrate --tasks 40 --comparisons 20 --experiments 2000 --json",
    "figures": "planaudit figures --episodes results/episodes.parquet",
    "report": "planaudit report --episodes results/episodes.parquet",
    "suite": "planaudit suite new domains/mydomain    # or: planaudit suite show gripper/p03",
    "shard": "planaudit offline shard --model oracle --method direct --domain gripper "
             "--out rows.parquet --transcripts transcripts/",
    "prepare": "planaudit suite prepare --domain gripper --task p03 --outdir /tmp/p03 --obfuscate",
    "truth": "planaudit suite truth --domain gripper --task p03 --outdir /tmp/p03",
    "summary": "planaudit suite summary results/suite/*/*/truth.json --out summary.csv",
    "new": "planaudit suite new domains/lights",
    "build": "planaudit suite build --domain gripper --suite-dir results/suite --obfuscate",
    "show": "planaudit suite show gripper/p03    # or: planaudit planbench show t6 gripper/p03",
    "replay": "planaudit planbench replay ../shared/planbench/plan-bench/results/blocksworld/"
              "gpt-4_chat/task_1_plan_generation.json --json",
    "repair": "planaudit planbench repair ../shared/planbench/plan-bench/results/blocksworld/"
              "gpt-4_chat/task_1_plan_generation.json --seed 0 --json",
    "score": "planaudit compliance score sequences.json --expected N,R,P,V --json",
    "acpbench": "planaudit acpbench gold ../shared/acpbench/dataset/app/dev.gen.json",
    "gold": "planaudit acpbench gold ../shared/acpbench/dataset/app/dev.gen.json --json",
    "inspect": "planaudit export inspect --results results --out results/inspect",
    "eee": "planaudit export eee --results results --out results/eee",
    "curriculum": "planaudit curriculum shard --model oracle --test t1 --domain gripper "
                  "--out rows.parquet --transcripts transcripts/",
}


class _Help(argparse.RawDescriptionHelpFormatter):
    """Shows every option's default (argparse's own formatter skips options without help)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (action.option_strings and default not in (None, False, argparse.SUPPRESS, [])
                and "%(default)" not in text):
            text += " (default: %(default)s)"
        return text


def _finish_help(parser: argparse.ArgumentParser) -> None:
    """Every subcommand shows its defaults and an example."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, sub in action.choices.items():
            sub.formatter_class = _Help
            for a in sub._actions:
                if a.help is None and a.option_strings and a.default not in (None, False):
                    a.help = "(default: %(default)s)"
            if name in EXAMPLES and not sub.epilog:
                sub.epilog = "example:\n  " + EXAMPLES[name]
            _finish_help(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (PDDLError, InputError) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
