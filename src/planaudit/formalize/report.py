"""The formalizer regime in the report: a figure (each model's score as a planner, per
offline strategy, beside its score as a formalizer, per method, with the share of its
files that are equivalent to the hidden model) and a section (planner or formalizer?
per model, from the `formalize_vs_offline` table; the positive control; examples of
distinguishing sequences)."""

from __future__ import annotations

import html
import os
from pathlib import Path

import polars as pl

from planaudit.formalize.caption import CAPTION
from planaudit.formalize.tables import faults_table

REFERENCE_SUFFIX = " (reference, not an LLM)"
SCORE = pl.col("success") | pl.col("detected")



def _rows(frame: pl.DataFrame, regime: str) -> pl.DataFrame:
    if "regime" not in frame.columns:
        return frame.clear()
    rows = frame.filter((pl.col("regime") == regime) & (pl.col("outcome") != "error"))
    if "disguise" in rows.columns:
        rows = rows.filter(pl.col("disguise").is_null() | (pl.col("disguise") == "none"))
    return rows


def _label(model: str, reference: bool) -> str:
    return model + REFERENCE_SUFFIX if reference else model


def draw(frame: pl.DataFrame, seed: int = 0, bootstrap: int = 2000, alpha: float = 0.05):
    """The figure (ValueError with the reason when the rows cannot support it)."""
    from matplotlib.figure import Figure
    from statsmodels.stats.proportion import proportion_confint

    mine = _rows(frame, "formalize")
    if mine.is_empty():
        raise ValueError("no formalize episode that reached its model")
    planned = _rows(frame, "offline")
    models = list(dict.fromkeys(mine["model"].to_list()))[:8]
    fig = Figure(figsize=(10, 1.2 + 2.1 * len(models)), layout="constrained")
    axes = fig.subplots(len(models), 1, squeeze=False)[:, 0]
    for ax, model in zip(axes, models, strict=True):
        ours = mine.filter(pl.col("model") == model)
        # the same tasks: a formalize section may pose fewer than offline does
        theirs = planned.filter(pl.col("model") == model).join(
            ours.select("domain", "task").unique(), on=["domain", "task"], how="semi")
        lines = [("offline", m, g) for (m,), g in theirs.partition_by(
            "method", maintain_order=True, as_dict=True).items()] if theirs.height else []
        lines += [("formalize", m, g) for (m,), g in ours.partition_by(
            "method", maintain_order=True, as_dict=True).items()]
        for y, (regime, _method, g) in enumerate(lines):
            hits, n = int(g.select(SCORE.sum()).item()), g.height
            lo, hi = proportion_confint(hits, n, alpha=alpha, method="wilson")
            colour = "#1f4e79" if regime == "formalize" else "#8c8c8c"
            ax.errorbar(hits / n, y, xerr=[[hits / n - lo], [hi - hits / n]], fmt="o",
                        color=colour, capsize=2, lw=1)
            if regime == "formalize":
                eq = int((g["equivalence"] == "equivalent").sum())
                ax.plot(eq / n, y, marker="D", mfc="none", color=colour, ms=7)
        ax.set_yticks(range(len(lines)), [f"{r}: {m}" for r, m, _ in lines])
        ax.set_ylim(-0.6, len(lines) - 0.4)
        ax.invert_yaxis()
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(_label(model, bool(ours["reference"][0])), loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[-1].set_xlabel("score (success on solvable tasks, detection on unsolvable ones); "
                        "◇ files equivalent to the hidden model")
    return fig


def _pct(hits: int, n: int) -> str:
    return f"{hits}/{n} ({100 * hits / n:.1f}%)" if n else "–"


def section(frame: pl.DataFrame, config: dict, tables: Path, figures: Path, out: Path) -> str:
    """The report's section on formalizers (empty when the rows hold none)."""
    mine = _rows(frame, "formalize")
    if mine.is_empty():
        return ""
    e = html.escape
    parts = ['<h2 id="formalize">Formalizers</h2>',
             "<p>The model writes the PDDL (the problem file, or the domain and the problem), "
             "a planner plans on it, and the hidden model judges both the route's plan and the "
             "files themselves: equivalent when both accept the same action sequences and "
             "call the same of them plans, with the shortest sequence that tells them apart "
             "where they differ. Reference models are calibrators, not LLMs.</p>"]
    versus = tables / "formalize_vs_offline.csv"
    if versus.is_file():
        said = []
        rows = pl.read_csv(versus).filter(pl.col("n") > 0)
        # per model and formalize method, the offline strategy that did best on the pairs
        for g in rows.partition_by(["model", "disguise", "formalize"], maintain_order=True):
            r = g.sort("offline_score", descending=True, maintain_order=True).row(0, named=True)
            ahead = ("the formalizer" if r["b"] > r["c"] else "the planner"
                     if r["c"] > r["b"] else "neither")
            decided = "significant" if r["significant"] else "not significant"
            named = "" if r["disguise"] == "none" else f", disguise {e(str(r['disguise']))}"
            said.append(f"<li>{e(str(r['model']))}{named}: formalize "
                        f"<i>{e(str(r['formalize']))}</i> "
                        f"{100 * r['formalize_score']:.1f}% against its best offline strategy, "
                        f"<i>{e(str(r['offline']))}</i>, {100 * r['offline_score']:.1f}% on "
                        f"{r['n']} paired tasks: {r['b']} right only as a formalizer, "
                        f"{r['c']} only as a planner; more right: {ahead} (Holm-adjusted "
                        f"p = {r['p_adj']:.3g}, {decided})</li>")
        if said:
            parts.append("<h3>Planner or formalizer?</h3><p>Exact McNemar on paired task "
                         "scores, Holm over every pair in the formalize_vs_offline table "
                         "(reference models apart); each line sets a formalize method beside "
                         f"the model's best offline strategy:</p><ul>{''.join(said)}</ul>")
    control = faults_table(mine)
    if control.height:
        lines = []
        for r in control.iter_rows(named=True):
            if r["fault"] == "none":
                text = (f"{r['expected']} episodes seeded with no fault, {r['found']} judged "
                        "to differ")
            else:
                text = (f"{r['fault']}: {r['expected']} seeded (expected, from the seeded "
                        f"draw), {r['found']} found in the first answer"
                        + (f", {r['undecided']} undecided" if r["undecided"] else "")
                        + (f", {r['repaired']} repaired by the end" if r["repaired"] else ""))
            mark = "" if r["all_found"] else " <b>(the control fails here)</b>"
            lines.append(f"<li>{e(r['model'])}, {e(r['method'])}: {e(text)}{mark}</li>")
        verdict = ("every seeded fault was found and no clean episode was judged to differ"
                   if control["all_found"].all() else
                   "<b>the judge missed a seeded fault or flagged a clean episode</b>")
        parts.append(f"<h3>Positive control</h3><p>The reference formalizers' seeded faults, "
                     f"expected beside found: {verdict}.</p><ul>{''.join(lines)}</ul>")
    figure = figures / "formalize.png"
    if figure.is_file():
        src = Path(os.path.relpath(figure, out.parent)).as_posix()
        parts.append(f'<figure><img src="{e(src)}" alt="formalize: {e(CAPTION)}">'
                     f"<figcaption>{e(CAPTION)}</figcaption></figure>")
    differ = mine.filter(pl.col("distinguishing_words").is_not_null())
    if differ.height:
        shown = differ.sort(["reference", "model", "method", "domain", "task"]).head(8)
        items = "".join(
            f"<li>{e(_label(r['model'], r['reference']))}, {e(r['method'])}, "
            f"{e(r['domain'])}/{e(r['task'])} ({e(r['outcome'])}): "
            f"{e(r['distinguishing_words'])}</li>" for r in shown.iter_rows(named=True))
        parts.append(f"<h3>Where files differ</h3><p>{_pct(differ.height, mine.height)} "
                     "episodes' files differ from the hidden model; the first few, with the "
                     f"shortest sequence that tells them apart:</p><ul>{items}</ul>")
    return "\n".join(parts)
