"""`suite.tasks`: a selection of tasks, checked before anything runs and honoured by every
regime and by the estimate (a pilot or a CI job runs a few tasks of the real suite)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml

from planaudit.config import ConfigError, load_config, locate
from planaudit.suite.catalog import SelectionError, selected_suite, selects
from tests.conftest import DOMAINS, ROOT, snakemake

BASE = ROOT / "config" / "config.yaml"
SELECTION = ["blocksworld/p0[3-5]", "blocksworld/p09", "gripper/p02"]
# blocksworld p03-p05 are solvable, p09 is not; gripper p02 is solvable
SELECTED = {("blocksworld", "p03"), ("blocksworld", "p04"), ("blocksworld", "p05"),
            ("blocksworld", "p09"), ("gripper", "p02")}


def _write(tmp: Path, data: dict, name: str = "my.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# -- the schema and the check beyond it ----------------------------------------------------


def test_schema_accepts_tasks_globs_and_domains(tmp_path):
    path = _write(tmp_path, {"suite": {"root": "domains", "tasks": [
        "blocksworld/p01", "gripper/*", "blocksworld/p0[1-3]", "logistics/p?5"]}})
    config = load_config(path, base=BASE)
    assert config["suite"]["tasks"][1] == "gripper/*"
    assert config["suite"]["obfuscate"] == ["blocksworld", "gripper", "logistics"]  # merged


@pytest.mark.parametrize("tasks, field", [
    ([], "suite.tasks: [] should be non-empty"),
    (["blocksworld"], "suite.tasks[0]: 'blocksworld' does not match"),
    (["gripper/p01", "blocksworld/p01@deceptive"], "suite.tasks[1]: 'blocksworld/p01@deceptive'"),
    (["*/p01"], "suite.tasks[0]: '*/p01' does not match"),
    ("blocksworld/p01", "suite.tasks: 'blocksworld/p01' is not of type 'array'"),
])
def test_schema_refuses_malformed_tasks_naming_file_line_and_field(tmp_path, tasks, field):
    path = _write(tmp_path, {"results": "r", "suite": {"root": "domains", "tasks": tasks}})
    with pytest.raises(ConfigError) as e:
        load_config(path, base=BASE)
    assert str(e.value).startswith(f"{path}:")
    assert field in str(e.value), str(e.value)


def test_selection_prepares_whole_named_domains_and_selects_exactly_the_patterns():
    prepared, selected = selected_suite({"root": str(DOMAINS), "tasks": SELECTION})
    assert {(e.domain, e.id) for e in selected} == SELECTED
    assert [e.domain for e in selected] == ["blocksworld"] * 4 + ["gripper"]  # suite order
    # every task of the named domains is prepared (curriculum examples), no other domain
    assert len(prepared) == 20 and {e.domain for e in prepared} == {"blocksworld", "gripper"}
    everything, same = selected_suite({"root": str(DOMAINS)})
    assert len(everything) == len(same) == 50


def test_a_pattern_matching_nothing_or_an_unknown_domain_is_refused_naming_the_field():
    suite = {"root": str(DOMAINS), "tasks": ["gripper/p01", "blocksworld/p0[12]",
                                             "blocksworld/p99"]}
    with pytest.raises(SelectionError) as e:
        selected_suite(suite)
    assert str(e.value) == ("suite.tasks[2]: 'blocksworld/p99' matches no task "
                            "(blocksworld has 10 tasks, p01..p10)")
    assert e.value.where == ("suite", "tasks", 2)
    with pytest.raises(SelectionError) as e:
        selected_suite({"root": str(DOMAINS), "domains": ["gripper"],
                        "tasks": ["gripper/p01", "blocksworld/p01"]})
    assert str(e.value) == ("suite.tasks[1]: 'blocksworld/p01': no domain 'blocksworld' in "
                            "the suite (have: gripper)")


def test_disguised_variants_follow_their_task():
    assert selects(["blocksworld/p0[1-2]"], "blocksworld", "p02@deceptive")
    assert not selects(["blocksworld/p0[1-2]"], "blocksworld", "p03@deceptive")
    assert not selects(["blocksworld/p01"], "gripper", "p01")
    assert selects(None, "gripper", "p07@randomized")


def test_locate_names_the_line_of_the_layer_that_counts(tmp_path):
    base = _write(tmp_path, {"suite": {"root": "domains", "tasks": ["gripper/p01"]}}, "a.yaml")
    over = _write(tmp_path, {"results": "r", "suite": {"tasks": ["gripper/p01", "x/p1"]}},
                  "b.yaml")
    config = {"suite": {"root": "domains", "tasks": ["gripper/p01", "x/p1"]}}
    # b.yaml: results (1), suite (2), tasks (3), its items on lines 4 and 5
    assert locate([base, over], ("suite", "tasks", 1), config) == f"{over}:5: "
    assert locate([base, over], ("suite", "tasks", 0), config) == f"{over}:4: "  # not a.yaml's
    assert locate([base], ("suite", "tasks", 0), config) == ""  # a.yaml's list is not the one


# -- the workflow --------------------------------------------------------------------------


def _config(tmp: Path, tasks: list[str]) -> Path:
    return _write(tmp, {
        "results": str(tmp / "results"), "cache": str(tmp / "cache"),
        "suite": {"source": "builtin", "root": str(DOMAINS), "domains": ["blocksworld", "gripper"],
                  "obfuscate": ["blocksworld"], "seed": 0, "disguise": ["none", "deceptive"],
                  "tasks": tasks},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": False},
        "models": [{"name": "oracle", "model": "reference/oracle", "family": "reference",
                    "tier": "reference"}],
        "offline": {"methods": ["direct"], "witness": "none", "repair": {"enabled": False}},
        "online": {"methods": ["react"], "plan_settings": ["none"], "budget": 60},
        "curriculum": {"tests": ["t1", "t7"], "instances": 2, "shots": 1},
        "acpbench": {"types": ["app", "land"], "forms": ["bool", "gen"], "tasks": 2, "states": 1},
        "formalize": {"methods": []},  # its shards select through the offline regime's code
    }, "config.yaml")


def _snakemake(cfg: Path, *extra: str) -> subprocess.CompletedProcess:
    return snakemake(cfg, *extra, timeout=900)


def test_a_bad_pattern_fails_the_workflow_before_any_job_naming_file_line_and_field(tmp_path):
    cfg = _config(tmp_path, ["blocksworld/p01", "gripper/p1"])
    proc = _snakemake(cfg, str(tmp_path / "results" / "episodes.parquet"))  # not a dry run
    assert proc.returncode != 0
    line = 1 + cfg.read_text().splitlines().index("  - gripper/p1")
    assert (f"{cfg}:{line}: suite.tasks[1]: 'gripper/p1' matches no task (gripper has 10 "
            "tasks, p01..p10)") in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()  # no job ran


def test_without_a_selection_and_with_one_of_everything_the_jobs_are_the_same(tmp_path):
    """The default config's jobs and commands (params: the specs) do not change: a
    selection of every task adds nothing to any spec, so no finished job would rerun."""
    plain = _write(tmp_path, {"results": str(tmp_path / "r"), "cache": str(tmp_path / "c")},
                   "plain.yaml")
    every = _write(tmp_path, {"results": str(tmp_path / "r"), "cache": str(tmp_path / "c"),
                              "suite": {"tasks": [
        f"{d}/*" for d in ("blocksworld", "gripper", "hospital", "loadbalancing", "logistics")]}},
        "every.yaml")
    runs = [_snakemake(c, "-n", "-p") for c in (plain, every)]
    assert all(r.returncode == 0 for r in runs), runs[1].stderr[-3000:]
    # the report's spec is the whole config (it shows it), suite.tasks included: set apart
    commands = [sorted(c for c in re.findall(r"^Shell command: (.*)$", r.stdout, re.M)
                       if not c.startswith("planaudit report")) for r in runs]
    # the default run: 140 jobs, the report set apart (shard_list and the 5 domains' ready
    # markers are run: blocks, printed as "None")
    assert len(commands[0]) == 139 and commands[0] == commands[1]
    assert not [c for c in commands[1] if "shard" in c and '"suite": {"tasks"' in c]


def _rows(results: Path) -> pl.DataFrame:
    return pl.read_parquet(results / "episodes.parquet")


def _keys(rows: pl.DataFrame, regime: str) -> set[tuple]:
    part = rows.filter(pl.col("regime") == regime)
    cols = ["domain", "task"] + (["disguise"] if regime != "curriculum" else [])
    return {tuple(r) for r in part.select(cols).iter_rows()}


def test_every_regime_and_the_estimate_run_exactly_the_selection_and_a_wider_one_adds_only_new(
        tmp_path):
    from planaudit.curriculum.generate import cases
    from planaudit.estimate import estimate
    from planaudit.experiment import Experiment

    cfg = _config(tmp_path, SELECTION)
    results = tmp_path / "results"
    proc = _snakemake(cfg, str(results / "episodes.parquet"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(results)
    both = {(d, t, x) for d, t in SELECTED for x in ("none", "deceptive")}
    assert _keys(rows, "offline") == both
    assert _keys(rows, "online") == both
    for regime in ("offline", "online"):  # the oracle solves the solvable, detects p09
        outcomes = rows.filter(pl.col("regime") == regime)["outcome"].value_counts()
        assert dict(outcomes.iter_rows()) == {"success": 8, "detected": 2}
    # curriculum: the first two solvable *selected* tasks of each domain (not p01, p02)
    assert _keys(rows, "curriculum") == {("blocksworld", "p03"), ("blocksworld", "p04"),
                                         ("gripper", "p02")}
    assert sorted(rows.filter(pl.col("regime") == "curriculum")["method"].unique()) == \
        ["t1", "t7"]
    # acpbench: questions over the first two solvable selected tasks of each domain as well
    acp = rows.filter(pl.col("regime") == "acpbench")
    assert {(d, t.split("/")[0]) for d, t in acp.select("domain", "task").iter_rows()} == {
        ("blocksworld", "p03"), ("blocksworld", "p04"), ("gripper", "p02")}
    assert acp.height == 3 * 2 * 2 and acp["success"].all()  # 3 tasks x 2 types x 2 forms
    # every task of the two domains was prepared; the rest of the suite was not touched
    suite = results / "suite"
    assert sorted(p.name for p in suite.iterdir() if p.is_dir()) == ["blocksworld", "gripper"]
    assert len(list(suite.glob("*/*/truth.json"))) == 40  # 20 tasks, each also deceptive
    # a selected task's curriculum case is the one a run without a selection poses
    transcript = results / "transcripts" / "curriculum" / "oracle" / "t7" / "blocksworld"
    shown = json.loads((transcript / "p03.jsonl").read_text().splitlines()[0])
    full = {c.instance: c for c in cases(suite, "blocksworld", "t7", 3, 0, 1)}
    assert shown["messages"][0]["content"] == full["p03"].prompt
    assert not (transcript / "p01.jsonl").exists()

    # the bill counts the selected tasks only (each also deceptive), the curriculum's cases too
    config = load_config(cfg, base=BASE)
    bill = {(r.regime, r.method): r for r in estimate(Experiment.from_dict(config), suite)}
    assert (bill["offline", "direct"].tasks, bill["offline", "direct"].calls) == (10, 10)
    assert bill["online", "react"].tasks == 10
    assert (bill["curriculum", "t1"].calls, bill["curriculum", "t7"].calls) == (3, 3)
    unselected = dict(config, suite={k: v for k, v in config["suite"].items() if k != "tasks"})
    assert {(r.regime, r.method): r.tasks for r in estimate(Experiment.from_dict(unselected), suite)}[
        "offline", "direct"] == 40
    with pytest.raises(SelectionError, match=r"suite.tasks\[0\]: 'gripper/p11' matches no"):
        estimate(Experiment.from_dict(
            dict(config, suite=dict(config["suite"], tasks=["gripper/p11"]))), suite)

    # a wider selection: no suite job reruns, the shards do, and the cache answers every
    # episode already run (only gripper/p03's calls are new)
    wider = _config(tmp_path, [*SELECTION, "gripper/p03"])
    dry = _snakemake(wider, "-n", str(results / "episodes.parquet"))
    assert dry.returncode == 0, dry.stderr[-3000:]
    stats = dry.stdout.split("Job stats:")[1].split("\n\n")[0]
    jobs = dict(re.findall(r"^(\w[\w-]*)\s+(\d+)$", stats, re.M))
    assert jobs == {"offline_oracle": "1", "online_oracle": "1", "curriculum_oracle": "2",
                    "acpbench_oracle": "2", "collect": "1",
                    "total": "7"}, stats  # the same shards: their listing stands
    proc = _snakemake(wider, str(results / "episodes.parquet"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = _rows(results)
    new = {("gripper", "p03", x) for x in ("none", "deceptive")}
    for regime in ("offline", "online"):
        assert _keys(rows, regime) == both | new
        part = rows.filter(pl.col("regime") == regime)
        fresh = part.filter((pl.col("domain") == "gripper") & (pl.col("task") == "p03"))
        old = part.filter((pl.col("domain") != "gripper") | (pl.col("task") != "p03"))
        assert (old["cache_hits"] == old["n_calls"]).all() and old["n_calls"].min() > 0
        assert fresh["cache_hits"].to_list() == [0, 0]
    curriculum = rows.filter(pl.col("regime") == "curriculum")
    assert _keys(rows, "curriculum") == {("blocksworld", "p03"), ("blocksworld", "p04"),
                                         ("gripper", "p02"), ("gripper", "p03")}
    assert {(r["task"], r["cache_hits"]) for r in curriculum.filter(
        pl.col("domain") == "gripper").iter_rows(named=True)} == {("p02", 1), ("p03", 0)}
    # acpbench's jobs rerun, the cache answering every question posed before
    acp = rows.filter((pl.col("regime") == "acpbench") & (pl.col("domain") == "gripper"))
    assert {(r["task"].split("/")[0], r["cache_hits"]) for r in acp.iter_rows(named=True)} == {
        ("p02", 1), ("p03", 0)}
