"""Collect and tables on the synthetic fixture: every table in every format, numbers
checked against plain-Python counts, reruns byte-identical, partial designs work."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from statsmodels.stats.multitest import multipletests

from planaudit.analysis.collect import CollectError, collect, default_schema, load_schema
from planaudit.analysis.outputs import table_names
from planaudit.analysis.stats import mcnemar_exact
from planaudit.analysis.tables import FORMATS, write_tables
from planaudit.cli import main
from planaudit.commandline import EXIT_INPUT, EXIT_OK
from planaudit.episode import OUTCOMES
from tests.episodes_fixture import make_episodes

ONLINE_ONLY = ("n_epistemic", "n_ontic", "sensing_ratio", "sensed_before_first_act", "steps",
               "states_revisited", "critic_rejections", "reflections", "blocked_actions", "recovered",
               "epoch", "plan_setting", "plan_order", "phases", "ppc", "poc", "ppf", "pc",
               "strict_compliance", "nodes", "temporal_edges", "loops", "loops_bounded")
LABEL = "oracle (reference, not an LLM)"


@pytest.fixture(scope="module")
def episodes() -> pl.DataFrame:
    return make_episodes()


@pytest.fixture(scope="module")
def report(episodes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    write_tables(episodes, out, seed=0, n_resamples=500)
    return out


def rows_of(episodes: pl.DataFrame, **key) -> list[dict]:
    return [r for r in episodes.to_dicts() if all(r[k] == v for k, v in key.items())]


def share(rows: list[dict], hit, among) -> float | None:
    pool = [r for r in rows if r["outcome"] != "error" and among(r)]
    return sum(bool(hit(r)) for r in pool) / len(pool) if pool else None


def test_every_table_in_every_format(report):
    for name in table_names():  # the regimes' own tables too
        for ext in FORMATS:
            text = (report / f"{name}.{ext}").read_text()
            assert text.strip(), f"{name}.{ext} is empty"
        assert (report / f"{name}.md").read_text().splitlines()[1].startswith("|---")
        assert "\\begin{tabular}" in (report / f"{name}.tex").read_text()


def test_reference_rows_are_labelled_everywhere(report):
    main_table = pl.read_csv(report / "main.csv")
    assert set(main_table.filter(pl.col("reference"))["model"]) == {LABEL}
    assert not main_table.filter(~pl.col("reference"))["model"].str.contains("reference").any()
    for name in table_names():  # the regimes' own tables too
        for ext in ("csv", "md"):
            text = (report / f"{name}.{ext}").read_text()
            assert not re.search(r"oracle(?! \(reference, not an LLM\))", text), f"{name}.{ext}"


def test_rerun_is_byte_identical(episodes, report, tmp_path):
    write_tables(episodes, tmp_path, seed=0, n_resamples=500)
    for name in table_names():  # the regimes' own tables too
        for ext in FORMATS:
            assert (tmp_path / f"{name}.{ext}").read_bytes() == (report / f"{name}.{ext}").read_bytes()


def test_main_matches_plain_counts(episodes, report):
    table = pl.read_csv(report / "main.csv")
    for regime, model, method in [("offline", "model-a", "direct"), ("online", "model-b", "gated"),
                                  ("offline", "model-b", "cot")]:
        rows = rows_of(episodes, regime=regime, model=model, method=method)
        got = table.filter((pl.col("regime") == regime) & (pl.col("model") == model)
                           & (pl.col("method") == method)).row(0, named=True)
        valid = [r for r in rows if r["outcome"] != "error"]
        assert got["n_tasks"] == len(rows)
        assert got["errors"] == len(rows) - len(valid)
        assert got["success"] == pytest.approx(share(rows, lambda r: r["success"], lambda r: r["solvable"]))
        assert got["detection"] == pytest.approx(
            share(rows, lambda r: r["detected"], lambda r: not r["solvable"]))
        assert got["executability"] == pytest.approx(
            share(rows, lambda r: r["executable"], lambda r: r["executable"] is not None))
        assert got["score"] == pytest.approx(
            share(rows, lambda r: r["success"] or r["detected"], lambda r: True))
        assert got["mean_tokens"] == pytest.approx(
            sum(r["input_tokens"] + r["output_tokens"] for r in valid) / len(valid))
        assert got["mean_cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in valid) / len(valid))
        assert got["success_lo"] <= got["success"] <= got["success_hi"]
        assert got["score_lo"] <= got["score"] <= got["score_hi"]


def test_outcomes_count_every_outcome(episodes, report):
    table = pl.read_csv(report / "outcomes.csv")
    assert set(OUTCOMES) <= set(table.columns)
    for row in table.iter_rows(named=True):
        model = row["model"].removesuffix(" (reference, not an LLM)")
        counts = Counter(r["outcome"] for r in rows_of(
            episodes, regime=row["regime"], model=model, method=row["method"]))
        assert {o: row[o] for o in OUTCOMES} == {o: counts.get(o, 0) for o in OUTCOMES}
        assert row["episodes"] == sum(counts.values())


def paired_counts(episodes: pl.DataFrame, key_a: dict, key_b: dict) -> tuple[int, int, int]:
    def scores(key):
        return {(r["domain"], r["task"]): r["success"] or r["detected"]
                for r in rows_of(episodes, **key) if r["outcome"] != "error"}

    a, z = scores(key_a), scores(key_b)
    both = a.keys() & z.keys()
    return len(both), sum(a[t] and not z[t] for t in both), sum(z[t] and not a[t] for t in both)


def test_comparisons_pair_tasks_and_adjust_by_holm(episodes, report):
    table = pl.read_csv(report / "comparisons.csv")
    assert set(table["baseline"]) == {"direct", "react"}
    assert not table.filter(pl.col("method") == pl.col("baseline")).height
    for row in table.iter_rows(named=True):
        model = row["model"].removesuffix(" (reference, not an LLM)")
        n, b, c = paired_counts(
            episodes, {"regime": row["regime"], "model": model, "method": row["method"]},
            {"regime": row["regime"], "model": model, "method": row["baseline"]})
        assert (row["n"], row["b"], row["c"]) == (n, b, c)
        assert row["p"] == pytest.approx(mcnemar_exact(b, c))
        assert row["p_adj"] >= row["p"]
        assert row["significant"] == (row["p_adj"] <= 0.05)
    for _, family in table.group_by(["regime", "reference"]):
        expected = multipletests(family["p"].to_list(), method="holm")[1]
        assert family["p_adj"].to_list() == pytest.approx(expected.tolist())


def test_per_task_and_per_domain_cells(episodes, report):
    wide = pl.read_csv(report / "per_task.csv")
    assert wide.height == episodes.select("domain", "task").unique().height
    for r in rows_of(episodes, model="model-a")[:40]:
        cell = wide.filter((pl.col("domain") == r["domain"]) & (pl.col("task") == r["task"]))
        value = cell[f"{r['regime']}/model-a/{r['method']}"][0]
        assert value == (None if r["outcome"] == "error" else int(r["success"] or r["detected"]))
    domains = pl.read_csv(report / "per_domain.csv")
    rows = rows_of(episodes, regime="online", model="model-a", domain="gripper")
    got = domains.filter((pl.col("regime") == "online") & (pl.col("model") == "model-a")
                         & (pl.col("domain") == "gripper")).row(0, named=True)
    assert got["success"] == pytest.approx(share(rows, lambda r: r["success"], lambda r: r["solvable"]))
    assert got["episodes"] == len(rows)


def test_online_vs_offline_and_power(episodes, report):
    versus = pl.read_csv(report / "online_vs_offline.csv")
    row = versus.filter((pl.col("model") == "model-b") & (pl.col("online") == "gated")
                        & (pl.col("offline") == "direct")).row(0, named=True)
    n, b, c = paired_counts(episodes, {"regime": "online", "model": "model-b", "method": "gated"},
                            {"regime": "offline", "model": "model-b", "method": "direct"})
    assert (row["n"], row["b"], row["c"]) == (n, b, c)
    assert (versus["p_adj"] >= versus["p"]).all()
    power = pl.read_csv(report / "power.csv")
    comparisons = pl.read_csv(report / "comparisons.csv")
    llm = power.filter((pl.col("table") == "comparisons") & (pl.col("regime") == "offline")
                       & ~pl.col("reference")).row(0, named=True)
    assert llm["comparisons"] == comparisons.filter(
        (pl.col("regime") == "offline") & ~pl.col("reference")).height
    assert llm["n_tasks"] == episodes.select("domain", "task").unique().height
    assert llm["min_difference_pp"] == pytest.approx(100 * llm["discordant_pairs"] / llm["n_tasks"])


def test_only_offline_rows_work(episodes, tmp_path):
    offline = episodes.filter(pl.col("regime") == "offline").drop(ONLINE_ONLY)
    tables = write_tables(offline, tmp_path, n_resamples=200)
    assert set(tables["main"]["regime"]) == {"offline"}
    assert tables["online_vs_offline"].height == 0
    assert (tmp_path / "online_vs_offline.csv").read_text().startswith("model,reference,online,offline")
    assert set(tables["power"]["table"]) == {"comparisons"}
    one_model = write_tables(offline.filter(pl.col("model") == "model-b")
                             .filter(pl.col("method") != "direct"), tmp_path / "one", n_resamples=200)
    assert one_model["comparisons"].height == 0  # no baseline, no comparison
    assert one_model["power"].height == 0
    assert one_model["main"].height == 2


def write_shards(episodes: pl.DataFrame, root: Path) -> list[Path]:
    """Shards as the episode rules write them: offline ones lack the online columns."""
    paths = []
    for (regime, model, method, domain), g in episodes.partition_by(
            ["regime", "model", "method", "domain"], as_dict=True).items():
        path = root / regime / model / method / f"{domain}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        (g.drop(ONLINE_ONLY) if regime == "offline" else g).write_parquet(path)
        paths.append(path)
    return sorted(paths)


def test_collect_unions_regimes_and_sorts(episodes, tmp_path):
    shards = write_shards(episodes, tmp_path / "episodes")
    frame = collect(reversed(shards), load_schema(default_schema()))
    assert frame.height == episodes.height
    assert set(ONLINE_ONLY) <= set(frame.columns)
    offline = frame.filter(pl.col("regime") == "offline")
    assert offline.select(ONLINE_ONLY).null_count().row(0) == (offline.height,) * len(ONLINE_ONLY)
    keys = frame.select("regime", "model", "method", "domain", "task").rows()
    assert keys == sorted(keys)
    assert frame.equals(collect(shards, load_schema(default_schema())))


def test_collect_rejects_a_bad_row_naming_file_and_column(episodes, tmp_path):
    shards = write_shards(episodes, tmp_path / "episodes")
    bad = shards[3]
    frame = pl.read_parquet(bad)
    frame.with_columns(pl.when(pl.int_range(pl.len()) == 2).then(pl.lit(-1.0))
                       .otherwise(pl.col("cost_usd")).alias("cost_usd")).write_parquet(bad)
    with pytest.raises(CollectError, match=rf"{re.escape(str(bad))}: row 2 .*'cost_usd'"):
        collect(shards, load_schema(default_schema()))
    online = next(s for s in shards if "/online/" in str(s))
    pl.read_parquet(online).drop("n_ontic").write_parquet(online)
    with pytest.raises(CollectError, match=rf"{re.escape(str(online))}.*'n_ontic'"):
        collect([online], load_schema(default_schema()))
    with pytest.raises(CollectError, match="more than one row"):
        collect([shards[0], shards[0]], load_schema(default_schema()))


def test_collect_checks_valid_shards_by_distinct_values(episodes, tmp_path, monkeypatch):
    """Valid shards are decided column by column (no row-by-row check); a bad value among
    shards of one set of column types still sends that group row by row, and the first
    bad shard in order is the one named."""
    import planaudit.analysis.collect as collect_module

    shards = write_shards(episodes, tmp_path / "episodes")
    checked: list[Path] = []
    row_by_row = collect_module.check_shard
    monkeypatch.setattr(collect_module, "check_shard",
                        lambda frame, shard, v: (checked.append(shard), row_by_row(frame, shard, v)))
    collect(shards, load_schema(default_schema()))
    assert checked == []
    offline = [s for s in shards if "/offline/" in str(s)]
    for bad in offline[1:3]:
        frame = pl.read_parquet(bad)
        frame.with_columns(pl.lit("lost").alias("outcome")).write_parquet(bad)
    with pytest.raises(CollectError, match=rf"{re.escape(str(offline[1]))}: row 0 .*'outcome'"):
        collect(shards, load_schema(default_schema()))
    assert offline[1] in checked and offline[2] not in checked


def test_cli_collect_tables_power(episodes, tmp_path, capsys):
    shards = [str(p) for p in write_shards(episodes, tmp_path / "episodes")]
    out = tmp_path / "episodes.parquet"
    assert main(["collect", "--out", str(out), *shards]) == EXIT_OK
    assert main(["tables", "--episodes", str(out), "--out", str(tmp_path / "report"),
                 "--bootstrap", "200"]) == EXIT_OK
    assert all((tmp_path / "report" / f"{t}.{e}").is_file() for t in table_names()
               for e in FORMATS)
    capsys.readouterr()
    assert main(["power", "--tasks", "50", "--comparisons", "1"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "12.0 pp" in printed and "6 of 50" in printed
    pl.read_parquet(shards[0]).with_columns(outcome=pl.lit("exploded")).write_parquet(shards[0])
    assert main(["collect", "--out", str(out), *shards]) == EXIT_INPUT
    assert shards[0] in capsys.readouterr().err
    assert main(["tables", "--episodes", str(tmp_path / "none.parquet")]) == EXIT_INPUT


def test_witness_table_counts_every_disagreement_by_its_departure(episodes, report):
    from planaudit.analysis.tables import disagreement, witness_table

    table = pl.read_csv(report / "witness.csv")
    offline = episodes.filter(pl.col("regime") == "offline")
    assert table.height == offline.select("model", "method").unique().height  # witness on offline
    assert table["disagree"].sum() == 0 and table["agree"].sum() == table["val_judged"].sum()
    assert table["plans"].sum() == offline["val_detail"].is_not_null().sum()
    assert set(table.filter(pl.col("reference"))["model"]) == {LABEL}
    # make four of model-a/direct's judged plans disagree, one way each
    rows = offline.filter((pl.col("model") == "model-a") & (pl.col("method") == "direct")
                          & pl.col("val_valid").is_not_null()).sort("domain", "task").to_dicts()
    invalid = [r for r in rows if r["val_valid"] is False]
    valid = [r for r in rows if r["val_valid"] is True]
    invalid[0].update(val_valid=True, val_detail="valid, value 1", first_failure_kind="precondition",
                      first_failure_detail="precondition not satisfied; unsatisfied: (< (f) 2)")
    invalid[1].update(val_valid=True, val_detail="valid, value 1", first_failure_kind="wrong-arity",
                      first_failure_detail="'stack' takes 2 arguments, given 3")
    invalid[2].update(val_valid=True, val_detail="valid, value 4")  # (clear b): no departure
    valid[0].update(val_valid=False, val_detail="invalid at step 1: validator failed: Attempt to "
                                                "access undefined numeric expression! (f)")
    valid[1].update(val_valid=None, val_detail="error: VAL crashed (SIGSEGV)")
    assert [disagreement(r) for r in (*invalid[:3], *valid[:2])] == [
        "tolerance", "extra-argument", "unexplained", "undefined-order", None]
    got = witness_table(pl.DataFrame(rows, infer_schema_length=None)).row(0, named=True)
    assert got["plans"] == len(rows) and got["val_judged"] == len(rows) - 1
    assert (got["disagree"], got["tolerance"], got["extra_argument"], got["undefined_order"],
            got["unexplained"], got["equal_timestamps"], got["val_no_verdict"]) == (4, 1, 1, 1, 1, 0, 1)
    assert got["agree"] == len(rows) - 1 - 4
    # without the witness there is nothing to count, and the table is its header
    assert witness_table(episodes.drop("val_valid", "val_detail")).height == 0


def test_main_counts_truncations_apart_and_never_prices_the_unpriced_as_free(episodes):
    from planaudit.analysis.tables import main_table

    one = episodes.filter((pl.col("regime") == "offline") & (pl.col("outcome") != "error"))
    key = one.select("model", "method").row(0)
    group = one.filter((pl.col("model") == key[0]) & (pl.col("method") == key[1]))
    marked = group.with_row_index("i").with_columns(
        truncated=pl.col("i") < 3,
        cost_usd=pl.when(pl.col("i") == 0).then(None).otherwise(pl.col("cost_usd"))).drop("i")
    row = main_table(marked, n_resamples=50).row(0, named=True)
    assert row["truncated"] == 3 and row["unpriced"] == 1 and row["mean_cost_usd"] is None
    whole = main_table(group, n_resamples=50).row(0, named=True)
    assert whole["truncated"] == 0 and whole["unpriced"] == 0
    assert whole["mean_cost_usd"] == pytest.approx(group["cost_usd"].mean())


def test_cost_per_solved_task_is_the_whole_cost_over_the_solved_and_never_zero(episodes):
    from planaudit.analysis.stats import ratio_ci
    from planaudit.analysis.tables import main_table

    one = episodes.filter((pl.col("regime") == "offline") & (pl.col("outcome") != "error"))
    group = next(g for g in one.partition_by("model", "method")  # neither perfect nor nil
                 if 0 < (g["success"] | g["detected"]).sum() < g.height)
    solved = (group["success"] | group["detected"]).sum()
    row = main_table(group, n_resamples=200).row(0, named=True)
    assert row["cost_per_solved_usd"] == pytest.approx(group["cost_usd"].sum() / solved)
    assert row["cost_per_solved_lo"] <= row["cost_per_solved_usd"] <= row["cost_per_solved_hi"]
    # nothing solved: no cost per solved task (a 0 would call the configuration cheapest)
    failed = group.with_columns(success=pl.lit(False), detected=pl.lit(False))
    nil = main_table(failed, n_resamples=50).row(0, named=True)
    assert nil["cost_per_solved_usd"] is None and nil["cost_per_solved_lo"] is None
    assert nil["mean_cost_usd"] == pytest.approx(group["cost_usd"].mean())
    # by hand: two tasks at $1 (solved) and $3 (not); resamples give $1 (the solved task
    # twice), $4 (both), or nothing solved, no finite cost per solve: an unbounded top
    low, high = ratio_ci([1.0, 3.0], [1, 0], seed=0, n_resamples=400)
    assert low == pytest.approx(1.0) and high == float("inf")
    assert ratio_ci([1.0], [1], seed=0) is None
