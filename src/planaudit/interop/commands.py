"""`planaudit export inspect|eee` and `planaudit import inspect`: the interop commands."""

from __future__ import annotations

import sys
from pathlib import Path

from planaudit.interop import InteropError

EXIT_OK, EXIT_INPUT = 0, 2


def add_parser(sub) -> None:
    ex = sub.add_parser("export", help="write a finished run in another tool's format")
    exs = ex.add_subparsers(dest="export_command", required=True)
    ei = exs.add_parser("inspect", help="one Inspect eval log per regime x model x method "
                                        "(x plan setting), one sample per episode")
    ei.add_argument("--results", default="results", help="the run's results folder")
    ei.add_argument("--out", required=True, help="folder for the .eval logs")
    ei.set_defaults(func=cmd_export_inspect)
    ee = exs.add_parser("eee", help="Every Eval Ever records: aggregate and per-instance")
    ee.add_argument("--results", default="results", help="the run's results folder")
    ee.add_argument("--out", required=True, help="folder for data/<benchmark>/<developer>/<model>/")
    ee.set_defaults(func=cmd_export_eee)
    im = sub.add_parser("import", help="read another tool's logs into planaudit's rows")
    ims = im.add_subparsers(dest="import_command", required=True)
    ii = ims.add_parser("inspect", help="Inspect logs of planaudit tasks -> episode rows "
                                        "(collect, tables, figures and report take them)",
                         epilog="example:\n  planaudit import inspect logs/ --out results/imported")
    ii.add_argument("logs", nargs="+", metavar="LOG", help="Inspect log files or folders")
    ii.add_argument("--out", required=True, help="folder for the rows' Parquet files")
    ii.set_defaults(func=cmd_import_inspect)


def _run(job) -> int:
    try:
        for line in job():
            print(line, file=sys.stderr)
    except InteropError as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


def cmd_export_inspect(args) -> int:
    from planaudit.interop.inspect_log import export

    return _run(lambda: export(Path(args.results), Path(args.out)))


def cmd_export_eee(args) -> int:
    from planaudit.interop.eee import export

    return _run(lambda: export(Path(args.results), Path(args.out)))


def cmd_import_inspect(args) -> int:
    from planaudit.interop.inspect_rows import import_logs

    return _run(lambda: import_logs([Path(p) for p in args.logs], Path(args.out)))
