"""Reasoning as a factor: one model (its `model_id`) run by several entries that differ in
their reasoning setting, crossed with every method, and each effort paired against the
next lower one on the same tasks (the `reasoning` table).

HAL (2025) found that more reasoning effort lowered accuracy in most of its runs; the
question is answerable only on paired tasks, which is why the levels are compared by
exact McNemar (Holm within each regime, reference models apart, as every comparison
table decides) rather than by their rates alone.
"""

from __future__ import annotations

import polars as pl

from planaudit.analysis.paired import adjust, cost_per_solved, discordant, labelled, pairs
from planaudit.analysis.rows import OK, SCORE
from planaudit.analysis.stats import bootstrap_ci

EFFORTS = ("low", "medium", "high")
NONE = "none"

REASONING = {"regime": pl.String, "model_id": pl.String, "method": pl.String,
             "reasoning": pl.String, "model": pl.String, "reference": pl.Boolean,
             "n_tasks": pl.Int64, "score": pl.Float64, "score_lo": pl.Float64,
             "score_hi": pl.Float64, "mean_reasoning_tokens": pl.Float64,
             "mean_output_tokens": pl.Float64, "cost_per_solved_usd": pl.Float64,
             "versus": pl.String, "n": pl.Int64, "b": pl.Int64, "c": pl.Int64,
             "p": pl.Float64, "p_adj": pl.Float64, "significant": pl.Boolean}


def level_order(setting: str | None) -> tuple[int, float]:
    """Where a reasoning setting stands among a model's levels: none, then the efforts in
    order, then token budgets by size (an unknown setting last)."""
    if setting is None or setting == NONE:
        return (0, 0.0)
    kind, _, value = setting.partition("=")
    if kind == "effort" and value in EFFORTS:
        return (1, float(EFFORTS.index(value)))
    if kind == "budget_tokens" and value.isdigit():
        return (2, float(value))
    return (3, 0.0)


def reasoning_table(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000,
                    alpha: float = 0.05) -> pl.DataFrame:
    """Per regime × model_id × method run at two or more reasoning settings (several
    entries of one model): each setting's score (success or detection, 95% bootstrap
    interval over tasks), mean reasoning and output tokens per task (reasoning null where
    no provider reported it), cost per solved task, and the pair with the next lower
    setting on the tasks both answered: b (this setting right, the lower wrong), c the
    reverse, exact McNemar, Holm within each regime, reference models apart."""
    if ep.is_empty() or "model_id" not in ep.columns or "reasoning" not in ep.columns:
        return pl.DataFrame(schema=REASONING)
    rows: list[dict] = []
    known = labelled(ep.filter(pl.col("model_id").is_not_null()))
    for (regime, model_id, method), g in known.partition_by(
            ["regime", "model_id", "method"], maintain_order=True, as_dict=True).items():
        entries = g.partition_by("model", maintain_order=True, as_dict=True)
        if len(entries) < 2:
            continue
        levels = sorted(entries.items(), key=lambda kv: (
            level_order(kv[1]["reasoning"][0]), kv[0][0]))
        lower = None
        for (model,), one in levels:
            valid = one.filter(OK)
            scores = valid.select(SCORE).to_series().to_list()
            lo, hi = bootstrap_ci([float(s) for s in scores], seed, n_resamples) or (None, None)
            per = cost_per_solved(valid["cost_usd"].to_list(), scores, seed, n_resamples)
            row = {"regime": regime, "model_id": model_id, "method": method,
                   "reasoning": one["reasoning"][0] or NONE, "model": model,
                   "reference": one["reference"][0], "n_tasks": one.height,
                   "score": sum(scores) / len(scores) if scores else None,
                   "score_lo": lo, "score_hi": hi,
                   "mean_reasoning_tokens": valid["reasoning_tokens"].mean()
                   if "reasoning_tokens" in valid.columns else None,
                   "mean_output_tokens": valid["output_tokens"].mean(),
                   "cost_per_solved_usd": per[0] if per else None}
            if lower is not None:
                n, b, c = discordant(pairs(one, lower[1]))
                row.update(versus=lower[0], n=n, b=b, c=c)
            rows.append(row)
            lower = (model, one)
    compared = [r for r in rows if r.get("versus") is not None]
    adjust(compared, lambda r: (r["regime"], r["reference"]), alpha)
    return pl.DataFrame(rows, schema=REASONING)
