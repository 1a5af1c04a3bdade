"""The positive control: `reference/responsive`'s measured effects beside its true ones.

Its rows carry `calibration_expected`, each episode's expected score computed on the
hidden model apart from the pipeline (`reference/expected.py`). Per method, the true
effect is the mean over paired tasks of expected(method) - expected(baseline); the
measured effect is the same mean of the scores, with a bootstrap interval over tasks.
Beside them: the report's own McNemar and Holm decision (the comparisons table), the
family's minimal detectable difference (the power table) and the power predicted for
the true effect, with the correlation of the paired outcomes measured on the episodes
(`stats.shared_difficulty`). A pipeline that loses a mechanism's effect, or statistics
that find effects where there are none, shows here as a true effect outside its
interval or a decision against its prediction; an episode that did not end as computed,
an `error` episode included, fails the control.
"""

from __future__ import annotations

import polars as pl

from planaudit.analysis.stats import bootstrap_ci, confirm_probability, shared_difficulty

CALIBRATOR = {"regime": pl.String, "model": pl.String, "method": pl.String,
              "baseline": pl.String, "n": pl.Int64, "baseline_true": pl.Float64,
              "true_pp": pl.Float64, "measured_pp": pl.Float64, "lo_pp": pl.Float64,
              "hi_pp": pl.Float64, "covered": pl.Boolean, "mdd_pp": pl.Float64,
              "correlation": pl.Float64, "power": pl.Float64, "p_adj": pl.Float64,
              "significant": pl.Boolean, "as_computed": pl.Int64, "errors": pl.Int64,
              "episodes": pl.Int64, "judged_by": pl.String}

JUDGES = {"val": "VAL, the witness",
          "formal": "formal.validate, the validator under test (VAL was not installed: the "
                    "control then checks the pipeline but not the semantics under it)"}

PAIR = ["domain", "task"]


def calibrator_table(ep: pl.DataFrame, comparisons: pl.DataFrame, power: pl.DataFrame,
                     baselines: dict[str, str], seed: int = 0, n_resamples: int = 2000,
                     alpha: float = 0.05) -> pl.DataFrame:
    """One row per calibrator × regime × method against its baseline (`ep`: the rows
    the comparisons table was built on, model names carrying the reference label).

    `episodes` counts every calibrator episode of the method and its baseline, errors
    included: an `error` episode (a call that failed, or a calibrator that lost track of
    the conversation) is left out of the pairs but counted in `errors`, never in
    `as_computed`, so it fails the control instead of vanishing from it."""
    rows: list[dict] = []
    if "calibration_expected" not in ep.columns:
        return pl.DataFrame(rows, schema=CALIBRATOR)
    marked = ep.filter(pl.col("calibration_expected").is_not_null())
    failed = pl.col("outcome") == "error"
    score = (pl.col("success") | pl.col("detected")).cast(pl.Float64)
    for (regime, model), g in marked.partition_by(["regime", "model"], maintain_order=True,
                                                  as_dict=True).items():
        baseline = baselines.get(regime)
        if baseline not in g["method"]:
            continue
        base_rows = g.filter(pl.col("method") == baseline)
        base = base_rows.filter(~failed).select(
            *PAIR, score.alias("score_b"), pl.col("calibration_expected").alias("exp_b"),
            (score == pl.col("calibration_predicted").cast(pl.Float64)).alias("agree_b"))
        base_errors = base_rows.filter(failed).height
        family = comparisons.filter((pl.col("regime") == regime) & pl.col("reference"))
        m = family.height
        mdd = power.filter((pl.col("table") == "comparisons") & (pl.col("regime") == regime)
                           & pl.col("reference"))["min_difference_pp"]
        for (method,), other in g.partition_by("method", maintain_order=True,
                                               as_dict=True).items():
            if method == baseline:
                continue
            errors = base_errors + other.filter(failed).height
            both = other.filter(~failed).select(
                *PAIR, score.alias("score_a"), pl.col("calibration_expected").alias("exp_a"),
                (score == pl.col("calibration_predicted").cast(pl.Float64)).alias("agree_a")
            ).join(base, on=PAIR)
            n = both.height
            row = dict.fromkeys(CALIBRATOR) | {
                "regime": regime, "model": model, "method": method, "baseline": baseline,
                "n": n, "errors": errors, "as_computed": 0, "episodes": 2 * n + errors,
                "mdd_pp": float(mdd[0]) if len(mdd) and mdd[0] is not None else None,
                "judged_by": _judged_by(pl.concat([base_rows, other], how="diagonal_relaxed"))}
            if n:
                row |= _measured(both, family.filter(pl.col("model") == model,
                                                     pl.col("method") == method),
                                 max(m, 1), seed, n_resamples, alpha)
            rows.append(row)
    return pl.DataFrame(rows, schema=CALIBRATOR)


def _judged_by(rows: pl.DataFrame) -> str | None:
    """Which judge computed the rows' expected scores (`calibration_witness`; rows
    written before it was recorded: None)."""
    if "calibration_witness" not in rows.columns:
        return None
    found = sorted(rows["calibration_witness"].drop_nulls().unique().to_list())
    return "+".join(found) or None


def _measured(both: pl.DataFrame, decided: pl.DataFrame, m: int, seed: int,
              n_resamples: int, alpha: float) -> dict:
    """True and measured effect, interval, measured correlation, power and decision of
    one comparison's pairs."""
    diff = (both["score_a"] - both["score_b"]).to_list()
    n = both.height
    true = float((both["exp_a"] - both["exp_b"]).mean())
    baseline_true = float(both["exp_b"].mean())
    ci = bootstrap_ci(diff, seed, n_resamples)
    lo, hi = (100 * ci[0], 100 * ci[1]) if ci else (None, None)
    # how far one difficulty orders the pair, measured on these episodes; where it
    # cannot be measured (a rate of 0 or 1) the power barely depends on it: 1 is taken
    correlation = shared_difficulty(both["score_a"].to_list(), both["score_b"].to_list())
    return {
        "baseline_true": baseline_true, "true_pp": 100 * true,
        "measured_pp": 100 * float(sum(diff) / n), "lo_pp": lo, "hi_pp": hi,
        "covered": None if ci is None else lo - 1e-9 <= 100 * true <= hi + 1e-9,
        "correlation": correlation,
        "power": confirm_probability(n, m, true, baseline_true,
                                     1.0 if correlation is None else correlation, alpha)
        if true > 0 else None,
        "p_adj": decided["p_adj"][0] if decided.height else None,
        "significant": decided["significant"][0] if decided.height else None,
        # both sides of every pair ended as computed on the hidden model
        "as_computed": int(both["agree_a"].sum() + both["agree_b"].sum()),
    }


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
            f"comparison) ended as computed on the hidden model"
            f"{_errors(int(g['errors'].fill_null(0).sum()))}{_judges(g)}. {verdict(g)}")
    return out


def _judges(g: pl.DataFrame) -> str:
    found = sorted({j for v in g["judged_by"].drop_nulls() for j in v.split("+")})
    return (", the true effects judged by " + " and ".join(JUDGES.get(j, j) for j in found)
            if found else "")


def _errors(n: int) -> str:
    return f", {n} of them ended as error" if n else ""


def failures(table: pl.DataFrame) -> int:
    """Paired episodes that did not end as computed (errors among them): any fails it."""
    return int((table["episodes"] - table["as_computed"]).sum()) if table.height else 0


def verdict(table: pl.DataFrame) -> str:
    """Whether the control holds: every paired episode, none an error, ended as computed."""
    bad = failures(table)
    if not bad:
        return "The control holds: every paired episode ended as computed."
    errors = int(table["errors"].fill_null(0).sum())
    return (f"The control FAILS: {bad} paired episodes did not end as computed"
            f"{f' ({errors} errors)' if errors else ''}.")
