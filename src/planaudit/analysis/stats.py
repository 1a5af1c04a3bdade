"""The statistics every table rests on: bootstrap intervals, exact McNemar, Holm, power.

Tasks are the unit of replication: each configuration answers each task once, so
intervals resample tasks and comparisons pair two configurations task by task.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def bootstrap_ci(values: Sequence[float], seed: int, n_resamples: int = 2000,
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, resampling tasks with replacement.

    The generator is built from `seed` on every call, so one configuration's interval
    does not depend on which other configurations were analysed before it, and a rerun
    gives the same interval. None for fewer than two tasks: one task has no spread.
    The interval is scipy.stats.bootstrap(method="percentile")'s for the same generator,
    bit for bit (0/1 values take the counting path of `bootstrap_cis`).
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    low, high = bootstrap_cis(data[None, :], seed, n_resamples, level)[0]
    return float(low), float(high)


def bootstrap_cis(samples: np.ndarray, seed: int, n_resamples: int = 2000,
                  level: float = 0.95) -> np.ndarray:
    """`bootstrap_ci` of every row of `samples` (K samples of N >= 2 tasks): a K x 2 array.

    Every row gets what `bootstrap_ci(row, seed)` gives, that is the generator built
    from `seed` afresh, hence the same N x n_resamples resampled task indices for every
    row, as the tables give every configuration. Rows of 0/1 values (success, score)
    take a counting path: each resample's mean is (resample counts) @ row / N, a matrix
    product of integers, and the percentiles are read off a histogram of those means
    with scipy.stats.quantile's own interpolation; it equals scipy.stats.bootstrap
    (method="percentile") bit for bit (tests/test_calibrate.py) and is ~100x faster.
    Other rows go through scipy.stats.bootstrap itself.
    """
    data = np.asarray(samples, dtype=float)
    if data.ndim != 2 or data.shape[1] < 2:
        raise ValueError(f"need K samples of at least two tasks, got shape {data.shape}")
    k = data.shape[0]
    out = np.empty((k, 2))
    binary = np.all((data == 0) | (data == 1), axis=1)
    if binary.any():
        out[binary] = _binary_percentiles(data[binary], seed, n_resamples, level)
    if not binary.all():
        from scipy.stats import bootstrap  # here: figures and report use this module, not scipy

        for i in np.flatnonzero(~binary):
            res = bootstrap((data[i],), np.mean, n_resamples=n_resamples,
                            confidence_level=level, method="percentile",
                            rng=np.random.default_rng(seed))
            out[i] = res.confidence_interval.low, res.confidence_interval.high
    return out


def ratio_ci(numerator: Sequence[float], denominator: Sequence[float], seed: int,
             n_resamples: int = 2000, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of sum(numerator) / sum(denominator), resampling tasks
    (a task's cost and whether it was solved move together). Cost per solved task is such a
    ratio, not a mean: a resample that solves nothing has no finite cost per solve, and
    counts as infinite, so an upper bound may be `inf` (unbounded at this level) rather
    than a number the data cannot support. None for fewer than two tasks."""
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    if num.size < 2 or num.size != den.size:
        return None
    idx = np.random.default_rng(seed).integers(0, num.size, (n_resamples, num.size))
    total, solved = num[idx].sum(axis=1), den[idx].sum(axis=1)
    some = solved > 0
    if not some.any():
        return np.inf, np.inf
    ratios = np.divide(total, solved, out=np.zeros_like(total), where=some)
    most = ratios[some].max()
    # np.quantile interpolates inf into nan: a resample that solved nothing stands in past
    # every finite ratio, and a bound that falls among (or next to) them reads as inf
    ratios[~some] = 2 * most + 1
    alpha = (1 - level) / 2
    low, high = (float(b) if b <= most else float("inf")
                 for b in np.quantile(ratios, [alpha, 1 - alpha]))
    return low, high


def _binary_percentiles(data: np.ndarray, seed: int, n_resamples: int, level: float,
                        chunk: int = 4096) -> np.ndarray:
    """The percentile interval of rows of 0/1 values, as scipy computes it.

    scipy draws rng.integers(0, N, (n_resamples, N)) and takes the mean of each resample
    (np.mean: an exact integer sum divided by N), then scipy.stats.quantile's 'linear'
    method at alpha and 1 - alpha: with jg = p * B + 1 - p, j = floor(jg) - 1 and
    g = jg mod 1, (1 - g) * y[j] + g * y[j + 1] of the sorted means y. The sorted means
    of 0/1 data are read off the histogram of resample sums (0..N), so nothing is sorted.
    """
    k, n = data.shape
    b = n_resamples
    if n >= 2**24:
        raise ValueError(f"too many tasks for the counting path: {n}")
    idx = np.random.default_rng(seed).integers(0, n, (b, n))
    counts = np.bincount((np.arange(b)[:, None] * n + idx).ravel(), minlength=b * n)
    # float32 holds every integer up to 2**24 exactly, and is twice as fast as float64
    counts = counts.reshape(b, n).astype(np.float32).T
    alpha = np.asarray((1 - level) / 2, dtype=float)
    p = np.array([alpha, 1 - alpha])
    jg = p * b + (1 - p)
    j = np.clip(jg // 1 - 1, 0, b - 1).astype(np.int64)
    jp1 = np.clip(jg // 1, 0, b - 1).astype(np.int64)
    g = jg % 1
    g = np.where(jg // 1 - 1 < 0, 0.0, g)
    out = np.empty((k, 2))
    for start in range(0, k, chunk):
        rows = data[start:start + chunk]
        sums = (rows.astype(np.float32) @ counts).astype(np.int64)  # K' x B sums, exact
        hist = np.bincount((np.arange(len(rows))[:, None] * (n + 1) + sums).ravel(),
                           minlength=len(rows) * (n + 1)).reshape(len(rows), n + 1)
        cum = np.cumsum(hist, axis=1)  # cum[r, s]: resamples with sum <= s
        # the value at sorted position q is the smallest s with cum > q
        at_j = np.stack([(cum > q).argmax(axis=1) for q in j], axis=1) / n
        at_jp1 = np.stack([(cum > q).argmax(axis=1) for q in jp1], axis=1) / n
        out[start:start + chunk] = (1 - g) * at_j + g * at_jp1
    return out


def discordant_counts(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(b, c) along the last axis of two paired 0/1 outcome arrays: b counts tasks the
    first got right and the second wrong, c the reverse."""
    a, z = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    return (a & ~z).sum(axis=-1), (~a & z).sum(axis=-1)


@functools.lru_cache(maxsize=65536)
def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p value from the discordant pairs b and c.

    Concordant pairs carry no information about the difference; under the null each
    discordant pair falls either way with probability 1/2, so p is the two-sided
    binomial test of min(b, c) out of b + c. With no discordant pair p is 1.
    (Cached: a calibration asks for the same few (b, c) hundreds of thousands of times.)
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


def paired_family(discordant: Sequence[tuple[int, int]],
                  alpha: float) -> list[tuple[float, float, bool]]:
    """How every comparison table decides one Holm family: (p, p_adj, significant) per
    comparison, from its discordant pairs (b, c), in the input order. Exact McNemar on
    each, Holm over the family, significant where the adjusted p is at most alpha.
    The tables and `planaudit calibrate` both call this, so the calibration measures
    the decisions the report makes."""
    p = [mcnemar_exact(int(b), int(c)) for b, c in discordant]
    return [(pi, pa, pa <= alpha) for pi, pa in zip(p, holm(p), strict=True)]


def discordance(baseline: float, difference: float, correlation: float) -> tuple[float, float]:
    """Per-task probabilities (P(b), P(c)) of the two discordant kinds for a method of
    success rate baseline + difference against one of rate baseline, under the
    shared-difficulty model of `planaudit calibrate`: on a share `correlation` of tasks
    one latent difficulty orders both methods (the better one solves every task the
    other solves: all |difference| discordant one way), on the others they succeed
    independently. `correlation` is the correlation of two equal methods' outcomes;
    1 is the most favourable split `detectable_difference` assumes, 0 independence.
    Tasks are independent, so (b, c) is multinomial: the model McNemar power
    calculations assume (Miettinen 1968; Connor 1987), with this discordance."""
    p0, p1 = baseline, baseline + difference
    if not (0 <= p0 <= 1 and 0 <= p1 <= 1):
        raise ValueError(f"success rates must lie in [0, 1], got {p0:g} and {p1:g}")
    if not 0 <= correlation <= 1:
        raise ValueError(f"correlation must lie in [0, 1], got {correlation:g}")
    b = correlation * max(difference, 0.0) + (1 - correlation) * p1 * (1 - p0)
    c = correlation * max(-difference, 0.0) + (1 - correlation) * p0 * (1 - p1)
    return b, c


def shared_difficulty(first: Sequence[float], second: Sequence[float]) -> float | None:
    """The `correlation` of `discordance`'s model that paired 0/1 outcomes measure. In that
    model cov = correlation * min(p) * (1 - max(p)) for any two rates, so the moment
    estimate is the sample covariance over that bound, clipped to [0, 1]; None when the
    bound is 0 (a rate of 0 or 1), where the discordance does not depend on it."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or not len(a):
        raise ValueError(f"need two paired series of one length, got {a.shape} and {b.shape}")
    pa, pb = float(a.mean()), float(b.mean())
    bound = min(pa, pb) * (1 - max(pa, pb))
    if bound <= 0:
        return None
    return min(max((float((a * b).mean()) - pa * pb) / bound, 0.0), 1.0)


def confirm_probability(tasks: int, comparisons: int, difference: float, baseline: float = 0.5,
                        correlation: float = 1.0, alpha: float = 0.05) -> float:
    """Predicted power: the probability that a method better than its baseline by
    `difference` (a rate, 0.25 for 25 points) is confirmed, that is b > c and its exact
    McNemar p at most alpha / M (Holm's first step, Bonferroni's bound), with (b, c)
    multinomial over `tasks` tasks as `discordance` gives them.

    Holm can confirm a little more than this when another comparison of the family is
    rejected first (its own threshold then grows to alpha / (M - 1)); with the other
    comparisons null that happens at most at the family-wise rate, so the prediction
    is a lower bound that is tight within a fraction of alpha.
    """
    from scipy.stats import binom

    if tasks < 1 or comparisons < 1:
        raise ValueError(f"need at least one task and one comparison, got {tasks} and {comparisons}")
    pb, pc = discordance(baseline, difference, correlation)
    n = np.arange(tasks + 1)
    bb, cc = np.meshgrid(n, n, indexing="ij")
    ok = (bb + cc <= tasks) & (bb > cc)
    pmf_b = binom.pmf(n, tasks, pb)
    rest = pc / (1 - pb) if pb < 1 else 0.0
    pmf_c = binom.pmf(cc, np.maximum(tasks - bb, 0), min(rest, 1.0))
    threshold = alpha / comparisons
    confirmed = np.array([[ok[b, c] and mcnemar_exact(b, c) <= threshold for c in n] for b in n])
    return float(np.sum(pmf_b[:, None] * pmf_c * confirmed))


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
