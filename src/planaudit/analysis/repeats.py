"""pass@k and pass^k over repeated trials: the estimators of the pass_k table
(`tables.pass_k_table`), from the repeats a regime's `epochs` runs.

With n trials of a task of which c succeeded, the unbiased estimators are
pass@k = 1 - C(n-c, k) / C(n, k) (at least one of k trials succeeds; Chen et al. 2021)
and pass^k = C(c, k) / C(n, k) (all k succeed; τ-bench's convention). Both need n >= k:
with fewer trials there is nothing to estimate from, and the answer is None, never an
extrapolation. A configuration's value is the mean over tasks, and its interval
resamples tasks, not trials: tasks are the unit of replication (`stats.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from planaudit.analysis.stats import bootstrap_ci

KINDS = ("pass@k", "pass^k")


def _check(c: int, n: int, k: int) -> None:
    if k < 1 or n < 0 or not 0 <= c <= n:
        raise ValueError(f"need k >= 1 and 0 <= c <= n (got c={c}, n={n}, k={k})")


def pass_at(c: int, n: int, k: int) -> float | None:
    """pass@k of one task from c successes in n trials; None where n < k."""
    _check(c, n, k)
    return None if n < k else 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat(c: int, n: int, k: int) -> float | None:
    """pass^k of one task from c successes in n trials; None where n < k."""
    _check(c, n, k)
    return None if n < k else comb(c, k) / comb(n, k)


@dataclass(frozen=True)
class Repeated:
    """One configuration's estimate over tasks: `value` the mean of the tasks' estimates,
    `lo`/`hi` its bootstrap interval over tasks (None with fewer than two tasks), `tasks`
    the tasks estimated, `short` the tasks left out for having fewer than k trials."""

    kind: str
    k: int
    value: float | None
    lo: float | None
    hi: float | None
    tasks: int
    short: int


def estimate(trials: Sequence[tuple[int, int]], k: int, kind: str = "pass^k", seed: int = 0,
             n_resamples: int = 2000) -> Repeated:
    """`trials` holds each task's (successes, trials). Tasks with fewer than k trials are
    counted in `short` and left out of the mean, never extrapolated."""
    if kind not in KINDS:
        raise ValueError(f"unknown estimate {kind!r} (known: {', '.join(KINDS)})")
    one = pass_hat if kind == "pass^k" else pass_at
    values = [one(c, n, k) for c, n in trials]
    kept = [v for v in values if v is not None]
    band = bootstrap_ci(kept, seed, n_resamples) if kept else None
    return Repeated(kind, k, sum(kept) / len(kept) if kept else None,
                    band[0] if band else None, band[1] if band else None,
                    len(kept), len(values) - len(kept))
