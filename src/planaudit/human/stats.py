"""The statistics of the studies with people: rates, two-arm comparisons, power, automation bias.

Pure functions: numbers in, a `Rate` or a dict out; no I/O, no data frames. Every number a
library computes comes from that library (scipy 1.17, statsmodels 0.15), called as its
documentation says; what no library offers is hand-written here and says so in its docstring
(only the exact power of Fisher's test and the search on it, and the alignment of lists in
`automation_bias`).

Conventions, shared by every function:

- Two arms are always "first" and "second" (`h1/n1` against `h2/n2`, `x` against `y`).
  `alternative` is scipy's word and speaks of the first arm: "less" means the first arm has
  the lower success rate (or the lower mean), "greater" the higher one. In the paper's
  human-in-the-loop study, with the unassisted group first, "the assisted group plans
  better" is "less" for the rates and "the assisted group takes less time" is "greater" for
  the times (or "less" with the assisted group first).
- `alpha` is the level of every test and the complement of every interval's coverage.
- A statistic that cannot be computed (an empty arm, a sample of one, no spread) is None,
  never an exception and never NaN. Malformed input (hits above n, negative counts, NaN
  values, lists of different lengths) raises ValueError.

Sign conventions differ on purpose, each stated where it applies: `compare_rates` reports
the difference second minus first (how much the second arm gains), the odds ratio first over
second (as scipy's Fisher statistic); `compare_means` reports mean(x) - mean(y), and Hedges'
g and the rank-biserial correlation in the same direction (positive: x larger).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALTERNATIVES = ("two-sided", "less", "greater")

# the sizes past n over which exact power must stay at the target for n to be the design's
# size (`sample_size`): exact power saw-tooths, and a size that reaches the target once may
# fall below it at n + 1
STAYS = 20
# scipy's names for the alternative against statsmodels' (power and sample size)
_STATSMODELS_ALTERNATIVE = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}

# Relative tolerance within which two hypergeometric probabilities count as equal in the
# two-sided Fisher p-value (scipy uses 1e-14 on its own pmf; the log-factorial pmf here is
# exact to ~1e-12, so 1e-9 keeps true ties tied and nothing else), and within which a
# p-value counts as equal to alpha (p <= alpha rejects).
_TIE = 1e-9

# The outcome probability `fisher_power` may leave out (whole column totals that almost
# never happen), so its power is exact to this much, from below.
_NEGLIGIBLE = 1e-14


@dataclass(frozen=True)
class Rate:
    """A share with its interval: `hits` of `n`, `share` = hits / n, [`lo`, `hi`] the
    two-sided 1 - alpha interval by `method` (statsmodels' proportion_confint name).
    share, lo and hi are None when n is 0."""

    hits: int
    n: int
    share: float | None
    lo: float | None
    hi: float | None
    method: str


def rate(hits: int, n: int, alpha: float = 0.05, method: str = "wilson") -> Rate:
    """`hits` of `n` with statsmodels' proportion_confint interval (Wilson by default; any
    of its methods: "beta" is Clopper-Pearson, "jeffreys", "agresti_coull", ...)."""
    from statsmodels.stats.proportion import proportion_confint

    hits, n = _count(hits, n)
    _check_alpha(alpha)
    if n == 0:
        return Rate(hits, n, None, None, None, method)
    lo, hi = proportion_confint(hits, n, alpha=alpha, method=method)
    return Rate(hits, n, hits / n, _num(lo), _num(hi), method)


def compare_rates(h1: int, n1: int, h2: int, n2: int, alternative: str = "two-sided",
                  alpha: float = 0.05) -> dict:
    """Two independent success rates, `h1` of `n1` (first arm) against `h2` of `n2`.

    - fisher_p, fisher_odds_ratio: scipy.stats.fisher_exact on [[h1, n1-h1], [h2, n2-h2]]
      with `alternative` ("less": the first arm's rate is lower). The odds ratio is scipy's
      sample odds ratio, first arm's odds over the second's (0 or inf with an empty cell;
      None when both arms are all successes or all failures).
    - boschloo_p: scipy.stats.boschloo_exact, same alternative. scipy's Boschloo takes the
      arms as COLUMNS, so it is given the transposed table [[h1, h2], [n1-h1, n2-h2]], whose
      "less" is again "the first arm's rate is lower". Its two-sided p is twice the smaller
      one-sided p (scipy's convention), not Fisher's.
    - difference = h2/n2 - h1/n1 (SECOND minus first: positive when the second arm does
      better), difference_lo/hi: Newcombe's hybrid score interval (statsmodels
      confint_proportions_2indep(h2, n2, h1, n1, compare="diff", method="newcomb")).
    - odds_ratio_lo/hi: statsmodels confint_proportions_2indep(h1, n1, h2, n2,
      compare="odds-ratio", method="logit-adjusted"), Gart's logit interval with 0.5 added
      to every cell, for the same first-over-second odds ratio; the adjustment keeps it
      defined when a cell is empty (the score and plain logit intervals divide by zero).
    - share1, share2, h1, n1, h2, n2.

    Every interval is two-sided at 1 - alpha, whatever `alternative` (the libraries offer
    no one-sided version). An arm with n = 0 gives None for every statistic.
    """
    h1, n1 = _count(h1, n1)
    h2, n2 = _count(h2, n2)
    _check_alternative(alternative)
    _check_alpha(alpha)
    out: dict = {"h1": h1, "n1": n1, "h2": h2, "n2": n2,
                 "share1": h1 / n1 if n1 else None, "share2": h2 / n2 if n2 else None,
                 "fisher_p": None, "fisher_odds_ratio": None, "boschloo_p": None,
                 "difference": None, "difference_lo": None, "difference_hi": None,
                 "odds_ratio_lo": None, "odds_ratio_hi": None}
    if n1 == 0 or n2 == 0:
        return out
    from scipy.stats import boschloo_exact, fisher_exact
    from statsmodels.stats.proportion import confint_proportions_2indep

    table = np.array([[h1, n1 - h1], [h2, n2 - h2]])
    fisher = fisher_exact(table, alternative=alternative)
    boschloo = boschloo_exact(table.T, alternative=alternative)
    diff_lo, diff_hi = confint_proportions_2indep(h2, n2, h1, n1, compare="diff",
                                                  method="newcomb", alpha=alpha)
    or_lo, or_hi = confint_proportions_2indep(h1, n1, h2, n2, compare="odds-ratio",
                                              method="logit-adjusted", alpha=alpha)
    out.update(fisher_p=_num(fisher.pvalue), fisher_odds_ratio=_num(fisher.statistic),
               boschloo_p=_num(boschloo.pvalue), difference=h2 / n2 - h1 / n1,
               difference_lo=_num(diff_lo), difference_hi=_num(diff_hi),
               odds_ratio_lo=_num(or_lo), odds_ratio_hi=_num(or_hi))
    return out


def compare_means(x: Sequence[float | None], y: Sequence[float | None],
                  alternative: str = "two-sided", alpha: float = 0.05, seed: int = 0,
                  n_resamples: int = 2000) -> dict:
    """Two independent samples (times, NASA-TLX scores): `x` the first arm, `y` the second.

    None entries are skipped (a missing answer); NaN or infinite values raise ValueError.
    `alternative` speaks of x: "less" means x tends to be smaller.

    - welch_t, welch_df, welch_p: scipy.stats.ttest_ind(x, y, equal_var=False, alternative).
    - mean_difference = mean(x) - mean(y); difference_lo/hi: that Welch result's
      confidence_interval(1 - alpha). For a one-sided alternative scipy returns the
      one-sided interval, kept as is: "less" gives (-inf, hi], "greater" [lo, inf).
    - student_t, student_p: the same with equal_var=True (the paper reported plain
      independent-samples t-tests; compare with these).
    - hedges_g: statsmodels.stats.meta_analysis.effectsize_smd (pooled SD, bias factor
      J = 1 - 3 / (4 (n_x + n_y) - 9)), positive when x is larger. g_lo/g_hi: the
      noncentral-t interval (Hedges & Olkin; Steiger & Fouladi): the noncentrality bounds
      for the Student t statistic from scipy.special.nctdtrinc (scipy's inverse of the
      noncentral t CDF in its noncentrality), times sqrt(1/n_x + 1/n_y) and J. It follows
      `alternative` like the Welch interval (one bound infinite when one-sided).
    - mannwhitney_u, mannwhitney_p: scipy.stats.mannwhitneyu(x, y, alternative) (U of x).
    - rank_biserial = 2 U / (n_x n_y) - 1 = P(x > y) - P(x < y) (ties count half),
      positive when x is larger; rb_lo/rb_hi: scipy.stats.bootstrap percentile interval
      resampling each arm independently, generator numpy.random.default_rng(seed),
      `n_resamples` resamples, same `alternative` (one bound infinite when one-sided).
    - n_x, n_y, mean_x, mean_y, sd_x, sd_y (sample SD, ddof 1).

    A sample with fewer than 2 values gives None for every test, effect and interval
    (its mean, if any, is still given); so does zero spread in both samples for the
    t-tests and g (scipy would divide by zero).
    """
    xs = _values(x, "x")
    ys = _values(y, "y")
    _check_alternative(alternative)
    _check_alpha(alpha)
    nx, ny = xs.size, ys.size
    sd_x = float(np.std(xs, ddof=1)) if nx >= 2 else None
    sd_y = float(np.std(ys, ddof=1)) if ny >= 2 else None
    out: dict = {"n_x": nx, "n_y": ny,
                 "mean_x": float(xs.mean()) if nx else None,
                 "mean_y": float(ys.mean()) if ny else None, "sd_x": sd_x, "sd_y": sd_y,
                 "mean_difference": float(xs.mean() - ys.mean()) if nx and ny else None}
    for key in ("welch_t", "welch_df", "welch_p", "difference_lo", "difference_hi",
                "student_t", "student_p", "hedges_g", "g_lo", "g_hi", "mannwhitney_u",
                "mannwhitney_p", "rank_biserial", "rb_lo", "rb_hi"):
        out[key] = None
    if nx < 2 or ny < 2:
        return out
    from scipy.special import nctdtrinc
    from scipy.stats import bootstrap, mannwhitneyu, ttest_ind
    from statsmodels.stats.meta_analysis import effectsize_smd

    if sd_x > 0 or sd_y > 0:
        with warnings.catch_warnings():
            # scipy warns of "catastrophic cancellation" when one arm is constant; its
            # variance is then exactly 0 and the test is right
            warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
            welch = ttest_ind(xs, ys, equal_var=False, alternative=alternative)
            student = ttest_ind(xs, ys, equal_var=True, alternative=alternative)
        ci = welch.confidence_interval(1 - alpha)
        g = float(effectsize_smd(out["mean_x"], sd_x, nx, out["mean_y"], sd_y, ny)[0])
        df = nx + ny - 2
        t = float(student.statistic)
        if alternative == "two-sided":
            nc_lo, nc_hi = nctdtrinc(df, 1 - alpha / 2, t), nctdtrinc(df, alpha / 2, t)
        elif alternative == "greater":
            nc_lo, nc_hi = nctdtrinc(df, 1 - alpha, t), math.inf
        else:
            nc_lo, nc_hi = -math.inf, nctdtrinc(df, alpha, t)
        scale = (1 - 3 / (4 * (nx + ny) - 9)) * math.sqrt(1 / nx + 1 / ny)
        out.update(welch_t=_num(welch.statistic), welch_df=_num(welch.df),
                   welch_p=_num(welch.pvalue), difference_lo=_num(ci.low),
                   difference_hi=_num(ci.high), student_t=_num(t),
                   student_p=_num(student.pvalue), hedges_g=_num(g),
                   g_lo=_num(float(nc_lo) * scale), g_hi=_num(float(nc_hi) * scale))
    mw = mannwhitneyu(xs, ys, alternative=alternative)
    boot = bootstrap((xs, ys), _rank_biserial, n_resamples=n_resamples,
                     confidence_level=1 - alpha, alternative=alternative,
                     method="percentile", vectorized=True, axis=-1,
                     rng=np.random.default_rng(seed))
    out.update(mannwhitney_u=_num(mw.statistic), mannwhitney_p=_num(mw.pvalue),
               rank_biserial=_num(2 * float(mw.statistic) / (nx * ny) - 1),
               rb_lo=_num(boot.confidence_interval.low),
               rb_hi=_num(boot.confidence_interval.high))
    return out


def sample_size(p1: float, p2: float, power: float = 0.8, alpha: float = 0.05,
                alternative: str = "two-sided", ratio: float = 1.0, max_n: int = 1000,
                window: int = STAYS) -> dict:
    """Participants needed to detect success rates `p1` (first arm) against `p2`.

    The first arm has n participants, the second ceil(ratio * n) (ratio = n2 / n1, as in
    statsmodels).

    - effect_h: Cohen's h, statsmodels proportion_effectsize(p1, p2) = 2 asin sqrt(p1) -
      2 asin sqrt(p2) (FIRST minus second, statsmodels' convention; negative when the
      second arm is better, which is what "less" expects).
    - normal, normal_n2: ceil of statsmodels NormalIndPower().solve_power(effect_h,
      alpha, power, ratio, alternative), the normal approximation on the arcsine scale.
    - exact_fisher, exact_fisher_n2, exact_fisher_power: the smallest n from which the
      exact power under Fisher's exact test (same alternative and alpha) stays at or above
      `power` for every size from n to n + `window` (the stated range, `exact_fisher_window`),
      and the power at n. Exact power is not monotone in n (it saw-tooths: n = 353 may reach
      0.8005 and n = 354 fall to 0.7999), so the first n that reaches the target
      (`exact_fisher_first`, also given) is not a size a design can rely on. The search
      steps through every n from 1 upward; None when no such n lies within `max_n` (the
      cost of one n grows as n^2, of the search as n^3: the paper's case, 0.74 against
      0.82, scans about 460 sizes in about 3 s).
    - the inputs (p1, p2, power, alpha, alternative, ratio).

    Equal rates, or a one-sided alternative pointing the wrong way, give None for both
    sizes (no n reaches the power).
    """
    _check_rates(p1, p2)
    _check_alternative(alternative)
    _check_alpha(alpha)
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    if not ratio > 0:
        raise ValueError(f"ratio must be positive, got {ratio}")
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    h = float(proportion_effectsize(p1, p2))
    out: dict = {"p1": p1, "p2": p2, "power": power, "alpha": alpha,
                 "alternative": alternative, "ratio": ratio, "effect_h": h,
                 "normal": None, "normal_n2": None, "exact_fisher": None,
                 "exact_fisher_n2": None, "exact_fisher_power": None,
                 "exact_fisher_window": window, "exact_fisher_first": None}
    if not _reachable(p1, p2, alternative):
        return out
    nobs1 = NormalIndPower().solve_power(effect_size=h, nobs1=None, alpha=alpha, power=power,
                                         ratio=ratio,
                                         alternative=_STATSMODELS_ALTERNATIVE[alternative])
    n = math.ceil(float(np.asarray(nobs1).item()))
    out.update(normal=n, normal_n2=_second_arm(n, ratio))
    start, first, at_start = None, None, None
    for n in range(1, max_n + window + 1):
        if start is None and n > max_n:
            break
        achieved = fisher_power(n, _second_arm(n, ratio), p1, p2, alpha, alternative)
        if achieved < power:
            start = None
            continue
        if first is None:
            first = n
        if start is None:
            start, at_start = n, achieved
        if n - start == window:  # power held from `start` over the whole stated range
            out.update(exact_fisher=start, exact_fisher_n2=_second_arm(start, ratio),
                       exact_fisher_power=at_start)
            break
    out["exact_fisher_first"] = first
    return out


def achieved_power(n1: int, n2: int, p1: float, p2: float, alpha: float = 0.05,
                   alternative: str = "two-sided") -> dict:
    """The power of a design with `n1` and `n2` participants if the true rates are `p1`
    and `p2`: `normal` (statsmodels NormalIndPower().power with Cohen's h and ratio
    n2 / n1) and `exact_fisher` (`fisher_power`), with `effect_h` and the inputs. An empty
    arm gives None for both."""
    n1, n2 = _size(n1), _size(n2)
    _check_rates(p1, p2)
    _check_alternative(alternative)
    _check_alpha(alpha)
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    h = float(proportion_effectsize(p1, p2))
    out: dict = {"n1": n1, "n2": n2, "p1": p1, "p2": p2, "alpha": alpha,
                 "alternative": alternative, "effect_h": h, "normal": None, "exact_fisher": None}
    if n1 == 0 or n2 == 0:
        return out
    normal = NormalIndPower().power(effect_size=h, nobs1=n1, alpha=alpha, ratio=n2 / n1,
                                    alternative=_STATSMODELS_ALTERNATIVE[alternative])
    out.update(normal=_num(np.asarray(normal).item()),
               exact_fisher=fisher_power(n1, n2, p1, p2, alpha, alternative))
    return out


def fisher_power(n1: int, n2: int, p1: float, p2: float, alpha: float = 0.05,
                 alternative: str = "two-sided") -> float:
    """Exact power of Fisher's exact test (scipy.stats.fisher_exact on [[x1, n1-x1],
    [x2, n2-x2]], rejecting when p <= alpha) when the arms succeed independently with
    probabilities `p1` and `p2`: the sum of Binomial(n1, p1)(x1) * Binomial(n2, p2)(x2) over
    every outcome (x1, x2) that the test rejects.

    Hand-written: neither scipy nor statsmodels offers the power of Fisher's test (statsmodels'
    power classes are normal or t approximations). Calling fisher_exact on each of the
    (n1 + 1)(n2 + 1) tables would take minutes at 400 per arm, so the tables are laid out as
    a (column total t) x (x1) array and each p-value is computed for all of them at once:
    the conditional law of x1 given t is hypergeometric, its log-probabilities from log
    factorials (scipy.special.gammaln; symmetric in the arms to the last bit, so tables that
    tie in probability tie in floating point); "less" is the cumulative sum along x1,
    "greater" the cumulative sum from the top, and "two-sided" -- scipy's rule, the sum of
    the probabilities of every table of the same total no more probable than the observed
    one -- a cumulative sum over each row sorted by probability, where a table's p-value is
    read at the last table of its tie group. tests/test_human_stats.py checks it against
    scipy's fisher_exact table by table and against a seeded simulation.
    Column totals whose probability is negligible are left out (< 1e-14 together), so the
    power is exact to 1e-14, from below. One call at n1 = n2 = 450 takes about 0.015 s.
    """
    n1, n2 = _size(n1), _size(n2)
    _check_rates(p1, p2)
    _check_alternative(alternative)
    _check_alpha(alpha)
    if n1 == 0 or n2 == 0:
        return 0.0
    from scipy.special import gammaln
    from scipy.stats import binom

    total = n1 + n2
    log_fact = gammaln(np.arange(total + 1, dtype=float) + 1)

    def log_choose(n: int, k: np.ndarray) -> np.ndarray:
        return log_fact[n] - (log_fact[k] + log_fact[n - k])

    first = binom.pmf(np.arange(n1 + 1), n1, p1)
    second = binom.pmf(np.arange(n2 + 1), n2, p2)
    # Only the column totals that can happen: the law of t is log-concave, so the totals
    # above the threshold are an interval and the ones left out weigh < _NEGLIGIBLE together.
    totals = np.flatnonzero(np.convolve(first, second) > _NEGLIGIBLE / (total + 1))
    t = np.arange(totals.min(), totals.max() + 1)[:, None]
    x1 = np.arange(n1 + 1)[None, :]
    x2 = t - x1
    inside = (x2 >= 0) & (x2 <= n2)
    x2 = np.clip(x2, 0, n2)
    log_pmf = np.where(inside, (log_choose(n1, x1) + log_choose(n2, x2)) - log_choose(total, t),
                       -np.inf)
    weight = np.where(inside, first[x1] * second[x2], 0.0)
    pmf = np.exp(log_pmf)
    if alternative == "less":
        pvalue = np.cumsum(pmf, axis=1)
    elif alternative == "greater":
        pvalue = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    else:
        order = np.argsort(log_pmf, axis=1, kind="stable")
        ranked = np.take_along_axis(log_pmf, order, axis=1)
        cumulative = np.cumsum(np.exp(ranked), axis=1)
        weight = np.take_along_axis(weight, order, axis=1)
        width = ranked.shape[1]
        last = np.broadcast_to(np.arange(width), ranked.shape).copy()
        ceiling = ranked + _TIE
        moving = np.isfinite(ranked)
        while True:
            following = np.minimum(last + 1, width - 1)
            moving &= (last + 1 < width) & (np.take_along_axis(ranked, following, axis=1) <= ceiling)
            if not moving.any():
                break
            last = np.where(moving, following, last)
        pvalue = np.take_along_axis(cumulative, last, axis=1)
    return float(weight[pvalue <= alpha * (1 + _TIE)].sum())


def automation_bias(called_correct: Sequence[bool | None], suggestion_valid: Sequence[bool | None],
                    verbatim: Sequence[bool | None], plan_valid: Sequence[bool | None],
                    alpha: float = 0.05) -> dict:
    """How people treated an LLM's suggested plan whose correctness is known in advance.

    One entry per assisted participant, the four lists aligned: whether they said the
    suggestion was correct, whether it was valid, whether they submitted it verbatim, and
    whether their own submitted plan was valid. A None (not asked, not answered, not
    judged) drops that participant from the counts that need the value. Counting is
    hand-written (there is nothing to call); every share is a `Rate` (Wilson, 1 - alpha).

    Shown a WRONG suggestion (suggestion_valid False):
    - n_wrong_shown; n_called_correct and called_correct (Rate over those who answered):
      said the wrong suggestion was correct;
    - n_verbatim and verbatim_share (Rate): submitted the wrong suggestion verbatim;
    - wrong_plan_valid (Rate): still submitted a valid plan.
    Shown a RIGHT suggestion (suggestion_valid True):
    - n_right_shown; n_called_wrong and called_wrong (Rate): rejected a correct suggestion;
    - right_plan_valid (Rate): submitted a valid plan.
    """
    lists = (called_correct, suggestion_valid, verbatim, plan_valid)
    if len({len(values) for values in lists}) != 1:
        raise ValueError(f"the four lists differ in length: {[len(v) for v in lists]}")
    _check_alpha(alpha)

    def share(among: bool, values: Sequence[bool | None], wanted: bool) -> Rate:
        answered = [v for s, v in zip(suggestion_valid, values, strict=True)
                    if s is among and v is not None]
        return rate(sum(v is wanted for v in answered), len(answered), alpha)

    called_correct_rate = share(False, called_correct, True)
    verbatim_rate = share(False, verbatim, True)
    called_wrong_rate = share(True, called_correct, False)
    return {"n_wrong_shown": sum(s is False for s in suggestion_valid),
            "n_called_correct": called_correct_rate.hits, "called_correct": called_correct_rate,
            "n_verbatim": verbatim_rate.hits, "verbatim_share": verbatim_rate,
            "wrong_plan_valid": share(False, plan_valid, True),
            "n_right_shown": sum(s is True for s in suggestion_valid),
            "n_called_wrong": called_wrong_rate.hits, "called_wrong": called_wrong_rate,
            "right_plan_valid": share(True, plan_valid, True)}


def _rank_biserial(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """2 U / (n_x n_y) - 1 along `axis`, U from midranks (scipy.stats.rankdata), for the
    bootstrap's batches of resamples."""
    from scipy.stats import rankdata

    x = np.moveaxis(x, axis, -1)
    y = np.moveaxis(y, axis, -1)
    nx, ny = x.shape[-1], y.shape[-1]
    ranks = rankdata(np.concatenate([x, y], axis=-1), axis=-1)
    u = ranks[..., :nx].sum(axis=-1) - nx * (nx + 1) / 2
    return 2 * u / (nx * ny) - 1


def _reachable(p1: float, p2: float, alternative: str) -> bool:
    if alternative == "less":
        return p1 < p2
    if alternative == "greater":
        return p1 > p2
    return p1 != p2


def _second_arm(n: int, ratio: float) -> int:
    return max(1, math.ceil(n * ratio - 1e-9))


def _num(value) -> float | None:
    """A float, or None for NaN (infinities are kept: an open one-sided bound, an odds ratio
    with an empty cell)."""
    value = float(value)
    return None if math.isnan(value) else value


def _count(hits: int, n: int) -> tuple[int, int]:
    n = _size(n)
    if isinstance(hits, bool) or int(hits) != hits or not 0 <= hits <= n:
        raise ValueError(f"hits must be an integer in [0, {n}], got {hits}")
    return int(hits), n


def _size(n: int) -> int:
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"a count must be a non-negative integer, got {n}")
    return int(n)


def _values(values: Sequence[float | None], name: str) -> np.ndarray:
    array = np.array([v for v in values if v is not None], dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def _check_rates(p1: float, p2: float) -> None:
    for p in (p1, p2):
        if not 0 <= p <= 1:
            raise ValueError(f"a rate must lie in [0, 1], got {p}")


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
