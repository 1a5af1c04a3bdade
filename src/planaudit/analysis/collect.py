"""Collect: every episode shard → one frame, each row checked against the row schema.

Shards of the two regimes differ in columns (online rows add the agent's behaviour),
so the union takes every column the schema names, with nulls where a regime has none.
A row that breaks the schema stops the collection, named by shard, row and column:
tables built on a wrong row would be wrong without saying so.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl
import yaml
from jsonschema import Draft202012Validator, ValidationError

from planaudit import atomic

ORDER = ("regime", "model", "method", "form", "plan_setting", "epoch", "domain", "task", "disguise")
_DTYPES = {"integer": pl.Int64, "number": pl.Float64, "boolean": pl.Boolean, "string": pl.String}


class CollectError(Exception):
    """A shard that cannot be collected; the message names the file and the column."""


def default_schema() -> Path:
    """The row schema of the repository this package is installed from (editable)."""
    return Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "row.schema.yaml"


def load_schema(path: Path) -> dict:
    """The row schema, with every registered regime's name and its own columns."""
    from planaudit.regime import regimes

    if not path.is_file():
        raise CollectError(f"{path}: no such row schema (pass --schema)")
    schema = yaml.safe_load(path.read_text())
    found = regimes()
    props = schema["properties"]
    props["regime"] = {**props["regime"],
                       "enum": list(dict.fromkeys([*props["regime"]["enum"], *found]))}
    for r in found.values():
        props.update(r.columns)
    return schema


def _dtype(spec: dict) -> pl.DataType:
    if "enum" in spec:
        return pl.String
    kinds = spec.get("type")
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds if k != "null"]
    if kinds[0] == "array":
        return pl.List(_dtype(spec.get("items", {"type": "string"})))
    return _DTYPES[kinds[0]]


def _column(error: ValidationError) -> str:
    if error.path:
        return str(error.path[0])
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return missing[0] if missing else "?"
    return "?"


def check_shard(frame: pl.DataFrame, shard: Path, validator: Draft202012Validator) -> None:
    for n, row in enumerate(frame.iter_rows(named=True)):
        errors = sorted(validator.iter_errors(row), key=lambda e: (list(e.path), e.message))
        if errors:
            e = errors[0]
            where = f"{row.get('domain')}/{row.get('task')}"
            raise CollectError(f"{shard}: row {n} ({where}): column {_column(e)!r}: {e.message}")


def collect(shards: Iterable[Path], schema: dict) -> pl.DataFrame:
    """One frame of every episode, columns typed by the schema, rows in a fixed order."""
    validator = Draft202012Validator(schema)
    frames = []
    for shard in shards:
        shard = Path(shard)
        try:
            frame = pl.read_parquet(shard)
        except (OSError, pl.exceptions.PolarsError) as e:
            raise CollectError(f"{shard}: cannot read the shard ({e})") from None
        check_shard(frame, shard, validator)
        frames.append(frame)
    columns = {name: _dtype(spec) for name, spec in schema["properties"].items()}
    union = pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
    extra = sorted(c for c in union.columns if c not in columns)
    union = union.with_columns(
        [pl.lit(None, dtype=t).alias(c) for c, t in columns.items() if c not in union.columns])
    union = union.select([pl.col(c).cast(t) for c, t in columns.items()] + extra)
    dupes = union.filter(union.select(ORDER).is_duplicated())
    if dupes.height:
        key = "/".join(str(v) for v in dupes.select(ORDER).row(0))
        raise CollectError(f"episode {key} appears in more than one row (a shard collected twice?)")
    return union.sort(ORDER)


def write(frame: pl.DataFrame, out: Path) -> None:
    atomic.write_parquet(frame, out)
