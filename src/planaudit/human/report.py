"""People in the report: a section (rates per arm with intervals, the between-arm tests
under the config's alternative, automation bias, time, workload, the design's power) and
a figure (validity per arm beside the models' success on the same tasks, time on task,
raw NASA-TLX). Both read `human.analysis`, as the tables do."""

from __future__ import annotations

import html
import os
from pathlib import Path

import polars as pl

from planaudit.human import analysis
from planaudit.human.judge import SIMULATED


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, fmt: str = "{:.3g}") -> str:
    return "–" if x is None else fmt.format(x)


def people_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The human regime's rows of a frame of collected rows (none where it has no regime)."""
    return frame.filter(pl.col("regime") == "human") if "regime" in frame.columns else frame.clear()


def model_rows_on(frame: pl.DataFrame, people: pl.DataFrame) -> pl.DataFrame:
    """The offline and online rows on the tasks people planned (same task, same names)."""
    if people.is_empty() or "regime" not in frame.columns:
        return frame.clear()
    tasks = people.select("domain", "task", "disguise").unique()
    return frame.filter(pl.col("regime").is_in(["offline", "online"])).join(
        tasks, on=["domain", "task", "disguise"], how="semi")


def _err(share: float, lo: float, hi: float) -> list[list[float]]:
    """An interval as error bars (a bound a rounding past the share is the share)."""
    return [[max(0.0, share - lo)], [max(0.0, hi - share)]]


def draw(frame: pl.DataFrame, seed: int = 0, bootstrap: int = 2000, alpha: float = 0.05):
    """The people figure (ValueError with the reason when the rows cannot support it)."""
    import numpy as np
    from matplotlib.figure import Figure

    from planaudit.human import stats

    people = people_rows(frame)
    done = analysis.counted(people)
    if done.is_empty():
        raise ValueError("no finished participant in these rows")
    groups = [(f"{a}\n({m if m != SIMULATED else 'simulated'})" if len(
        done["model"].unique()) > 1 else a, g)
        for (_s, m), arms in analysis.studies(done) for a, g in arms]
    models = model_rows_on(frame, people).filter(pl.col("outcome") != "error")
    bars = []  # each model per regime, its methods pooled: how models fare on these tasks
    for (model, regime), g in (models.partition_by(["model", "regime"], maintain_order=True,
                                                   as_dict=True).items() if models.height else []):
        r = stats.rate(int(g["success"].sum()), g.height, alpha)
        tag = " (ref.)" if g["reference"].any() else ""
        bars.append((f"{model}{tag}\n{regime}", r))
    bars = bars[:10]
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [2.2, 1, 1]})
    ax = axes[0]
    x = 0
    ticks, labels = [], []
    for label, g in groups:
        valid = stats.rate(int(g["success"].sum()), g.height, alpha)
        opt = stats.rate(int(g["optimal"].fill_null(False).sum()), g.height, alpha)
        for share, lo, hi, colour, dx in ((valid.share, valid.lo, valid.hi, "#1f4e79", -0.18),
                                          (opt.share, opt.lo, opt.hi, "#9ec5e8", 0.18)):
            ax.bar(x + dx, share or 0, width=0.34, color=colour)
            if lo is not None:
                ax.errorbar(x + dx, share, yerr=_err(share, lo, hi), color="black",
                            capsize=2, lw=0.8)
        ticks.append(x)
        labels.append(f"{label}\nn={g.height}")
        x += 1
    for label, r in bars:
        ax.bar(x, r.share or 0, width=0.5, color="#bbbbbb")
        if r.lo is not None:
            ax.errorbar(x, r.share, yerr=_err(r.share, r.lo, r.hi), color="black",
                        capsize=2, lw=0.8)
        ticks.append(x)
        labels.append(f"{label}\nn={r.n}")
        x += 1
    ax.set_xticks(ticks, labels, rotation=55, ha="right", rotation_mode="anchor", fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of plans")
    ax.set_title("valid (dark) and optimal (light) plans" + ("; models on the same tasks (grey)"
                                                             if bars else ""))
    rng = np.random.default_rng(seed)
    for ax, column, title in ((axes[1], "time_s", "time on task (s)"),
                              (axes[2], "tlx_raw", "raw NASA-TLX (0-100)")):
        for i, (_label, g) in enumerate(groups):
            vals = g[column].drop_nulls().to_numpy()
            ax.scatter(i + rng.uniform(-0.15, 0.15, len(vals)), vals, s=9, alpha=0.7,
                       color="#1f4e79")
            if len(vals):
                ax.hlines(np.median(vals), i - 0.3, i + 0.3, color="black", lw=1.2)
        ax.set_xticks(range(len(groups)), [g[0] for g in groups], rotation=30, ha="right",
                      fontsize=7)
        ax.set_title(title)
        if column == "tlx_raw":
            ax.set_ylim(0, 100)
        else:
            ax.set_ylim(bottom=0)
    if (people["simulated"].fill_null(False)).any():
        fig.suptitle("SIMULATED participants (scripted, not people)", fontsize=9,
                     color="#a00000", weight="bold")
    return fig


def assistant_text(r: dict, level: str) -> str:
    """An assistant arm's use and automation bias in words ("" on another arm): a rate of
    accepted wrong proposals means little without how many saw one, so both are said."""
    if r.get("assistant_turns_mean") is None:
        return ""
    usd = r["assistant_usd_mean"]
    said = (f"; with the assistant, per participant {r['assistant_turns_mean']:.3g} turns, "
            f"{r['assistant_tokens_mean']:,.0f} tokens, "
            + ("unpriced" if usd is None else f"${usd:.4f}"))
    if r["wrong_proposal_shown"]:
        said += (f"; shown a wrong proposal {r['wrong_proposal_shown']}, submitted one "
                 f"{r['accepted_wrong']} ({_pct(r['accepted_wrong_share'])}, {level} "
                 f"{_pct(r['accepted_wrong_lo'])}–{_pct(r['accepted_wrong_hi'])})")
    return said


def _presentation(people: pl.DataFrame, config: dict) -> str:
    """Whether this run's models saw the tasks as these people did (the same names): if
    not, the pairing is refused here, naming both, since a rate on plain names and one on
    obfuscated names measure different tasks."""
    from planaudit.suite.catalog import presentation

    if "presentation" not in people.columns:
        return ""
    suite = config.get("suite") or {}
    differ = []
    for domain, shown in people.select("domain", "presentation").unique().sort(
            "domain").iter_rows():
        if shown is None or shown == "PlanBench's words":
            continue
        ran = presentation(suite, domain)
        if ran != shown:
            differ.append(f"on {domain} people saw {shown}, this run's models {ran}")
    if not differ:
        return ""
    return ('<p class="note" id="presentation-refused"><b>Not comparable with this run\'s '
            "models:</b> " + html.escape("; ".join(differ)) + ". Their rows in the main and "
            "same-tasks tables are not set beside these people's here; run the models under "
            "the study's experiment config (with its suite section) to compare them.</p>")


def section(frame: pl.DataFrame, config: dict, tables: Path, figures: Path, out: Path) -> str:
    """The report's section on people (empty when the rows hold none)."""
    people = people_rows(frame)
    if people.is_empty():
        return ""
    settings = config.get("study") or {}
    alts = analysis.alternatives_of(settings)
    by_label = {"valid": alts["valid"], **{label: alts[c] for c, label in
                                          analysis.MEASURES.items()}}
    power_cfg = settings.get("power") or {}
    rates = tuple(power_cfg.get("rates") or (0.74, 0.82))
    target = float(power_cfg.get("power", 0.8))
    alpha = float((config.get("analysis") or {}).get("alpha", 0.05))
    e = html.escape
    parts = ['<h2 id="people">People</h2>']
    if people["simulated"].fill_null(False).any():
        parts.append('<p class="note"><b>Simulated participants.</b> Rows of the model '
                     f'<i>{e(SIMULATED)}</i> come from <code>planaudit study simulate</code>: '
                     "scripted browsers, not people. Their numbers test the pipeline and say "
                     "nothing about how people plan.</p>")
    table = analysis.human_table(people, alpha)
    instances = analysis.instances_table(people, alpha)
    from planaudit.human.flow import flow_table
    from planaudit.human.integrity import RULE, sensitivity_table

    flow = {(r["study"], r["model"], r["arm"]): r for r in flow_table(people, alpha).to_dicts()}
    tests = analysis.tests_table(people, alpha,
                                 alternatives=tuple(dict.fromkeys(("two-sided", *alts.values()))))
    level = analysis.ci_label(alpha)
    for (study, model), _arms in analysis.studies(people):
        mine = table.filter((pl.col("study") == study) & (pl.col("model") == model))
        lines = []
        for r in mine.iter_rows(named=True):
            line = (f"<li><b>{e(r['arm'])}</b>: {r['finished']} finished of {r['enrolled']}; "
                    f"{r['valid']} valid ({_pct(r['valid_share'])}, {level} "
                    f"{_pct(r['valid_lo'])}–{_pct(r['valid_hi'])}), {r['optimal']} of them "
                    f"optimal ({_pct(r['optimal_of_valid'])}); median time "
                    f"{_num(r['time_median_s'], '{:.3g}')} s; raw TLX "
                    f"{_num(r['tlx_raw_mean'], '{:.1f}')}; phase-1 text readable "
                    f"{r['text_readable']}, valid {r['text_valid']}, same plan as phase 2 "
                    f"{r['text_agrees']}")
            f = flow.get((study, model, r["arm"]))
            if f is not None:
                line += (f"; entered {f['entered']}, consented {f['consented']}, excluded "
                         f"{f['excluded']}" + (f" ({e(f['excluded_reasons'])})"
                                               if f["excluded_reasons"] else "")
                         + f"; by intention to treat {f['valid_itt']}/{f['itt_n']} valid "
                         f"({_pct(f['itt_share'])}, {level} {_pct(f['itt_lo'])}–"
                         f"{_pct(f['itt_hi'])})")
            if r["wrong_suggestion_shown"]:
                line += (f"; shown a wrong suggestion {r['wrong_suggestion_shown']}, called it "
                         f"correct {r['called_wrong_correct']} ({_pct(r['called_share'])}), "
                         f"submitted it verbatim {r['wrong_verbatim']}")
            line += assistant_text(r, level)
            lines.append(line + ".</li>")
        mine_rows = people.filter((pl.col("study") == study) & (pl.col("model") == model))
        pickers = sorted({str(v) for v in mine_rows["picker"].drop_nulls()}
                         if "picker" in mine_rows.columns else set())
        named = {"objects": "each action, then its objects", "list": "the full list of "
                 "grounded actions (the paper's)"}
        how = (f"<p>Phase 2's picker: {e('; '.join(named.get(x, x) for x in pickers))}.</p>"
               if pickers else "")
        told = sorted({str(v) for v in mine_rows["instructions"].fill_null("")}
                      if "instructions" in mine_rows.columns else set())
        if told:
            how += ("<p>Told beyond the task: " + e(" | ".join(x or "nothing (as in the "
                                                               "PlanBench paper)" for x in told))
                    + ".</p>")
        how += _presentation(mine_rows, config)
        parts.append(f"<h3>Study {e(study)}: {e(model)}</h3>{how}<ul>{''.join(lines)}</ul>")
        per = instances.filter((pl.col("study") == study) & (pl.col("model") == model))
        said = {True: " (its suggestion valid)", False: " (its suggestion invalid)", None: ""}
        items = [f"<li>{e(inst)}: " + "; ".join(
            f"{e(r['arm'])}{said[r['suggestion_valid']]} {r['valid']}/{r['finished']} valid "
            f"({_pct(r['valid_share'])}, {level} {_pct(r['valid_lo'])}–{_pct(r['valid_hi'])})"
            for r in g.iter_rows(named=True)) + "</li>"
            for (inst,), g in per.partition_by("instance", maintain_order=True,
                                               as_dict=True).items()]
        if items:
            parts.append(f"<p>Per instance (the rates above pool them):</p><ul id=\"per-instance\">"
                         f"{''.join(items)}</ul>")
        sens = sensitivity_table(people, alpha).filter(
            (pl.col("study") == study) & (pl.col("model") == model))
        if sens.height and sens["with_signal"].sum() + (sens["analysed"] - sens["unrecorded"]).sum():
            items = [f"<li>{e(r['arm'])}: all {r['valid']}/{r['analysed']} valid "
                     f"({_pct(r['share'])}, {level} {_pct(r['lo'])}–{_pct(r['hi'])}); with no "
                     f"signal {r['clean_valid']}/{r['clean']} ({_pct(r['clean_share'])}, "
                     f"{level} {_pct(r['clean_lo'])}–{_pct(r['clean_hi'])}); "
                     f"{r['with_signal']} with a signal, {r['unrecorded']} with nothing "
                     f"recorded</li>" for r in sens.iter_rows(named=True)]
            parts.append(f"<p>Integrity (sensitivity; nobody excluded for it). A signal is "
                         f"{e(RULE)}.</p><ul id=\"sensitivity\">{''.join(items)}</ul>")
        mine_tests = tests.filter((pl.col("study") == study) & (pl.col("model") == model))
        if mine_tests.height:
            said = []
            for t in mine_tests.iter_rows(named=True):
                if t["alternative"] != by_label[t["measure"]] and not (
                        t["alternative"] == "two-sided" and t["test"] == "Fisher exact"):
                    continue
                said.append(f"<li>{e(t['measure'])}, {e(t['second'])} against {e(t['first'])}: "
                            f"{e(t['test'])} ({e(t['alternative'])}) statistic "
                            f"{_num(t['statistic'])}, p = {_num(t['p'])}; {e(t['effect'])} "
                            f"{_num(t['effect_value'])} [{_num(t['effect_lo'])}, "
                            f"{_num(t['effect_hi'])}]</li>")
            chosen = ", ".join(f"{e(m)} <code>{e(a)}</code>" for m, a in alts.items())
            parts.append(f"<p>Between arms (each measure under its configured alternative: "
                         f"{chosen}; “less”: the first arm's value is the smaller; every "
                         f"alternative is in the human_tests table; effects with their "
                         f"{level}):</p><ul>{''.join(said)}</ul>")
    pw = analysis.power(people, rates, target, alpha, alts["valid"])
    need = pw["needed"]
    reached = "; ".join(
        f"{e(r['study'])} ({e(r['model'])}), {r['n_first']} and {r['n_second']} finished: "
        f"power {_pct(r.get('exact_fisher'))} (Fisher, exact), {_pct(r.get('normal'))} "
        "(normal approximation)" for r in pw["reached"])
    parts.append(f"<p>Power: to tell {_pct(rates[0])} from {_pct(rates[1])} valid with "
                 f"{_pct(target)} power at α = {alpha:g} ({e(alts['valid'])}) takes "
                 f"{need.get('exact_fisher')} participants per arm with Fisher's exact test "
                 f"(the smallest size from which its exact power stays at the target over "
                 f"the next {need.get('exact_fisher_window')} sizes) "
                 f"({need.get('normal')} by the normal approximation)."
                 + (f" Reached: {reached}." if reached else "") + "</p>")
    from planaudit.regime import get

    caption = get("human").drawings["human"].caption  # the one caption (human/regime.py)
    png = figures / "human.png"
    if png.is_file():
        src = Path(os.path.relpath(png, out.parent)).as_posix()
        parts.append(f'<figure id="figure-human"><img src="{e(src)}" alt="people: {e(caption)}">'
                     f"<figcaption><b>People.</b> {e(caption)}</figcaption></figure>")
    return "\n".join(parts)
