"""`planaudit collect`, `tables`, `power`, `calibrate`, `figures` and `report`: the analysis
on the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from planaudit import atomic
from planaudit.commandline import (
    EXIT_NEGATIVE,
    EXIT_OK,
    InputError,
    config_arg,
    read_config,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    co = sub.add_parser("collect", help="every episode shard into one Parquet file, rows checked")
    co.add_argument("shards", nargs="*", metavar="SHARD", help="episode shards (.parquet)")
    co.add_argument("--shards-from", metavar="FILE",
                    help="also the shards listed in FILE, one path a line (the workflow's "
                         "way: thousands of paths overflow a command line)")
    co.add_argument("--out", required=True, help="the collected episodes (.parquet)")
    co.add_argument("--schema", help="the row schema (default: the installed planaudit's "
                                     "workflow/schemas/row.schema.yaml)")
    co.set_defaults(func=cmd_collect)

    ta = sub.add_parser("tables", help="the analysis tables as csv, Markdown and LaTeX")
    ta.add_argument("--episodes", default="results/episodes.parquet",
                    help="the collected episodes (planaudit collect's output)")
    ta.add_argument("--out", default="results/report", help="folder for the tables")
    ta.add_argument("--seed", type=int, default=0, help="seeds the bootstrap intervals")
    ta.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    ta.add_argument("--alpha", type=float, default=0.05, help="family-wise level of Holm")
    ta.set_defaults(func=cmd_tables)

    pw = sub.add_parser("power", help="smallest difference an exact McNemar test under Holm "
                                      "can confirm")
    pw.add_argument("--tasks", type=int, required=True, help="N paired tasks")
    pw.add_argument("--comparisons", type=int, required=True, help="M comparisons in the family")
    pw.add_argument("--alpha", type=float, default=0.05, help="family-wise level of Holm")
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
                                    "section (alpha and the bootstrap from its analysis "
                                    "section).")
    config_arg(ca)
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
    fi.add_argument("--episodes", default="results/episodes.parquet",
                    help="the collected episodes (planaudit collect's output)")
    fi.add_argument("--out", default="results/report/figures", help="folder for the figures")
    fi.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (as for tables)")
    fi.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    fi.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate")
    fi.add_argument("--regime", action="append", default=None, metavar="NAME",
                    help="a regime the config runs (repeatable): its own figures "
                         "(Regime.figures) are written even with no rows of it, as "
                         "placeholders; absent, a regime's figures follow its rows")
    fi.set_defaults(func=cmd_figures)

    rp = sub.add_parser("report", help="the standalone report (index.html): design, tables, figures")
    rp.add_argument("--episodes", default="results/episodes.parquet",
                    help="the collected episodes (planaudit collect's output)")
    config_arg(rp)
    rp.add_argument("--spec", help="the config as JSON instead (the workflow passes this)")
    rp.add_argument("--tables", default="results/report", help="folder with the table csvs")
    rp.add_argument("--figures", default="results/report/figures",
                    help="folder with the figures (planaudit figures' output)")
    rp.add_argument("--out", default="results/report/index.html",
                    help="the report's HTML file")
    rp.set_defaults(func=cmd_report)


def cmd_collect(args) -> int:
    from planaudit.analysis.collect import CollectError, collect, default_schema, load_schema, write

    shards = [Path(s) for s in args.shards]
    if args.shards_from:
        try:
            listed = Path(args.shards_from).read_text().splitlines()
        except OSError as e:
            raise InputError(f"--shards-from {args.shards_from}: {e.strerror or e}") from None
        shards += [Path(line) for line in listed if line.strip()]
    try:
        schema = load_schema(Path(args.schema) if args.schema else default_schema())
        frame = collect(shards, schema)
    except CollectError as e:
        raise InputError(str(e)) from None
    write(frame, Path(args.out))
    print(f"collect: {frame.height} episodes from {len(shards)} shard(s) into {args.out}",
          file=sys.stderr)
    return EXIT_OK


def cmd_tables(args) -> int:
    from planaudit.analysis.tables import NEEDED, table_names, write_tables

    if args.bootstrap < 1 or not 0 < args.alpha < 1:
        raise InputError("--bootstrap must be at least 1 and --alpha lie in (0, 1)")
    episodes = _read_episodes(args.episodes, NEEDED)
    write_tables(episodes, Path(args.out), args.seed, args.bootstrap, args.alpha)
    print(f"tables: {len(table_names())} tables of {episodes.height} episodes in {args.out}", file=sys.stderr)
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
    tables. A regime that draws its own figures or writes its own report section (people's)
    keeps its rows too."""
    import polars as pl

    from planaudit.analysis.rows import ACPBENCH, MAIN_REGIMES
    from planaudit.analysis.tables import undisguised
    from planaudit.regime import regimes

    own = [n for n, r in regimes().items() if r.drawings or r.report is not None]
    return undisguised(frame.filter(pl.col("regime").is_in([*MAIN_REGIMES, ACPBENCH, *own])))


def cmd_figures(args) -> int:
    from planaudit.analysis.figures import draw_all

    frame = _without_curriculum(_read_episodes(args.episodes))
    notes: list[str] = []
    written = draw_all(frame, Path(args.out), notes,
                       {"seed": args.seed, "bootstrap": args.bootstrap, "alpha": args.alpha},
                       running=None if args.regime is None else set(args.regime))
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
