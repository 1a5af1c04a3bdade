"""planaudit.human.stats: every number equals scipy's or statsmodels' on the same input, the
paper's figures come out, and the hand-written exact Fisher power agrees with scipy's
fisher_exact table by table and with a seeded simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import effectsize_smd
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportion_effectsize,
)

from planaudit.human.stats import (
    Rate,
    achieved_power,
    automation_bias,
    compare_means,
    compare_rates,
    fisher_power,
    rate,
    sample_size,
)

# -- rates ------------------------------------------------------------------------------------


def test_rate_is_statsmodels_wilson_and_the_paper_baseline():
    valid = rate(39, 50)
    assert valid.share == pytest.approx(0.78)
    assert (valid.lo, valid.hi) == pytest.approx(proportion_confint(39, 50, method="wilson"))
    optimal = rate(35, 39)
    assert optimal.share == pytest.approx(35 / 39)
    assert round(optimal.share, 3) == 0.897
    assert (optimal.lo, optimal.hi) == pytest.approx(proportion_confint(35, 39, method="wilson"))
    exact = rate(35, 39, alpha=0.1, method="beta")
    assert (exact.lo, exact.hi) == pytest.approx(proportion_confint(35, 39, alpha=0.1, method="beta"))
    assert exact.method == "beta"


def test_rate_of_nobody_is_none():
    assert rate(0, 0) == Rate(0, 0, None, None, None, "wilson")
    with pytest.raises(ValueError):
        rate(3, 2)
    with pytest.raises(ValueError):
        rate(-1, 2)


def test_paper_fisher_unassisted_against_assisted():
    result = compare_rates(17, 23, 18, 22)
    scipy_result = stats.fisher_exact([[17, 6], [18, 4]])
    assert result["fisher_p"] == pytest.approx(scipy_result.pvalue)
    assert round(result["fisher_p"], 2) == 0.72
    assert result["fisher_odds_ratio"] == pytest.approx(scipy_result.statistic)
    assert result["fisher_odds_ratio"] == pytest.approx(17 * 4 / (6 * 18))
    # scipy's Boschloo takes the arms as columns
    assert result["boschloo_p"] == pytest.approx(
        stats.boschloo_exact([[17, 18], [6, 4]]).pvalue)
    # second minus first, Newcombe
    assert result["difference"] == pytest.approx(18 / 22 - 17 / 23)
    lo, hi = confint_proportions_2indep(18, 22, 17, 23, compare="diff", method="newcomb")
    assert (result["difference_lo"], result["difference_hi"]) == pytest.approx((lo, hi))
    swapped = confint_proportions_2indep(17, 23, 18, 22, compare="diff", method="newcomb")
    assert (result["difference_lo"], result["difference_hi"]) == pytest.approx(
        (-swapped[1], -swapped[0]))
    assert result["difference_lo"] < result["difference"] < result["difference_hi"]
    or_lo, or_hi = confint_proportions_2indep(17, 23, 18, 22, compare="odds-ratio",
                                              method="logit-adjusted")
    assert (result["odds_ratio_lo"], result["odds_ratio_hi"]) == pytest.approx((or_lo, or_hi))
    assert result["odds_ratio_lo"] < result["fisher_odds_ratio"] < result["odds_ratio_hi"]
    assert (result["h1"], result["n1"], result["h2"], result["n2"]) == (17, 23, 18, 22)


@pytest.mark.parametrize("alternative", ["less", "greater"])
def test_one_sided_rates_pass_through(alternative):
    result = compare_rates(17, 23, 18, 22, alternative=alternative, alpha=0.1)
    assert result["fisher_p"] == pytest.approx(
        stats.fisher_exact([[17, 6], [18, 4]], alternative=alternative).pvalue)
    assert result["boschloo_p"] == pytest.approx(
        stats.boschloo_exact([[17, 18], [6, 4]], alternative=alternative).pvalue)
    lo, hi = confint_proportions_2indep(18, 22, 17, 23, compare="diff", method="newcomb", alpha=0.1)
    assert (result["difference_lo"], result["difference_hi"]) == pytest.approx((lo, hi))


def test_one_sided_rates_point_the_same_way_in_fisher_and_boschloo():
    # the first arm clearly lower: "less" is significant in both tests, "greater" in neither
    less = compare_rates(2, 20, 15, 20, alternative="less")
    greater = compare_rates(2, 20, 15, 20, alternative="greater")
    assert less["fisher_p"] < 0.001 and less["boschloo_p"] < 0.001
    assert greater["fisher_p"] > 0.99 and greater["boschloo_p"] > 0.99
    assert less["difference"] > 0 and less["fisher_odds_ratio"] < 1


def test_degenerate_rates_give_none():
    empty = compare_rates(0, 0, 5, 10)
    for key in ("fisher_p", "fisher_odds_ratio", "boschloo_p", "difference", "difference_lo",
                "difference_hi", "odds_ratio_lo", "odds_ratio_hi", "share1"):
        assert empty[key] is None
    assert empty["share2"] == 0.5
    every = compare_rates(23, 23, 22, 22)  # nobody failed: scipy's odds ratio is NaN
    assert every["fisher_odds_ratio"] is None
    assert every["fisher_p"] == 1.0
    assert every["odds_ratio_lo"] is not None and every["difference"] == 0
    zero = compare_rates(0, 23, 18, 22)
    assert zero["fisher_odds_ratio"] == 0
    assert zero["odds_ratio_lo"] > 0 and zero["odds_ratio_hi"] < 1
    with pytest.raises(ValueError):
        compare_rates(24, 23, 1, 2)
    with pytest.raises(ValueError):
        compare_rates(1, 2, 1, 2, alternative="smaller")


# -- means ------------------------------------------------------------------------------------

RNG = np.random.default_rng(20240601)
TIME_ALONE = list(RNG.lognormal(6.0, 0.5, 23).round(1))
TIME_HELPED = list(RNG.lognormal(5.9, 0.5, 22).round(1))


def _pairwise_rank_biserial(x, y, axis=-1):
    x = np.moveaxis(x, axis, -1)
    y = np.moveaxis(y, axis, -1)
    return np.sign(x[..., :, None] - y[..., None, :]).mean(axis=(-2, -1))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_compare_means_is_scipy_and_statsmodels(alternative):
    x, y = np.array(TIME_HELPED), np.array(TIME_ALONE)
    result = compare_means(TIME_HELPED, TIME_ALONE, alternative=alternative, alpha=0.1, seed=7,
                           n_resamples=1000)
    welch = stats.ttest_ind(x, y, equal_var=False, alternative=alternative)
    assert result["welch_t"] == pytest.approx(welch.statistic)
    assert result["welch_df"] == pytest.approx(welch.df)
    assert result["welch_p"] == pytest.approx(welch.pvalue)
    ci = welch.confidence_interval(0.9)
    assert result["difference_lo"] == pytest.approx(ci.low)
    assert result["difference_hi"] == pytest.approx(ci.high)
    assert result["mean_difference"] == pytest.approx(x.mean() - y.mean())
    student = stats.ttest_ind(x, y, equal_var=True, alternative=alternative)
    assert result["student_t"] == pytest.approx(student.statistic)
    assert result["student_p"] == pytest.approx(student.pvalue)
    mw = stats.mannwhitneyu(x, y, alternative=alternative)
    assert result["mannwhitney_u"] == pytest.approx(mw.statistic)
    assert result["mannwhitney_p"] == pytest.approx(mw.pvalue)
    assert result["rank_biserial"] == pytest.approx(_pairwise_rank_biserial(x, y))
    boot = stats.bootstrap((x, y), _pairwise_rank_biserial, n_resamples=1000,
                           confidence_level=0.9, alternative=alternative, method="percentile",
                           vectorized=True, rng=np.random.default_rng(7))
    assert result["rb_lo"] == pytest.approx(boot.confidence_interval.low)
    assert result["rb_hi"] == pytest.approx(boot.confidence_interval.high)
    g = effectsize_smd(x.mean(), x.std(ddof=1), x.size, y.mean(), y.std(ddof=1), y.size)[0]
    assert result["hedges_g"] == pytest.approx(g)
    assert (result["n_x"], result["n_y"]) == (22, 23)
    assert result["sd_x"] == pytest.approx(x.std(ddof=1))
    # one-sided intervals are open on the side the alternative does not test
    if alternative == "less":
        assert result["difference_lo"] == result["g_lo"] == result["rb_lo"] == -math.inf
    if alternative == "greater":
        assert result["difference_hi"] == result["g_hi"] == result["rb_hi"] == math.inf


def test_hedges_g_interval_inverts_the_noncentral_t():
    x, y = np.array(TIME_HELPED), np.array(TIME_ALONE)
    result = compare_means(x, y)
    df = x.size + y.size - 2
    factor = (1 - 3 / (4 * (x.size + y.size) - 9)) * math.sqrt(1 / x.size + 1 / y.size)
    t = result["student_t"]
    assert stats.nct.cdf(t, df, result["g_lo"] / factor) == pytest.approx(0.975, abs=1e-6)
    assert stats.nct.cdf(t, df, result["g_hi"] / factor) == pytest.approx(0.025, abs=1e-6)
    assert result["g_lo"] < result["hedges_g"] < result["g_hi"]
    one_sided = compare_means(x, y, alternative="greater")
    assert stats.nct.cdf(t, df, one_sided["g_lo"] / factor) == pytest.approx(0.95, abs=1e-6)


def test_compare_means_degenerate_samples_give_none():
    tests = ("welch_t", "welch_p", "difference_lo", "student_t", "hedges_g", "g_lo",
             "mannwhitney_u", "mannwhitney_p", "rank_biserial", "rb_lo")
    single = compare_means([3.0], [1.0, 2.0, 3.0])
    assert all(single[key] is None for key in tests)
    assert single["mean_x"] == 3.0 and single["sd_x"] is None and single["mean_difference"] == 1.0
    empty = compare_means([], [1.0, 2.0])
    assert empty["mean_x"] is None and empty["mean_difference"] is None
    assert all(empty[key] is None for key in tests)
    skipped = compare_means([1.0, None, 2.0, 4.0], [2.0, 3.0, None])
    assert (skipped["n_x"], skipped["n_y"]) == (3, 2)
    flat = compare_means([2.0, 2.0, 2.0], [2.0, 2.0])  # no spread anywhere: no t, no g
    assert flat["welch_t"] is None and flat["hedges_g"] is None and flat["student_p"] is None
    assert flat["rank_biserial"] == 0
    with pytest.raises(ValueError):
        compare_means([1.0, float("nan")], [1.0, 2.0])


# -- power ------------------------------------------------------------------------------------


def _power_by_enumeration(n1, n2, p1, p2, alpha, alternative):
    """The power summed over every table, each tested by scipy's fisher_exact."""
    total = 0.0
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            p = stats.fisher_exact([[a, n1 - a], [b, n2 - b]], alternative=alternative).pvalue
            if p <= alpha * (1 + 1e-9):
                total += stats.binom.pmf(a, n1, p1) * stats.binom.pmf(b, n2, p2)
    return total


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize(("n1", "n2", "p1", "p2", "alpha"), [
    (12, 12, 0.3, 0.7, 0.05),
    (10, 15, 0.2, 0.6, 0.05),
    (23, 22, 0.74, 0.82, 0.05),
    (3, 3, 0.1, 0.9, 0.05),  # one-sided p = 1/20 exactly: p <= alpha rejects
    (20, 20, 0.5, 0.5, 0.1),  # the null: the power is the size, below alpha
    (7, 1, 0.0, 1.0, 0.2),
])
def test_exact_fisher_power_is_fisher_exact_table_by_table(n1, n2, p1, p2, alpha, alternative):
    expected = _power_by_enumeration(n1, n2, p1, p2, alpha, alternative)
    assert fisher_power(n1, n2, p1, p2, alpha, alternative) == pytest.approx(expected, abs=1e-12)
    if p1 == p2:
        assert expected <= alpha


def test_exact_fisher_power_agrees_with_a_seeded_simulation():
    rng = np.random.default_rng(11)
    draws = 4000
    first = rng.binomial(30, 0.3, draws)
    second = rng.binomial(30, 0.7, draws)
    rejected = sum(stats.fisher_exact([[a, 30 - a], [b, 30 - b]]).pvalue <= 0.05
                   for a, b in zip(first, second, strict=True))
    assert fisher_power(30, 30, 0.3, 0.7) == pytest.approx(rejected / draws, abs=0.02)


def test_paper_sample_size():
    result = sample_size(0.74, 0.82)
    h = proportion_effectsize(0.74, 0.82)
    assert result["effect_h"] == pytest.approx(h)
    nobs = NormalIndPower().solve_power(effect_size=h, nobs1=None, alpha=0.05, power=0.8,
                                        ratio=1.0, alternative="two-sided")
    assert result["normal"] == math.ceil(nobs) == 418
    # Fisher's exact test is conservative: 443 per arm, about 6% more than the approximation
    assert result["normal"] < result["exact_fisher"] <= 1.15 * result["normal"]
    assert result["exact_fisher"] == 443 == result["exact_fisher_n2"]
    assert result["exact_fisher_power"] >= 0.8
    assert fisher_power(442, 442, 0.74, 0.82) < 0.8 <= fisher_power(443, 443, 0.74, 0.82)


def test_sample_size_one_sided_and_unequal_arms():
    less = sample_size(0.74, 0.82, alternative="less", max_n=450)
    h = proportion_effectsize(0.74, 0.82)
    nobs = NormalIndPower().solve_power(effect_size=h, nobs1=None, alpha=0.05, power=0.8,
                                        ratio=1.0, alternative="smaller")
    assert less["normal"] == math.ceil(nobs)
    assert less["exact_fisher"] is not None and less["exact_fisher"] < 443
    assert fisher_power(less["exact_fisher"] - 1, less["exact_fisher"] - 1, 0.74, 0.82,
                        alternative="less") < 0.8
    # exact power saw-tooths: 353 reaches 0.8 and 354 falls below it; the design's size is
    # the first from which power stays at the target over the stated range
    n, window = less["exact_fisher"], less["exact_fisher_window"]
    assert less["exact_fisher_first"] == 353 and n == 355 and window == 20
    assert fisher_power(353, 353, 0.74, 0.82, alternative="less") >= 0.8 > fisher_power(
        354, 354, 0.74, 0.82, alternative="less")
    assert all(fisher_power(m, m, 0.74, 0.82, alternative="less") >= 0.8
               for m in range(n, n + window + 1))
    unequal = sample_size(0.3, 0.7, ratio=2.0, power=0.9)
    nobs = NormalIndPower().solve_power(effect_size=proportion_effectsize(0.3, 0.7), nobs1=None,
                                        alpha=0.05, power=0.9, ratio=2.0)
    assert unequal["normal"] == math.ceil(nobs)
    assert unequal["normal_n2"] == 2 * unequal["normal"]
    assert unequal["exact_fisher_n2"] == 2 * unequal["exact_fisher"]
    n = unequal["exact_fisher"]
    assert fisher_power(n, 2 * n, 0.3, 0.7) >= 0.9
    assert all(fisher_power(m, 2 * m, 0.3, 0.7) >= 0.9 for m in range(n, n + 21))
    assert fisher_power(n - 1, 2 * n - 2, 0.3, 0.7) < 0.9


def test_sample_size_that_no_design_reaches_is_none():
    for result in (sample_size(0.74, 0.82, alternative="greater"), sample_size(0.5, 0.5)):
        assert result["normal"] is None and result["exact_fisher"] is None
    beyond = sample_size(0.74, 0.82, max_n=50)
    assert beyond["normal"] == 418 and beyond["exact_fisher"] is None


def test_achieved_power_of_the_paper_design():
    result = achieved_power(23, 22, 0.74, 0.82)
    h = proportion_effectsize(0.74, 0.82)
    assert result["normal"] == pytest.approx(
        NormalIndPower().power(effect_size=h, nobs1=23, alpha=0.05, ratio=22 / 23,
                               alternative="two-sided"))
    assert result["exact_fisher"] == pytest.approx(fisher_power(23, 22, 0.74, 0.82))
    assert result["exact_fisher"] < 0.1  # the paper's study could hardly see the difference
    one_sided = achieved_power(23, 22, 0.74, 0.82, alternative="less")
    assert one_sided["normal"] == pytest.approx(
        NormalIndPower().power(effect_size=h, nobs1=23, alpha=0.05, ratio=22 / 23,
                               alternative="smaller"))
    empty = achieved_power(0, 22, 0.74, 0.82)
    assert empty["normal"] is None and empty["exact_fisher"] is None


# -- automation bias --------------------------------------------------------------------------


def test_automation_bias_counts_the_paper_case():
    # 22 assisted people, each shown a wrong suggestion: 4 called it correct, 2 submitted it
    called = [True] * 4 + [False] * 18
    verbatim = [True] * 2 + [False] * 20
    plan_valid = [False] * 2 + [True] * 16 + [False] * 4
    result = automation_bias(called, [False] * 22, verbatim, plan_valid)
    assert result["n_wrong_shown"] == 22
    assert result["n_called_correct"] == 4
    assert result["called_correct"] == rate(4, 22)
    assert result["n_verbatim"] == 2
    assert result["verbatim_share"] == rate(2, 22)
    assert result["wrong_plan_valid"] == rate(16, 22)
    assert result["n_right_shown"] == 0
    assert result["called_wrong"] == Rate(0, 0, None, None, None, "wilson")


def test_automation_bias_skips_nones_and_separates_right_suggestions():
    called = [True, None, False, True, False, None]
    valid = [False, False, False, True, True, None]
    verbatim = [None, True, False, True, False, True]
    plan_valid = [False, False, True, True, None, True]
    result = automation_bias(called, valid, verbatim, plan_valid)
    assert result["n_wrong_shown"] == 3
    assert result["called_correct"].hits == 1 and result["called_correct"].n == 2
    assert result["n_verbatim"] == 1 and result["verbatim_share"].n == 2
    assert result["n_right_shown"] == 2
    assert result["n_called_wrong"] == 1 and result["called_wrong"].n == 2
    assert result["right_plan_valid"] == rate(1, 1)
    with pytest.raises(ValueError):
        automation_bias([True], [False, True], [None], [None])
