"""Controls for the statistics: `planaudit calibrate` and the code it shares with the report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.stats import binom, bootstrap

from planaudit.analysis.calibrate import (
    Design,
    calibrate,
    decide,
    simulate,
    smallest_confirmable,
)
from planaudit.analysis.stats import (
    bootstrap_ci,
    bootstrap_cis,
    confirm_probability,
    detectable_difference,
    discordance,
    discordant_counts,
)
from planaudit.analysis.tables import comparisons_table, main_table
from planaudit.cli import main

# -- the shared, faster bootstrap ----------------------------------------------------


@pytest.mark.parametrize(("n", "resamples", "level", "seed"),
                         [(50, 2000, 0.95, 0), (40, 2000, 0.95, 7), (7, 999, 0.9, 3),
                          (2, 100, 0.95, 1), (33, 2001, 0.99, 12)])
def test_counting_bootstrap_equals_scipy_percentile_bit_for_bit(n, resamples, level, seed):
    rng = np.random.default_rng(n)
    data = (rng.random((60, n)) < rng.random((60, 1))).astype(float)
    ours = bootstrap_cis(data, seed, resamples, level)
    for row, (low, high) in zip(data, ours, strict=True):
        res = bootstrap((row,), np.mean, n_resamples=resamples, confidence_level=level,
                        method="percentile", rng=np.random.default_rng(seed))
        assert (low, high) == (res.confidence_interval.low, res.confidence_interval.high)


def test_bootstrap_ci_keeps_scipy_for_other_values_and_one_seed_per_call():
    values = np.random.default_rng(3).normal(0.5, 0.2, size=30)
    res = bootstrap((values,), np.mean, n_resamples=500, method="percentile",
                    rng=np.random.default_rng(4))
    assert bootstrap_ci(values.tolist(), 4, 500) == (res.confidence_interval.low,
                                                     res.confidence_interval.high)
    mixed = np.vstack([values, (values > 0.5).astype(float)])
    both = bootstrap_cis(mixed, 4, 500)
    assert tuple(both[0]) == bootstrap_ci(values.tolist(), 4, 500)
    assert tuple(both[1]) == bootstrap_ci((values > 0.5).astype(float).tolist(), 4, 500)
    with pytest.raises(ValueError):
        bootstrap_cis(np.zeros((3, 1)), 0)


# -- the seed's numbers --------------------------------------------------------------


@pytest.mark.parametrize(("comparisons", "points", "pairs"), [(20, 25.0, 10), (8, 22.5, 9)])
def test_forty_tasks_reproduce_the_seed_paper(comparisons, points, pairs):
    # "can be confirmed": the most favourable split, every discordant pair one way,
    # survives Holm; run through the report's own decision and through the formula
    assert smallest_confirmable(40, comparisons, 0.05) == pairs
    pw = detectable_difference(40, comparisons, 0.05)
    assert (pw.discordant, pw.min_difference_pp) == (pairs, points)
    cal = calibrate(Design(tasks=40, comparisons=comparisons, experiments=20, differences=(),
                           bootstrap=50))
    assert cal.result["mdd_pp"] == cal.result["mdd_formula_pp"] == points


def test_predicted_power_under_the_most_favourable_split_is_a_binomial_tail():
    # correlation 1: b ~ Bin(N, difference), c = 0, confirmed iff b >= the pairs needed
    for diff in (0.1, 0.25, 0.4):
        assert confirm_probability(40, 20, diff, 0.5, 1.0) == pytest.approx(binom.sf(9, 40, diff))
    assert confirm_probability(40, 20, 0.0, 0.5, 1.0) == 0.0
    # less correlation, more discordance both ways: harder to confirm
    assert confirm_probability(40, 20, 0.3, 0.5, 0.0) < confirm_probability(40, 20, 0.3, 0.5, 1.0)


def test_simulated_discordance_is_the_one_the_prediction_assumes():
    design = Design(tasks=40, comparisons=3, experiments=4000, correlation=0.3, baseline=0.4)
    outcomes = simulate(design, 20.0, np.random.default_rng(1))
    b, c = discordant_counts(outcomes[:, 1, :], outcomes[:, 0, :])
    pb, pc = discordance(0.4, 0.2, 0.3)
    cells = design.tasks * design.experiments
    assert b.sum() / cells == pytest.approx(pb, abs=4 * math.sqrt(pb / cells))
    assert c.sum() / cells == pytest.approx(pc, abs=4 * math.sqrt(pc / cells))
    rates = outcomes.mean(axis=(0, 2))
    assert rates[1] == pytest.approx(0.6, abs=0.01)
    assert rates[[0, 2, 3]] == pytest.approx([0.4] * 3, abs=0.01)
    # two equal methods: outcome correlation = the configured one
    x, y = outcomes[:, 0, :].ravel(), outcomes[:, 2, :].ravel()
    assert np.corrcoef(x, y)[0, 1] == pytest.approx(0.3, abs=0.02)


# -- the controls --------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_design():
    """The seed's offline family, 2,000 experiments at the null and at its smallest
    confirmable difference (fewer resamples: coverage is not what this run checks)."""
    return calibrate(Design(tasks=40, comparisons=20, experiments=2000, differences=(),
                            bootstrap=200))


def test_null_family_wise_rate_is_at_most_alpha(seed_design):
    r = seed_design.result
    assert r["fwer_experiments"] == 2000
    low, high = r["fwer_ci"]
    assert low <= r["fwer"] <= high
    assert high <= r["alpha"]  # the whole 95% interval, not just the estimate


def test_independent_outcomes_null_rate_is_at_most_alpha():
    # no shared difficulty: the most discordance under the null
    r = calibrate(Design(tasks=40, comparisons=8, experiments=2000, correlation=0.0,
                         differences=(), bootstrap=50)).result
    assert r["fwer_ci"][1] <= r["alpha"]


def test_power_at_the_smallest_confirmable_difference_is_as_predicted(seed_design):
    [row] = [r for r in seed_design.result["rows"] if r["mdd"]]
    assert row["difference_pp"] == 25.0
    assert abs(row["empirical"] - row["predicted"]) <= 3 * row["mc_se"]


def test_power_rises_with_the_difference_and_coverage_is_reported():
    r = calibrate(Design(tasks=40, comparisons=8, experiments=400,
                         differences=(10, 20, 30, 40), bootstrap=500)).result
    predicted = [p["predicted"] for p in r["power"]]
    empirical = [p["empirical"] for p in r["power"]]
    assert [p["difference_pp"] for p in r["power"]] == [0.0, 10.0, 20.0, 22.5, 30.0, 40.0]
    assert predicted == sorted(predicted) and predicted[0] < 0.01 < 0.9 < predicted[-1]
    assert empirical[0] <= empirical[2] <= empirical[4] <= empirical[5]
    assert 0.85 < r["coverage"] < 1.0
    assert r["coverage_intervals"] == 400 * 9 + 400 * 5


def test_the_fast_path_decides_as_the_report_tables_do():
    """Simulated outcomes written as episode rows and run through comparisons_table and
    main_table give the decisions and intervals calibrate computes from the arrays."""
    design = Design(tasks=12, comparisons=3, experiments=6, correlation=0.2)
    outcomes = simulate(design, 40.0, np.random.default_rng(5))
    significant, favour, _ = decide(outcomes, 0.05)
    methods = ["direct", "m1", "m2", "m3"]
    for e in range(design.experiments):
        rows = [{"regime": "offline", "model": "sim", "reference": False, "method": methods[j],
                 "domain": "d", "task": f"t{t:02d}", "solvable": True,
                 "outcome": "success" if outcomes[e, j, t] else "goal-not-reached",
                 "success": bool(outcomes[e, j, t]), "executable": True, "detected": False,
                 "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
                for j in range(4) for t in range(design.tasks)]
        ep = pl.DataFrame(rows)
        table = comparisons_table(ep, 0.05).sort("method")
        b, c = discordant_counts(outcomes[e, 1:, :], outcomes[e, :1, :])
        assert table["b"].to_list() == b.tolist() and table["c"].to_list() == c.tolist()
        assert table["significant"].to_list() == significant[e].tolist()
        main = main_table(ep, seed=0, n_resamples=300)
        ours = bootstrap_cis(outcomes[e].astype(float), 0, 300)
        for j, method in enumerate(methods):
            row = main.filter(pl.col("method") == method).row(0, named=True)
            assert (row["score_lo"], row["score_hi"]) == tuple(ours[j])
    assert favour.shape == significant.shape == (6, 3)


def test_reruns_are_identical_and_the_seed_matters():
    design = Design(tasks=20, comparisons=4, experiments=200, differences=(30,), bootstrap=100)
    first = calibrate(design).result
    assert first == calibrate(design).result
    other = calibrate(Design(**{**design.__dict__, "seed": 1})).result
    assert other["power"] != first["power"]


# -- the command ---------------------------------------------------------------------


def test_json_has_the_promised_fields(capsys, tmp_path):
    args = ["calibrate", "--tasks", "40", "--comparisons", "8", "--experiments", "100",
            "--differences", "30", "--json", "--out", str(tmp_path)]
    assert main(args) == 0
    r = json.loads(capsys.readouterr().out)
    assert {"fwer", "fwer_ci", "mdd_pp", "coverage", "power"} <= set(r)
    assert r["mdd_pp"] == 22.5 and len(r["fwer_ci"]) == 2
    assert all(set(p) == {"difference_pp", "predicted", "empirical"} for p in r["power"])
    assert {p["difference_pp"] for p in r["power"]} == {0.0, 22.5, 30.0}
    for name in ("calibration.json", "table.csv", "table.md", "power.png", "power.svg"):
        assert (tmp_path / name).stat().st_size > 0
    assert pl.read_csv(tmp_path / "table.csv").height == 3
    saved = json.loads((tmp_path / "calibration.json").read_text())
    assert saved["fwer"] == r["fwer"] and saved["power"] == r["power"]


@pytest.mark.parametrize(("args", "message"), [
    (["--tasks", "1"], "tasks must be at least 2"),
    (["--comparisons", "0"], "comparisons must be at least 1"),
    (["--experiments", "0"], "experiments must be at least 1"),
    (["--correlation", "1.5"], "correlation must lie in [0, 1]"),
    (["--baseline", "1"], "baseline must lie in (0, 1)"),
    (["--differences", "60"], "difference 60 points: must lie in [0, 50]"),
    (["--differences", "ten,20"], "--differences: not a comma-separated list"),
    (["--alpha", "0"], "alpha must lie in (0, 1)"),
])
def test_bad_arguments_are_named(args, message, capsys):
    assert main(["calibrate", "--experiments", "10", *args]) == 2
    assert message in capsys.readouterr().err


def test_power_prints_the_predicted_power(capsys):
    assert main(["power", "--tasks", "40", "--comparisons", "20", "--difference", "25"]) == 0
    out = capsys.readouterr().out
    assert f"power at 25 pp (baseline 0.5, outcome correlation 1): {binom.sf(9, 40, 0.25):.4f}" in out
    assert "smallest detectable difference: 25.0 pp" in out


def test_snakemake_calibrate_target_writes_its_files_and_reruns_nothing(tmp_path):
    import os
    import subprocess
    import sys

    import yaml

    from tests.conftest import ROOT

    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({
        "results": str(tmp_path / "results"),
        "calibration": {"tasks": 20, "comparisons": 4, "experiments": 30, "differences": [30]}}))
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def run(*extra):
        return subprocess.run([str(bin_dir / "snakemake"), "calibrate", "--cores", "1", "--nolock",
                               "--configfile", str(cfg), *extra], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)

    proc = run()
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "results" / "calibration"
    result = json.loads((out / "calibration.json").read_text())
    assert result["design"]["experiments"] == 30 and result["mdd_pp"] == 40.0
    assert (out / "power.png").stat().st_size > 0 and (out / "table.csv").is_file()
    again = run("-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.parametrize(("correlation", "baseline", "difference"),
                         [(0.0, 0.5, 0.0), (0.3, 0.4, 0.2), (0.7, 0.5, 0.25), (1.0, 0.3, 0.3)])
def test_the_measured_correlation_recovers_the_simulated_one(correlation, baseline, difference):
    """`shared_difficulty` reads back the correlation `simulate` drew paired outcomes with
    (the parameter `confirm_probability` takes), also when the two rates differ."""
    from planaudit.analysis.stats import shared_difficulty

    design = Design(tasks=200_000, comparisons=1, experiments=1, baseline=baseline,
                    correlation=correlation)
    out = simulate(design, 100 * difference, np.random.default_rng(5))[0]
    assert shared_difficulty(out[1], out[0]) == pytest.approx(correlation, abs=0.02)
    assert shared_difficulty(out[0], out[1]) == shared_difficulty(out[1], out[0])


def test_the_measured_correlation_is_none_where_the_model_does_not_need_it():
    from planaudit.analysis.stats import discordance, shared_difficulty

    assert shared_difficulty([0, 0, 0, 0], [1, 0, 1, 0]) is None  # a rate of 0
    assert discordance(0.0, 0.5, 0.0) == discordance(0.0, 0.5, 1.0)  # ... where it is free
    assert shared_difficulty([1, 1, 0, 0], [0, 0, 1, 1]) == 0.0  # negative: clipped
    with pytest.raises(ValueError, match="paired series"):
        shared_difficulty([1, 0], [1])
