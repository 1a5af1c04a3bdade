"""Controls for the statistics: simulated experiments with known truth, analysed by the
report's own code, to show it finds real differences at the predicted rate and false
ones at most at alpha.

One simulated experiment is a Holm family as the comparisons table builds it: a
baseline method and M methods, each compared with the baseline on the same N tasks.
Every method's success probability is known: the baseline's is `baseline`, one method
(the probe) succeeds with baseline + difference, the other M - 1 with baseline (true
nulls). Outcomes are drawn task by task (rows, not counts), under a shared-difficulty
model: on a share `correlation` of tasks one latent difficulty U orders every method
(a method succeeds iff U < its rate, so a better method solves every task a worse one
solves); on the other tasks each method succeeds independently with its rate. Two
methods of equal rate then have outcome correlation `correlation`, and a pair's
discordant counts are multinomial with the probabilities `stats.discordance` gives;
the predicted power (`stats.confirm_probability`, as `planaudit power --difference`
prints it) assumes exactly that.

The analysis is the report's: `stats.discordant_counts` for b and c (what
`tables.discordant` counts), `stats.paired_family` for exact McNemar and Holm (what
`tables._adjust` decides), `stats.bootstrap_cis` with the analysis seed for the
intervals (what `tables.main_table` computes per configuration, with the same seed for
every configuration as the report uses).

Reported: the family-wise false-positive rate over the null experiments (every
difference zero) with its Clopper–Pearson interval; per true difference the empirical
detection rate of the probe (confirmed: significant after Holm, in its favour) against
the predicted one; bootstrap coverage of the true rates; and the smallest difference the
family can confirm at all (all discordant pairs one way), found by running
`paired_family` on that most favourable split, which must equal `detectable_difference`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from planaudit.analysis.stats import (
    bootstrap_cis,
    confirm_probability,
    detectable_difference,
    discordance,
    discordant_counts,
    paired_family,
)

DEFAULT_DIFFERENCES = (5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0)


@dataclass(frozen=True)
class Design:
    """What to simulate; the defaults are the `calibration:` section of config/config.yaml."""

    tasks: int = 40
    comparisons: int = 20
    experiments: int = 2000
    baseline: float = 0.5
    correlation: float = 0.5
    differences: tuple[float, ...] = DEFAULT_DIFFERENCES  # points; 0 and the MDD are added
    alpha: float = 0.05
    seed: int = 0  # the simulated outcomes
    bootstrap_seed: int = 0  # the analysis seed, as the report's intervals use it
    bootstrap: int = 2000

    def checked(self) -> Design:
        """The design, or ValueError naming the first bad field."""
        if self.tasks < 2:
            raise ValueError(f"tasks must be at least 2, got {self.tasks}")
        if self.comparisons < 1:
            raise ValueError(f"comparisons must be at least 1, got {self.comparisons}")
        if self.experiments < 1:
            raise ValueError(f"experiments must be at least 1, got {self.experiments}")
        if not 0 < self.baseline < 1:
            raise ValueError(f"baseline must lie in (0, 1), got {self.baseline}")
        if not 0 <= self.correlation <= 1:
            raise ValueError(f"correlation must lie in [0, 1], got {self.correlation}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.bootstrap < 1:
            raise ValueError(f"bootstrap must be at least 1, got {self.bootstrap}")
        top = 100 * (1 - self.baseline)
        for d in self.differences:
            if not 0 <= d <= top + 1e-9:
                raise ValueError(f"difference {d:g} points: must lie in [0, {top:g}] "
                                 f"(baseline {self.baseline:g} plus it is a success rate)")
        return self

    @classmethod
    def from_config(cls, config: dict, **overrides) -> Design:
        """The config's `calibration:` section (its `analysis:` seed, bootstrap and alpha),
        then every override that is not None."""
        section = dict(config.get("calibration") or {})
        analysis = config.get("analysis") or {}
        values = {"bootstrap_seed": analysis.get("seed"), "bootstrap": analysis.get("bootstrap"),
                  "alpha": analysis.get("alpha"), **section}
        values.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in values.items() if k in known and v is not None}
        if "differences" in values:
            values["differences"] = tuple(float(d) for d in values["differences"])
        return cls(**values).checked()


@dataclass
class Timing:
    simulate: float = 0.0
    mcnemar_holm: float = 0.0
    bootstrap: float = 0.0
    predict: float = 0.0


@dataclass
class Calibration:
    design: Design
    result: dict
    timing: Timing = field(default_factory=Timing)


def simulate(design: Design, difference_pp: float, rng: np.random.Generator) -> np.ndarray:
    """Outcomes of `design.experiments` experiments: a bool array experiments x (M + 1)
    methods x N tasks; method 0 is the baseline, method 1 the probe (baseline +
    difference), the rest equal to the baseline."""
    e, m, n = design.experiments, design.comparisons + 1, design.tasks
    rates = np.full(m, design.baseline)
    rates[1] = design.baseline + difference_pp / 100
    shared = rng.random((e, 1, n)) < design.correlation
    common = rng.random((e, 1, n))
    own = rng.random((e, m, n))
    latent = np.where(shared, common, own)
    return latent < rates[None, :, None]


def decide(outcomes: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(significant, in_favour, p): experiments x M, each method against the baseline,
    decided per experiment as the comparisons table decides a family; p unadjusted."""
    b, c = discordant_counts(outcomes[:, 1:, :], outcomes[:, :1, :])
    decided = [paired_family(list(zip(bi, ci, strict=True)), alpha)
               for bi, ci in zip(b.tolist(), c.tolist(), strict=True)]
    significant = np.array([[s for _, _, s in fam] for fam in decided], dtype=bool)
    p = np.array([[pi for pi, _, _ in fam] for fam in decided], dtype=float)
    return significant.reshape(b.shape), b > c, p.reshape(b.shape)


def smallest_confirmable(tasks: int, comparisons: int, alpha: float) -> int | None:
    """The fewest discordant pairs, all one way, that the report's decision confirms in
    a family of `comparisons` whose other members show nothing (b = c = 0): the most
    favourable split, run through `paired_family`."""
    for d in range(1, tasks + 1):
        if paired_family([(d, 0)] + [(0, 0)] * (comparisons - 1), alpha)[0][2]:
            return d
    return None


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def _rng(seed: int, difference_pp: float) -> np.random.Generator:
    """One generator per scenario, so adding a difference changes no other number."""
    return np.random.default_rng([seed, round(difference_pp * 1000)])


def calibrate(design: Design) -> Calibration:
    design = design.checked()
    timing = Timing()
    n, m, alpha = design.tasks, design.comparisons, design.alpha
    formula = detectable_difference(n, m, alpha)
    d_min = smallest_confirmable(n, m, alpha)
    mdd_pp = None if d_min is None else 100 * d_min / n
    differences = sorted({0.0, *design.differences}
                         | ({round(mdd_pp, 9)} if mdd_pp is not None
                            and mdd_pp <= 100 * (1 - design.baseline) else set()))
    rows, covered, intervals = [], [], []
    fwer = None
    for diff in differences:
        t = time.perf_counter()
        outcomes = simulate(design, diff, _rng(design.seed, diff))
        timing.simulate += time.perf_counter() - t
        t = time.perf_counter()
        significant, favour, p = decide(outcomes, alpha)
        timing.mcnemar_holm += time.perf_counter() - t
        t = time.perf_counter()
        rate = design.baseline + diff / 100
        if diff == 0:  # every method's interval, all at the baseline rate
            samples, truth = outcomes.reshape(-1, n), np.full(outcomes.shape[0] * (m + 1), rate)
        else:  # the probe's
            samples, truth = outcomes[:, 1, :], np.full(outcomes.shape[0], rate)
        ci = bootstrap_cis(samples, design.bootstrap_seed, design.bootstrap)
        hit = (ci[:, 0] <= truth) & (truth <= ci[:, 1])
        covered.append(int(hit.sum()))
        intervals.append(hit.size)
        timing.bootstrap += time.perf_counter() - t
        t = time.perf_counter()
        predicted = confirm_probability(n, m, diff / 100, design.baseline, design.correlation,
                                        alpha)
        timing.predict += time.perf_counter() - t
        k = design.experiments
        confirmed = int((significant[:, 0] & favour[:, 0]).sum())
        empirical = confirmed / k
        # what the prediction models exactly: Holm's first step (p <= alpha / M) alone
        first_step = int(((p[:, 0] <= alpha / m) & favour[:, 0]).sum()) / k
        mc_se = math.sqrt(max(predicted * (1 - predicted), 1e-12) / k)
        lo, hi = clopper_pearson(confirmed, k)
        pb, pc = discordance(design.baseline, diff / 100, design.correlation)
        rows.append({"difference_pp": diff, "rate": rate, "discordant_b": pb, "discordant_c": pc,
                     "experiments": k, "predicted": predicted, "empirical": empirical,
                     "empirical_lo": lo, "empirical_hi": hi, "mc_se": mc_se,
                     "z": (empirical - predicted) / mc_se,
                     "first_step": first_step, "z_first_step": (first_step - predicted) / mc_se,
                     "coverage": float(hit.mean()), "mean_width": float((ci[:, 1] - ci[:, 0]).mean()),
                     "mdd": mdd_pp is not None and abs(diff - mdd_pp) < 1e-9})
        if diff == 0:
            any_rejection = int(significant.any(axis=1).sum())
            fwer = {"fwer": any_rejection / k, "fwer_ci": list(clopper_pearson(any_rejection, k)),
                    "fwer_experiments": k, "fwer_rejections": any_rejection}
    t = time.perf_counter()
    top = 100 * (1 - design.baseline)
    grid = np.linspace(0, top, round(top / 0.5) + 1)
    curve = [{"difference_pp": float(d), "predicted": confirm_probability(
        n, m, d / 100, design.baseline, design.correlation, alpha)} for d in grid]
    timing.predict += time.perf_counter() - t
    result = {
        "design": {**asdict(design), "differences": list(design.differences)},
        **fwer,
        "alpha": alpha,
        "mdd_pp": mdd_pp,
        "mdd_discordant": d_min,
        "mdd_formula_pp": formula.min_difference_pp,
        "coverage": sum(covered) / sum(intervals),
        "coverage_intervals": sum(intervals),
        "power": [{"difference_pp": r["difference_pp"], "predicted": r["predicted"],
                   "empirical": r["empirical"]} for r in rows],
        "rows": rows,
        "curve": curve,
    }
    return Calibration(design, result, timing)


TABLE_COLUMNS = ("difference_pp", "rate", "discordant_b", "discordant_c", "experiments",
                 "predicted", "empirical", "empirical_lo", "empirical_hi", "mc_se", "z",
                 "first_step", "z_first_step", "coverage", "mean_width", "mdd")


def table(result: dict):
    """The numbers behind the figure, one row per true difference."""
    import polars as pl

    return pl.DataFrame([{k: r[k] for k in TABLE_COLUMNS} for r in result["rows"]])


def render(result: dict) -> str:
    """The calibration as a person reads it."""
    d = result["design"]
    lines = [
        f"calibration: {d['experiments']} experiments per difference, {d['tasks']} paired tasks, "
        f"{d['comparisons']} comparisons (Holm), alpha {result['alpha']:g}, baseline "
        f"{d['baseline']:g}, outcome correlation {d['correlation']:g}, seed {d['seed']}",
        f"family-wise false-positive rate (every difference zero): {result['fwer']:.4f} "
        f"[{result['fwer_ci'][0]:.4f}, {result['fwer_ci'][1]:.4f}] "
        f"({result['fwer_rejections']} of {result['fwer_experiments']}); alpha {result['alpha']:g}",
    ]
    if result["mdd_pp"] is None:
        lines.append("smallest confirmable difference: none (too few tasks)")
    else:
        lines.append(f"smallest confirmable difference: {result['mdd_pp']:.1f} pp "
                     f"({result['mdd_discordant']} discordant pairs all one way; "
                     f"planaudit power: {result['mdd_formula_pp']:.1f} pp)")
    lines.append(f"bootstrap coverage of the true rate: {result['coverage']:.4f} over "
                 f"{result['coverage_intervals']} intervals (nominal 0.95)")
    lines.append("empirical: confirmed after Holm, as the report decides; first step: p <= "
                 "alpha/M alone, which the prediction models (Holm's step-down adds the rest)")
    lines.append(f"{'difference':>10} {'predicted':>9} {'empirical':>9} {'95% CI':>15} "
                 f"{'z':>6} {'1st step':>8} {'z':>6} {'coverage':>8}")
    for r in result["rows"]:
        lines.append(f"{r['difference_pp']:>8.1f}pp {r['predicted']:>9.4f} {r['empirical']:>9.4f} "
                     f"[{r['empirical_lo']:.3f}, {r['empirical_hi']:.3f}] {r['z']:>6.2f} "
                     f"{r['first_step']:>8.4f} {r['z_first_step']:>6.2f} "
                     f"{r['coverage']:>8.4f}" + ("  <- smallest confirmable" if r["mdd"] else ""))
    return "\n".join(lines)
