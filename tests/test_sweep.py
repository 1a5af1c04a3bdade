"""Difficulty sweeps (`suite.sweep`): seeded generators, the sweep laid into the suite as a
domain of its own, the workflow's jobs and the figure."""

from __future__ import annotations

import re

import polars as pl
import pytest

from planaudit.formal.load import load_task
from planaudit.formal.reachable import goal_reachable
from planaudit.paths import DOMAINS
from planaudit.suite.catalog import load_suite
from planaudit.suite.generators import GENERATORS, rng_for
from planaudit.suite.sweep import SweepError, sizes, with_sweeps


@pytest.mark.parametrize(("domain", "size", "count"), [
    ("blocksworld", 5, lambda t: len(t.objects)),
    ("gripper", 3, lambda t: sum(o.startswith("ball") for o in t.objects)),
    ("logistics", 2, lambda t: sum(o.startswith("p") and o[1:].isdigit() for o in t.objects)),
])
def test_each_generator_writes_a_solvable_task_of_its_size_the_same_for_a_seed(
        tmp_path, domain, size, count):
    text = GENERATORS[domain](size, rng_for(0, domain, size, 1))
    assert text == GENERATORS[domain](size, rng_for(0, domain, size, 1))
    assert text != GENERATORS[domain](size, rng_for(1, domain, size, 1))
    problem = tmp_path / "p.pddl"
    problem.write_text(text)
    task = load_task(DOMAINS / domain / "domain.pddl", problem)
    assert count(task) == size
    assert goal_reachable(task, task.init) is True


def test_a_sweep_is_a_domain_of_the_suite_written_once(tmp_path):
    suite = {"root": str(DOMAINS), "domains": ["gripper"], "obfuscate": ["blocksworld"],
             "sweep": [{"domain": "blocksworld", "sizes": [3, 4], "per_size": 2, "seed": 5}]}
    laid = with_sweeps(suite, tmp_path / "sweep")
    assert laid["domains"] == ["gripper", "blocksworld-sweep"]
    assert laid["obfuscate"] == ["blocksworld", "blocksworld-sweep"]
    entries = load_suite(laid)
    ids = [e.id for e in entries if e.domain == "blocksworld-sweep"]
    assert ids == ["s03-1", "s03-2", "s04-1", "s04-2"]
    assert all(e.label == "solvable" and e.optimal_length is None for e in entries
               if e.domain == "blocksworld-sweep")
    root = tmp_path / "sweep" / "root"
    assert sizes(root, "blocksworld-sweep") == {"s03-1": 3, "s03-2": 3, "s04-1": 4, "s04-2": 4}
    assert sizes(root, "gripper") == {}
    written = {p: p.stat().st_mtime_ns for p in (tmp_path / "sweep").rglob("*.pddl")}
    with_sweeps(suite, tmp_path / "sweep")  # the workflow's every start: nothing rewritten
    assert {p: p.stat().st_mtime_ns for p in written} == written


def test_a_sweep_of_a_domain_the_suite_lacks_is_named(tmp_path):
    suite = {"root": str(DOMAINS), "sweep": [{"domain": "sokoban", "sizes": [3]}]}
    with pytest.raises(SweepError, match=r"suite\.sweep\[0\]\.domain: no domain 'sokoban'"):
        with_sweeps(suite, tmp_path)


def test_a_domain_with_only_a_family_sweeps_through_it(tmp_path):
    suite = {"root": str(DOMAINS), "sweep": [{"domain": "hospital", "sizes": [1, 2]}]}
    with pytest.raises(SweepError, match="no generator for 'hospital'"):
        with_sweeps(suite, tmp_path / "a", family=None)
    laid = with_sweeps(suite, tmp_path / "b")  # the curriculum's families, by default
    hospital = [e for e in load_suite(laid) if e.domain == "hospital-sweep"]
    assert [e.id for e in hospital] == ["s01-1", "s02-1"]


def test_the_sweep_figure_draws_each_configuration_against_the_optimal_length():
    from planaudit.analysis import figures
    from tests.episodes_fixture import make_episodes

    rows = make_episodes()
    sweep = rows.filter(pl.col("domain") == rows["domain"][0]).with_columns(
        pl.lit("blocksworld-sweep").alias("domain"))
    fig = figures.draw_sweep(pl.concat([rows, sweep], how="diagonal_relaxed"))
    text = " ".join(t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text")))
    assert "Difficulty sweep (blocksworld-sweep)" in text
    assert "no provider reported reasoning tokens" in text
    with pytest.raises(figures.NotDrawable, match=r"suite\.sweep"):
        figures.draw_sweep(rows)


def test_the_workflow_prepares_the_sweep_and_draws_its_figure(tmp_path):
    """The sweep's config of its own, dry: a suite job for the sweep domain, its tasks'
    truths among the DAG's outputs, the sweep figure declared."""
    from tests.conftest import ROOT, snakemake

    # results and cache outside the checkout (--config is laid over the config files)
    proc = snakemake(ROOT / "config" / "sweep.yaml", "-n", "-p", "--config",
                     f"results={tmp_path / 'r'}", f"cache={tmp_path / 'c'}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(r"^suite_blocksworld-sweep\s+1$", proc.stdout, re.M)
    assert "report/figures/sweep.png" in proc.stdout and "--regime sweep" in proc.stdout
    assert (tmp_path / "r" / "sweep" / "blocksworld-sweep" / "problems" / "s12-2.pddl").is_file()
