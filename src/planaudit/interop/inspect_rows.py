"""Inspect eval logs of planaudit tasks back into episode rows.

A sample's row is `score.metadata[ROW]` of its planaudit score (`SCORER`): the export and
the tasks run under `inspect eval planaudit/...` both put it there, so a third party's run
with any agent imports the same way. What the row leaves out and the log knows (the model,
tokens, cost, time: a scorer sees the task, not the bill) is taken from the log. One
Parquet file per log, under `<out>/<regime>/`, so that
`planaudit collect <out>/*/*.parquet` takes them as it takes a run's shards.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from planaudit import atomic
from planaudit.interop import ROW, SCORER, InteropError

SUFFIXES = (".eval", ".json")
REFERENCES = ("oracle", "flawed", "responsive")  # planaudit/<name>: the non-LLM references
TASK_PREFIX = "planaudit/"


def log_files(paths: list[Path]) -> list[Path]:
    """The log files named, folders searched (recursively) for `.eval` and `.json` logs."""
    found = []
    for path in paths:
        if path.is_dir():
            logs = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                          and not p.name.startswith("."))
            if not logs:
                raise InteropError(f"{path}: no Inspect logs (.eval, .json) in this folder")
            found += logs
        elif path.is_file():
            found.append(path)
        else:
            raise InteropError(f"{path}: no such log file or folder")
    return found


def planaudit_task(log) -> bool:
    names = (log.eval.task, log.eval.task_registry_name or "")
    return any(n.startswith(TASK_PREFIX) for n in names)


def _read(path: Path, header_only: bool):
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(path, header_only=header_only)
    except Exception as e:  # inspect raises many kinds on a file that is not a log
        raise InteropError(f"{path}: not an Inspect eval log ({type(e).__name__}: {e})") from None


def _model(log, row: dict) -> tuple[str, bool]:
    """The row's model name and reference flag, from the log where the row lacks them."""
    name = log.eval.model
    short = name.removeprefix(TASK_PREFIX)
    reference = row.get("reference")
    if reference is None:
        reference = name.startswith(TASK_PREFIX) and short in REFERENCES
    return row.get("model") or (short if reference else name), bool(reference)


def sample_row(log, sample, path: Path) -> dict:
    score = (sample.scores or {}).get(SCORER)
    if score is None or not isinstance(score.metadata, dict) or ROW not in score.metadata:
        why = (f" (the sample ended in an error: {sample.error.message})" if sample.error
               else "")
        raise InteropError(f"{path}: sample {sample.id} (epoch {sample.epoch}) has no "
                           f"planaudit score ({SCORER!r} with metadata {ROW!r}){why}")
    row = dict(score.metadata[ROW])
    model, reference = _model(log, row)
    usage = list((sample.model_usage or {}).values())
    costs = [u.total_cost for u in usage]
    fill = {
        "model": model, "reference": reference, "model_tier": "reference" if reference else "",
        "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "cost_usd": None if not usage or any(c is None for c in costs) else sum(costs),
        "latency_s": sample.working_time or sample.total_time or 0.0,
        "n_calls": sum(m.role == "assistant" for m in sample.messages or []),
        "cache_hits": 0, "config_hash": log.eval.eval_id,
        "code_version": (log.eval.packages or {}).get("planaudit", ""),
    }
    if _repeats(row.get("regime")):
        fill["epoch"] = sample.epoch - 1
    for key, value in fill.items():
        if row.get(key) is None and (key != "cost_usd" or key not in row):
            row[key] = value  # a known-unpriced cost (null in the row) stays null
    return row


def _repeats(name) -> bool:
    """Whether a regime's rows carry an epoch (`Regime.epochs`); an unknown regime's not."""
    from planaudit.regime import regimes

    found = regimes().get(str(name))
    return found is not None and found.epochs


def out_path(out: Path, path: Path, regime: str, taken: set[Path]) -> Path:
    target = out / regime / f"{path.stem}.parquet"
    n = 1
    while target in taken:  # two logs of one name in different folders
        n += 1
        target = out / regime / f"{path.stem}-{n}.parquet"
    taken.add(target)
    return target


def import_logs(logs: list[Path], out: Path) -> Iterator[str]:
    """Every planaudit sample of `logs` as an episode row; yields a line per log."""
    files = log_files(logs)
    for path in files:  # refuse before writing anything
        header = _read(path, header_only=True)
        if not planaudit_task(header):
            raise InteropError(f"{path}: a log of task {header.eval.task!r}, not of a planaudit "
                               f"task ({TASK_PREFIX}offline, online, curriculum, acpbench)")
    taken: set[Path] = set()
    total = 0
    for path in files:
        log = _read(path, header_only=False)
        rows = [sample_row(log, s, path) for s in log.samples or []]
        if not rows:
            yield f"{path}: no samples (status {log.status}); nothing written"
            continue
        regime = str(rows[0].get("regime") or log.eval.task.removeprefix(TASK_PREFIX))
        target = out_path(out, path, regime, taken)
        atomic.write_parquet(pl.DataFrame(rows, infer_schema_length=None), target)
        total += len(rows)
        yield f"{path}: {len(rows)} rows -> {target}"
    yield f"import inspect: {total} rows from {len(files)} log(s) into {out}"
