"""pass@k and pass^k: the unbiased estimators on worked examples, no extrapolation past n,
and intervals that resample tasks."""

from __future__ import annotations

from math import isclose

import pytest

from planaudit.analysis.repeats import estimate, pass_at, pass_hat


def test_the_estimators_on_worked_examples():
    # 2 of 4 trials succeeded: all of 2 drawn succeed in 1 of C(4,2)=6 draws; at least one
    # of 2 in 5 of 6
    assert isclose(pass_hat(2, 4, 2), 1 / 6) and isclose(pass_at(2, 4, 2), 5 / 6)
    assert pass_hat(4, 4, 4) == 1.0 and pass_hat(3, 4, 4) == 0.0
    assert pass_at(0, 8, 3) == 0.0 and pass_at(1, 8, 8) == 1.0
    # k = 1: both are the success rate
    assert pass_hat(3, 8, 1) == pass_at(3, 8, 1) == 3 / 8


def test_fewer_trials_than_k_give_no_estimate_never_an_extrapolation():
    assert pass_hat(2, 2, 3) is None and pass_at(2, 2, 3) is None
    r = estimate([(2, 2), (1, 4), (4, 4)], k=3)
    assert (r.tasks, r.short) == (2, 1)
    assert isclose(r.value, (pass_hat(1, 4, 3) + pass_hat(4, 4, 3)) / 2)
    none = estimate([(1, 2)], k=3)
    assert none.value is None and none.lo is None and none.short == 1


def test_the_interval_resamples_tasks():
    same = estimate([(2, 4)] * 10, k=2, kind="pass@k")
    # identical tasks: no spread to resample (up to the mean's last bit)
    assert isclose(same.lo, same.value) and isclose(same.hi, same.value)
    spread = estimate([(4, 4)] * 5 + [(0, 4)] * 5, k=2, seed=1)
    assert spread.value == 0.5 and spread.lo < 0.5 < spread.hi
    assert estimate([(4, 4)] * 5 + [(0, 4)] * 5, k=2, seed=1) == spread  # seeded


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_hat(5, 4, 2)
    with pytest.raises(ValueError, match="unknown estimate"):
        estimate([(1, 2)], k=1, kind="pass-k")
