"""Statistics against reference implementations (scipy, statsmodels) and hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from planaudit.analysis.stats import bootstrap_ci, detectable_difference, holm, mcnemar_exact

DISCORDANT = [(b, c) for b in range(0, 13) for c in range(0, 13)] + [(40, 25), (3, 60), (100, 100)]


@pytest.mark.parametrize(("b", "c"), DISCORDANT)
def test_mcnemar_matches_scipy_binomtest_and_statsmodels(b, c):
    p = mcnemar_exact(b, c)
    n = b + c
    if n == 0:
        assert p == 1.0
        return
    doubled_tail = min(1.0, 2 * binomtest(min(b, c), n, 0.5, alternative="less").pvalue)
    assert p == pytest.approx(doubled_tail, rel=1e-12)
    assert p == pytest.approx(min(1.0, 2 * binom.cdf(min(b, c), n, 0.5)), rel=1e-12)
    table = [[7, b], [c, 11]]  # concordant cells must not matter
    assert p == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_mcnemar_hand_worked():
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)  # 2 * 0.5**6
    assert mcnemar_exact(6, 0) == mcnemar_exact(0, 6)
    assert mcnemar_exact(1, 4) == pytest.approx(2 * (1 + 5) / 32)  # 2 * P(X <= 1), X ~ Bin(5, 1/2)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


HOLM_VECTORS = [
    [0.01, 0.04, 0.03],
    [0.001, 0.2, 0.2, 0.049, 0.5],
    [0.03125, 1.0, 1.0, 0.0625],
    [0.7],
    [0.02, 0.02, 0.02],
    [1.0, 1.0],
    *np.random.default_rng(7).uniform(0, 0.2, size=(5, 12)).tolist(),
]


@pytest.mark.parametrize("pvalues", HOLM_VECTORS)
def test_holm_matches_statsmodels(pvalues):
    expected = multipletests(pvalues, alpha=0.05, method="holm")[1]
    assert holm(pvalues) == pytest.approx(expected.tolist(), rel=1e-12)


def test_holm_hand_worked_and_edges():
    # sorted: 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # capped
    assert holm([]) == []
    raw = [0.004, 0.03, 0.01, 0.2]
    adjusted = holm(raw)
    assert all(a >= p for a, p in zip(adjusted, raw, strict=True))
    by_raw = [a for _, a in sorted(zip(raw, adjusted, strict=True))]
    assert by_raw == sorted(by_raw)  # monotone in the raw p values


def test_bootstrap_is_reproducible_per_seed():
    # continuous values: with 0/1 values the percentiles fall on k/n and two seeds
    # often give the same interval, which would hide an ignored seed
    values = np.random.default_rng(3).normal(0.5, 0.2, size=40).tolist()
    first = bootstrap_ci(values, seed=11, n_resamples=1000)
    assert first == bootstrap_ci(values, seed=11, n_resamples=1000)
    assert first != bootstrap_ci(values, seed=12, n_resamples=1000)
    outcomes = np.random.default_rng(3).integers(0, 2, size=40).tolist()
    low, high = bootstrap_ci(outcomes, seed=11)
    assert 0.0 <= low <= np.mean(outcomes) <= high <= 1.0
    assert (low, high) == bootstrap_ci(outcomes, seed=11)


def test_bootstrap_narrows_with_more_tasks_and_needs_two():
    rng = np.random.default_rng(5)
    small = bootstrap_ci(rng.integers(0, 2, size=20).tolist(), seed=0)
    large = bootstrap_ci(rng.integers(0, 2, size=2000).tolist(), seed=0)
    assert large[1] - large[0] < small[1] - small[0]
    assert bootstrap_ci([1.0, 1.0, 1.0], seed=0) == (1.0, 1.0)
    assert bootstrap_ci([1.0], seed=0) is None
    assert bootstrap_ci([], seed=0) is None


def test_power_hand_worked():
    # 6 pairs all one way: p = 2 / 64 = 0.03125 < 0.05, while 5 give 0.0625
    pw = detectable_difference(50, 1, 0.05)
    assert (pw.discordant, pw.min_difference_pp) == (6, pytest.approx(12.0))
    assert pw.p == pytest.approx(0.03125)


@pytest.mark.parametrize(("tasks", "comparisons", "alpha"),
                         [(50, 1, 0.05), (50, 18, 0.05), (30, 4, 0.05), (200, 40, 0.01), (12, 3, 0.1)])
def test_power_is_the_smallest_count_passing_holms_first_step(tasks, comparisons, alpha):
    pw = detectable_difference(tasks, comparisons, alpha)
    bound = alpha / comparisons
    assert mcnemar_exact(pw.discordant, 0) <= bound < mcnemar_exact(pw.discordant - 1, 0)
    assert pw.min_difference_pp == pytest.approx(100 * pw.discordant / tasks)
    assert multipletests([pw.p] * comparisons, alpha=alpha, method="holm")[0].all()


def test_power_reports_too_few_tasks_and_rejects_bad_design():
    assert detectable_difference(3, 5, 0.05).discordant is None
    for bad in [(0, 1, 0.05), (10, 0, 0.05), (10, 1, 1.5)]:
        with pytest.raises(ValueError):
            detectable_difference(*bad)
