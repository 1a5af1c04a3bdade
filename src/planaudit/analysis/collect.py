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

ORDER = ("regime", "model", "method", "form", "plan_setting", "epoch", "domain", "task", "disguise",
         "study", "participant")  # people: one row per participant of a task
_DTYPES = {"integer": pl.Int64, "number": pl.Float64, "boolean": pl.Boolean, "string": pl.String}


class CollectError(Exception):
    """A shard that cannot be collected; the message names the file and the column."""


def default_schema() -> Path:
    """The row schema installed with the package (its workflow's schemas/)."""
    from planaudit.paths import ROW_SCHEMA

    return ROW_SCHEMA


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


# The row-by-row check costs about 0.5 ms a row (some 80 properties each), 8-10 minutes of
# CPU at 10^6 rows. Every keyword of the row schema but the top level's `required` and
# `if`/`then` applies to one column at a time, so a column's distinct values checked once
# against its property decide every row of it: shards of the same column types are
# checked together that way, and any shard of a group that fails (or that this shortcut
# cannot decide) is checked row by row in shard order, which names the first bad row.
_TOP = {"$schema", "description", "type", "required", "properties", "if", "then"}
_NUMERIC = {"type", "minimum", "maximum", "description"}
_DISTINCT = 20_000  # past this many distinct values, only plain numeric columns are decided


def _kinds(spec: dict) -> set[str]:
    kinds = spec.get("type")
    return {kinds} if isinstance(kinds, str) else set(kinds or ())


def _json_type(dtype: pl.DataType) -> str | None:
    """The JSON type every non-null value of a column of `dtype` has, as jsonschema reads
    the Python value polars gives (None where that is not one type)."""
    if dtype == pl.String:
        return "string"
    if dtype == pl.Boolean:
        return "boolean"
    if dtype.is_integer():
        return "integer"
    return None


def _column_ok(column: pl.Series, spec: dict, validator_for) -> bool:
    """Whether every value of the column satisfies its property `spec` (False: undecided)."""
    values = column.drop_nulls()
    if column.null_count():
        if not validator_for(spec).is_valid(None):
            return False
    if values.is_empty():
        return True
    if set(spec) <= {"type", "description"} and _json_type(values.dtype) in _kinds(spec):
        return True  # free text (a failure's detail) may have a distinct value a row
    distinct = values.unique()
    if distinct.len() <= _DISTINCT:
        check = validator_for(spec)
        return all(check.is_valid(v) for v in distinct.to_list())
    kinds = _kinds(spec)
    if not set(spec) <= _NUMERIC or not values.dtype.is_numeric():
        return False
    if values.dtype.is_float():
        if "number" not in kinds or values.is_nan().any():
            return False
    elif not kinds & {"integer", "number"}:
        return False
    low, high = spec.get("minimum"), spec.get("maximum")
    return (low is None or values.min() >= low) and (high is None or values.max() <= high)


def _group_ok(frame: pl.DataFrame, schema: dict, validator_for) -> bool:
    """Whether every row of `frame` (shards of one set of column types) is valid; False
    when a row is not, or when the check per column cannot tell."""
    if not set(schema) <= _TOP:
        return False
    columns = set(frame.columns)
    required = set(schema.get("required", ()))
    cond, then = schema.get("if"), schema.get("then")
    if cond is not None:
        const = cond.get("properties", {}).get("regime", {}).get("const")
        if set(cond) != {"properties"} or set(cond["properties"]) != {"regime"} \
                or set(cond["properties"]["regime"]) != {"const"} or set(then) != {"required"}:
            return False
        if "regime" in columns and (frame["regime"] == const).any():
            required |= set(then["required"])
    if not required <= columns:
        return False
    props = schema.get("properties", {})
    return all(_column_ok(frame[c], props[c], validator_for) for c in frame.columns
               if c in props)


def collect(shards: Iterable[Path], schema: dict) -> pl.DataFrame:
    """One frame of every episode, columns typed by the schema, rows in a fixed order."""
    validator = Draft202012Validator(schema)
    checkers: dict[str, Draft202012Validator] = {}

    def validator_for(spec: dict) -> Draft202012Validator:
        key = repr(spec)
        if key not in checkers:
            checkers[key] = Draft202012Validator(spec)
        return checkers[key]

    frames, paths = [], []
    for shard in shards:
        shard = Path(shard)
        try:
            frame = pl.read_parquet(shard)
        except (OSError, pl.exceptions.PolarsError) as e:
            raise CollectError(f"{shard}: cannot read the shard ({e})") from None
        frames.append(frame)
        paths.append(shard)
    groups: dict[tuple, list[int]] = {}
    for i, frame in enumerate(frames):
        groups.setdefault(tuple(frame.schema.items()), []).append(i)
    doubtful = []
    for members in groups.values():
        together = pl.concat([frames[i] for i in members], how="vertical")
        if not _group_ok(together, schema, validator_for):
            doubtful += members
    for i in sorted(doubtful):
        check_shard(frames[i], paths[i], validator)
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
