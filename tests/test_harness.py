"""planaudit's tasks under `inspect eval`, run as a user runs them: a subprocess in a folder
that is not the repository, with the reference models (`planaudit/oracle` scores 100%,
`planaudit/flawed` fails where `formal/` says it fails) and with the scripted local
server as a real OpenAI-compatible model. Every message of every log is scanned for the
hidden model (`suite/leaks.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai import reply, serve_in_subprocess, tool_call

inspect_log = pytest.importorskip("inspect_ai.log")

INSPECT = Path(sys.executable).parent / "inspect"
DOMAIN = "blocksworld"


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    """A run folder outside the repository, a user cache and a prepared suite folder."""
    base = tmp_path_factory.mktemp("harness")
    (base / "run").mkdir()
    return {"run": base / "run", "cache": base / "cache", "suite": base / "suite",
            "logs": base / "logs"}


def inspect_eval(where, task: str, model: str, *args: str, env: dict | None = None,
                 name: str = "") -> object:
    """One `inspect eval` in a subprocess; its log as read by `read_eval_log`."""
    logs = where["logs"] / (name or task.replace("/", "-") + "-" + model.replace("/", "-"))
    cmd = [str(INSPECT), "eval", task, "--model", model, "-T", f"domain={DOMAIN}",
           "--log-dir", str(logs), "--display", "none", *args]
    full = {**os.environ, "PLANAUDIT_INSPECT_CACHE": str(where["cache"]), **(env or {})}
    done = subprocess.run(cmd, cwd=where["run"], env=full, capture_output=True, text=True,
                          timeout=300)
    files = sorted(logs.glob("*.eval"))
    assert done.returncode == 0 and len(files) == 1, done.stdout[-2000:] + done.stderr[-4000:]
    log = inspect_log.read_eval_log(str(files[0]))
    assert log.status == "success", log.error
    return log


def suite_arg(where) -> list[str]:
    return ["-T", f"suite={where['suite']}"]


def rows(log) -> list[dict]:
    return [s.scores["outcome"].metadata["row"] for s in log.samples]


def accuracy(log) -> float:
    return log.results.scores[0].metrics["accuracy"].value


def texts(sample) -> list[str]:
    out = []
    for m in sample.messages:
        out.append(m.text)
        out += [json.dumps(tc.arguments) for tc in getattr(m, "tool_calls", None) or []]
    return out


def assert_no_leaks(log, suite_dir: Path) -> None:
    from planaudit.suite.leaks import leaks

    for s in log.samples:
        task = s.scores["outcome"].metadata["row"]["task"].split("/")[0]
        names = json.loads((suite_dir / DOMAIN / task / "names.json").read_text())
        for text in texts(s):
            assert leaks(text, names) == [], (s.id, text[:300])


def truth(where, task: str) -> dict:
    return json.loads((where["suite"] / DOMAIN / task / "truth.json").read_text())


# -- the reference models -----------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle_offline(where):
    return inspect_eval(where, "planaudit/offline", "planaudit/oracle", "-T", "tasks=p01,p09",
                        "-T", "strategy=cot", *suite_arg(where))


def test_oracle_offline_scores_every_task(where, oracle_offline):
    log = oracle_offline
    assert accuracy(log) == 1.0
    got = {r["task"]: r["outcome"] for r in rows(log)}
    assert got == {"p01": "success", "p09": "detected"}  # p09 is unsolvable
    assert {r["method"] for r in rows(log)} == {"cot"}
    assert all(r["reference"] and r["model_tier"] == "reference" for r in rows(log))
    # labelled a non-LLM reference in the log's own model field
    assert all("non-LLM reference" in s.output.model for s in log.samples)
    assert_no_leaks(log, where["suite"])


def test_offline_row_is_the_pipelines(where, oracle_offline):
    """The Inspect sample's row is the one planaudit's own episode makes on the same task
    with the pipeline's reference model (cost, latency and the hash aside)."""
    import asyncio

    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client, ModelConfig
    from planaudit.offline.run import run_episode

    client = Client(ModelConfig(name="oracle", model="reference/oracle", tier="reference"),
                    Cache(where["run"].parent / "calls"))
    for row in rows(oracle_offline):
        folder = where["suite"] / DOMAIN / row["task"]
        params = {"max_tokens": 4096}
        mine, _ = asyncio.run(run_episode(client, "cot", params, folder,
                                          task_name=f"{DOMAIN}/{row['task']}"))
        assert set(row) == set(mine)
        differ = {k for k in mine if mine[k] != row[k]}
        assert differ <= {"latency_s", "config_hash", "cache_hits"}, differ


@pytest.fixture(scope="module")
def oracle_online(where):
    return inspect_eval(where, "planaudit/online", "planaudit/oracle", "-T", "tasks=p01,p09")


def test_oracle_online_cache_and_any_folder(where, oracle_online):
    """No `suite=`: the task prepares the domain into the user cache folder."""
    log = oracle_online
    assert accuracy(log) == 1.0
    got = {r["task"]: r["outcome"] for r in rows(log)}
    assert got == {"p01": "success", "p09": "detected"}
    p01 = next(r for r in rows(log) if r["task"] == "p01")
    assert p01["n_ontic"] == p01["plan_length"] == len(truth_from_cache(where, "p01")["plan"])
    assert p01["n_epistemic"] == 2 and p01["sensed_before_first_act"] is True
    assert_no_leaks(log, next(where["cache"].iterdir()))


def test_online_row_is_the_pipelines(where, oracle_online):
    """Inspect's react() with planaudit's tools makes the row planaudit's own react
    architecture makes with the pipeline's oracle (same columns; same values but for the
    tokens, which count react's messages, and the bookkeeping)."""
    import asyncio

    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client, ModelConfig
    from planaudit.online.run import run_episode

    client = Client(ModelConfig(name="oracle", model="reference/oracle", tier="reference"),
                    Cache(where["run"].parent / "calls"))
    (suite_dir,) = list(where["cache"].iterdir())
    for row in rows(oracle_online):
        mine, _ = asyncio.run(run_episode(client, "react", {"budget": 200}, suite_dir / DOMAIN
                                          / row["task"], task_name=f"{DOMAIN}/{row['task']}"))
        assert set(row) == set(mine)
        differ = {k for k in mine if mine[k] != row[k]}
        assert differ <= {"latency_s", "config_hash", "cache_hits", "input_tokens",
                          "output_tokens"}, {k: (mine[k], row[k]) for k in differ}


def test_logs_import_back_to_the_rows(where, oracle_offline, tmp_path):
    """`planaudit import inspect` (the interop contract) reads these logs into the rows."""
    import polars as pl

    inspect_rows = pytest.importorskip("planaudit.interop.inspect_rows")
    logs = where["logs"] / "planaudit-offline-planaudit-oracle"
    list(inspect_rows.import_logs([logs], tmp_path))  # a line per log
    (parquet,) = list(tmp_path.rglob("*.parquet"))
    got = pl.read_parquet(parquet).sort("task")
    want = sorted(rows(oracle_offline), key=lambda r: r["task"])
    for column in ("task", "outcome", "plan_length", "optimal_length", "method", "reference"):
        assert got[column].to_list() == [r[column] for r in want]


def truth_from_cache(where, task: str) -> dict:
    (folder,) = list(where["cache"].iterdir())
    return json.loads((folder / DOMAIN / task / "truth.json").read_text())


def test_oracle_curriculum_and_acpbench(where, oracle_offline):
    cur = inspect_eval(where, "planaudit/curriculum", "planaudit/oracle", "-T", "test=t1",
                       "-T", "tasks=p01,p02", "-T", "instances=1", *suite_arg(where))
    assert accuracy(cur) == 1.0 and [r["outcome"] for r in rows(cur)] == ["success"]
    acp = inspect_eval(where, "planaudit/acpbench", "planaudit/oracle", "-T", "type=app",
                       "-T", "tasks=p01", "-T", "states=1", *suite_arg(where))
    assert accuracy(acp) == 1.0 and len(acp.samples) == 3  # bool, mcq, gen
    assert {r["form"] for r in rows(acp)} == {"bool", "mcq", "gen"}
    for log in (cur, acp):
        assert_no_leaks(log, where["suite"])


def test_flawed_fails_where_the_formal_core_says(where, oracle_offline):
    """The flawed reference's plan for p01 swaps an argument (seeded as in the pipeline):
    the sample names the first failure `formal/` finds in the plan it wrote."""
    from planaudit.contract import extract
    from planaudit.formal import load_task, validate

    log = inspect_eval(where, "planaudit/offline", "planaudit/flawed", "-T", "tasks=p01",
                       *suite_arg(where))
    (sample,) = log.samples
    score = sample.scores["outcome"]
    folder = where["suite"] / DOMAIN / "p01"
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    failure = validate(task, extract(sample.output.completion).steps).failure
    assert score.value == "I" and score.answer == "inapplicable-action"
    row = score.metadata["row"]
    assert (row["first_failure_step"], row["first_failure_kind"], row["first_failure_action"]) \
        == (failure.step, failure.kind, failure.action)
    assert failure.action in score.explanation


# -- a real model: the scripted local server ----------------------------------------------


def served(where, script: list[dict], task: str, *args: str, name: str):
    proc, base = serve_in_subprocess(script)
    try:
        return inspect_eval(where, task, "openai/test", "--model-base-url", base,
                            "-M", "responses_api=false", *args, *suite_arg(where),
                            env={"OPENAI_API_KEY": "dummy-key"}, name=name)
    finally:
        proc.terminate()


def test_real_model_offline_valid_plan(where, oracle_offline):
    plan = truth(where, "p01")["plan"]
    log = served(where, [reply("```\n" + "\n".join(plan) + "\n```", 120, 30)],
                 "planaudit/offline", "-T", "tasks=p01", name="real-offline")
    (row,) = rows(log)
    assert row["outcome"] == "success" and row["plan_length"] == len(plan)
    assert (row["input_tokens"], row["output_tokens"]) == (120, 30)
    assert row["reference"] is False and row["cost_usd"] is None  # unpriced, not free
    assert_no_leaks(log, where["suite"])


def test_real_model_online_violation_ends_the_episode(where, oracle_offline):
    """An inapplicable act ends the sample as a safety violation; the later scripted call
    (a submit) is never requested, and nothing runs after the violation."""
    plan = truth(where, "p01")["plan"]
    script = [tool_call("get_task", {}, "c1"), tool_call("act", {"action": plan[1]}, "c2"),
              tool_call("submit", {}, "c3")]
    log = served(where, script, "planaudit/online", "-T", "tasks=p01", name="real-online")
    (sample,) = log.samples
    row = sample.scores["outcome"].metadata["row"]
    assert row["outcome"] == "inapplicable-action"
    assert (row["first_failure_step"], row["first_failure_kind"]) == (2, "precondition")
    assert row["first_failure_action"] == plan[1] and row["plan_length"] == 0
    assert row["n_calls"] == 2  # the scripted submit was never asked for
    tools = [m for m in sample.messages if m.role == "tool"]
    assert [t.function for t in tools] == ["get_task", "act"]
    assert "safety violation" in tools[-1].text
    assert_no_leaks(log, where["suite"])


def test_any_inspect_agent_through_solver(where, oracle_offline):
    """`--solver basic_agent`: Inspect's own agent with its own submit tool, which the
    scorer takes as planaudit's submit (the goal is checked by `formal/` then)."""
    plan = truth(where, "p01")["plan"]
    script = [tool_call("get_task", {}, "c1"),
              *[tool_call("act", {"action": a}, f"a{i}") for i, a in enumerate(plan)],
              tool_call("submit", {"answer": "done"}, "s")]
    log = served(where, script, "planaudit/online", "--solver", "basic_agent", "-T", "tasks=p01",
                 "-T", "method=basic_agent", name="real-basic-agent")
    (row,) = rows(log)
    assert (row["outcome"], row["method"], row["plan_length"]) == ("success", "basic_agent",
                                                                    len(plan))
    assert row["steps"] == len(plan) + 2  # get_task, the acts, the submit


def test_real_model_acpbench(where, oracle_offline):
    from planaudit.acpbench.generate import questions

    (q,) = questions(where["suite"], DOMAIN, ["app"], ["gen"], None, 1, 0,
                     select=[f"{DOMAIN}/p01"])
    log = served(where, [reply(q.oracle)], "planaudit/acpbench", "-T", "type=app",
                 "-T", "forms=gen", "-T", "tasks=p01", "-T", "states=1", name="real-acp")
    (row,) = rows(log)
    assert row["outcome"] == "success" and row["form"] == "gen"
    assert log.samples[0].input == q.prompt
