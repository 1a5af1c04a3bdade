"""Tables from the collected episodes, each written as csv, Markdown and LaTeX.

Every table works on whatever rows exist (one regime, one model, a missing
baseline): a table with nothing to show is written with its header only, so the
report and the workflow always find the same files.

Rates leave out `error` episodes (the model could not be reached: not a model
failure) and count them apart. The unit of replication is the task: intervals
resample tasks, comparisons pair two configurations task by task. Reference
models keep the label "(reference, not an LLM)" in every table, and their
comparisons form a Holm family of their own so that a calibrator never dilutes
the correction for the models under test.

The Markdown and LaTeX renderers are written here on top of polars (the library
has no pandas dependency, and polars' own table printing truncates and formats
for terminals, not for papers).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

from planaudit import atomic
from planaudit.acpbench.questions import FORMS as ACPBENCH_FORMS
from planaudit.acpbench.questions import TYPES as ACPBENCH_TYPES
from planaudit.analysis.outputs import FORMATS, TABLES, table_names  # noqa: F401
from planaudit.analysis.paired import (
    CONFIG,
    PAIR,
    cost_per_solved,
    discordant,
    pairs,
)
from planaudit.analysis.paired import adjust as _adjust
from planaudit.analysis.paired import labelled as _labelled
from planaudit.analysis.responsive import calibrator_table
from planaudit.analysis.rows import (
    ACPBENCH,
    MAIN_REGIMES,
    OK,
    REFERENCE_SUFFIX,
    SCORE,
)
from planaudit.analysis.stats import (
    bootstrap_ci,
    detectable_difference,
    discordant_counts,
)
from planaudit.episode import OUTCOMES
from planaudit.formal.departures import CLASSES, classify

BASELINES = {"offline": "direct", "online": "react"}
NEEDED = ("regime", "model", "reference", "method", "domain", "task", "solvable", "outcome",
          "success", "executable", "detected", "input_tokens", "output_tokens", "cost_usd")



def model_label(model: str, reference: bool) -> str:
    """The model as tables show it: a reference model can never pass for an LLM."""
    return model + REFERENCE_SUFFIX if reference else model


def main_rows(ep: pl.DataFrame) -> pl.DataFrame:
    """The offline and online rows: what every table and figure but the curriculum's and
    ACPBench's own is built on."""
    return ep.filter(pl.col("regime").is_in(MAIN_REGIMES)) if "regime" in ep.columns else ep


def beside_rows(ep: pl.DataFrame) -> pl.DataFrame:
    """The rows of regimes that stand beside the models in the main table (`Regime.beside`:
    people on the same tasks): those who consented, the study's exclusions left out (the
    human regime's flow table counts both)."""
    rows = _rows_of(ep, lambda r: r.beside)
    if "consented" in rows.columns:
        rows = rows.filter(pl.col("consented").fill_null(True))
    if "excluded" in rows.columns:
        rows = rows.filter(pl.col("excluded").is_null())
    return rows


def versus_rows(ep: pl.DataFrame) -> pl.DataFrame:
    """The rows of regimes paired with another (`Regime.versus`: formalize), which stand in
    the main table beside the offline and online rows."""
    return _rows_of(ep, lambda r: bool(r.versus))


def _rows_of(ep: pl.DataFrame, chosen: Callable) -> pl.DataFrame:
    """The rows of the registered regimes `chosen(regime)` picks (none without a regime
    column)."""
    from planaudit.regime import regimes

    names = [n for n, r in regimes().items() if chosen(r)]
    if "regime" not in ep.columns or not names:
        return ep.clear()
    return ep.filter(pl.col("regime").is_in(names))


def same_tasks_table(ep: pl.DataFrame, beside: pl.DataFrame, seed: int = 0,
                     n_resamples: int = 2000) -> pl.DataFrame:
    """The main table on the tasks the beside rows hold (people's study instances): every
    configuration's rows on exactly those tasks, under the same names, then the beside
    rows themselves, so that people and models are compared on the same tasks."""
    if beside.is_empty():
        return pl.DataFrame(schema={**MAIN, "assistant_alone": pl.String})
    tasks = beside.select(PAIR).unique()
    on = ep.join(tasks, on=PAIR, how="semi")
    table = main_table(pl.concat([on, beside], how="diagonal_relaxed"), seed, n_resamples)
    # the table labels a reference model (`model_label`): matched on the entry's name
    named = table.with_columns(_entry=pl.col("model").str.strip_suffix(REFERENCE_SUFFIX))
    return named.join(_assistants(beside), left_on="_entry", right_on="model", how="left",
                      suffix="_assisted").drop("_entry", "model_assisted", strict=False).with_columns(
        assistant_alone=pl.when(pl.col("regime").is_in(beside["regime"].unique().implode()))
        .then(None).otherwise(pl.col("assistant_alone")))


def _assistants(beside: pl.DataFrame) -> pl.DataFrame:
    """model -> the assistant arms it answered in (`arm (study)`, joined): its own rows
    on the same tasks are then the assistant alone, beside the people it assisted."""
    empty = pl.DataFrame(schema={"model": pl.String, "assistant_alone": pl.String})
    if "assistant_model" not in beside.columns:
        return empty
    arms = (beside.filter(pl.col("assistant_model").is_not_null())
            .select(model="assistant_model", arm=pl.col("method") + " (" + pl.col("study") + ")")
            .unique().sort("arm"))
    if arms.is_empty():
        return empty
    return arms.group_by("model").agg(assistant_alone=pl.col("arm").str.join(", "))


def acpbench_rows(ep: pl.DataFrame) -> pl.DataFrame:
    """The ACPBench rows (none where the rows hold no `form`: written before it existed)."""
    if "regime" not in ep.columns or "form" not in ep.columns:
        return ep.head(0)
    return ep.filter(pl.col("regime") == ACPBENCH)


def _share(hit: pl.Expr, among: pl.Expr) -> pl.Expr:
    """Share of `among` rows where `hit` holds; null when there is no such row."""
    den = among.sum()
    return pl.when(den > 0).then((hit & among).sum() / den).otherwise(None)


RATES = {
    "success": _share(pl.col("success"), OK & pl.col("solvable")),
    "executability": _share(pl.col("executable").fill_null(False), OK & pl.col("executable").is_not_null()),
    "detection": _share(pl.col("detected"), OK & ~pl.col("solvable")),
    "score": _share(SCORE, OK),
}


# -- main -----------------------------------------------------------------------------

MAIN = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean, "method": pl.String,
        "n_tasks": pl.Int64, "errors": pl.Int64, "n_solvable": pl.Int64, "success": pl.Float64,
        "success_lo": pl.Float64, "success_hi": pl.Float64, "executability": pl.Float64,
        "n_unsolvable": pl.Int64, "detection": pl.Float64, "score": pl.Float64,
        "score_lo": pl.Float64, "score_hi": pl.Float64, "mean_tokens": pl.Float64,
        "mean_cost_usd": pl.Float64, "cost_per_solved_usd": pl.Float64,
        "cost_per_solved_lo": pl.Float64, "cost_per_solved_hi": pl.Float64,
        "unpriced": pl.Int64, "truncated": pl.Int64}


def _count(frame: pl.DataFrame, column: str) -> int:
    """Rows where a boolean column holds (a shard written before it existed has none)."""
    return int(frame[column].fill_null(False).sum()) if column in frame.columns else 0


def main_table(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000) -> pl.DataFrame:
    """Per regime × model × method: rates with 95% bootstrap intervals over tasks.

    Tokens and cost are means over the episodes that reached the model; the mean cost is
    null when any of them is unpriced (`unpriced` counts them: a model with no known price
    is not free). Cost per solved task is the configuration's whole cost over the tasks it
    got right (success or detection), with an interval resampling tasks (`ratio_ci`): null
    when it got none right (never 0) or when a cost is unknown. `truncated` counts the
    episodes whose deciding reply stopped at max_tokens: their outcomes stand as the
    contract read them, but a reader should know.
    """
    rows = []
    for g in _labelled(ep).partition_by(CONFIG, maintain_order=True):
        valid = g.filter(OK)
        solvable = valid.filter(pl.col("solvable"))
        rates = g.select(**RATES).row(0, named=True)
        success_lo, success_hi = bootstrap_ci(solvable["success"].to_list(), seed,
                                              n_resamples) or (None, None)
        scores = valid.select(SCORE).to_series().to_list()
        score_lo, score_hi = bootstrap_ci(scores, seed, n_resamples) or (None, None)
        priced = valid["cost_usd"].null_count() == 0
        per_solved, per_lo, per_hi = cost_per_solved(valid["cost_usd"].to_list(), scores, seed,
                                                     n_resamples) or (None, None, None)
        rows.append({
            "regime": g["regime"][0], "model": g["model"][0], "reference": g["reference"][0],
            "method": g["method"][0], "n_tasks": g.height, "errors": g.height - valid.height,
            "n_solvable": solvable.height, "success": rates["success"],
            "success_lo": success_lo, "success_hi": success_hi,
            "executability": rates["executability"],
            "n_unsolvable": valid.height - solvable.height, "detection": rates["detection"],
            "score": rates["score"],
            "score_lo": score_lo, "score_hi": score_hi,
            "mean_tokens": (valid["input_tokens"] + valid["output_tokens"]).mean(),
            "mean_cost_usd": valid["cost_usd"].mean() if priced else None,
            "cost_per_solved_usd": per_solved,
            "cost_per_solved_lo": per_lo, "cost_per_solved_hi": per_hi,
            "unpriced": valid["cost_usd"].null_count(),
            "truncated": _count(valid, "truncated"),
        })
    return pl.DataFrame(rows, schema=MAIN)


# -- paired comparisons ---------------------------------------------------------------


COMPARISONS = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean,
               "method": pl.String, "baseline": pl.String, "n": pl.Int64, "b": pl.Int64,
               "c": pl.Int64, "p": pl.Float64, "p_adj": pl.Float64, "significant": pl.Boolean}


def comparisons_table(ep: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Each method against its model's baseline in the same regime, exact McNemar on
    the paired task scores, Holm within each regime (reference models apart)."""
    rows = []
    ep = _labelled(ep)
    for (regime, model), g in ep.partition_by(["regime", "model"], maintain_order=True,
                                              as_dict=True).items():
        baseline = BASELINES.get(regime)
        by_method = g.partition_by("method", maintain_order=True, as_dict=True)
        base = by_method.get((baseline,))
        if base is None:
            continue
        for (method,), other in by_method.items():
            if method == baseline:
                continue
            n, b, c = discordant(pairs(other, base))
            rows.append({"regime": regime, "model": model, "reference": g["reference"][0],
                         "method": method, "baseline": baseline, "n": n, "b": b, "c": c})
    _adjust(rows, lambda r: (r["regime"], r["reference"]), alpha)
    return pl.DataFrame(rows, schema=COMPARISONS)


ONLINE_VS_OFFLINE = {"model": pl.String, "reference": pl.Boolean, "online": pl.String,
                     "offline": pl.String, "n": pl.Int64, "online_success": pl.Float64,
                     "offline_success": pl.Float64, "online_score": pl.Float64,
                     "offline_score": pl.Float64, "b": pl.Int64, "c": pl.Int64, "p": pl.Float64,
                     "p_adj": pl.Float64, "significant": pl.Boolean}


def online_vs_offline_table(ep: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per model, every online architecture against every offline strategy on the tasks
    both answered: does acting in the world give what planning ahead does not?

    Rates here are over the paired tasks only, so they line up with b and c (b: the
    architecture right, the strategy wrong). Holm runs over this table's rows, reference
    models apart.
    """
    rows = []
    ep = _labelled(ep)
    for (_model,), g in ep.partition_by("model", maintain_order=True, as_dict=True).items():
        online = g.filter(pl.col("regime") == "online").partition_by(
            "method", maintain_order=True, as_dict=True)
        offline = g.filter(pl.col("regime") == "offline").partition_by(
            "method", maintain_order=True, as_dict=True)
        for (arch,), on in online.items():
            for (strategy,), off in offline.items():
                both = pairs(on, off)
                n, b, c = discordant(both)
                rates = both.select(
                    online_success=_share(pl.col("success_a"), pl.col("solvable")),
                    offline_success=_share(pl.col("success_b"), pl.col("solvable")),
                    online_score=pl.col("score_a").mean(), offline_score=pl.col("score_b").mean(),
                ).row(0, named=True)
                rows.append({"model": g["model"][0], "reference": g["reference"][0],
                             "online": arch, "offline": strategy, "n": n, **rates,
                             "b": b, "c": c})
    _adjust(rows, lambda r: (r["reference"],), alpha)
    return pl.DataFrame(rows, schema=ONLINE_VS_OFFLINE)


def versus_table(ep: pl.DataFrame, first: str, second: str, alpha: float = 0.05) -> pl.DataFrame:
    """Per model and disguise, every method of the regime `first` against every method of
    `second` on the tasks both answered under the same names (formalize against offline:
    planner or formalizer?): scores over the paired tasks, b counting tasks only `first`
    got right, c only `second`; exact McNemar, Holm over the table's rows, reference
    models apart."""
    schema = {"model": pl.String, "reference": pl.Boolean, "disguise": pl.String,
              first: pl.String, second: pl.String, "n": pl.Int64, f"{first}_score": pl.Float64,
              f"{second}_score": pl.Float64, "b": pl.Int64, "c": pl.Int64, "p": pl.Float64,
              "p_adj": pl.Float64, "significant": pl.Boolean}
    if "disguise" not in ep.columns:
        ep = ep.with_columns(disguise=pl.lit("none"))
    ep = ep.with_columns(pl.col("disguise").fill_null("none"))
    rows = []
    for (_model, disguise), g in _labelled(ep).partition_by(
            ["model", "disguise"], maintain_order=True, as_dict=True).items():
        ours = g.filter(pl.col("regime") == first).partition_by("method", maintain_order=True,
                                                                as_dict=True)
        theirs = g.filter(pl.col("regime") == second).partition_by(
            "method", maintain_order=True, as_dict=True)
        for (mine,), a in ours.items():
            for (other,), b_rows in theirs.items():
                both = pairs(a, b_rows)
                n, b, c = discordant(both)
                rows.append({"model": g["model"][0], "reference": g["reference"][0],
                             "disguise": disguise, first: mine, second: other, "n": n,
                             f"{first}_score": both["score_a"].mean() if n else None,
                             f"{second}_score": both["score_b"].mean() if n else None,
                             "b": b, "c": c})
    _adjust(rows, lambda r: (r["reference"],), alpha)
    return pl.DataFrame(rows, schema=schema)


def versus_tables(ep: pl.DataFrame, alpha: float) -> dict[str, pl.DataFrame]:
    """`<name>_vs_<versus>` for every regime paired with another, each disguise apart."""
    from planaudit.analysis.outputs import versus_names
    from planaudit.regime import regimes

    return {table: versus_table(ep, name, r.versus, alpha)
            for name, r in regimes().items() for table in versus_names(r)}


POWER = {"table": pl.String, "regime": pl.String, "reference": pl.Boolean, "n_tasks": pl.Int64,
         "comparisons": pl.Int64, "alpha": pl.Float64, "discordant_pairs": pl.Int64,
         "p": pl.Float64, "min_difference_pp": pl.Float64}


def power_table(ep: pl.DataFrame, comparisons: pl.DataFrame, versus: pl.DataFrame,
                alpha: float = 0.05) -> pl.DataFrame:
    """The smallest difference each Holm family of the run could confirm (N tasks of
    its regime, M comparisons in the family): the floor the report states."""
    rows = []

    def add(table: str, regime: str, reference: bool, tasks: int, m: int) -> None:
        if tasks and m:
            pw = detectable_difference(tasks, m, alpha)
            rows.append({"table": table, "regime": regime, "reference": reference,
                         "n_tasks": tasks, "comparisons": m, "alpha": alpha,
                         "discordant_pairs": pw.discordant, "p": pw.p,
                         "min_difference_pp": pw.min_difference_pp})

    def tasks_of(frame: pl.DataFrame) -> int:
        return frame.select(PAIR).unique().height

    for (regime, reference), fam in comparisons.partition_by(
            ["regime", "reference"], maintain_order=True, as_dict=True).items():
        add("comparisons", regime, reference, tasks_of(ep.filter(pl.col("regime") == regime)),
            fam.height)
    both = ep.filter(pl.col("regime") == "online").select(PAIR).unique().join(
        ep.filter(pl.col("regime") == "offline").select(PAIR).unique(), on=PAIR)
    for (reference,), fam in versus.partition_by("reference", maintain_order=True,
                                                 as_dict=True).items():
        add("online_vs_offline", "online vs offline", reference, both.height, fam.height)
    return pl.DataFrame(rows, schema=POWER)


# -- per domain, per task, outcomes ---------------------------------------------------


def per_domain_table(ep: pl.DataFrame) -> pl.DataFrame:
    """Rates pooled over the methods of a model, per regime and domain."""
    keys = ["regime", "model", "reference", "domain"]
    return _labelled(ep).group_by(keys, maintain_order=True).agg(
        episodes=pl.len().cast(pl.Int64), errors=(~OK).sum().cast(pl.Int64), **RATES).sort(keys)


def per_task_table(ep: pl.DataFrame) -> pl.DataFrame:
    """Score (1 success or detected, 0 otherwise, empty on error) of every task under
    every configuration: rows are tasks, columns regime/model/method."""
    ep = _labelled(ep).with_columns(
        config=pl.concat_str(CONFIG, separator="/"),
        score=pl.when(OK).then(SCORE.cast(pl.Int64)).otherwise(None))
    tasks = ep.select(*PAIR, "solvable").unique().sort(PAIR)
    if not ep.height:
        return tasks
    configs = ep["config"].unique(maintain_order=True).to_list()
    wide = ep.pivot(on="config", index=PAIR, values="score")
    return tasks.join(wide, on=PAIR, how="left").select(*PAIR, "solvable", *configs).sort(PAIR)


def outcomes_table(ep: pl.DataFrame) -> pl.DataFrame:
    """How episodes end, per configuration: every outcome a column, zeros included."""
    keys = ["regime", "model", "reference", "method"]
    counts = {o: (pl.col("outcome") == o).sum().cast(pl.Int64) for o in OUTCOMES}
    return _labelled(ep).group_by(keys, maintain_order=True).agg(
        episodes=pl.len().cast(pl.Int64), **counts).sort(keys)


# -- witness ---------------------------------------------------------------------------

WITNESS = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean, "method": pl.String,
           "plans": pl.Int64, "val_judged": pl.Int64, "agree": pl.Int64, "disagree": pl.Int64,
           **{c.replace("-", "_"): pl.Int64 for c in CLASSES}, "val_no_verdict": pl.Int64}


def disagreement(row: dict) -> str | None:
    """The class (departures.CLASSES) of a row where planaudit and VAL disagree on the
    final plan; None where they agree, or where VAL did not run or gave no verdict."""
    if row.get("val_valid") is None:
        return None
    return classify(row["first_failure_kind"] is None, row["val_valid"],
                    kind=row["first_failure_kind"], detail=row["first_failure_detail"],
                    val_detail=row.get("val_detail"))


def witness_table(ep: pl.DataFrame) -> pl.DataFrame:
    """Per configuration whose final plans VAL judged too (the witness switch): plans VAL
    ran on, how many it judged, agreements, and every disagreement under the documented
    departure that explains it, or `unexplained` (a bug to chase)."""
    if "val_detail" not in ep.columns:
        return pl.DataFrame(schema=WITNESS)
    rows = []
    ran = _labelled(ep.filter(pl.col("val_detail").is_not_null()))
    for g in ran.partition_by(CONFIG, maintain_order=True):
        records = g.to_dicts()
        judged = [r for r in records if r["val_valid"] is not None]
        classes = [disagreement(r) for r in judged]
        rows.append({"regime": g["regime"][0], "model": g["model"][0],
                     "reference": g["reference"][0], "method": g["method"][0],
                     "plans": g.height, "val_judged": len(judged),
                     "agree": classes.count(None), "disagree": len(classes) - classes.count(None),
                     **{c.replace("-", "_"): classes.count(c) for c in CLASSES},
                     "val_no_verdict": g.height - len(judged)})
    return pl.DataFrame(rows, schema=WITNESS)


# -- repair (heuristic mode) -------------------------------------------------------------

REPAIR = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean, "method": pl.String,
          "plans": pl.Int64, "skipped": pl.Int64, "attempted": pl.Int64, "repaired": pl.Int64,
          "valid_after_repair": pl.Int64, "repair_rate": pl.Float64, "mean_distance": pl.Float64,
          "mean_distance_reordered": pl.Float64, "mean_repaired_length": pl.Float64,
          "distance_per_length": pl.Float64,
          "mean_seconds": pl.Float64}


def repair_table(ep: pl.DataFrame) -> pl.DataFrame:
    """Per model × method with heuristic mode on (offline.repair): plans LPG was seeded with
    (`attempted`; `skipped`: not run, see repair_skipped), plans it returned, and those
    planaudit finds valid. repair_rate: valid repaired plans / attempted; distance (in
    actions, from the model's plan to LPG's plan as LPG returned it, as PlanBench measures
    it; beside it, to LPG's plan reordered towards the model's, which can only be lower)
    and length over the valid repaired plans; distance_per_length: mean distance / mean
    repaired length."""
    if "repair_skipped" not in ep.columns:
        return pl.DataFrame(schema=REPAIR)
    ran = ep.filter(pl.col("repair_skipped").is_not_null() | pl.col("repaired").is_not_null())
    rows = []
    for g in _labelled(ran).partition_by(CONFIG, maintain_order=True):
        tried = g.filter(pl.col("repaired").is_not_null())
        good = tried.filter(pl.col("repaired") & pl.col("repair_valid").fill_null(False))
        dist, length = good["repair_distance"].mean(), good["repair_length"].mean()
        rows.append({"regime": g["regime"][0], "model": g["model"][0],
                     "reference": g["reference"][0], "method": g["method"][0],
                     "plans": g.height, "skipped": g.height - tried.height,
                     "attempted": tried.height, "repaired": int(tried["repaired"].sum()),
                     "valid_after_repair": good.height,
                     "repair_rate": good.height / tried.height if tried.height else None,
                     "mean_distance": dist,
                     # rows written before LPG's own distance was kept measured the reordered
                     "mean_distance_reordered": (good["repair_distance_reordered"].mean()
                                                 if "repair_distance_reordered" in good.columns
                                                 else None),
                     "mean_repaired_length": length,
                     "distance_per_length": dist / length if dist is not None and length else None,
                     "mean_seconds": tried["repair_seconds"].mean()})
    return pl.DataFrame(rows, schema=REPAIR)


# -- rendering ------------------------------------------------------------------------

# the cells' number formats, in every table format and on the report's page
CELL_FORMATS = {"p": "{:.3g}", "p_adj": "{:.3g}", "alpha": "{:g}", "min_difference_pp": "{:.1f}",
                "mean_tokens": "{:.0f}", "mean_cost_usd": "{:.4g}",
                "cost_per_solved_usd": "{:.4g}", "cost_per_solved_lo": "{:.4g}",
                "cost_per_solved_hi": "{:.4g}"}


def _cell(value, column: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return CELL_FORMATS.get(column, "{:.3f}").format(value)
    return str(value)


def to_markdown(frame: pl.DataFrame) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(frame.columns),
           "|" + "|".join("---:" if t.is_numeric() else "---" for t in frame.dtypes) + "|"]
    out += [line([_cell(v, c) for v, c in zip(row, frame.columns, strict=True)])
            for row in frame.iter_rows()]
    return "\n".join(out) + "\n"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(frame: pl.DataFrame) -> str:
    """A booktabs tabular, to \\input inside a table environment with its caption."""
    spec = "".join("r" if t.is_numeric() else "l" for t in frame.dtypes) or "l"
    out = [f"\\begin{{tabular}}{{{spec}}}", r"\toprule",
           " & ".join(_tex(c) for c in frame.columns) + r" \\", r"\midrule"]
    out += [" & ".join(_tex(_cell(v, c)) for v, c in zip(row, frame.columns, strict=True)) + r" \\"
            for row in frame.iter_rows()]
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def write_table(frame: pl.DataFrame, name: str, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{name}.{ext}" for ext in FORMATS]
    with atomic.atomic_path(paths[0]) as tmp:
        frame.write_csv(tmp)
    atomic.write_text(paths[1], to_markdown(frame))
    atomic.write_text(paths[2], to_latex(frame))
    return paths


# -- the report's cell: the curriculum's table (registered with its regime), ACPBench's ---


def _cell_text(hits: list[bool], seed: int, n_resamples: int) -> str:
    right, n = sum(hits), len(hits)
    if not n:
        return ""
    ci = bootstrap_ci([float(h) for h in hits], seed, n_resamples)
    band = f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""
    return f"{right}/{n} ({100 * right / n:.1f}%){band}"


# -- ACPBench (its atomic questions, laid out as its paper's tables) ----------------------

ACPBENCH_ALL = "all types"
ACPBENCH_CELLS = {"form": pl.String, "type": pl.String, "model": pl.String,
                  "reference": pl.Boolean, "n": pl.Int64, "correct": pl.Int64,
                  "unreadable": pl.Int64, "accuracy": pl.Float64, "lo": pl.Float64,
                  "hi": pl.Float64}


def _in_order(values, order: tuple[str, ...]) -> list[str]:
    """The values present, in `order`, then any others by name (a type or form added later
    than this module still shows)."""
    return sorted(set(values), key=lambda v: (order.index(v) if v in order else len(order), v))


def _acpbench_groups(ep: pl.DataFrame):
    """(form, type, model label, reference, counted rows) of every cell of the ACPBench
    table, rows in its order: per form, every type present, then all types pooled. A model
    with no counted question of a cell gets an empty group (error rows are left out, as
    in every rate)."""
    acp = _labelled(acpbench_rows(ep))
    if acp.height == 0:
        return
    models = list(dict.fromkeys(zip(acp["model"].to_list(), acp["reference"].to_list(),
                                    strict=True)))
    counted = acp.filter(OK)
    for form in _in_order(acp["form"].to_list(), ACPBENCH_FORMS):
        asked = acp.filter(pl.col("form") == form)
        types = _in_order(asked["method"].to_list(), ACPBENCH_TYPES)
        for qtype in [*types, ACPBENCH_ALL]:
            cell = counted.filter(pl.col("form") == form)
            if qtype != ACPBENCH_ALL:
                cell = cell.filter(pl.col("method") == qtype)
            for model, reference in models:
                yield form, qtype, model, reference, cell.filter(pl.col("model") == model)


def acpbench_cells(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000) -> pl.DataFrame:
    """The ACPBench table in numbers, one row per form x type x model: questions counted
    (n), answered correctly, unreadable (outcome malformed, counted as wrong), the accuracy
    and its seeded 95% bootstrap interval over questions (null below two questions)."""
    rows = []
    for form, qtype, model, reference, g in _acpbench_groups(ep):
        hits = g["success"].fill_null(False).to_list()
        ci = bootstrap_ci([float(h) for h in hits], seed, n_resamples) if hits else None
        rows.append({"form": form, "type": qtype, "model": model, "reference": reference,
                     "n": len(hits), "correct": sum(hits),
                     "unreadable": int((g["outcome"] == "malformed").sum()),
                     "accuracy": sum(hits) / len(hits) if hits else None,
                     "lo": ci[0] if ci else None, "hi": ci[1] if ci else None})
    return pl.DataFrame(rows, schema=ACPBENCH_CELLS)


def acpbench_table(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000) -> pl.DataFrame:
    """ACPBench's tables: a row per form (bool, mcq, gen) and question type (app ... nexta,
    in `acpbench.questions.TYPES` order), closed by the form's "all types" row, and a
    column per model; each cell the questions answered correctly of those that reached the
    model, their share, and a 95% bootstrap interval over questions (seeded), pooled over
    domains and sources. Error rows are left out, as in every rate; an unreadable answer
    counts as wrong, and a cell says how many there were ("; 2 unreadable")."""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    models: list[str] = []
    for form, qtype, model, _, g in _acpbench_groups(ep):
        text = _cell_text([bool(v) for v in g["success"].fill_null(False).to_list()], seed,
                          n_resamples)
        unreadable = int((g["outcome"] == "malformed").sum())
        if unreadable:
            text += f"; {unreadable} unreadable"
        cells.setdefault((form, qtype), {})[model] = text
        if model not in models:
            models.append(model)
    rows = [{"form": form, "type": qtype, **row} for (form, qtype), row in cells.items()]
    return pl.DataFrame(rows, schema={"form": pl.String, "type": pl.String,
                                      **{m: pl.String for m in models}})


def first_repeat(ep: pl.DataFrame) -> pl.DataFrame:
    """The first repeat of every episode (epoch 0, or no epoch): what every table but
    pass_k (and the compliance tables' determinism) counts, so that a task is one trial."""
    return ep.filter(pl.col("epoch").fill_null(0) == 0) if "epoch" in ep.columns else ep


def fold_settings(ep: pl.DataFrame, repeats: bool = False) -> pl.DataFrame:
    """The rows as the configuration tables and figures see them: an online row run under a
    plan setting other than `none` counts as the method `architecture+setting` (so
    `react+standard` is a configuration beside `react`), and only the first repeat
    (`epochs`) counts unless `repeats`; the compliance tables read the settings and repeats
    apart."""
    if not repeats:
        ep = first_repeat(ep)
    if "plan_setting" not in ep.columns:
        return ep
    setting = pl.col("plan_setting")
    folded = pl.when(setting.is_not_null() & (setting != "none")).then(
        pl.col("method") + "+" + setting).otherwise(pl.col("method"))
    return ep.with_columns(folded.alias("method"))


DISGUISE = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean,
            "method": pl.String, "disguise": pl.String, "n": pl.Int64,
            "success_none": pl.Float64, "success_disguised": pl.Float64, "b": pl.Int64,
            "c": pl.Int64, "p": pl.Float64, "p_adj": pl.Float64, "significant": pl.Boolean}


def undisguised(ep: pl.DataFrame) -> pl.DataFrame:
    """The rows posed under the tasks' own names (every row, before disguises existed)."""
    if "disguise" not in ep.columns:
        return ep
    return ep.filter(pl.col("disguise").is_null() | (pl.col("disguise") == "none"))


def disguise_table(ep: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per regime × model × method and disguise: success on the solvable tasks answered
    both without and with the disguise (paired by domain and task), exact McNemar on the
    paired successes (b: right undisguised only, c: right disguised only), Holm within
    each regime (reference models apart), as `stats.paired_family` decides."""
    rows: list[dict] = []
    if "disguise" not in ep.columns or ep.height == 0:
        return pl.DataFrame(rows, schema=DISGUISE)
    ep = _labelled(ep.filter(pl.col("disguise").is_not_null()))
    for (regime, model, method), g in ep.partition_by(CONFIG, maintain_order=True,
                                                      as_dict=True).items():
        plain = g.filter(pl.col("disguise") == "none")
        for d in sorted(set(g["disguise"].to_list()) - {"none"}):
            paired = pairs(plain, g.filter(pl.col("disguise") == d)).filter(pl.col("solvable"))
            b, c = discordant_counts(paired["success_a"].to_numpy(),
                                     paired["success_b"].to_numpy())
            rows.append({"regime": regime, "model": model, "reference": g["reference"][0],
                         "method": method, "disguise": d, "n": paired.height,
                         "success_none": paired["success_a"].mean() if paired.height else None,
                         "success_disguised": (paired["success_b"].mean() if paired.height
                                               else None),
                         "b": int(b), "c": int(c)})
    _adjust(rows, lambda r: (r["regime"], r["reference"]), alpha)
    return pl.DataFrame(rows, schema=DISGUISE)


DISRUPTION = {"model": pl.String, "reference": pl.Boolean, "method": pl.String,
              "disruption": pl.String, "episodes": pl.Int64, "injections": pl.Int64,
              "withheld": pl.Int64, "resensed": pl.Int64, "hit": pl.Int64,
              "recovered": pl.Int64, "recovery_rate": pl.Float64, "success": pl.Float64}


def disruption_table(ep: pl.DataFrame) -> pl.DataFrame:
    """Online episodes run with tools that fail (online.disruption), per model x method x
    kind: the faults injected and those withheld (the goal not proven reachable from the
    state they would leave), how many injections the agent followed with a state query,
    the episodes hit by one and of those the ones that still reached the goal."""
    if "disruption" not in ep.columns:
        return pl.DataFrame(schema=DISRUPTION)
    rows = ep.filter((pl.col("regime") == "online") & pl.col("disruption").is_not_null() & OK)
    out = []
    for g in _labelled(rows).partition_by(["model", "method", "disruption"], maintain_order=True):
        hit = g.filter(pl.col("injections") > 0)
        solvable = g.filter(pl.col("solvable"))
        out.append({"model": g["model"][0], "reference": g["reference"][0],
                    "method": g["method"][0], "disruption": g["disruption"][0],
                    "episodes": g.height, "injections": int(g["injections"].sum()),
                    "withheld": int(g["injections_withheld"].sum()),
                    "resensed": int(g["resensed"].sum()), "hit": hit.height,
                    "recovered": int(hit["disruption_recovered"].sum()),
                    "recovery_rate": hit["disruption_recovered"].mean() if hit.height else None,
                    "success": solvable["success"].mean() if solvable.height else None})
    return pl.DataFrame(out, schema=DISRUPTION)


PASS_K = {"regime": pl.String, "model": pl.String, "reference": pl.Boolean, "method": pl.String,
          "tasks": pl.Int64, "epochs": pl.Int64, "k": pl.Int64, "pass_at_k": pl.Float64,
          "pass_at_k_lo": pl.Float64, "pass_at_k_hi": pl.Float64, "pass_hat_k": pl.Float64,
          "pass_hat_k_lo": pl.Float64, "pass_hat_k_hi": pl.Float64, "short": pl.Int64}


def pass_k_table(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000) -> pl.DataFrame:
    """Per configuration run more than once (a regime's `epochs`: offline, online,
    formalize, the curriculum's test cases, ACPBench's types per form): pass@k (at least one of
    k repeats right) and pass^k (all k right), from each task's n counted repeats and c of
    them right (success, or detection on an unsolvable task) as C(c,k)/C(n,k) and
    1 - C(n-c,k)/C(n,k), unbiased; the mean over tasks with a bootstrap interval that
    resamples tasks (`repeats.estimate`). k runs over 1, 2, 4, ... up to the most repeats;
    a task with fewer than k is counted in `short` and left out, never extrapolated."""
    from planaudit.analysis.repeats import estimate

    rows = fold_settings(undisguised(_rows_of(ep, lambda r: r.epochs)), repeats=True)
    if "form" in rows.columns:  # an ACPBench configuration is a question type in one form
        rows = rows.with_columns(pl.when(pl.col("form").is_not_null()).then(
            pl.col("method") + "/" + pl.col("form")).otherwise(pl.col("method")).alias("method"))
    if "epoch" not in rows.columns or rows.filter(pl.col("epoch").fill_null(0) > 0).is_empty():
        return pl.DataFrame(schema=PASS_K)
    out = []
    counted = rows.filter(OK).with_columns(SCORE.alias("right"))
    for g in _labelled(counted).partition_by(CONFIG, maintain_order=True):
        per_task = g.group_by(PAIR).agg(pl.col("right").sum().alias("c"),
                                        pl.len().alias("n")).sort(PAIR)
        most = int(per_task["n"].max())
        if most < 2:
            continue
        trials = list(zip(per_task["c"].to_list(), per_task["n"].to_list(), strict=True))
        ks = sorted({*(2 ** i for i in range(most.bit_length()) if 2 ** i <= most), most})
        for k in ks:
            at = estimate(trials, k, "pass@k", seed, n_resamples)
            hat = estimate(trials, k, "pass^k", seed, n_resamples)
            out.append({"regime": g["regime"][0], "model": g["model"][0],
                        "reference": g["reference"][0], "method": g["method"][0],
                        "tasks": per_task.height, "epochs": most, "k": k,
                        "pass_at_k": at.value, "pass_at_k_lo": at.lo, "pass_at_k_hi": at.hi,
                        "pass_hat_k": hat.value, "pass_hat_k_lo": hat.lo,
                        "pass_hat_k_hi": hat.hi, "short": hat.short})
    return pl.DataFrame(out, schema=PASS_K)


def build_tables(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000,
                 alpha: float = 0.05) -> dict[str, pl.DataFrame]:
    """Every table; the curriculum's and ACPBench's rows go to their own tables only (the
    curriculum's registered with its regime, `regime_tables`; the others keep the offline
    and online regimes, whose outcomes and baselines they are built on: `main_rows`)."""
    acpbench = acpbench_table(first_repeat(ep), seed, n_resamples)
    repeated = pass_k_table(ep, seed, n_resamples)
    everything, ep = first_repeat(ep), main_rows(ep)
    beside = undisguised(beside_rows(everything))
    paired = undisguised(versus_rows(everything))

    from planaudit.analysis.compliance import build as compliance_tables
    from planaudit.analysis.effort import reasoning_table

    folded = fold_settings(ep)
    disguise = disguise_table(folded, alpha)  # the rest: tasks under their own names
    raw, ep = undisguised(ep), undisguised(folded)
    comparisons = comparisons_table(ep, alpha)
    versus = online_vs_offline_table(ep, alpha)
    power = power_table(ep, comparisons, versus, alpha)
    calibrator = calibrator_table(_labelled(ep), comparisons, power, BASELINES, seed,
                                  n_resamples, alpha)
    return {
        "main": main_table(pl.concat([ep, beside, paired], how="diagonal_relaxed"), seed,
                           n_resamples),
        "same_tasks": same_tasks_table(ep, beside, seed, n_resamples),
        "comparisons": comparisons,
        "per_domain": per_domain_table(ep),
        "per_task": per_task_table(ep),
        "outcomes": outcomes_table(ep),
        "online_vs_offline": versus,
        "power": power,
        "witness": witness_table(ep),
        "repair": repair_table(ep),
        "acpbench": acpbench,
        **compliance_tables(raw, alpha),
        "disguise": disguise,
        "calibrator": calibrator,
        "pass_k": repeated,
        "reasoning": reasoning_table(pl.concat([ep, paired], how="diagonal_relaxed"), seed,
                                     n_resamples, alpha),
        "disruption": disruption_table(raw),
        **regime_tables(everything, seed, n_resamples),
        **versus_tables(everything, alpha),
    }


def regime_tables(ep: pl.DataFrame, seed: int, n_resamples: int) -> dict[str, pl.DataFrame]:
    """The tables a regime brings (`Regime.tables`): each from that regime's rows, models
    labelled as every table labels them, with the report's cell (correct of those that
    reached the model, share, seeded 95% bootstrap interval)."""
    from planaudit.regime import regimes

    def cell(hits: list[bool]) -> str:
        return _cell_text(hits, seed, n_resamples)

    found = {}
    for name, r in regimes().items():
        if not r.tables:
            continue
        rows = _labelled(ep.filter(pl.col("regime") == name)) if "regime" in ep.columns \
            else ep.clear()
        found |= {table: build(rows, cell) for table, build in r.tables.items()}
    return found


def calibrator_rows(ep: pl.DataFrame, seed: int = 0, n_resamples: int = 2000,
                    alpha: float = 0.05) -> pl.DataFrame:
    """The calibrator table from offline and online rows, as `build_tables` makes it (the
    figure of the same name draws this)."""
    ep = undisguised(fold_settings(main_rows(ep)))
    comparisons = comparisons_table(ep, alpha)
    power = power_table(ep, comparisons, online_vs_offline_table(ep, alpha), alpha)
    return calibrator_table(_labelled(ep), comparisons, power, BASELINES, seed, n_resamples,
                            alpha)


def write_tables(ep: pl.DataFrame, out_dir: Path, seed: int = 0, n_resamples: int = 2000,
                 alpha: float = 0.05) -> dict[str, pl.DataFrame]:
    """Build every table of `table_names()` and write it in every format of FORMATS."""
    tables = build_tables(ep, seed, n_resamples, alpha)
    for name in table_names():
        write_table(tables[name], name, out_dir)
    return tables
