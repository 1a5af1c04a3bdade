"""The statistics every table rests on: bootstrap intervals, exact McNemar, Holm, power.

Tasks are the unit of replication: each configuration answers each task once, so
intervals resample tasks and comparisons pair two configurations task by task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def bootstrap_ci(values: Sequence[float], seed: int, n_resamples: int = 2000,
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, resampling tasks with replacement.

    The generator is built from `seed` on every call, so one configuration's interval
    does not depend on which other configurations were analysed before it, and a rerun
    gives the same interval. None for fewer than two tasks: one task has no spread.
    """
    from scipy.stats import bootstrap  # here: figures and report use this module, not scipy

    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    res = bootstrap((data,), np.mean, n_resamples=n_resamples, confidence_level=level,
                    method="percentile", rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p value from the discordant pairs b and c.

    Concordant pairs carry no information about the difference; under the null each
    discordant pair falls either way with probability 1/2, so p is the two-sided
    binomial test of min(b, c) out of b + c. With no discordant pair p is 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return min(1.0, float(binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p values, in the input order.

    The i-th smallest p (from 0) is multiplied by m - i; a running maximum keeps the
    adjusted values monotone in the raw ones, and they are capped at 1. Rejecting where
    the adjusted p <= alpha controls the family-wise error at alpha.
    (Hand-written: scipy has no Holm, and statsmodels is only a test dependency.)
    """
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted.tolist()


@dataclass(frozen=True)
class Power:
    """The smallest paired difference that can survive Holm, for a design."""

    tasks: int
    comparisons: int
    alpha: float
    discordant: int | None  # pairs needed, all one way; None when N tasks are too few
    p: float | None  # the exact McNemar p with that many pairs
    min_difference_pp: float | None  # discordant / tasks, in percentage points


def detectable_difference(tasks: int, comparisons: int, alpha: float = 0.05) -> Power:
    """Smallest difference in percentage points detectable on `tasks` paired tasks.

    Holm's first step is Bonferroni: nothing in a family of M comparisons is rejected
    unless its p is at most alpha / M. The smallest p that d discordant pairs can give
    is with all d in one direction, so the smallest d reaching alpha / M is a floor no
    design of this size can beat, and d / N is the difference between the two success
    rates it corresponds to.
    """
    if tasks < 1 or comparisons < 1:
        raise ValueError(f"need at least one task and one comparison, got {tasks} and {comparisons}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    threshold = alpha / comparisons
    for d in range(1, tasks + 1):
        p = mcnemar_exact(d, 0)
        if p <= threshold:
            return Power(tasks, comparisons, alpha, d, p, 100.0 * d / tasks)
    return Power(tasks, comparisons, alpha, None, None, None)
