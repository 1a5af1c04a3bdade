"""`planaudit episode`, `check` and `estimate`: running one episode, and what comes before
spending, on the command line (each regime's `shard` is its own, `Regime.add_parser`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from planaudit import atomic
from planaudit.commandline import EXIT_INPUT, EXIT_OK, InputError, config_arg, read_config
from planaudit.regime import regimes

if TYPE_CHECKING:
    from planaudit.experiment import Experiment


def episodic() -> list[str]:
    """The regimes of episodes (those `planaudit episode` runs one of)."""
    return [name for name, r in regimes().items() if r.episode is not None]


def add_parser(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("episode", help=f"run one episode ({' or '.join(episodic())}) and print it")
    e.add_argument("--regime", choices=episodic(),
                   help="default: the regime whose methods in the config name the method")
    config_arg(e)
    e.add_argument("--model", required=True, help="a model's name in the config's models")
    e.add_argument("--method", required=True,
                   help="a method the config's section of the regime lists (direct, react, ...)")
    e.add_argument("--task", required=True, metavar="DOMAIN/TASK",
                   help="a task of the config's suite (gripper/p03)")
    e.add_argument("--results", help="where the prepared suite is, default: the config's "
                                      "results folder (a task not prepared yet is prepared there)")
    e.add_argument("--cut", type=int, default=0, metavar="N",
                   help="shorten each message to N characters, visibly (0: print all)")
    e.add_argument("--setting", help="online: the plan setting (default: the config's first "
                                      "online.plan_settings, or none)")
    e.set_defaults(func=cmd_episode)

    ck = sub.add_parser("check", help="before spending: every model's provider, credentials "
                                      "and server, in seconds (sends no prompt)")
    config_arg(ck)
    ck.add_argument("--spec", help="the models as JSON instead (the workflow passes this)")
    ck.add_argument("--model", action="append", help="check only this model (repeatable)")
    ck.add_argument("--out", help="on success, write the checked models' names here (the "
                                  "workflow's marker)")
    ck.set_defaults(func=cmd_check)

    es = sub.add_parser("estimate", help="expected calls, tokens and dollars of a config")
    config_arg(es)
    es.add_argument("--results", help="where the prepared suite is (default: the config's "
                                       "results folder)")
    es.add_argument("--json", action="store_true",
                    help="print the estimate's rows as JSON instead of a table")
    es.add_argument("--spec", help="the config as JSON instead of --config (the workflow "
                                   "passes this)")
    es.add_argument("--named", help="with --spec: what the user's own files name, as JSON "
                                    "(a model that is not a reference model runs only that)")
    es.add_argument("--paid", action="store_true",
                    help="what the run pays for: the jobs of every model that is not a "
                         "reference model, then their estimate (as `check` shows it)")
    es.add_argument("--out", help="also write what is printed here (the workflow's marker)")
    es.set_defaults(func=cmd_estimate)


def cmd_episode(args) -> int:
    """Run one episode and print its transcript and row: the debugging tool."""
    import asyncio

    from planaudit.experiment import ConfigError, Experiment, shard_hash
    from planaudit.formal.repair import RepairUnavailable
    from planaudit.formal.witness import WitnessUnavailable
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client
    from planaudit.shard import episode_runner, require_witness

    config = read_config(args)
    experiment = Experiment.from_dict(config)
    try:
        entry = experiment.model(args.model)
        regime = args.regime or _regime_of(experiment, args.method)
        setting = args.setting or (experiment.section("online").plan_settings[0]
                                   if regime == "online" else None)
        params = experiment.method(regime, args.method, setting)
        require_witness(params)
    except ConfigError as e:
        raise InputError(str(e)) from None
    except WitnessUnavailable as e:
        raise InputError(f"config {regime}.witness: {e} (or set witness: none)") from None
    except RepairUnavailable as e:
        raise InputError(f"config {regime}.repair: {e} (or set enabled: false)") from None
    folder = _prepared(config, args.task, Path(args.results or experiment.results))
    entry.require()
    run_episode = episode_runner(regime, entry)
    cache = Cache(experiment.cache)
    try:
        cache.require_writable()
    except ValueError as e:
        raise InputError(str(e)) from None
    client = Client(entry.client(), cache)
    values = params.to_dict()
    row, transcript = asyncio.run(run_episode(
        client, args.method, values, folder, task_name=args.task,
        config_hash=shard_hash(entry, args.method, values),
        reference_meta=entry.reference, tier=entry.tier))
    from planaudit.transcript import render

    print(render(transcript, row, cut=args.cut))
    return EXIT_OK


def _regime_of(experiment: Experiment, method: str) -> str:
    """The regime whose methods in the config name `method`; InputError listing all."""
    have = {r: experiment.section(r).methods for r in episodic()}
    for regime, methods in have.items():
        if method in methods:
            return regime
    raise InputError(f"no method '{method}' in the config ("
                     + "; ".join(f"{r}: {', '.join(m) or 'none'}" for r, m in have.items()) + ")")


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


def read_named(args) -> tuple[dict, dict]:
    """The config as Snakemake would run it, and what the user's --config files name (a
    model that is not a reference model runs only that: `planaudit.config.restrict`)."""
    from planaudit.config import ConfigError, load_named

    try:
        return load_named(*(args.config or []))
    except ConfigError as e:
        raise InputError(str(e)) from None


def cmd_check(args) -> int:
    """Before a paid run: every model's provider, credentials and server, in seconds, and
    what the run pays for (the jobs the workflow prints before its first request)."""
    from planaudit.estimate import paid
    from planaudit.experiment import Experiment
    from planaudit.llm.preflight import check_model, resource_name, server_tools

    if args.spec:
        config = json.loads(args.spec)
        experiment = Experiment.from_dict(config)
    else:
        config, named = read_named(args)
        experiment = Experiment.from_dict(config, named)
    entries = [m for m in experiment.models if not args.model or m.name in args.model]
    if args.model and (unknown := set(args.model) - {m.name for m in entries}):
        raise InputError(f"no model named {', '.join(sorted(unknown))} in the config (have: "
                         f"{', '.join(m.name for m in experiment.models) or 'none'})")
    failed = 0
    unwritable = False
    if "cache" in config:  # a full config (`--config`): its cache must take replies
        from planaudit.llm.cache import Cache

        try:
            Cache(experiment.cache).require_writable()
        except ValueError as e:
            print(f"planaudit check: {e}", file=sys.stderr)
            unwritable = True
    for entry in entries:
        problems = check_model(entry.to_dict())
        problems += [entry.refusal] if entry.refusal else []  # batch waves past the bound
        failed += bool(problems)
        kind = ("reference, not an LLM" if entry.is_reference
                else "classical planner" if entry.is_planner else "LLM")
        status = "ok" if not problems else "CANNOT RUN"
        print(f"{entry.name:<24} {entry.model:<32} {kind:<22} "
              f"resource {resource_name(entry.name)}: {status}")
        for p in problems:
            print(f"  {p}")
        if not problems and (note := server_tools(entry.to_dict())):
            print(f"  note: {note}")
    if not args.spec and not args.model:
        print(paid(experiment, Path(experiment.results) / "suite"))
    if args.out and not failed and not unwritable:
        atomic.write_text(args.out, json.dumps([m.name for m in entries]) + "\n")
    if failed:
        print(f"planaudit check: {failed} of {len(entries)} model(s) cannot run; nothing was sent "
              "(`planaudit check --config FILE` checks every model of a config at once)",
              file=sys.stderr)
    return EXIT_INPUT if failed or unwritable else EXIT_OK


def cmd_estimate(args) -> int:
    from planaudit.estimate import estimate, paid, render
    from planaudit.experiment import ConfigError, Experiment

    if args.spec:  # the workflow's: the merged config and what the user's files name
        experiment = Experiment.from_dict(json.loads(args.spec),
                                          json.loads(args.named) if args.named else None)
    else:
        experiment = Experiment.from_dict(*read_named(args))
    suite = Path(args.results or experiment.results) / "suite"
    try:
        if args.paid:
            text = paid(experiment, suite, strict=True)
        else:
            rows = estimate(experiment, suite)
            text = (json.dumps([r.__dict__ for r in rows], indent=1) if args.json
                    else render(rows))
    except (ConfigError, FileNotFoundError, ValueError) as e:  # CurriculumError is a ValueError
        raise InputError(str(e)) from None
    print(text, flush=True)
    if args.out:
        atomic.write_text(args.out, text + "\n")
    return EXIT_OK
