"""The positive control: `reference/responsive`'s measured effects beside its true ones.

Its rows carry `calibration_expected`, each episode's expected score computed on the
hidden model apart from the pipeline (`reference/expected.py`). Per method, the true
effect is the mean over paired tasks of expected(method) - expected(baseline); the
measured effect is the same mean of the scores, with a bootstrap interval over tasks.
Beside them: the report's own McNemar and Holm decision (the comparisons table), the
family's minimal detectable difference (the power table) and the power predicted for
the true effect. A pipeline that loses a mechanism's effect, or statistics that find
effects where there are none, shows here as a true effect outside its interval or a
decision against its prediction.
"""

from __future__ import annotations

import polars as pl

from planaudit.analysis.stats import bootstrap_ci, confirm_probability

CALIBRATOR = {"regime": pl.String, "model": pl.String, "method": pl.String,
              "baseline": pl.String, "n": pl.Int64, "baseline_true": pl.Float64,
              "true_pp": pl.Float64, "measured_pp": pl.Float64, "lo_pp": pl.Float64,
              "hi_pp": pl.Float64, "covered": pl.Boolean, "mdd_pp": pl.Float64,
              "power": pl.Float64, "p_adj": pl.Float64, "significant": pl.Boolean,
              "as_computed": pl.Int64, "episodes": pl.Int64}

PAIR = ["domain", "task"]


def calibrator_table(ep: pl.DataFrame, comparisons: pl.DataFrame, power: pl.DataFrame,
                     baselines: dict[str, str], seed: int = 0, n_resamples: int = 2000,
                     alpha: float = 0.05) -> pl.DataFrame:
    """One row per calibrator × regime × method against its baseline (`ep`: the rows
    the comparisons table was built on, model names carrying the reference label)."""
    rows: list[dict] = []
    if "calibration_expected" not in ep.columns:
        return pl.DataFrame(rows, schema=CALIBRATOR)
    cal = ep.filter(pl.col("calibration_expected").is_not_null() & (pl.col("outcome") != "error"))
    score = (pl.col("success") | pl.col("detected")).cast(pl.Float64)
    for (regime, model), g in cal.partition_by(["regime", "model"], maintain_order=True,
                                               as_dict=True).items():
        baseline = baselines.get(regime)
        base = g.filter(pl.col("method") == baseline).select(
            *PAIR, score.alias("score_b"), pl.col("calibration_expected").alias("exp_b"),
            (score == pl.col("calibration_predicted").cast(pl.Float64)).alias("agree_b"))
        if base.is_empty():
            continue
        family = comparisons.filter((pl.col("regime") == regime) & pl.col("reference"))
        m = family.height
        mdd = power.filter((pl.col("table") == "comparisons") & (pl.col("regime") == regime)
                           & pl.col("reference"))["min_difference_pp"]
        for (method,), other in g.partition_by("method", maintain_order=True,
                                               as_dict=True).items():
            if method == baseline:
                continue
            both = other.select(*PAIR, score.alias("score_a"),
                                pl.col("calibration_expected").alias("exp_a"),
                                (score == pl.col("calibration_predicted").cast(pl.Float64))
                                .alias("agree_a")).join(base, on=PAIR)
            if both.is_empty():
                continue
            diff = (both["score_a"] - both["score_b"]).to_list()
            true = float((both["exp_a"] - both["exp_b"]).mean())
            ci = bootstrap_ci(diff, seed, n_resamples)
            lo, hi = (100 * ci[0], 100 * ci[1]) if ci else (None, None)
            decided = family.filter(pl.col("model") == model, pl.col("method") == method)
            n = both.height
            rows.append({
                "regime": regime, "model": model, "method": method, "baseline": baseline,
                "n": n, "baseline_true": float(both["exp_b"].mean()),
                "true_pp": 100 * true, "measured_pp": 100 * float(sum(diff) / n),
                "lo_pp": lo, "hi_pp": hi,
                "covered": None if ci is None else lo - 1e-9 <= 100 * true <= hi + 1e-9,
                "mdd_pp": float(mdd[0]) if len(mdd) and mdd[0] is not None else None,
                # the calibrator only ever corrects, so its discordant pairs run one way
                "power": confirm_probability(n, max(m, 1), true, float(both["exp_b"].mean()),
                                             correlation=1.0, alpha=alpha)
                if true > 0 else None,
                "p_adj": decided["p_adj"][0] if decided.height else None,
                "significant": decided["significant"][0] if decided.height else None,
                # both sides of every pair ended as computed on the hidden model
                "as_computed": int(both["agree_a"].sum() + both["agree_b"].sum()),
                "episodes": 2 * n,
            })
    return pl.DataFrame(rows, schema=CALIBRATOR)


def sentences(table: pl.DataFrame) -> list[str]:
    """What the control shows, in words: per calibrator and regime, which comparisons the
    true effect puts above the family's minimal detectable difference, which came out
    significant, whether the intervals cover the true effects and whether every episode
    ended as computed."""
    out = []
    for (model, regime), g in table.partition_by(["model", "regime"], maintain_order=True,
                                                 as_dict=True).items():
        mdd = g["mdd_pp"][0]
        above = g.filter(pl.col("true_pp") >= (mdd if mdd is not None else float("inf")))
        below = g.filter(pl.col("true_pp") < (mdd if mdd is not None else float("inf")))

        def names(frame: pl.DataFrame) -> str:
            return ", ".join(f"{r['method']} ({r['true_pp']:+.1f} pp)"
                             for r in frame.iter_rows(named=True)) or "none"

        sig_above = above.filter(pl.col("significant").fill_null(False))
        sig_below = below.filter(pl.col("significant").fill_null(False))
        covered = int(g["covered"].fill_null(False).sum())
        mdd_text = f"{mdd:.1f} pp" if mdd is not None else "not reachable with these tasks"
        out.append(
            f"{model}, {regime}: the minimal detectable difference of its Holm family is "
            f"{mdd_text}. True effects at or above it: {names(above)}; "
            f"{sig_above.height} of {above.height} came out significant "
            f"({names(sig_above) if sig_above.height else 'none'}). Below it: "
            f"{names(below)}; {sig_below.height} of {below.height} came out significant. "
            f"The measured effect's 95% interval covers the true effect in {covered} of "
            f"{g.height} comparisons; {int(g['as_computed'].sum())} of "
            f"{int(g['episodes'].sum())} paired episodes (method and baseline of each "
            f"comparison) ended as computed on the hidden model.")
    return out
