"""Classical planners as subjects (`planner/lama`, `planner/astar`): their answers on the
built-in tasks, judged by the validator, and their place in the config."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from planaudit.config import planner_view
from planaudit.contract import extract
from planaudit.experiment import ConfigError, Experiment
from planaudit.formal.load import load_task
from planaudit.formal.planners import plan, reply
from planaudit.formal.validate import validate
from planaudit.paths import DOMAINS

GRIPPER = DOMAINS / "gripper"


def folder(tmp_path: Path, task: str) -> Path:
    out = tmp_path / task
    out.mkdir()
    shutil.copy(GRIPPER / "domain.pddl", out / "domain.pddl")
    shutil.copy(GRIPPER / "problems" / f"{task}.pddl", out / "problem.pddl")
    return out


@pytest.mark.parametrize("planner", ["astar", "lama"])
def test_a_planner_plans_a_solvable_task_and_the_validator_accepts_it(tmp_path, planner):
    task_dir = folder(tmp_path, "p04")
    text, calls, tokens_in, tokens_out = reply(planner, [], {"task_dir": str(task_dir),
                                                             "seconds": 60})
    task = load_task(task_dir / "domain.pddl", task_dir / "problem.pddl")
    read = extract(text, frozenset(task.domain.actions))
    assert (calls, tokens_in, tokens_out) == ([], 0, 0)
    assert read.kind == "plan" and validate(task, read.steps).valid
    if planner == "astar":  # optimal: the length tasks.yaml records
        assert len(read.steps) == 11


@pytest.mark.parametrize("planner", ["astar", "lama"])
def test_a_planner_answers_unsolvable_on_an_unsolvable_task(tmp_path, planner):
    answer = plan(planner, folder(tmp_path, "p09"), 60)
    assert answer.status == "unsolvable" and answer.plan is None
    assert answer.text(planner, 60) == "UNSOLVABLE"


def test_past_its_budget_a_planner_says_so_and_gives_no_answer(tmp_path):
    answer = plan("astar", folder(tmp_path, "p08"), 0.0)
    assert answer.status == "limit"
    text = answer.text("astar", 0.0)
    assert text.startswith("No plan: planner/astar stopped after")
    assert extract(text, frozenset({"pick", "move", "drop"})).kind != "plan"


def test_an_unknown_planner_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="planner/lama, planner/astar"):
        plan("ff", folder(tmp_path, "p01"), 1)


def test_a_planner_runs_the_planner_method_alone_offline_and_online_at_its_timeout():
    config = {"models": [{"name": "oracle", "model": "reference/oracle"},
                         {"name": "astar", "model": "planner/astar", "timeout": 30}],
              "offline": {"methods": ["direct", "cot"]},
              "online": {"methods": ["react"], "plan_settings": ["standard", "none"]},
              "curriculum": {"tests": ["t1"]}}
    view = planner_view(config)
    assert view["offline"]["methods"] == view["online"]["methods"] == ["planner"]
    assert view["online"]["plan_settings"] == ["none"] and "curriculum" not in view
    experiment = Experiment.from_dict(config)
    oracle, astar = experiment.models
    assert astar.is_planner and astar.in_process and astar.tier == "planner"
    assert astar.reference == {"seconds": 30.0}
    assert experiment.for_model(astar).section("offline").methods == ("planner",)
    assert experiment.for_model(astar).section("online").methods == ("planner",)
    assert set(experiment.for_model(oracle).section("offline").methods) == {"direct", "cot"}
    # a regime that runs nothing runs no planner either
    assert planner_view({**config, "online": {"methods": []}})["online"]["methods"] == []


@pytest.mark.parametrize("regime", ["offline", "online"])
def test_an_llm_cannot_be_given_the_planner_method(regime):
    config = {"models": [{"name": "m", "model": "openai/gpt-4o"}],
              regime: {"methods": ["planner"]}}
    with pytest.raises(ConfigError, match=rf"{regime}\.methods: 'planner'"):
        Experiment.from_dict(config)


def test_online_a_planner_plans_then_executes_and_its_offline_answer_serves_it(tmp_path):
    """Plan-then-execute through the online tools, as a shard runs it: a solvable task
    reached by acting its plan (no sensing), an unsolvable one declared, the answer read
    from the cache the offline episode filled (a planner's key is its PDDL and budget, not
    the prompt it ignores), the seconds it took kept; under a tool that fails silently the
    unsensed plan misses the goal, which is what a planner without sensing does."""
    import polars as pl

    from planaudit.shard import run_shard
    from tests.test_reference import task_dir

    suite = tmp_path / "suite"
    for name in ("gripper/p03", "gripper/p09"):
        task_dir(name, str(suite))

    def run(regime: str, **section) -> pl.DataFrame:
        exp = Experiment.from_dict({
            "models": [{"name": "astar", "model": "planner/astar", "timeout": 60}],
            regime: {"methods": ["planner"], **section}, "cache": str(tmp_path / "cache")})
        out = tmp_path / f"{regime}-{len(section)}.parquet"
        return run_shard(exp, exp.models[0], exp.method(regime, "planner"), "gripper", suite,
                         out, tmp_path / "tr" / f"{regime}{len(section)}")["gripper"]

    offline = run("offline").sort("task")
    online = run("online").sort("task")
    assert online["outcome"].to_list() == ["success", "detected"]
    assert online["n_epistemic"].to_list() == [1, 1]  # get_task alone: it never senses
    assert online["n_ontic"][0] == online["plan_length"][0] == online["optimal_length"][0]
    assert online["cache_hits"].to_list() == [1, 1]  # answered by the offline episodes
    assert online["latency_s"].to_list() == offline["latency_s"].to_list()
    assert set(online["model_tier"]) == {"planner"} and not online["reference"].any()
    silent = run("online", disruption={"kind": "silent", "rate": 1.0, "seed": 0})
    hit = silent.filter(pl.col("task") == "p03").row(0, named=True)
    assert hit["injections"] > 0 and hit["outcome"] != "success"


def test_a_planner_episode_takes_the_models_path_at_cost_zero_and_keeps_its_seconds(tmp_path):
    """Through the client, as the shard runs it: the row is judged like a model's, costs
    nothing with its source said, and a rerun answered from the cache keeps the seconds the
    planner took (its measure), where a model's cached reply reports none."""
    import asyncio

    from planaudit.experiment import ModelEntry
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client
    from planaudit.offline.run import run_episode
    from tests.test_reference import task_dir

    entry = ModelEntry.from_dict({"name": "astar", "model": "planner/astar", "timeout": 60})
    rows = []
    for name in ("gripper/p03", "gripper/p09", "gripper/p03"):
        task = task_dir(name, str(tmp_path / "suite"))
        client = Client(entry.client(), Cache(tmp_path / "cache"))
        row, _ = asyncio.run(run_episode(
            client, "planner", {}, task, task_name=name, reference_meta=entry.reference,
            tier=entry.tier))
        rows.append(row)
    first, unsolvable, again = rows
    assert first["outcome"] == "success" and first["plan_length"] == first["optimal_length"]
    assert unsolvable["outcome"] == "detected"
    assert first["model_tier"] == "planner" and first["reference"] is False
    assert first["cost_usd"] == 0.0 and first["price_source"] == "planner (no model call)"
    assert first["input_tokens"] == first["output_tokens"] == 0
    assert first["latency_s"] > 0 and again["cache_hits"] == 1
    assert again["latency_s"] == first["latency_s"]


def test_an_exported_planner_is_never_an_llm():
    from planaudit.interop.eee import model_identity

    info = model_identity("lama", reference=False, planner=True)
    assert info["name"] == "lama (classical planner, not an LLM)"
    assert info["id"] == "planaudit/planner-lama"
    assert info["additional_details"]["model_kind"].startswith("classical planner")
    assert model_identity("gpt", reference=False)["additional_details"]["model_kind"] == "LLM"
