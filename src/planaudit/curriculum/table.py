"""The curriculum's report table, PlanBench's Table 1, registered with the regime
(`Regime.tables`): the tables stage hands it the regime's rows, models labelled as every
table labels them, and the report's cell (correct of those that reached the model, share,
seeded 95% bootstrap interval), so it needs nothing of `analysis/`."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

ORDER = ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8_1", "t8_2", "t8_3")
# t3's stricter scores, each a row of its own: (label, row column)
SCORES = {"t3": (("t3 (type)", "score_type"), ("t3 (explanation)", "score_explanation"))}


def curriculum_table(rows: pl.DataFrame, cell: Callable[[list[bool]], str]) -> pl.DataFrame:
    """A row per test case (in PlanBench's order), a column per model, each cell `cell` of
    the cases answered correctly among those that reached the model; t3 adds rows for its
    stricter scores (the kind of error; the kind and the explanation). Error cases are
    left out, as in every rate."""
    if rows.height == 0:
        return pl.DataFrame(schema={"test": pl.String})
    cur = rows.filter(pl.col("outcome") != "error")
    models = list(dict.fromkeys(cur["model"].to_list()))
    tests = sorted(set(cur["method"].to_list()),
                   key=lambda t: (ORDER.index(t) if t in ORDER else 99, t))
    out = []
    for test in tests:
        for label, column in [(test, "success"), *SCORES.get(test, ())]:
            row = {"test": label}
            for model in models:
                part = cur.filter((pl.col("method") == test) & (pl.col("model") == model))
                values = part[column].fill_null(False).to_list() if column in part.columns else []
                row[model] = cell([bool(v) for v in values])
            out.append(row)
    return pl.DataFrame(out, schema={"test": pl.String, **{m: pl.String for m in models}})
