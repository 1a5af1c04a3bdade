"""pass@k and pass^k: the unbiased estimators on worked examples, no extrapolation past n,
and intervals that resample tasks."""

from __future__ import annotations

from math import isclose

import pytest

from planaudit.analysis.repeats import estimate, pass_at, pass_hat
from tests.test_curriculum import suite  # noqa: F401 - the prepared p01-p04 fixture


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


def test_pass_k_of_a_four_epoch_offline_run_is_the_formula_by_hand(tmp_path):
    """The flawed reference run 4 times over a few tasks (offline.epochs: 4, each repeat its
    own calls and draws): the pass_k table's pass^k and pass@k equal C(c,k)/C(n,k) and
    1 - C(n-c,k)/C(n,k) recomputed here from the rows, and the caption states it."""
    from math import comb

    import polars as pl

    from planaudit.analysis.report import TABLE_CAPTIONS
    from planaudit.analysis.tables import build_tables
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard
    from tests.test_reference import task_dir

    folder = tmp_path / "suite"
    names = ("blocksworld/p04", "blocksworld/p09", "gripper/p03", "gripper/p09", "logistics/p03")
    for name in names:
        task_dir(name, str(folder))
    exp = Experiment.from_dict({
        "models": [{"name": "flawed", "model": "reference/flawed", "tier": "reference",
                    "seed": 1, "faults": {"drop_action": 0.4, "plan_on_unsolvable": 0.5}}],
        "offline": {"methods": ["direct"], "epochs": 4}, "cache": str(tmp_path / "cache")})
    frames = run_shard(exp, exp.models[0], exp.method("offline", "direct"),
                       ["blocksworld", "gripper", "logistics"], folder,
                       tmp_path / "{domain}.parquet", tmp_path / "transcripts" / "{domain}")
    rows = pl.concat(list(frames.values()), how="diagonal_relaxed")
    assert rows.height == 4 * len(names) and sorted(set(rows["epoch"])) == [0, 1, 2, 3]
    right = rows.with_columns((pl.col("success") | pl.col("detected")).alias("r"))
    per_task = right.group_by("domain", "task").agg(pl.col("r").sum().alias("c"))
    cs = per_task["c"].to_list()
    assert len(set(cs)) > 1  # the repeats differ: a control with something to estimate
    table = build_tables(rows, n_resamples=200)["pass_k"]
    assert table["k"].to_list() == [1, 2, 4] and set(table["epochs"]) == {4}
    for k in (1, 2, 4):
        got = table.filter(pl.col("k") == k).row(0, named=True)
        assert got["pass_hat_k"] == pytest.approx(sum(comb(c, k) / comb(4, k) for c in cs) / 5)
        assert got["pass_at_k"] == pytest.approx(
            sum(1 - comb(4 - c, k) / comb(4, k) for c in cs) / 5)
        assert got["short"] == 0 and got["tasks"] == 5
    caption = TABLE_CAPTIONS["pass_k"]
    assert "C(c,k)/C(n,k)" in caption and "resamples tasks" in caption
    # the main table counts the first repeat alone: one trial a task
    assert build_tables(rows, n_resamples=50)["main"]["n_tasks"].to_list() == [5]
    # a rerun of the whole run is answered from the cache, repeat by repeat
    again = run_shard(exp, exp.models[0], exp.method("offline", "direct"),
                      ["blocksworld", "gripper", "logistics"], folder,
                      tmp_path / "again-{domain}.parquet", tmp_path / "again" / "{domain}")
    rerun = pl.concat(list(again.values()), how="diagonal_relaxed")
    assert (rerun["cache_hits"] == rerun["n_calls"]).all()
    assert rerun.sort("domain", "task", "epoch")["outcome"].to_list() == rows.sort(
        "domain", "task", "epoch")["outcome"].to_list()


def test_curriculum_and_acpbench_repeat_as_trials_and_fill_pass_k(suite, tmp_path):  # noqa: F811
    """curriculum.epochs and acpbench.epochs: every case and question asked that many times,
    each repeat its own call and draw (a flawed reference differs across them), rows naming
    their epoch, the estimate paying each repeat, the pass_k table counting them per test
    case and per question type in one form, and the regimes' own tables the first repeat."""
    import polars as pl

    from planaudit.acpbench.shard import run_acpbench_shard
    from planaudit.analysis.tables import build_tables
    from planaudit.curriculum.shard import run_curriculum_shard
    from planaudit.experiment import Experiment
    from planaudit.regime import regimes

    flawed = {"name": "flawed", "model": "reference/flawed", "tier": "reference", "seed": 3,
              "faults": {"drop_action": 0.5, "wrong_answer": 0.5, "flip_verdict": 0.5}}

    def experiment(epochs: int) -> Experiment:
        return Experiment.from_dict({
            "models": [flawed], "cache": str(tmp_path / "cache"),
            "curriculum": {"tests": ["t1"], "instances": 3, "epochs": epochs},
            "acpbench": {"types": ["app"], "forms": ["bool", "mcq"], "tasks": 1, "states": 3,
                         "domains": ["gripper"], "epochs": epochs}})

    exp = experiment(3)
    entry = exp.model("flawed")
    cur = run_curriculum_shard(exp, entry, "t1", ["gripper"], suite,
                               str(tmp_path / "t1-{domain}.parquet"),
                               str(tmp_path / "tr" / "{domain}"))["gripper"]
    acp, _ = run_acpbench_shard(exp, entry, "app", suite, str(tmp_path / "app.parquet"),
                                str(tmp_path / "acp"))
    for rows, asked in ((cur, 3), (acp, 3 * 2)):  # instances; states x forms
        assert rows.height == 3 * asked and sorted(set(rows["epoch"])) == [0, 1, 2]
        # the repeats are trials of their own: some item is right in one and wrong in another
        per_item = rows.group_by("task", *(["form"] if "form" in rows.columns else [])).agg(
            pl.col("success").n_unique().alias("kinds"))
        assert (per_item["kinds"] > 1).any()
    assert len(list((tmp_path / "tr" / "gripper").glob("*.e2.jsonl"))) == 3
    # every repeat pays: three times the calls of one run, on the same prompts
    once, thrice = (
        {e.method: e for name in ("curriculum", "acpbench")
         for e in regimes()[name].estimate(x, entry, suite, {"final": 10}, lambda m: 1)}
        for x in (experiment(1), exp))
    assert {m: 3 * e.calls for m, e in once.items()} == {m: e.calls for m, e in thrice.items()}
    tables = build_tables(pl.concat([cur, acp], how="diagonal_relaxed"), n_resamples=100)
    got = tables["pass_k"]
    assert got["method"].unique().sort().to_list() == ["app/bool", "app/mcq", "t1"]
    assert set(got["epochs"]) == {3} and set(got["k"]) == {1, 2, 3}
    first = cur.filter(pl.col("epoch") == 0)
    row = got.filter((pl.col("method") == "t1") & (pl.col("k") == 1)).row(0, named=True)
    assert row["pass_hat_k"] == pytest.approx(cur["success"].mean())  # k=1: every trial
    table = tables["curriculum"]  # PlanBench's Table 1 counts one trial per case
    assert table.row(0, named=True)["flawed (reference, not an LLM)"].startswith(
        f"{first['success'].sum()}/3 ")
