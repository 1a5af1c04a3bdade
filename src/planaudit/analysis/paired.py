"""What every table that compares configurations shares: their labels, and the pairing of
two configurations on the tasks both answered, decided by exact McNemar with Holm. Apart
from `tables.py`, so that the tables a module of its own builds (`effort.py`) use the
same code without importing the module that imports them."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from planaudit.analysis.rows import OK, PLANNER_METHOD, PLANNER_SUFFIX, REFERENCE_SUFFIX, SCORE
from planaudit.analysis.stats import discordant_counts, paired_family, ratio_ci

CONFIG = ["regime", "model", "method"]
PAIR = ["domain", "task"]


def labelled(ep: pl.DataFrame) -> pl.DataFrame:
    """Rows in a fixed order, the model column carrying the reference or planner label."""
    label = (pl.when(pl.col("reference")).then(pl.col("model") + REFERENCE_SUFFIX)
             .when(pl.col("method") == PLANNER_METHOD).then(pl.col("model") + PLANNER_SUFFIX)
             .otherwise(pl.col("model")))
    return ep.sort(CONFIG + PAIR).with_columns(label.alias("model"))


def cost_per_solved(costs: list[float | None], solved: list[bool], seed: int = 0,
                    n_resamples: int = 2000) -> tuple[float, float | None, float | None] | None:
    """(the whole cost over the tasks got right, its interval resampling tasks, `ratio_ci`;
    None for an interval of fewer than two tasks), or None where nothing was solved or a
    cost is unknown: never 0, which would call the configuration cheapest."""
    if any(c is None for c in costs) or not any(solved):
        return None
    lo, hi = ratio_ci(costs, solved, seed, n_resamples) or (None, None)
    return sum(costs) / sum(solved), lo, hi


def pairs(first: pl.DataFrame, second: pl.DataFrame) -> pl.DataFrame:
    """The tasks both configurations answered without `error`, side by side: success
    and score (success or detected) of the first (`_a`) and of the second (`_b`)."""
    def side(frame: pl.DataFrame, tag: str) -> pl.DataFrame:
        return frame.filter(OK).select(*PAIR, pl.col("solvable"),
                                       pl.col("success").alias(f"success_{tag}"),
                                       SCORE.alias(f"score_{tag}"))

    return side(first, "a").join(side(second, "b").drop("solvable"), on=PAIR, how="inner")


def discordant(paired: pl.DataFrame) -> tuple[int, int, int]:
    """(n, b, c): b counts tasks the first got right and the second wrong, c the reverse."""
    b, c = discordant_counts(paired["score_a"].to_numpy(), paired["score_b"].to_numpy())
    return paired.height, int(b), int(c)


def adjust(rows: list[dict], family: Callable[[dict], tuple], alpha: float) -> None:
    """Decide each family of rows as `stats.paired_family` does (exact McNemar on b and c,
    Holm within the family), in place: p, p_adj and significant."""
    families: dict[tuple, list[dict]] = {}
    for row in rows:
        families.setdefault(family(row), []).append(row)
    for members in families.values():
        decisions = paired_family([(r["b"], r["c"]) for r in members], alpha)
        for row, (p, p_adj, significant) in zip(members, decisions, strict=True):
            row.update(p=p, p_adj=p_adj, significant=significant)
