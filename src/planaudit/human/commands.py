"""`planaudit human shard`: a study's exported records judged into people's rows (the
workflow's job for each folder the config names under `study: {records: [...]}`)."""

from __future__ import annotations

import sys
from pathlib import Path

from planaudit.commandline import EXIT_OK, InputError


def add_parser(sub, config_arg) -> None:
    h = sub.add_parser("human", help="people's rows: a study's records judged like models' answers")
    hs = h.add_subparsers(dest="human_command", required=True)
    sh = hs.add_parser("shard", help="judge one study's exported records into rows",
                       epilog="example:\n  planaudit human shard --records "
                              "results/study/pilot/export --out "
                              "results/episodes/human/people/pilot.parquet")
    config_arg(sh)
    sh.add_argument("--spec", help="the config slice as JSON (the workflow passes this)")
    sh.add_argument("--model", default="people", help="the subject the workflow names (people)")
    sh.add_argument("--records", required=True, metavar="DIR",
                    help="a folder written by `planaudit study export`")
    sh.add_argument("--out", required=True, help="the rows' Parquet file")
    sh.set_defaults(func=cmd_shard)


def cmd_shard(args) -> int:
    import polars as pl

    from planaudit import atomic
    from planaudit.human.judge import ExportError, judge

    try:
        rows, _events = judge(Path(args.records))
    except ExportError as e:
        raise InputError(str(e)) from None
    atomic.write_parquet(pl.DataFrame(rows, infer_schema_length=None), Path(args.out))
    done = sum(r["outcome"] != "error" for r in rows)
    print(f"human: {args.records}: {len(rows)} participant(s), {done} finished, "
          f"{sum(r['success'] for r in rows)} valid -> {args.out}", file=sys.stderr)
    return EXIT_OK
