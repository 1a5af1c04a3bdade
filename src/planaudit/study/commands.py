"""`planaudit study serve` and `planaudit study status`: a study opened for people, and
where it stands. The config is checked, every task prepared and proven and every
suggestion resolved and judged before the server listens; a mistake stops it first."""

from __future__ import annotations

import argparse
import os
import sys

from planaudit.commandline import EXIT_OK, InputError

CONFIG_ENV, DB_ENV = "PLANAUDIT_STUDY_CONFIG", "PLANAUDIT_STUDY_DB"


def add_parser(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """`planaudit study ...`; returns its subcommands, to which the simulated
    participants' client (`planaudit.simulated`) adds `cohort` and `simulate`."""
    st = sub.add_parser("study", help="studies with people on the same tasks as the models")
    ss = st.add_subparsers(dest="study_command", required=True)
    sv = ss.add_parser("serve", help="open a study to participants (a web server)")
    sv.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    sv.add_argument("--db", help="a database URL instead of the config's (postgresql+psycopg://"
                                 "user@host/db); default SQLite under the study's folder")
    sv.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (behind a reverse "
                                                        "proxy; 0.0.0.0 to listen on every address)")
    sv.add_argument("--port", type=int, default=8000, help="the port to listen on")
    sv.add_argument("--workers", type=int, default=1,
                    help="server processes (PostgreSQL only: SQLite takes one writer)")
    sv.add_argument("--check", action="store_true",
                    help="check the config, prepare the tasks and suggestions, migrate the "
                         "database, then stop without serving")
    sv.set_defaults(func=cmd_serve)
    es = ss.add_parser("estimate", help="what each assistant arm can cost at most, before "
                                        "the study opens (nothing is sent)")
    es.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    es.add_argument("--participants", type=int, metavar="N",
                    help="participants per assistant arm (default the enrolment cap)")
    es.set_defaults(func=cmd_estimate)
    ss_ = ss.add_parser("status", help="enrolment and completion per arm")
    ss_.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    ss_.add_argument("--db", help="the database URL, if not the config's")
    ss_.add_argument("--json", action="store_true",
                     help="print each arm's counts as JSON instead of a table")
    ss_.set_defaults(func=cmd_status)
    ex = ss.add_parser("export", help="the records, pseudonymised and judged like models' "
                                      "answers (rows, events, tasks)")
    ex.add_argument("--config", "--study", dest="config", required=True, metavar="STUDY.yaml",
                    help="the study config")
    ex.add_argument("--db", help="the database URL, if not the config's")
    ex.add_argument("--out", required=True, metavar="DIR",
                    help="the export folder (study.json, records.jsonl, tasks/, rows.parquet, "
                         "events.parquet)")
    ex.set_defaults(func=cmd_export)
    an = ss.add_parser("analyze", help="the study's statistics: rates per arm, tests between "
                                       "arms, automation bias, power")
    src = an.add_mutually_exclusive_group(required=True)
    src.add_argument("--records", metavar="DIR", help="a folder written by `study export`")
    src.add_argument("--episodes", metavar="FILE",
                     help="collected rows (results/episodes.parquet): their people's rows")
    an.add_argument("--out", required=True, metavar="DIR",
                    help="where arms.csv, tests.csv (and .md, .tex), analysis.json and "
                         "people.png go")
    _test_options(an)
    an.add_argument("--seed", type=int, default=0, help="seeds the bootstrap intervals")
    an.add_argument("--bootstrap", type=int, default=2000,
                    help="bootstrap resamples of the intervals")
    an.set_defaults(func=cmd_analyze)
    pl_ = ss.add_parser("plan", help="participants per arm a design needs (before a study opens)")
    pl_.add_argument("--config", metavar="STUDY.yaml",
                     help="the study config: its arms, and with --db the people enrolled so far")
    pl_.add_argument("--db", help="the database URL, if not the config's")
    _test_options(pl_)
    pl_.set_defaults(func=cmd_plan)
    bo = ss.add_parser("bonus", help="bonuses from the validator's verdicts, in the platform's "
                                     "bulk format, each participant paid once (a ledger)")
    bonus_arguments(bo)
    bo.set_defaults(func=lambda args: _main("study.bonus", args))
    return ss

def _main(module: str, args) -> int:
    """A subcommand's `main`, its module imported only when it runs (every `planaudit`
    start builds the parser)."""
    import importlib

    return importlib.import_module(f"planaudit.{module}").main(args)


def bonus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    parser.add_argument("--db", help="the database URL, if not the config's")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the bulk bonus file: `platform_id,amount` a line, no header "
                             "(Prolific's bulk bonus form); written whole, empty when no one "
                             "is owed anything, so an old file is never sent twice")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the lines that would be paid; record and write nothing")
    parser.add_argument("--batch", metavar="ID",
                        help="write batch ID's file again from the ledger (after a crash "
                             "between the ledger's commit and the file); pays no one anew")


KEEP_ALIVE_S = 75  # idle connections kept open (uvicorn: 5 s); see cmd_serve


def _test_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alternative", choices=("two-sided", "less", "greater"), default="two-sided",
                   help="for the tests between arms: less = the first arm's value is the "
                        "smaller (the paper: the assisted arm takes less time, i.e. greater "
                        "with the unassisted arm first); default two-sided")
    p.add_argument("--alternative-of", action="append", default=[], metavar="MEASURE=ALT",
                   help="one measure's alternative, overriding --alternative for it (repeat: "
                        "valid=less --alternative-of time_s=greater); measures: valid, time_s, "
                        "tlx_raw, tlx_mental, ... tlx_frustration")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="the tests' significance level")
    p.add_argument("--rates", type=float, nargs=2, default=(0.74, 0.82), metavar=("P1", "P2"),
                   help="the valid rates the design should tell apart (default the paper's "
                        "0.74 0.82)")
    p.add_argument("--power", type=float, default=0.8, help="the power wanted (default 0.8)")


def _study(path: str):
    from planaudit.config import ConfigError
    from planaudit.study.settings import load_study

    try:
        return load_study(path)
    except ConfigError as e:
        raise InputError(str(e)) from None


def opened(config: str, db: str | None):
    """The study, its materials and its migrated store: everything a server needs."""
    from planaudit.config import ConfigError
    from planaudit.study.materials import design, resolve
    from planaudit.study.store import Store

    study = _study(config)
    try:
        materials = resolve(study)
    except ConfigError as e:
        raise InputError(str(e)) from None
    store = Store(study.database_url(db))
    try:
        store.migrate()
    except Exception as e:  # the database cannot be reached or migrated: say which
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e}") from None
    changed = store.keep_design(study.name, design(study, materials))
    if changed:
        raise InputError(f"{config}: people have enrolled in study '{study.name}' (in "
                         f"{_safe(store.url)}) under another design: {', '.join(changed)} "
                         "changed. Put it back, or give the changed study another name")
    arms = {a.name for a in study.arms}
    for arm, instance in sorted(store.cells(study.name)):
        if arm not in arms or instance not in materials.instances:
            gone = f"arm '{arm}'" if arm not in arms else f"instance {instance}"
            raise InputError(f"{config}: people are enrolled in {gone}, which the config no "
                             f"longer lists (in {_safe(store.url)}): put it back, or give the "
                             "changed study another name")
    return study, materials, store


def factory():
    """The app of the study named in the environment (uvicorn's worker processes)."""
    from planaudit.study.app import create_app

    study, materials, store = opened(os.environ[CONFIG_ENV], os.environ.get(DB_ENV) or None)
    return create_app(study, materials, store)


def cmd_serve(args) -> int:
    import uvicorn

    study, materials, store = opened(args.config, args.db)
    assistants(study)
    if args.workers > 1 and store.sqlite:
        raise InputError("--workers > 1 needs PostgreSQL (--db or the config's database): "
                         "SQLite takes one writing process")
    n = sum(len(v) for v in materials.suggestions.values())
    print(f"study {study.name}: {len(materials.instances)} instance(s), "
          f"{len(study.arms)} arm(s) ({', '.join(a.name for a in study.arms)}), "
          f"{n} suggestion(s) judged; records in {_safe(store.url)}", file=sys.stderr)
    shown = {study.presentation(k) for k in study.instances}
    domains = sorted({k.split("/", 1)[0] for k in study.instances if not k.startswith("planbench:")})
    suite = study.experiment.get("suite") or {}
    if domains:  # which models' rows may stand beside these people (the report checks it)
        print(f"study {study.name}: people see {'; '.join(sorted(shown))}. Model rows on the "
              f"same presentation come from an experiment config whose suite has obfuscate: "
              f"{[d for d in domains if d in (suite.get('obfuscate') or [])]} (of {domains}) "
              f"and seed {suite.get('seed', 0)}, as the study's experiment config "
              f"({study.raw.get('experiment', 'config/config.yaml')}, with the study's suite "
              f"section) has; the report sets no other run's models beside these people",
              file=sys.stderr)
    if args.check:
        store.close()
        return EXIT_OK
    p = study.params
    print(f"participants enter at http://{args.host}:{args.port}/?{p['participant']}=...&"
          f"{p['study']}=...&{p['session']}=...", file=sys.stderr, flush=True)
    # no access log: it would write every participant's address. Idle connections are kept
    # 75 s (nginx's default), not uvicorn's 5 s: a participant reads a page for seconds, and
    # a client that reuses its connection just as the server closes it loses the request
    # (benchmarks/study_load.py with 5 s pauses lost 2-8 of 200 participants that way)
    if args.workers > 1:
        store.close()
        os.environ[CONFIG_ENV] = args.config
        os.environ[DB_ENV] = args.db or ""
        uvicorn.run("planaudit.study.commands:factory", factory=True, host=args.host,
                    port=args.port, workers=args.workers, access_log=False, log_level="warning",
                    timeout_keep_alive=KEEP_ALIVE_S)
        return EXIT_OK
    from planaudit.study.app import create_app

    uvicorn.run(create_app(study, materials, store), host=args.host, port=args.port,
                access_log=False, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)
    return EXIT_OK


def assistants(study, participants: int | None = None) -> None:
    """Before anyone enters: every assistant's model passes the preflight (its key, its
    server), and each arm's most possible cost is said."""
    from planaudit.llm.preflight import require_models
    from planaudit.study.assistant import estimate, render_estimate

    names = {a.assistant.model for a in study.arms if a.assistant is not None}
    if not names:
        return
    require_models([m for m in study.experiment.get("models", []) if m.get("name") in names])
    print(f"study {study.name}: {render_estimate(estimate(study, participants))}", file=sys.stderr)


def cmd_estimate(args) -> int:
    study = _study(args.config)
    if not any(a.assistant is not None for a in study.arms):
        print(f"study {study.name}: no arm has an assistant; nothing to price", file=sys.stderr)
        return EXIT_OK
    from planaudit.study.assistant import estimate, render_estimate

    print(render_estimate(estimate(study, args.participants)))
    return EXIT_OK


def cmd_status(args) -> int:
    import json

    from planaudit.study.store import Store

    study = _study(args.config)
    store = Store(study.database_url(args.db))
    try:
        rows = store.status(study.name)
    except Exception as e:
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e} (has the study been "
                         "served yet?)") from None
    if args.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    print(f"study {study.name} ({_safe(store.url)})")
    print(f"{'arm':<16} {'enrolled':>8} {'finished':>8}  where the others are")
    for arm in [a.name for a in study.arms]:
        r = next((x for x in rows if x["arm"] == arm), {"enrolled": 0, "finished": 0, "steps": {}})
        where = ", ".join(f"{s}: {n}" for s, n in r["steps"].items() if s != "done") or "-"
        print(f"{arm:<16} {r['enrolled']:>8} {r['finished']:>8}  {where}")
    return EXIT_OK


def _safe(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def cmd_export(args) -> int:
    from pathlib import Path

    from planaudit.human.judge import ExportError
    from planaudit.study.export import export

    study, materials, store = opened(args.config, args.db)
    try:
        export(study, materials, store, Path(args.out))
    except ExportError as e:
        raise InputError(str(e)) from None
    finally:
        store.close()
    return EXIT_OK


def _rates(args) -> tuple[float, float]:
    p1, p2 = args.rates
    if not (0 < p1 < 1 and 0 < p2 < 1) or p1 == p2:
        raise InputError(f"--rates {p1} {p2}: two different rates strictly between 0 and 1")
    if not 0 < args.power < 1 or not 0 < args.alpha < 1:
        raise InputError("--power and --alpha lie strictly between 0 and 1")
    return p1, p2


def cmd_analyze(args) -> int:
    import json
    from pathlib import Path

    import polars as pl

    from planaudit import atomic
    from planaudit.analysis.tables import write_table
    from planaudit.human import analysis
    from planaudit.human.report import draw, people_rows

    rates = _rates(args)
    source = Path(args.records) / "rows.parquet" if args.records else Path(args.episodes)
    if not source.is_file():
        raise InputError(f"{source}: no such file"
                         + (" (run `planaudit study export` first)" if args.records else ""))
    rows = pl.read_parquet(source)
    people = people_rows(rows)
    if people.is_empty():
        raise InputError(f"{source}: no people's rows (regime human)")
    out = Path(args.out)
    human = analysis.human_table(people, args.alpha)
    tests = analysis.tests_table(people, args.alpha, args.seed, args.bootstrap)
    alts = _alternatives(args)
    power = analysis.power(people, rates, args.power, args.alpha, alts["valid"])
    from planaudit.human.flow import flow_table
    from planaudit.human.integrity import sensitivity_table

    per = analysis.instances_table(people, args.alpha)
    # the report's human, human_tests, human_instances, human_flow and human_sensitivity
    for name, frame in (("arms", human), ("tests", tests), ("instances", per),
                        ("flow", flow_table(people, args.alpha)),
                        ("sensitivity", sensitivity_table(people, args.alpha))):
        write_table(frame, name, out)
    wanted = {"valid": alts["valid"], **{label: alts[c] for c, label in
                                         analysis.MEASURES.items()}}
    chosen = tests.filter(pl.col("alternative") == pl.col("measure").replace_strict(
        wanted, default=None))
    atomic.write_text(out / "analysis.json", json.dumps(
        {"source": str(source), "alternative": args.alternative, "alternatives": alts,
         "alpha": args.alpha,
         "arms": human.to_dicts(), "tests": chosen.to_dicts(), "power": power},
        indent=1, default=str) + "\n")
    from planaudit.analysis.figures import save

    try:
        save(draw(people, args.seed, args.bootstrap, args.alpha), out, "people")
    except ValueError as e:
        print(f"study analyze: figure not drawn: {e}", file=sys.stderr)
    print(summary_text(human, chosen, power, args.alpha))
    return EXIT_OK


def _alternatives(args) -> dict[str, str]:
    """Each measure's alternative from --alternative and --alternative-of MEASURE=ALT."""
    from planaudit.human.analysis import alternatives_of

    own = {}
    for given in args.alternative_of:
        measure, _, alt = given.partition("=")
        if alt not in ("two-sided", "less", "greater"):
            raise InputError(f"--alternative-of {given}: give MEASURE=two-sided|less|greater")
        own[measure] = alt
    try:
        return alternatives_of({"alternative": args.alternative, "alternatives": own})
    except ValueError as e:
        raise InputError(f"--alternative-of: {str(e).removeprefix('study.alternatives: ')}"
                         ) from None


def summary_text(human, tests, power: dict, alpha: float) -> str:
    """The analysis in a few lines for a terminal."""
    from planaudit.human.analysis import ci_label

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    lines = []
    for r in human.iter_rows(named=True):
        lines.append(f"{r['study']} / {r['model']} / {r['arm']}: {r['valid']}/{r['finished']} "
                     f"valid {pct(r['valid_share'])} ({ci_label(alpha)} {pct(r['valid_lo'])}"
                     f"–{pct(r['valid_hi'])})"
                     f"; optimal {r['optimal']}/{r['valid']} {pct(r['optimal_of_valid'])}"
                     + (f"; wrong suggestion called correct {r['called_wrong_correct']}/"
                        f"{r['wrong_suggestion_shown']}, submitted verbatim {r['wrong_verbatim']}"
                        if r["wrong_suggestion_shown"] else "")
                     + (f"; assistant per participant {r['assistant_turns_mean']:.3g} turns, "
                        f"{r['assistant_tokens_mean']:,.0f} tokens, "
                        + ("unpriced" if r["assistant_usd_mean"] is None
                           else f"${r['assistant_usd_mean']:.4f}")
                        + f"; wrong proposal accepted {r['accepted_wrong']}/"
                        f"{r['wrong_proposal_shown']} {pct(r['accepted_wrong_share'])} "
                        f"({ci_label(alpha)} {pct(r['accepted_wrong_lo'])}–"
                        f"{pct(r['accepted_wrong_hi'])})"
                        if r.get("assistant_turns_mean") is not None else ""))
    for t in tests.iter_rows(named=True):
        p = "-" if t["p"] is None else f"{t['p']:.3g}"
        lines.append(f"  {t['measure']}: {t['second']} vs {t['first']}, {t['test']} "
                     f"({t['alternative']}): p = {p}")
    need = power["needed"]
    lines.append(f"power: {pct(power['rates'][0])} vs {pct(power['rates'][1])} at "
                 f"{pct(power['power'])} power ({power['alternative']}) needs "
                 f"{need['exact_fisher']} per arm (Fisher exact, power held over the next "
                 f"{need['exact_fisher_window']} sizes; "
                 f"{need['normal']} by the normal approximation)")
    for r in power["reached"]:
        lines.append(f"  reached by {r['study']} ({r['n_first']} and {r['n_second']} finished): "
                     f"{pct(r['exact_fisher'])} (Fisher exact)")
    return "\n".join(lines)


def cmd_plan(args) -> int:
    from planaudit.human import stats

    rates = _rates(args)
    need = stats.sample_size(rates[0], rates[1], args.power, args.alpha, args.alternative)
    print(f"to tell {100 * rates[0]:.0f}% from {100 * rates[1]:.0f}% valid plans with "
          f"{100 * args.power:.0f}% power at alpha {args.alpha:g} ({args.alternative}): "
          f"{need['exact_fisher']} participants per arm (Fisher's exact test, computed "
          f"exactly: the smallest size from which power stays at the target over the next "
          f"{need['exact_fisher_window']} sizes), {need['normal']} by the normal approximation (Cohen's h "
          f"{need['effect_h']:.3f})")
    if args.config:
        study = _study(args.config)
        arms = [a.name for a in study.arms]
        print(f"study {study.name}: {len(arms)} arm(s) ({', '.join(arms)}): "
              f"{need['exact_fisher'] * len(arms)} participants in all")
        url = study.database_url(args.db)
        if not url.startswith("sqlite") or (study.results / "study.sqlite").is_file():
            from planaudit.study.store import Store

            store = Store(url)
            done = {r["arm"]: r["finished"] for r in store.status(study.name)}
            store.close()
            if len(arms) >= 2 and all(done.get(a) for a in arms[:2]):
                got = stats.achieved_power(done[arms[0]], done[arms[1]], rates[0], rates[1],
                                           args.alpha, args.alternative)
                print(f"so far: {done[arms[0]]} and {done[arms[1]]} finished: power "
                      f"{100 * got['exact_fisher']:.1f}% (Fisher exact)")
    return EXIT_OK
