"""The report's figures, drawn from the collected episode rows (one row per episode).

Every figure is written as png and svg, and reads in grayscale: outcomes differ by
gray level *and* hatching, models by fill, methods by marker shape. Reference models
(`reference` true) carry "(reference)" in every label, so a calibrator is never read
as an LLM. Matplotlib is used through `Figure` objects, not pyplot, so nothing here
depends on a display or on global state.

A figure that the rows cannot support (no online rows for `sensing`, no model run in
both regimes for `online_offline`) is still written, as a placeholder that states
why: the workflow declares every figure as an output, so a missing file would fail
the run; `draw_all` also reports the reason in its notes.

Counting follows the outcome table of the architecture: `error` episodes (the model
could not be reached) are shown among the outcomes but left out of success and
score; success is over solvable tasks, score over all tasks (success or detected).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

# what the figures are and when the rows support them (importable without matplotlib)
from planaudit import atomic
from planaudit.analysis.figure_catalog import (  # noqa: F401  (re-exported)
    ACPBENCH_FIGURES,
    CAPTIONS,
    FIGURES,
    SENSING_COLUMNS,
    Config,
    NotDrawable,
    configurations,
    in_both_regimes,
    why_not,
)

# one definition of each rate: the figures can never disagree with the tables
from planaudit.analysis.rows import OK as COUNTED
from planaudit.analysis.rows import SCORE as SCORED
from planaudit.analysis.tables import (
    ACPBENCH_ALL,
    RATES,
    acpbench_cells,
    acpbench_rows,
    calibrator_rows,
    main_rows,
)
from planaudit.analysis.tables import (
    cost_per_solved as solved_cost,  # per configuration here, from the rows
)

# outcome -> (face gray, hatch, hatch gray): good outcomes light, failures darker and hatched
OUTCOME_STYLE = {
    "success": ("1.0", "", "0"),
    "detected": ("0.82", "", "0"),
    "goal-not-reached": ("0.62", "///", "0"),
    "missed-unsolvable": ("0.62", "\\\\\\", "0"),
    "false-abstention": ("0.82", "...", "0"),
    "malformed": ("0.4", "xxx", "1"),
    "inapplicable-action": ("0.1", "", "0"),
    "budget-exhausted": ("0.3", "---", "1"),
    "context-exhausted": ("0.3", "|||", "1"),
    "error": ("1.0", "++", "0.45"),
}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "p", "*")
MODEL_FILLS = ("0.0", "1.0", "0.55", "0.8", "0.3", "0.65", "0.15", "0.9")
RC = {"font.size": 8.5, "axes.titlesize": 9.5, "axes.labelsize": 8.5, "legend.fontsize": 8,
      "xtick.labelsize": 8, "ytick.labelsize": 8, "svg.hashsalt": "planaudit",
      "svg.fonttype": "path", "hatch.linewidth": 0.7, "axes.spines.top": False,
      "axes.spines.right": False}


def summary(frame: pl.DataFrame) -> pl.DataFrame:
    """Per configuration: episodes, counted episodes, success, score, mean cost per counted
    episode (the same definitions as the main table, so a figure never disagrees with it)."""
    return frame.group_by("regime", "model", "method", maintain_order=True).agg(
        episodes=pl.len(),
        counted=COUNTED.sum(),
        success=RATES["success"],
        score=RATES["score"],
        # as the main table: calls that ran; null when any of them is unpriced (not free)
        cost=pl.when(pl.col("cost_usd").filter(COUNTED).null_count() == 0)
        .then(pl.col("cost_usd").filter(COUNTED).mean()).otherwise(None),
    )


def _lookup(frame: pl.DataFrame) -> dict[tuple[str, str, str], dict]:
    return {(r["regime"], r["model"], r["method"]): r for r in summary(frame).iter_rows(named=True)}


def _model_styles(configs: Sequence[Config]) -> dict[str, str]:
    models = list(dict.fromkeys(c.model for c in configs))
    return {m: MODEL_FILLS[i % len(MODEL_FILLS)] for i, m in enumerate(models)}


def _method_markers(configs: Sequence[Config]) -> dict[str, str]:
    methods = list(dict.fromkeys(c.method for c in configs))
    return {m: MARKERS[i % len(MARKERS)] for i, m in enumerate(methods)}


def _money(x: float) -> str:
    if x == 0:
        return "$0"
    return f"${x:.2g}" if x < 1 else f"${x:,.2f}"


# -- outcomes -------------------------------------------------------------------------


def draw_outcomes(frame: pl.DataFrame) -> Figure:
    configs = configurations(frame)
    counts = frame.group_by("regime", "model", "method", "outcome").len()
    share = {(r["regime"], r["model"], r["method"], r["outcome"]): r["len"]
             for r in counts.iter_rows(named=True)}
    stats = _lookup(frame)
    present = [o for o in OUTCOME_STYLE if any(k[3] == o for k in share)]
    n = len(configs)
    fig = Figure(figsize=(10, 1.9 + 0.3 * n), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=(3, 1))
    y = np.arange(n)
    start = np.zeros(n)
    totals = np.array([stats[(c.regime, c.model, c.method)]["episodes"] for c in configs])
    for outcome in present:
        face, hatch, hatch_gray = OUTCOME_STYLE[outcome]
        part = np.array([share.get((c.regime, c.model, c.method, outcome), 0) for c in configs])
        left.barh(y, part / totals, left=start, height=0.72, color=face, hatch=hatch,
                  edgecolor="0", hatchcolor=hatch_gray, linewidth=0.5, label=outcome)
        start += part / totals
    left.set_yticks(y, [c.label for c in configs])
    left.invert_yaxis()
    left.set_xlim(0, 1)
    left.xaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    left.set_xlabel("share of episodes")
    left.set_title("How episodes end")
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(5, len(present)),
               frameon=False, handleheight=1.5, handlelength=2.4)
    _regime_rules(left, configs)
    known = [stats[(c.regime, c.model, c.method)]["cost"] for c in configs]
    cost = np.array([k or 0.0 for k in known])
    right.barh(y, cost, height=0.72, color="0.55", edgecolor="0", linewidth=0.5)
    top = cost.max() if cost.max() > 0 else 1.0
    for yi, c, k in zip(y, cost, known, strict=True):  # an unknown price is said, not drawn as $0
        right.text(c + top * 0.02, yi, _money(c) if k is not None else "unpriced", va="center",
                   fontsize=7.5, style="normal" if k is not None else "italic")
    right.set_xlim(0, top * 1.45)
    right.set_xlabel("mean cost per episode")
    right.set_title("Cost")
    right.tick_params(axis="y", length=0)
    right.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: _money(v)))
    right.xaxis.set_major_locator(mpl.ticker.MaxNLocator(3))
    _regime_rules(right, configs)
    return fig


def _regime_rules(ax, configs: Sequence[Config]) -> None:
    """A thin rule between consecutive models or regimes, so groups read at a glance."""
    for i in range(1, len(configs)):
        a, b = configs[i - 1], configs[i]
        if (a.regime, a.model) != (b.regime, b.model):
            ax.axhline(i - 0.5, color="0.3" if a.regime != b.regime else "0.7",
                       linewidth=1.2 if a.regime != b.regime else 0.6)


# -- success against cost -------------------------------------------------------------


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the (cost, score) points no other point beats: at most the cost and at
    least the score, better in one. Ordered by cost."""
    front = []
    for i, (c, s) in enumerate(points):
        if not any((c2 <= c and s2 >= s) and (c2 < c or s2 > s)
                   for j, (c2, s2) in enumerate(points) if j != i):
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))


def cost_per_solved(frame: pl.DataFrame, seed: int = 0, n_resamples: int = 2000
                    ) -> dict[tuple[str, str, str], tuple[float, float, float] | None]:
    """Per configuration: (cost per solved task, low, high), the main table's
    (`tables.cost_per_solved`; an interval of one task is the point); None where nothing
    was solved or a cost is unknown: never 0."""
    out: dict[tuple[str, str, str], tuple[float, float, float] | None] = {}
    for g in frame.filter(COUNTED).partition_by("regime", "model", "method",
                                                  maintain_order=True):
        found = solved_cost(g["cost_usd"].to_list(), g.select(SCORED).to_series().to_list(),
                            seed, n_resamples)
        out[(g["regime"][0], g["model"][0], g["method"][0])] = None if found is None else (
            found[0], found[0] if found[1] is None else found[1],
            found[0] if found[2] is None else found[2])
    return out


def draw_success_cost(frame: pl.DataFrame) -> Figure:
    configs = configurations(frame)
    stats = _lookup(frame)
    per = cost_per_solved(frame)
    pts = [(c, stats[(c.regime, c.model, c.method)]) for c in configs]
    pts = [(c, s) for c, s in pts if s["score"] is not None and s["counted"]]
    unpriced = sorted({c.model_label for c, s in pts if s["cost"] is None})
    nothing = [c.label for c, s in pts if s["cost"] is not None
               and per.get((c.regime, c.model, c.method)) is None]
    pts = [(c, s) for c, s in pts if per.get((c.regime, c.model, c.method)) is not None]
    fills, markers = _model_styles(configs), _method_markers(configs)
    fig = Figure(figsize=(9, 5.6), layout="constrained")
    ax = fig.subplots()
    notes = []
    if unpriced:  # a point at $0 would claim the model is free
        notes.append("not drawn, no known price: " + ", ".join(unpriced))
    if nothing:  # solving nothing has no cost per solve; drawing it at $0 would praise it
        notes.append("not drawn, nothing solved (no cost per solved task): " + ", ".join(nothing))
    if notes:
        ax.text(0.99, 0.01, "\n".join(notes), transform=ax.transAxes, ha="right", va="bottom",
                fontsize=7.5, style="italic", wrap=True)
    costs = [per[(c.regime, c.model, c.method)][0] for c, _ in pts]
    finite_hi = [h for c, _ in pts if np.isfinite(h := per[(c.regime, c.model, c.method)][2])]
    right_edge = max([*costs, *finite_hi, 0.0]) * 1.5 or 1.0
    for (c, s), cost in zip(pts, costs, strict=True):
        _, lo, hi = per[(c.regime, c.model, c.method)]
        if hi > lo:  # the interval over tasks; an unbounded one runs to the edge, arrowed
            ax.plot([lo, min(hi, right_edge)], [s["score"]] * 2, color="0.45", linewidth=0.8,
                    zorder=2)
            if not np.isfinite(hi):
                ax.annotate("", (right_edge, s["score"]), xytext=(lo, s["score"]),
                            arrowprops={"arrowstyle": "->", "color": "0.45", "linewidth": 0.8})
        ax.scatter(cost, s["score"], s=70 if not (c.reference or c.planner) else 90,
                   marker=markers[c.method], color=fills[c.model], edgecolor="0", linewidth=0.9,
                   zorder=3)
    llm = [i for i, (c, _) in enumerate(pts) if not (c.reference or c.planner)]
    among = llm or list(range(len(pts)))
    front = [among[i] for i in pareto_front([(costs[i], pts[i][1]["score"]) for i in among])]
    fx, fy = [costs[i] for i in front], [pts[i][1]["score"] for i in front]
    ax.plot(fx, fy, linestyle="--", color="0", linewidth=1.2, zorder=2, drawstyle="steps-post")
    ax.scatter(fx, fy, s=230, facecolor="none", edgecolor="0", linewidth=1.0, zorder=2)
    labels: dict[tuple[float, float], list[str]] = {}  # configurations that tie share a label
    for i in front:
        if not (pts[i][0].reference or pts[i][0].planner):  # labelled below
            labels.setdefault((costs[i], pts[i][1]["score"]), []).append(pts[i][0].label)
    for k, ((x, y), names) in enumerate(labels.items()):
        ax.annotate("\n".join(names), (x, y), xytext=(8, -12 if k % 2 else 8),
                    textcoords="offset points", fontsize=7.5, zorder=4,
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "1", "edgecolor": "0.6",
                          "linewidth": 0.5})
    clusters: dict[tuple[str, bool, float, float], list[str]] = {}
    for (c, s), cost in zip(pts, costs, strict=True):
        if c.reference or c.planner:
            clusters.setdefault((c.model, c.planner, round(cost, 9), round(s["score"], 6)),
                                []).append(f"{c.regime} {c.method}")
    for (model, planner, cost, score), names in clusters.items():
        every = len(names) == sum(c.model == model for c in configs)
        kind = "classical planner" if planner else "reference"
        ax.annotate(f"{model} ({kind}, not an LLM): {'every method' if every else ', '.join(names)}",
                    (cost, score),
                    xytext=(12, -4), textcoords="offset points", fontsize=7.5, va="top",
                    wrap=True, zorder=4)
    positive = [c for c in costs if c > 0]
    if positive and min(costs) == 0:
        linthresh = 10 ** np.floor(np.log10(min(positive)))
        ax.set_xscale("symlog", linthresh=linthresh, linscale=1.0)
        ax.xaxis.set_major_locator(mpl.ticker.FixedLocator(
            [0.0, *10 ** np.arange(np.log10(linthresh), np.ceil(np.log10(max(positive))) + 1)]))
        ax.xaxis.set_minor_locator(mpl.ticker.NullLocator())
    elif positive and max(positive) / min(positive) > 20:
        ax.set_xscale("log")
    elif not positive:  # nothing priced (reference models and planners only)
        ax.set_xlim(-0.2, 1.0)
        ax.set_xticks([0.0])
    ax.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: _money(v)))
    ax.set_ylim(-0.04, 1.08)
    ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    ax.set_xlabel("cost per solved task (USD; bars: 95% bootstrap interval over tasks"
                  + (", symmetric log scale)" if ax.get_xscale() == "symlog" else ")"))
    ax.set_ylabel("score (all tasks)")
    ax.set_title("Score against cost per solved task (dashed: Pareto front of the "
                 + ("LLM configurations)" if llm else "reference models; no LLM was run)"))
    ax.grid(True, color="0.88", linewidth=0.6, zorder=0)
    models = list(dict.fromkeys((c.model, c.model_label) for c in configs))
    methods = list(dict.fromkeys((c.regime, c.method) for c in configs))
    model_handles = [Line2D([], [], marker="s", linestyle="", markersize=9, color=fills[m],
                            markeredgecolor="0", label=label) for m, label in models]
    method_handles = [Line2D([], [], marker=markers[m], linestyle="", markersize=8, color="0.75",
                             markeredgecolor="0", label=f"{m} ({r})") for r, m in methods]
    heading = [Line2D([], [], linestyle="", label=t) for t in ("model (fill)", "",
                                                                "method (marker)")]
    # one figure legend, so the layout makes room for it; headings are empty handles
    fig.legend(handles=[heading[0], *model_handles, heading[1], heading[2], *method_handles],
               loc="outside right upper", frameon=False)
    return fig


# -- per-task heat map ----------------------------------------------------------------


def draw_per_task(frame: pl.DataFrame) -> Figure:
    configs = configurations(frame)
    tasks = (frame.select("domain", "task", "solvable").unique(maintain_order=True)
             .sort("domain", "task"))
    cells = (frame.filter(COUNTED).group_by("regime", "model", "method", "domain", "task")
             .agg(score=SCORED.mean()))
    value = {tuple(r[:5]): r[5] for r in cells.iter_rows()}
    rows = list(tasks.iter_rows())
    grid = np.full((len(rows), len(configs)), np.nan)
    for i, (domain, task, _) in enumerate(rows):
        for j, c in enumerate(configs):
            v = value.get((c.regime, c.model, c.method, domain, task))
            if v is not None:
                grid[i, j] = v
    fig = Figure(figsize=(3.2 + 0.3 * len(configs), 3.2 + 0.2 * len(rows)), layout="constrained")
    ax = fig.subplots()
    ax.add_patch(Rectangle((-0.5, -0.5), len(configs), len(rows), facecolor="1",
                                       hatch="xxx", edgecolor="0.6", linewidth=0, zorder=0))
    mesh = ax.imshow(np.ma.masked_invalid(grid), cmap="Greys", vmin=0, vmax=1, aspect="auto",
                     interpolation="nearest", zorder=1)
    ax.set_xticks(np.arange(len(configs)), [c.label for c in configs], rotation=90)
    ax.set_yticks(np.arange(len(rows)),
                  [f"{d}/{t}" + ("" if s else " ✕") for d, t, s in rows])
    ax.set_xticks(np.arange(len(configs) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(rows) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="0.75", linewidth=0.4)
    ax.tick_params(which="minor", length=0)
    # mid-gray rules read on black and on white cells alike
    for i in range(1, len(rows)):
        if rows[i][0] != rows[i - 1][0]:
            ax.axhline(i - 0.5, color="0.5", linewidth=2.6)
    for j in range(1, len(configs)):
        if configs[j].regime != configs[j - 1].regime:
            ax.axvline(j - 0.5, color="0.5", linewidth=3.2)
        elif configs[j].model != configs[j - 1].model:
            ax.axvline(j - 0.5, color="0.5", linewidth=1.4)
    ax.xaxis.tick_top()
    ax.tick_params(axis="x", labeltop=True, labelbottom=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    bar = fig.colorbar(mesh, ax=ax, shrink=0.5, pad=0.02, format=mpl.ticker.PercentFormatter(1.0))
    bar.set_label("score (share of counted episodes)")
    ax.set_xlabel("✕ unsolvable task (score = detection)   hatched: no counted episode")
    return fig


# -- sensing against acting -----------------------------------------------------------


def draw_sensing(frame: pl.DataFrame) -> Figure:
    online = frame.filter(pl.col("regime") == "online")
    configs = configurations(online)
    everything = configurations(frame)  # styles as in the other figures
    fills, markers = _model_styles(everything), _method_markers(everything)
    means = {(r["model"], r["method"]): r for r in online.group_by("model", "method").agg(
        pl.col("n_epistemic").mean(), pl.col("n_ontic").mean()).iter_rows(named=True)}
    fig = Figure(figsize=(11, max(4.4, 1.6 + 0.32 * len(configs))), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.25))
    top = 0.0
    for c in configs:
        m = means[(c.model, c.method)]
        left.scatter(m["n_ontic"], m["n_epistemic"], s=80, marker=markers[c.method],
                     color=fills[c.model], edgecolor="0", linewidth=0.9, zorder=3)
        top = max(top, m["n_ontic"] or 0, m["n_epistemic"] or 0)
    top = top * 1.15 or 1.0
    left.plot([0, top], [0, top], linestyle=":", color="0.4", linewidth=1)
    left.text(top * 0.97, top * 0.92, "as much sensing as acting", ha="right", va="top",
              rotation=0, fontsize=7.5, color="0.3")
    left.set_xlim(0, top)
    left.set_ylim(0, top)
    left.set_xlabel("mean ontic tool calls per episode (acting)")
    left.set_ylabel("mean epistemic tool calls per episode (sensing)")
    left.set_title("Sensing against acting")
    left.grid(True, color="0.9", linewidth=0.6, zorder=0)
    first = left.legend(handles=[
        Line2D([], [], marker="s", linestyle="", markersize=9, color=fills[m], markeredgecolor="0",
               label=label) for m, label in dict.fromkeys((c.model, c.model_label) for c in configs)],
        loc="upper left", frameon=False, title="model (fill)")
    left.add_artist(first)
    left.legend(handles=[
        Line2D([], [], marker=markers[m], linestyle="", markersize=8, color="0.75",
               markeredgecolor="0", label=m) for m in dict.fromkeys(c.method for c in configs)],
        loc="upper left", bbox_to_anchor=(0.0, 0.72), frameon=False, title="architecture (marker)")
    ratios = []
    for c in configs:
        vals = online.filter((pl.col("model") == c.model) & (pl.col("method") == c.method))
        ratios.append(vals["sensing_ratio"].drop_nulls().drop_nans().to_numpy())
    y = np.arange(len(configs))
    keep = [i for i, r in enumerate(ratios) if len(r)]
    right.set_title("Sensing ratio")
    if not keep:  # no episode called a sensing or acting tool: there is no ratio to draw
        right.text(0.5, 0.5, "no episode called get_task, query_state or act:\nno sensing "
                   "ratio to show", ha="center", va="center", transform=right.transAxes)
        right.set_yticks([])
        return fig
    box = right.boxplot([ratios[i] for i in keep], positions=y[keep], orientation="horizontal",
                        widths=0.6, patch_artist=True, showmeans=True,
                        meanprops={"marker": "D", "markerfacecolor": "1", "markeredgecolor": "0",
                                   "markersize": 5},
                        medianprops={"color": "0", "linewidth": 1.4},
                        flierprops={"marker": ".", "markersize": 4, "markerfacecolor": "0.3"})
    for patch, median, i in zip(box["boxes"], box["medians"], keep, strict=True):
        fill = fills[configs[i].model]
        patch.set_facecolor(fill)
        patch.set_edgecolor("0")
        if float(fill) < 0.45:  # a black median vanishes in a dark box
            median.set_color("1")
    right.set_yticks(y, [f"{c.model_label} · {c.method}" for c in configs])
    right.set_ylim(len(configs) - 0.5, -0.5)
    right.set_xlim(0, 1)
    right.xaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    right.set_xlabel("sensing ratio per episode: epistemic / (epistemic + ontic)  (◇ mean)")
    return fig


# -- online against offline -----------------------------------------------------------


def draw_online_offline(frame: pl.DataFrame) -> Figure:
    configs = configurations(frame)
    both = in_both_regimes(configs)
    stats = _lookup(frame)
    fig = Figure(figsize=(max(6.5, 1.5 + 0.42 * sum(c.model in both for c in configs)
                              + 0.5 * len(both)), 5.2), layout="constrained")
    ax = fig.subplots()
    x, ticks, labels = 0.0, [], []
    kinds: dict[str, object] = {}  # the legend shows real bars: legend patches drop hatch colours
    for model in both:
        group = [c for c in configs if c.model == model]
        start = x
        for c in group:
            v = stats[(c.regime, c.model, c.method)]["success"]
            offline = c.regime == "offline"
            bar = ax.bar(x, v or 0.0, width=0.8, color="0.85" if offline else "0.35",
                         hatch="///" if offline else "..", edgecolor="0",
                         hatchcolor="0.3" if offline else "1", linewidth=0.6)
            kinds.setdefault("offline strategy" if offline else "online architecture", bar)
            ax.text(x, (v or 0.0) + 0.015, "n/a" if v is None else f"{v:.0%}", ha="center",
                    va="bottom", fontsize=7, rotation=90)
            ticks.append(x)
            labels.append(c.method)
            x += 1
        best = max((stats[(c.regime, c.model, c.method)]["success"] or 0.0 for c in group
                    if c.regime == "offline"), default=0.0)
        ax.hlines(best, start - 0.45, x - 0.55, linestyles="--", color="0", linewidth=1.1)
        ax.text((start + x - 1) / 2, -0.16, group[0].model_label, ha="center", va="top",
                fontsize=8.5, fontweight="bold", transform=ax.get_xaxis_transform())
        if model != both[-1]:
            ax.axvline(x, color="0.6", linewidth=0.6)
        x += 1
    ax.set_xticks(ticks, labels, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.7, x - 1.3)
    ax.set_ylim(0, 1.18)
    ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    ax.set_ylabel("success on solvable tasks")
    ax.set_title("Online against offline, per model")
    line = Line2D([], [], linestyle="--", color="0")
    ax.legend([*kinds.values(), line], [*kinds, "best offline strategy"], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), frameon=False, handleheight=1.6, handlelength=2.4)
    return fig


def draw_calibrator(frame: pl.DataFrame, seed: int = 0, bootstrap: int = 2000,
                    alpha: float = 0.05) -> Figure:
    """reference/responsive: per method, the measured effect with its interval beside the
    true effect, against the family's minimal detectable difference (intervals and
    decisions with the tables' seed, resamples and alpha, so both show the same)."""
    table = calibrator_rows(frame, seed, bootstrap, alpha)
    if table.is_empty():
        raise NotDrawable("no reference/responsive episodes with their baseline")
    panels = table.partition_by(["model", "regime"], maintain_order=True)
    fig = Figure(figsize=(7.8, 1.0 + sum(0.32 * p.height + 0.7 for p in panels)),
                 layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False,
                        height_ratios=[p.height + 1.5 for p in panels])[:, 0]
    for ax, p in zip(axes, panels, strict=True):
        y = np.arange(p.height)[::-1]
        lo, hi = p["lo_pp"].fill_null(np.nan).to_numpy(), p["hi_pp"].fill_null(np.nan).to_numpy()
        measured = p["measured_pp"].to_numpy()
        ax.hlines(y, lo, hi, color="0", linewidth=1.2)
        sig = p["significant"].fill_null(False).to_numpy()
        ax.scatter(measured[sig], y[sig], s=30, color="0", zorder=3, label="measured, significant")
        ax.scatter(measured[~sig], y[~sig], s=30, facecolor="1", edgecolor="0", zorder=3,
                   label="measured, not significant")
        ax.scatter(p["true_pp"].to_numpy(), y, marker="|", s=220, linewidths=2.2,
                   color="0.5", zorder=2, label="true effect (computed)")
        ax.axvline(0, color="0.6", linewidth=0.8)
        mdd = p["mdd_pp"][0]
        if mdd is not None:
            ax.axvline(mdd, color="0", linestyle="--", linewidth=0.9,
                       label=f"minimal detectable difference ({mdd:.1f} pp)")
        labels = [f"{m} (power {w:.2f})" if w is not None else
                  f"{m} (no episode ended: errors only)" if t is None else
                  f"{m} (true effect {'0' if abs(t) < 1e-9 else 'below 0'})"
                  for m, w, t in zip(p["method"], p["power"], p["true_pp"], strict=True)]
        ax.set_yticks(y, labels)
        ax.set_ylim(-0.8, p.height - 0.2)
        ax.set_xlim(-20, 100)
        ax.set_title(f"{p['regime'][0]} · {p['model'][0]} against {p['baseline'][0]}")
        ax.legend(loc="lower right", frameon=False, fontsize=7)
    axes[-1].set_xlabel("effect on the score, percentage points (95% bootstrap interval over tasks)")
    return fig


# -- ACPBench ---------------------------------------------------------------------------

ACPBENCH_PANELS = 3  # per row of panels


def draw_acpbench(frame: pl.DataFrame, seed: int = 0, bootstrap: int = 2000,
                  alpha: float = 0.05) -> Figure:
    """ACPBench: per model a panel, question types down (all types pooled last), forms
    across, each cell the accuracy with its interval and the questions counted (the
    numbers of the acpbench table: same seed and resamples). `alpha` is unused (no test
    is made here); it is accepted as the other analysed figures accept it."""
    cells = acpbench_cells(frame, seed, bootstrap)
    if cells.is_empty():
        raise NotDrawable("no ACPBench episodes in these rows")
    forms = list(dict.fromkeys(cells["form"].to_list()))
    types = [t for t in dict.fromkeys(cells["type"].to_list()) if t != ACPBENCH_ALL]
    types.append(ACPBENCH_ALL)
    models = list(dict.fromkeys(cells["model"].to_list()))
    at = {(r["model"], r["form"], r["type"]): r for r in cells.iter_rows(named=True)}
    cols = min(ACPBENCH_PANELS, len(models))
    rows = -(-len(models) // cols)
    fig = Figure(figsize=(1.4 + (1.05 * len(forms) + 0.7) * cols,
                          1.2 + (0.42 * len(types) + 0.7) * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    mesh = None
    for k, (ax, model) in enumerate(zip(axes, models, strict=False)):
        grid = np.full((len(types), len(forms)), np.nan)
        for i, t in enumerate(types):
            for j, f in enumerate(forms):
                cell = at.get((model, f, t))
                if cell is not None and cell["accuracy"] is not None:
                    grid[i, j] = cell["accuracy"]
        ax.add_patch(Rectangle((-0.5, -0.5), len(forms), len(types), facecolor="1",
                               hatch="xxx", edgecolor="0.6", linewidth=0, zorder=0))
        mesh = ax.imshow(np.ma.masked_invalid(grid), cmap="Greys", vmin=0, vmax=1,
                         aspect="auto", interpolation="nearest", zorder=1)
        for i, t in enumerate(types):
            for j, f in enumerate(forms):
                cell = at.get((model, f, t))
                if cell is None or cell["accuracy"] is None:
                    continue
                band = (f"\n[{cell['lo']:.0%}, {cell['hi']:.0%}]" if cell["lo"] is not None
                        else "")
                ax.text(j, i, f"{cell['accuracy']:.0%} of {cell['n']}{band}", ha="center",
                        va="center", fontsize=6.5, zorder=3,
                        color="1" if cell["accuracy"] > 0.55 else "0")
        ax.axhline(len(types) - 1.5, color="0.5", linewidth=2.2, zorder=2)  # above: per type
        ax.set_xticks(np.arange(len(forms)), forms)
        ax.set_yticks(np.arange(len(types)), types if k % cols == 0 else [""] * len(types))
        ax.set_xticks(np.arange(len(forms) + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(len(types) + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="0.75", linewidth=0.4)
        ax.tick_params(which="minor", length=0)
        ax.xaxis.tick_top()
        ax.set_title(model, fontsize=8.5)  # a reference model's carries its label (tables)
        for side in ("top", "right"):
            ax.spines[side].set_visible(True)
    for ax in axes[len(models):]:
        ax.set_visible(False)
    bar = fig.colorbar(mesh, ax=list(axes[:len(models)]), shrink=0.6, pad=0.02,
                       format=mpl.ticker.PercentFormatter(1.0))
    bar.set_label("questions answered correctly (of those counted)")
    fig.suptitle("ACPBench: accuracy per question type and form (95% bootstrap interval "
                 "over questions; hatched: none counted)", fontsize=9)
    return fig


DRAWERS: dict[str, Callable[[pl.DataFrame], Figure]] = {
    "outcomes": draw_outcomes, "success_cost": draw_success_cost, "per_task": draw_per_task,
    "sensing": draw_sensing, "online_offline": draw_online_offline,
    "calibrator": draw_calibrator, "acpbench": draw_acpbench,
}


def placeholder(name: str, reason: str) -> Figure:
    """The figure written in place of one the rows cannot support: it states why."""
    fig = Figure(figsize=(7, 1.6))
    fig.text(0.5, 0.62, f"{name}: not drawn", ha="center", va="center", fontsize=12,
             fontweight="bold")
    fig.text(0.5, 0.32, reason, ha="center", va="center", fontsize=10)
    return fig


# -- calibration (planaudit calibrate) ------------------------------------------------


def draw_calibration(result: dict) -> Figure:
    """Detection rate against true difference: `calibrate`'s empirical rates with their
    intervals, the predicted curve, the smallest confirmable difference."""
    with mpl.rc_context(RC):
        d = result["design"]
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.subplots()
        curve = result["curve"]
        ax.plot([c["difference_pp"] for c in curve], [c["predicted"] for c in curve],
                color="0", linewidth=1.2, label="predicted (confirm_probability)")
        rows = result["rows"]
        x = np.array([r["difference_pp"] for r in rows])
        y = np.array([r["empirical"] for r in rows])
        err = np.array([[r["empirical"] - r["empirical_lo"] for r in rows],
                        [r["empirical_hi"] - r["empirical"] for r in rows]])
        ax.errorbar(x, y, yerr=err, fmt="o", color="0", markerfacecolor="1", markersize=5,
                    capsize=2.5, linewidth=0.8,
                    label=f"simulated ({d['experiments']} experiments each)")
        if result["mdd_pp"] is not None:
            ax.axvline(result["mdd_pp"], color="0.4", linestyle=":", linewidth=1.2,
                       label=f"smallest confirmable: {result['mdd_pp']:.1f} pp")
        ax.set_xlabel("true difference (percentage points)")
        ax.set_ylabel("share of experiments confirming it")
        ax.set_ylim(-0.02, 1.02)
        ax.yaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
        ax.grid(True, color="0.88", linewidth=0.6)
        lo, hi = result["fwer_ci"]
        ax.set_title(f"{d['tasks']} paired tasks, {d['comparisons']} comparisons (Holm, "
                     f"alpha {result['alpha']:g}), outcome correlation {d['correlation']:g}\n"
                     f"null family-wise false-positive rate {result['fwer']:.3f} "
                     f"[{lo:.3f}, {hi:.3f}]")
        ax.legend(loc="lower right", frameon=False)
        return fig


def save(fig: Figure, outdir: Path, name: str) -> list[Path]:
    """png and svg with no date and a fixed svg id salt, so reruns are byte-identical."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = [outdir / f"{name}.png", outdir / f"{name}.svg"]
    with mpl.rc_context(RC):
        with atomic.atomic_path(paths[0]) as tmp:
            fig.savefig(tmp, dpi=150, facecolor="white", metadata={"Software": None})
        with atomic.atomic_path(paths[1]) as tmp:
            fig.savefig(tmp, facecolor="white", metadata={"Date": None, "Creator": None})
    return paths


# figures whose intervals and decisions take the analysis settings (seed, bootstrap, alpha)
ANALYSED = frozenset({"calibrator", "acpbench"})


def sweep_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The offline and online rows of the difficulty sweeps' domains (`suite.sweep`), the
    first repeat, settings folded as the tables fold them."""
    from planaudit.analysis.outputs import SWEEP_SUFFIX
    from planaudit.analysis.tables import fold_settings

    rows = fold_settings(main_rows(frame))
    return rows.filter(pl.col("domain").str.ends_with(SWEEP_SUFFIX)) if "domain" in \
        rows.columns else rows.head(0)


def draw_sweep(frame: pl.DataFrame) -> Figure:
    """Success, cost and reasoning tokens against the proven optimal length of the sweeps'
    solvable tasks, one line per configuration (the mean over the tasks of each length);
    classical planners dashed and named, reference models dotted."""
    rows = sweep_rows(frame).filter(COUNTED & pl.col("solvable")
                                    & pl.col("optimal_length").is_not_null())
    if rows.is_empty():
        raise NotDrawable("no solvable task of a difficulty sweep (suite.sweep) was answered")
    has_thought = "reasoning_tokens" in rows.columns and rows["reasoning_tokens"].null_count() \
        < rows.height
    rows = rows.with_columns(
        (pl.col("reasoning_tokens") if "reasoning_tokens" in rows.columns else pl.lit(None))
        .cast(pl.Float64).alias("thought"))
    fig = Figure(figsize=(12, 4.4), layout="constrained")
    axes = fig.subplots(1, 3, sharex=True)
    panels = (("success", "success (solvable tasks)"), ("cost_usd", "mean cost per episode (USD)"),
              ("thought", "mean reasoning tokens"))
    configs = configurations(rows)
    markers = _method_markers(configs)
    for c in configs:
        mine = rows.filter((pl.col("regime") == c.regime) & (pl.col("model") == c.model)
                           & (pl.col("method") == c.method))
        curve = mine.group_by("optimal_length").agg(
            pl.col("success").cast(pl.Float64).mean(), pl.col("cost_usd").mean(),
            pl.col("thought").mean()).sort("optimal_length")
        style = "--" if c.planner else (":" if c.reference else "-")
        for ax, (column, _) in zip(axes, panels, strict=True):
            ax.plot(curve["optimal_length"], curve[column], linestyle=style,
                    marker=markers[c.method], markersize=4, linewidth=1.1, label=c.label)
    for ax, (_, title) in zip(axes, panels, strict=True):
        ax.set_title(title, loc="left")
        ax.set_xlabel("proven optimal plan length")
        ax.grid(True, color="0.88", linewidth=0.6)
    axes[0].set_ylim(-0.04, 1.06)
    axes[1].set_ylim(bottom=0)
    axes[0].yaxis.set_major_formatter(mpl.ticker.PercentFormatter(1.0))
    if not has_thought:
        axes[2].text(0.5, 0.5, "no provider reported reasoning tokens", ha="center",
                     va="center", transform=axes[2].transAxes, style="italic", fontsize=8)
    sweeps = ", ".join(sorted(set(rows["domain"])))
    fig.suptitle(f"Difficulty sweep ({sweeps}): solid LLMs, dashed classical planners, dotted "
                 "reference models", fontsize=9.5)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", frameon=False,
               fontsize=7.5)
    return fig


def draw(name: str, frame: pl.DataFrame, analysis: dict | None = None) -> Figure:
    """One figure by name, from its own regimes' rows (the ACPBench figures from the
    ACPBench rows, every other from the offline and online rows); raises NotDrawable
    when the rows cannot support it."""
    reason = why_not(name, frame)
    if reason:
        raise NotDrawable(reason)
    frame = acpbench_rows(frame) if name in ACPBENCH_FIGURES else main_rows(frame)
    with mpl.rc_context(RC):
        if name in ANALYSED:
            return DRAWERS[name](frame, **(analysis or {}))
        return DRAWERS[name](frame)


def draw_all(frame: pl.DataFrame, outdir: str | Path, notes: list[str] | None = None,
             analysis: dict | None = None, running: set[str] | None = None) -> list[Path]:
    """Every figure of FIGURES as png and svg in `outdir`, and those of ACPBENCH_FIGURES
    when ACPBench is among the `running` regimes (None: when the rows hold ACPBench
    episodes; the workflow names every regime the config runs, so a regime's figures are
    outputs even when it posed no question); returns the files written. A figure the
    rows cannot support is written as a placeholder and its reason appended to `notes`.
    `analysis` (seed, bootstrap, alpha) is what the tables were built with."""
    from planaudit.analysis.tables import first_repeat, fold_settings

    outdir = Path(outdir)
    written = []
    main = main_rows(frame)  # the offline and online rows: ACPBench's are drawn apart
    folded = fold_settings(main)  # configurations as the tables name them (react+standard)
    shown, cut = first_models(folded, MAX_CONFIGS)
    if cut and notes is not None:
        notes.append(f"configurations: {cut}")
    for name in FIGURES:
        # phase_flow bounds its own panels; the calibrator draws reference/responsive only
        rows = main if name in ("phase_flow", "calibrator") else shown
        try:
            fig = draw(name, rows, analysis)
            if cut and rows is shown:
                _stamp(fig, cut)
        except NotDrawable as e:
            if notes is not None:
                notes.append(f"{name}: not drawn ({e})")
            fig = placeholder(name, str(e))
        written += save(fig, outdir, name)
    acp = acpbench_rows(first_repeat(frame))  # one trial a question, as its table
    if ("acpbench" in running) if running is not None else not acp.is_empty():
        acp_shown, acp_cut = first_models(acp, MAX_ACPBENCH_MODELS, by_model=True)
        for name in ACPBENCH_FIGURES:
            try:
                fig = draw(name, acp_shown, analysis)
                if acp_cut:
                    _stamp(fig, acp_cut)
            except NotDrawable as e:  # no question posed, or every one an error
                if notes is not None:
                    notes.append(f"{name}: not drawn ({e})")
                fig = placeholder(name, str(e))
            written += save(fig, outdir, name)
    written += _regime_drawings(frame, outdir, notes, analysis, running)
    if ("sweep" in running) if running is not None else not sweep_rows(frame).is_empty():
        try:
            with mpl.rc_context(RC):
                fig = draw_sweep(frame)
        except NotDrawable as e:
            if notes is not None:
                notes.append(f"sweep: not drawn ({e})")
            fig = placeholder("sweep", str(e))
        written += save(fig, outdir, "sweep")
    return written


def _regime_drawings(frame: pl.DataFrame, outdir: Path, notes: list[str] | None,
                     analysis: dict | None, running: set[str] | None) -> list[Path]:
    """The figures regimes draw themselves (`Regime.drawings`: people's), from every row,
    when the regime is among the `running` ones (None: when the rows hold its episodes)."""
    from planaudit.regime import regimes

    written = []
    for rname, regime in regimes().items():
        if not regime.drawings:
            continue
        has = "regime" in frame.columns and not frame.filter(pl.col("regime") == rname).is_empty()
        if not ((rname in running) if running is not None else has):
            continue
        for name, drawing in regime.drawings.items():
            try:
                if frame.is_empty():
                    raise ValueError("no episode rows")
                with mpl.rc_context(RC):
                    fig = drawing.draw(frame, **(analysis or {}))
            except ValueError as e:
                if notes is not None:
                    notes.append(f"{name}: not drawn ({e})")
                fig = placeholder(name, str(e))
            written += save(fig, outdir, name)
    return written


# A figure draws a bar, a row or a column per configuration (and online_offline a group per
# model), so its size grows with them: 4,200 configurations (100 models x 7 strategies and
# 5 architectures x 7 plan settings) would make figures hundreds of inches long, past what
# Agg can render (2^16 pixels a side) and what anyone can read. Past MAX_CONFIGS the
# figures draw the first models (in the order the rows name them) whose configurations fit,
# and say so on the figure; every configuration stays in the tables.
MAX_CONFIGS = 120
MAX_ACPBENCH_MODELS = 12  # a panel each


def first_models(frame: pl.DataFrame, limit: int, by_model: bool = False
                 ) -> tuple[pl.DataFrame, str]:
    """The rows of the first models whose configurations (models, with `by_model`) number
    at most `limit` (always at least one model), and a sentence saying what was left out;
    the rows themselves and an empty sentence when everything fits."""
    if frame.is_empty():
        return frame, ""
    configs = frame.select("model", "regime", "method").unique(maintain_order=True)
    per_model = configs.group_by("model", maintain_order=True).len()
    total = per_model["len"].sum() if not by_model else per_model.height
    if total <= limit:
        return frame, ""
    counts = [1] * per_model.height if by_model else per_model["len"].to_list()
    kept, running = 0, 0
    for n in counts:
        if kept and running + n > limit:
            break
        kept, running = kept + 1, running + n
    models = per_model["model"][:kept]
    what = "models" if by_model else "configurations"
    shown = running if not by_model else kept
    return (frame.filter(pl.col("model").is_in(models.implode())),
            f"the first {kept:,} of {per_model.height:,} models drawn ({shown:,} of {total:,} "
            f"{what}, at most {limit:,} fit a figure); every one is in the tables")


def _stamp(fig: Figure, text: str) -> None:
    """Say on the figure itself that it shows part of the rows."""
    above = fig.get_suptitle()
    fig.suptitle(f"{above}\n{text}" if above else text, fontsize=8)


# -- phase flow -----------------------------------------------------------------------

FLOW_PHASES = ("read", "reread", "sense", "plan", "replan", "act", "verify", "summary", "end")
# phase -> (face gray, hatch): distinct in grayscale by both
FLOW_STYLE = {"read": ("0.95", ""), "reread": ("0.95", "xx"), "sense": ("0.75", ""),
              "plan": ("0.55", ""), "replan": ("0.55", "xx"), "act": ("0.3", ""),
              "verify": ("0.75", ".."), "summary": ("0.9", "--"), "end": ("0.0", "")}
FLOW_STEPS = 10  # transitions drawn
MAX_PANELS = 24


def _flow_sequences(phases) -> list[str]:
    from planaudit.compliance.phases import decode, runs_named

    seq = decode(runs_named(list(phases or [])))  # rows of before the rename: letters
    head = seq[:FLOW_STEPS + 1]
    return [*head, "end"] if len(seq) <= FLOW_STEPS else head


def _band(ax, x0: float, x1: float, y0: tuple[float, float], y1: tuple[float, float],
          marked: bool) -> None:
    xs = np.linspace(x0, x1, 24)
    s = 0.5 - 0.5 * np.cos(np.pi * (xs - x0) / (x1 - x0))  # smooth from source to target
    lo = y0[0] + (y1[0] - y0[0]) * s
    hi = y0[1] + (y1[1] - y0[1]) * s
    ax.fill_between(xs, lo, hi, facecolor="0.88" if not marked else "1.0",
                    edgecolor="0.15" if marked else "none", hatch="////" if marked else "",
                    linewidth=0.4, zorder=1)


def _flow_panel(ax, sequences: list[list[str]], order: list[str], title: str) -> None:
    n = len(sequences)
    width, gap = 0.22, 0.03
    columns = FLOW_STEPS + 2
    stacks: list[dict[str, tuple[float, float]]] = []
    for t in range(columns):
        counts = {p: sum(1 for s in sequences if len(s) > t and s[t] == p) for p in FLOW_PHASES}
        y, spans = 1.0, {}
        for p in FLOW_PHASES:
            if counts[p]:
                h = counts[p] / n * (1 - gap * 3)
                spans[p] = (y - h, y)
                y -= h + gap
        stacks.append(spans)
        for p, (lo, hi) in spans.items():
            face, hatch = FLOW_STYLE[p]
            ax.add_patch(Rectangle((t - width / 2, lo), width, hi - lo, facecolor=face,
                                               hatch=hatch, edgecolor="0", linewidth=0.6,
                                               zorder=2))
            if hi - lo > 0.06 and p != "end":
                ax.text(t, (lo + hi) / 2, p, ha="center", va="center", fontsize=5,
                        color="1" if float(face) < 0.45 else "0", zorder=3)
    for t in range(columns - 1):
        pairs: dict[tuple[str, str], int] = {}
        for s in sequences:
            if len(s) > t + 1:
                pairs[(s[t], s[t + 1])] = pairs.get((s[t], s[t + 1]), 0) + 1
        out_used = {p: stacks[t][p][1] for p in stacks[t]}
        in_used = {p: stacks[t + 1][p][1] for p in stacks[t + 1]}
        for (a, b), k in sorted(pairs.items(), key=lambda kv: (FLOW_PHASES.index(kv[0][0]),
                                                               FLOW_PHASES.index(kv[0][1]))):
            h = k / n * (1 - gap * 3)
            src = (out_used[a] - h, out_used[a])
            dst = (in_used[b] - h, in_used[b])
            out_used[a] -= h
            in_used[b] -= h
            marked = bool(order) and b not in order and b != "end"
            _band(ax, t + width / 2, t + 1 - width / 2, src, dst, marked)
    ax.set_xlim(-0.5, columns - 0.5)
    ax.set_ylim(-0.02, 1.02)
    ax.set_yticks([])
    ax.set_xticks(range(0, columns, 2))
    ax.set_title(title, fontsize=8)
    ax.spines["left"].set_visible(False)


def draw_phase_flow(frame: pl.DataFrame) -> Figure:
    online = frame.filter((pl.col("regime") == "online") & pl.col("phases").is_not_null())
    if "epoch" in online.columns:
        online = online.filter(pl.col("epoch").fill_null(0) == 0)
    groups = online.partition_by(["model", "method", "plan_setting"], maintain_order=True)
    shown = groups[:MAX_PANELS]
    cols = min(4, len(shown))
    rows = -(-len(shown) // cols)
    fig = Figure(figsize=(3.1 * cols + 0.4, 2.3 * rows + 1.0), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax, g in zip(axes, shown, strict=False):
        ref = " (reference)" if g["reference"][0] else ""
        from planaudit.compliance.phases import order_names

        order = order_names(g["plan_order"][0])
        title = (f"{g['model'][0]}{ref} · {g['method'][0]} · {g['plan_setting'][0]}"
                 + (f"\n[{' '.join(order)}]" if order else ""))
        _flow_panel(ax, [_flow_sequences(p) for p in g["phases"].to_list()], order, title)
    for ax in axes[len(shown):]:
        ax.set_visible(False)
    handles = [Patch(facecolor=FLOW_STYLE[p][0], hatch=FLOW_STYLE[p][1],
                                 edgecolor="0", label=p) for p in FLOW_PHASES]
    handles.append(Patch(facecolor="1.0", hatch="////", edgecolor="0.15",
                                     label="out-of-plan flow"))
    note = (f" (first {MAX_PANELS} of {len(groups)} panels)" if len(groups) > MAX_PANELS else "")
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False,
               title="phase at each step (x: step, y: share of episodes)" + note)
    return fig


DRAWERS["phase_flow"] = draw_phase_flow
