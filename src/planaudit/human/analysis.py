"""The study's statistics from people's rows: per arm, valid and optimal rates with
intervals, time on task, workload and automation bias (the `human` table); between arms,
the first arm against each other one on validity (Fisher's exact test, Boschloo's
unconditional test, the difference with Newcombe's interval), time on task and raw
NASA-TLX (Welch's t, Student's t as the paper reported it, Mann–Whitney U, Hedges' g and
the rank-biserial correlation with intervals) under every alternative (the `human_tests`
table); and the power of the design. The numbers come from `human.stats` (scipy and
statsmodels); `planaudit study analyze`, the tables, the report's section and the figure
all read them from here, so they never disagree.

Only finished participants count (outcome `error` is someone who stopped), as the paper
counted its 50, 23 and 22. Simulated participants are a model of their own
(`simulated participants (scripted, not people)`) and never pool with people."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from planaudit.human import stats

ALTERNATIVES = ("two-sided", "less", "greater")
MEASURES = {"time_s": "time on task (s)", "tlx_raw": "raw NASA-TLX",
            **{f"tlx_{s}": f"NASA-TLX {s}" for s in ("mental", "physical", "temporal",
                                                     "performance", "effort", "frustration")}}
# every measure a study's tests compare, by the name its alternative is configured under
# (`study.alternatives`): validity, then the row columns of MEASURES
MEASURE_KEYS = ("valid", *MEASURES)

GROUP = ["study", "model", "method"]

HUMAN = {"study": pl.String, "model": pl.String, "arm": pl.String, "enrolled": pl.Int64,
         "finished": pl.Int64, "valid": pl.Int64, "valid_share": pl.Float64,
         "valid_lo": pl.Float64, "valid_hi": pl.Float64, "optimal": pl.Int64,
         "optimal_of_valid": pl.Float64, "optimal_lo": pl.Float64, "optimal_hi": pl.Float64,
         "text_readable": pl.Int64, "text_valid": pl.Int64, "text_agrees": pl.Int64,
         "time_median_s": pl.Float64, "time_mean_s": pl.Float64, "tlx_raw_mean": pl.Float64,
         "tlx_raw_sd": pl.Float64, "wrong_suggestion_shown": pl.Int64,
         "called_wrong_correct": pl.Int64, "called_share": pl.Float64, "called_lo": pl.Float64,
         "called_hi": pl.Float64, "wrong_verbatim": pl.Int64,
         # a live assistant's arm (issue 49; null on other arms): its use per participant,
         # and automation bias as the share of those shown a wrong proposal who submitted it
         "assistant_turns_mean": pl.Float64, "assistant_tokens_mean": pl.Float64,
         "assistant_usd_mean": pl.Float64, "wrong_proposal_shown": pl.Int64,
         "accepted_wrong": pl.Int64, "accepted_wrong_share": pl.Float64,
         "accepted_wrong_lo": pl.Float64, "accepted_wrong_hi": pl.Float64}
TESTS = {"study": pl.String, "model": pl.String, "first": pl.String, "second": pl.String,
         "measure": pl.String, "test": pl.String, "alternative": pl.String,
         "n_first": pl.Int64, "n_second": pl.Int64, "first_value": pl.Float64,
         "second_value": pl.Float64, "statistic": pl.Float64, "p": pl.Float64,
         "effect": pl.String, "effect_value": pl.Float64, "effect_lo": pl.Float64,
         "effect_hi": pl.Float64}


INSTANCES = {"study": pl.String, "model": pl.String, "arm": pl.String, "instance": pl.String,
             "suggestion_valid": pl.Boolean, "finished": pl.Int64, "valid": pl.Int64,
             "valid_share": pl.Float64, "valid_lo": pl.Float64, "valid_hi": pl.Float64}


def instances_table(rows: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per study, arm and instance: the finished participants' valid plans with a Wilson
    interval, and whether the suggestion that arm showed on that instance was valid (null:
    no suggestion). A pooled rate mixes instances whose suggestions differ in validity; this
    is the table that lets a reader see each."""
    out = []
    for (study, model), arms in studies(rows):
        for arm, g in arms:
            for (domain, task), one in g.partition_by(["domain", "task"], maintain_order=True,
                                                     as_dict=True).items():
                done = counted(one)
                r = stats.rate(right(done), done.height, alpha)
                shown = [v for v in _flags(one, "suggestion_valid") if v is not None]
                out.append({"study": study, "model": model, "arm": arm,
                            "instance": f"{domain}/{task}",
                            "suggestion_valid": shown[0] if shown else None,
                            "finished": done.height, "valid": r.hits, "valid_share": r.share,
                            "valid_lo": r.lo, "valid_hi": r.hi})
    return pl.DataFrame(out, schema=INSTANCES).sort("study", "model", "instance",
                                                    maintain_order=True)


def alternatives_of(settings: dict) -> dict[str, str]:
    """Each measure's alternative: `study.alternatives[measure]`, else `study.alternative`
    (one direction for every measure, as before the measures had their own), else
    two-sided. The paper's hypotheses need them apart: the assisted arm's validity
    greater, its time less."""
    every = settings.get("alternative", "two-sided")
    own = settings.get("alternatives") or {}
    unknown = sorted(set(own) - set(MEASURE_KEYS))
    if unknown:
        raise ValueError(f"study.alternatives: no measure {', '.join(unknown)} (have: "
                         f"{', '.join(MEASURE_KEYS)})")
    return {m: own.get(m, every) for m in MEASURE_KEYS}


def ci_label(alpha: float) -> str:
    """An interval's label by its level (`95% CI` at alpha 0.05, `90% CI` at 0.1)."""
    return f"{100 * (1 - alpha):.4g}% CI"


def right_flags(rows: pl.DataFrame) -> list[bool]:
    """Each person's answer right as a model's is scored (`analysis.rows.SCORE`): a valid
    plan, or "cannot be done" said of a task that cannot be done."""
    detected = rows["detected"].fill_null(False) if "detected" in rows.columns else None
    ok = rows["success"].fill_null(False)
    return (ok | detected).to_list() if detected is not None else ok.to_list()


def right(rows: pl.DataFrame) -> int:
    return sum(right_flags(rows))


def counted(rows: pl.DataFrame) -> pl.DataFrame:
    """The finished participants (their plans judged), those on the exclusion list left
    out (the flow table counts them: `human/flow.py`)."""
    kept = rows.filter(pl.col("outcome") != "error")
    return kept.filter(pl.col("excluded").is_null()) if "excluded" in kept.columns else kept


def consented(rows: pl.DataFrame) -> pl.DataFrame:
    """Everyone who consented (rows of people who entered and never did carry only that)."""
    return rows.filter(pl.col("consented").fill_null(True)) if "consented" in rows.columns \
        else rows


def _values(frame: pl.DataFrame, column: str) -> list[float]:
    return [float(v) for v in frame[column].drop_nulls().to_list()]


def _flags(frame: pl.DataFrame, column: str) -> list[bool | None]:
    return frame[column].to_list() if column in frame.columns else [None] * frame.height


def studies(rows: pl.DataFrame) -> Iterator[tuple[tuple[str, str], list[tuple[str, pl.DataFrame]]]]:
    """(study, model) -> its arms in the study config's order (the first is the baseline
    of the tests), whatever order the rows come in."""
    if rows.is_empty():
        return
    for (study, model), g in rows.partition_by(["study", "model"], maintain_order=True,
                                               as_dict=True).items():
        order = g.group_by("method").agg(pl.col("arm_index").min()).sort(
            "arm_index", "method", nulls_last=True)  # the study config's order
        arms = order["method"].to_list()
        yield (study, model), [(a, g.filter(pl.col("method") == a)) for a in arms]


def assisted(rows: pl.DataFrame) -> bool:
    """Whether these rows are an arm with a live assistant (its columns are set)."""
    return "assistant_turns" in rows.columns and rows["assistant_turns"].drop_nulls().len() > 0


def suggesting(rows: pl.DataFrame) -> bool:
    """Whether these rows are an arm that showed a static suggestion."""
    return "suggested" in rows.columns and bool(rows["suggested"].fill_null(False).any())


def assistance(done: pl.DataFrame, alpha: float = 0.05) -> dict:
    """An assistant arm's use per finished participant (turns, tokens, dollars: the mean;
    dollars null when any conversation was unpriced) and its automation bias: of those
    shown at least one proposal that was wrong when made, how many submitted a wrong one,
    with a Wilson interval (`stats.rate`). All null on an arm without an assistant."""
    if not assisted(done):
        return {k: None for k in ("assistant_turns_mean", "assistant_tokens_mean",
                                  "assistant_usd_mean", "wrong_proposal_shown",
                                  "accepted_wrong", "accepted_wrong_share",
                                  "accepted_wrong_lo", "accepted_wrong_hi")}
    turns = _values(done, "assistant_turns")
    tokens = [float(a or 0) + float(b or 0) for a, b in zip(
        done["assistant_input_tokens"].to_list(), done["assistant_output_tokens"].to_list(),
        strict=True)]
    usd = done["assistant_cost_usd"].to_list()
    shown = done.filter((pl.col("assistant_wrong_proposals").fill_null(0) > 0)
                        & pl.col("accepted_wrong_proposal").is_not_null())
    r = stats.rate(int(shown["accepted_wrong_proposal"].sum()), shown.height, alpha)
    return {"assistant_turns_mean": sum(turns) / len(turns) if turns else None,
            "assistant_tokens_mean": sum(tokens) / len(tokens) if tokens else None,
            "assistant_usd_mean": (None if not usd or any(u is None for u in usd)
                                   else sum(usd) / len(usd)),
            "wrong_proposal_shown": shown.height, "accepted_wrong": r.hits,
            "accepted_wrong_share": r.share, "accepted_wrong_lo": r.lo,
            "accepted_wrong_hi": r.hi}


def human_table(rows: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    out = []
    for (study, model), arms in studies(rows):
        for arm, g in arms:
            done = counted(g)
            valid = right(done)
            optimal = int(done["optimal"].fill_null(False).sum())
            r_valid = stats.rate(valid, done.height, alpha)
            r_opt = stats.rate(optimal, valid, alpha)
            bias = stats.automation_bias(_flags(done, "suggestion_called_correct"),
                                         _flags(done, "suggestion_valid"),
                                         _flags(done, "suggestion_verbatim"),
                                         right_flags(done))
            tlx = _values(done, "tlx_raw")
            times = _values(done, "time_s")
            out.append({
                "study": study, "model": model, "arm": arm, "enrolled": consented(g).height,
                "finished": done.height, "valid": valid, "valid_share": r_valid.share,
                "valid_lo": r_valid.lo, "valid_hi": r_valid.hi, "optimal": optimal,
                "optimal_of_valid": r_opt.share, "optimal_lo": r_opt.lo, "optimal_hi": r_opt.hi,
                "text_readable": int((done["text_outcome"] != "malformed").sum()),
                "text_valid": int((done["text_outcome"] == "success").sum()),
                "text_agrees": int(done["text_agrees"].fill_null(False).sum()),
                "time_median_s": float(pl.Series(times).median()) if times else None,
                "time_mean_s": sum(times) / len(times) if times else None,
                "tlx_raw_mean": sum(tlx) / len(tlx) if tlx else None,
                "tlx_raw_sd": float(pl.Series(tlx).std()) if len(tlx) > 1 else None,
                "wrong_suggestion_shown": bias["n_wrong_shown"],
                "called_wrong_correct": bias["n_called_correct"],
                "called_share": bias["called_correct"].share,
                "called_lo": bias["called_correct"].lo, "called_hi": bias["called_correct"].hi,
                "wrong_verbatim": bias["n_verbatim"], **assistance(done, alpha)})
    return pl.DataFrame(out, schema=HUMAN)


def pairs(arms: list[tuple[str, pl.DataFrame]]) -> list[tuple[int, int]]:
    """The arms compared, as indices: the first against each other one, then each
    assistant arm against each static-suggestion arm (a person with a model to talk to
    beside a person shown one plan), where that pair is not already the first's."""
    out = [(0, j) for j in range(1, len(arms))]
    for i, (_, a) in enumerate(arms):
        for j, (_, b) in enumerate(arms):
            if i and i != j and suggesting(a) and assisted(b) and (i, j) not in out:
                out.append((i, j))
    return out


def tests_table(rows: pl.DataFrame, alpha: float = 0.05, seed: int = 0,
                n_resamples: int = 2000, alternatives=ALTERNATIVES) -> pl.DataFrame:
    """The first arm of each study against each other arm, and an assistant arm against a
    static-suggestion arm (`pairs`), every measure and alternative ("less": the first
    arm's value is the smaller; for validity, its rate)."""
    out = []
    for (study, model), arms in studies(rows):
        if len(arms) < 2:
            continue
        for i, j in pairs(arms):
            first, a = arms[i][0], counted(arms[i][1])
            second, b = arms[j][0], counted(arms[j][1])
            base = {"study": study, "model": model, "first": first, "second": second}
            h1, h2 = right(a), right(b)
            for alt in alternatives:
                c = stats.compare_rates(h1, a.height, h2, b.height, alt, alpha)
                shares = {"n_first": a.height, "n_second": b.height,
                          "first_value": h1 / a.height if a.height else None,
                          "second_value": h2 / b.height if b.height else None}
                diff = {"effect": "difference (second - first)",
                        "effect_value": c["difference"], "effect_lo": c["difference_lo"],
                        "effect_hi": c["difference_hi"]}
                out.append({**base, "measure": "valid", "test": "Fisher exact",
                            "alternative": alt, **shares, "statistic": c["fisher_odds_ratio"],
                            "p": c["fisher_p"], **diff})
                out.append({**base, "measure": "valid", "test": "Boschloo exact",
                            "alternative": alt, **shares, "statistic": None,
                            "p": c["boschloo_p"], **diff})
            for column, label in MEASURES.items():
                x, y = _values(a, column), _values(b, column)
                for alt in alternatives:
                    m = stats.compare_means(x, y, alt, alpha, seed, n_resamples)
                    means = {"n_first": len(x), "n_second": len(y), "first_value": m["mean_x"],
                             "second_value": m["mean_y"]}
                    g_eff = {"effect": "Hedges g (first - second)", "effect_value": m["hedges_g"],
                             "effect_lo": m["g_lo"], "effect_hi": m["g_hi"]}
                    out.append({**base, "measure": label, "test": "Welch t", "alternative": alt,
                                **means, "statistic": m["welch_t"], "p": m["welch_p"], **g_eff})
                    out.append({**base, "measure": label, "test": "Student t",
                                "alternative": alt, **means, "statistic": m["student_t"],
                                "p": m["student_p"], **g_eff})
                    out.append({**base, "measure": label, "test": "Mann-Whitney U",
                                "alternative": alt, **means, "statistic": m["mannwhitney_u"],
                                "p": m["mannwhitney_p"], "effect": "rank-biserial",
                                "effect_value": m["rank_biserial"], "effect_lo": m["rb_lo"],
                                "effect_hi": m["rb_hi"]})
    return pl.DataFrame(out, schema=TESTS)


def power(rows: pl.DataFrame, rates: tuple[float, float] = (0.74, 0.82), target: float = 0.8,
          alpha: float = 0.05, alternative: str = "two-sided") -> dict:
    """The participants per arm the design needs for `rates` at `target` power, and the
    power each study's first two arms reached with the people they have, both under
    validity's `alternative` (the one its test is read under)."""
    need = stats.sample_size(rates[0], rates[1], target, alpha, alternative)  # of validity
    reached = []
    for (study, model), arms in studies(rows):
        if len(arms) < 2:
            continue
        n1, n2 = counted(arms[0][1]).height, counted(arms[1][1]).height
        if n1 and n2:
            reached.append({"study": study, "model": model, "first": arms[0][0],
                            "second": arms[1][0], "n_first": n1, "n_second": n2,
                            **stats.achieved_power(n1, n2, rates[0], rates[1], alpha,
                                                   alternative)})
    return {"rates": list(rates), "power": target, "alpha": alpha, "alternative": alternative,
            "needed": need, "reached": reached}
