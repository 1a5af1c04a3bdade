"""Tools that fail (online.disruption): explicit, silent and misleading faults injected into
`act`, each only where the hidden model proves the goal still reachable; the reference
agents as controls (the oracle re-senses and recovers, the flawed agent does not)."""

from __future__ import annotations

import asyncio
import json

import pytest

from planaudit.formal import load_task
from planaudit.formal.reachable import UNREACHABLE, explore, goal_reachable
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.online.disruption import Disruption
from planaudit.online.environment import Environment
from planaudit.online.run import run_episode
from tests.test_reference import task_dir

SOLVABLE = ["blocksworld/p04", "gripper/p03", "logistics/p03", "hospital/p04"]
TASKS = [*SOLVABLE, "blocksworld/p09"]
KINDS = ["explicit", "silent", "misleading"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in TASKS}


def episode(model: str, folder, name: str, kind: str, tmp, rate: float = 0.5, seed: int = 0):
    client = Client(ModelConfig(model, f"reference/{model}", max_retries=1), Cache(tmp / "cache"))
    params = {"disruption": {"kind": kind, "rate": rate, "seed": seed}}
    return asyncio.run(run_episode(client, "react", params, folder, task_name=name))


@pytest.mark.parametrize("kind", KINDS)
def test_the_oracle_resenses_and_recovers_from_every_injection(folders, tmp_path, kind):
    made = 0
    for name in SOLVABLE:
        for seed in (0, 1):
            row, _ = episode("oracle", folders[name], name, kind, tmp_path, seed=seed)
            assert row["disruption"] == kind and row["outcome"] == "success", (name, row)
            assert row["resensed"] == row["injections"]  # a query after every one
            assert row["disruption_recovered"] is (True if row["injections"] else None)
            made += row["injections"]
            if kind != "misleading":  # a step that did not run is retried: the plan is longer
                assert row["plan_length"] == row["optimal_length"]
    assert made >= 8  # the control has something to recover from


@pytest.mark.parametrize("kind", ["explicit", "silent"])
def test_the_flawed_agent_never_senses_and_does_not_recover(folders, tmp_path, kind):
    rows = [episode("flawed", folders[n], n, kind, tmp_path, seed=s)[0]
            for n in SOLVABLE for s in (0, 1)]
    hit = [r for r in rows if r["injections"]]
    assert hit and all(r["resensed"] == 0 for r in hit)
    assert not any(r["disruption_recovered"] for r in hit)


def test_an_episode_without_disruption_has_null_columns_and_its_old_key(folders, tmp_path):
    name = "gripper/p03"
    client = Client(ModelConfig("oracle", "reference/oracle"), Cache(tmp_path / "cache"))
    row, _ = asyncio.run(run_episode(client, "react", {}, folders[name], task_name=name))
    assert row["disruption"] is None and row["injections"] is None and row["outcome"] == "success"


def drive(env: Environment, plan: list[str]) -> None:
    """The oracle's discipline by hand: sense before and after every act, retry a step the
    state shows did not run."""
    seen = env.call("query_state", {}).text
    i = 0
    while i < len(plan) and not env.done and env.count.steps < 200:
        env.call("act", {"action": plan[i]})
        now = env.call("query_state", {}).text
        if now != seen:
            i += 1
        seen = now
    env.call("submit", {})


@pytest.mark.parametrize("kind", KINDS)
def test_no_injection_ever_left_an_unsolvable_task(folders, kind):
    """Every injection's true state is checked again by an independent search (the whole
    reachable graph from it, `reachable.explore`): the goal is reachable from each. A task
    already unsolvable gets no injection at all, every draw withheld and counted."""
    checked = 0
    for name in SOLVABLE:
        folder = folders[name]
        task = load_task(folder / "domain.pddl", folder / "problem.pddl")
        plan = json.loads((folder / "truth.json").read_text())["plan"]
        for seed in range(3):
            disruption = Disruption.of({"kind": kind, "rate": 0.6, "seed": seed}, name, 0)
            env = Environment(task, {}, None, 500, disruption=disruption)
            drive(env, plan)
            assert env.ending == "submitted-goal"
            for inj in disruption.made:
                graph = explore(task, inj.state, max_states=500_000)
                assert graph.complete and graph.distance[0] != UNREACHABLE, (name, inj)
                checked += 1
    assert checked >= 10
    dead = folders["blocksworld/p09"]
    task = load_task(dead / "domain.pddl", dead / "problem.pddl")
    assert goal_reachable(task, task.init) is False
    disruption = Disruption.of({"kind": kind, "rate": 1.0}, "blocksworld/p09", 0)
    env = Environment(task, {}, None, 500, disruption=disruption)
    for op in task.all_operators():  # every action applicable from the start, in turn
        if not env.done and op.applicable(env.state):
            env.call("act", {"action": op.name})
    assert disruption.made == [] and disruption.withheld >= 1
    assert disruption.columns("missed-unsolvable")["injections_withheld"] == disruption.withheld


def test_a_misleading_report_is_wrong_once_and_right_after(folders):
    name = "gripper/p03"
    folder = folders[name]
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    plan = json.loads((folder / "truth.json").read_text())["plan"]
    disruption = Disruption.of({"kind": "misleading", "rate": 1.0}, name, 0)
    env = Environment(task, {}, None, 100, disruption=disruption)
    env.call("act", {"action": plan[0]})
    assert len(disruption.made) == 1 and env.state == disruption.made[0].state  # it ran
    first = env.call("query_state", {}).text
    second = env.call("query_state", {}).text
    assert first != second  # the first report held one wrong fact; the next is the truth
    truth = Environment(task, {}, None, 100)
    truth.call("act", {"action": plan[0]})
    assert second == truth.call("query_state", {}).text


def test_the_disruption_table_shows_injections_withheld_and_recoveries(folders, tmp_path):
    import polars as pl

    from planaudit.analysis.tables import build_tables

    rows = [episode(m, folders[n], n, "silent", tmp_path, rate=0.5)[0]
            for m in ("oracle", "flawed") for n in TASKS]
    table = build_tables(pl.DataFrame(rows, infer_schema_length=None),
                         n_resamples=50)["disruption"]
    by = {r["model"].partition(" ")[0]: r for r in table.iter_rows(named=True)}
    frame = pl.DataFrame(rows, infer_schema_length=None)
    for model, r in by.items():
        mine = frame.filter(pl.col("model") == model)
        assert r["injections"] == mine["injections"].sum() > 0
        assert r["withheld"] == mine["injections_withheld"].sum()
    assert by["oracle"]["recovery_rate"] == 1.0 and by["oracle"]["resensed"] == by["oracle"][
        "injections"]
    assert by["flawed"]["recovered"] < by["flawed"]["hit"]
