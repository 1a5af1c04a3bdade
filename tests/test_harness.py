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
from tests.test_context_exhausted import too_long

# CI installs the interop extra: there a missing inspect_ai is a failure, not a skip.
try:
    import inspect_ai.log as inspect_log
except ImportError:
    if os.environ.get("CI"):
        raise
    pytest.skip("needs inspect_ai (pip install -e '.[interop]')", allow_module_level=True)

INSPECT = Path(sys.executable).parent / "inspect"
DOMAIN = "blocksworld"


@pytest.fixture(scope="module")
def where(tmp_path_factory):
    """A run folder outside the repository, a user cache folder, a folder of logs."""
    base = tmp_path_factory.mktemp("harness")
    (base / "run").mkdir()
    return {"run": base / "run", "cache": base / "cache", "logs": base / "logs"}


def start(where, tasks: list[str], model: str, *args: str, env: dict | None = None,
          name: str = "") -> tuple[subprocess.Popen, Path]:
    """`inspect eval` of `tasks` in a subprocess (running while others do)."""
    logs = where["logs"] / (name or model.replace("/", "-"))
    cmd = [str(INSPECT), "eval", *tasks, "--model", model, "-T", f"domain={DOMAIN}",
           "--log-dir", str(logs), "--display", "none", *args]
    full = {**os.environ, "PLANAUDIT_INSPECT_CACHE": str(where["cache"]), **(env or {})}
    proc = subprocess.Popen(cmd, cwd=where["run"], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return proc, logs


def finish(started: tuple[subprocess.Popen, Path]) -> dict[str, object]:
    """Each task's log, as read by `read_eval_log`, by task name (`planaudit/offline`)."""
    proc, logs = started
    out, err = proc.communicate(timeout=300)
    files = sorted(logs.glob("*.eval"))
    assert proc.returncode == 0 and files, out[-2000:] + err[-4000:]
    found = {}
    for f in files:
        log = inspect_log.read_eval_log(str(f))
        assert log.status == "success", log.error
        found[log.eval.task] = log
    return found


def suite_dir(where) -> Path:
    """The prepared suite in the user cache (one key: the default suite)."""
    (folder,) = [p for p in where["cache"].iterdir() if (p / DOMAIN).is_dir()]
    return folder


def suite_arg(where) -> list[str]:
    return ["-T", f"suite={suite_dir(where)}"]


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
    return json.loads((suite_dir(where) / DOMAIN / task / "truth.json").read_text())


# -- the runs: one process for the oracle's four tasks, then the others side by side ------

REGIMES = ("offline", "online", "curriculum", "acpbench")


@pytest.fixture(scope="module")
def oracle(where):
    """Every task with `planaudit/oracle`, no `suite=`: the tasks prepare the domain into
    the user cache folder (p09 is unsolvable)."""
    return finish(start(where, [f"planaudit/{r}" for r in REGIMES], "planaudit/oracle",
                        "-T", "tasks=p01,p02,p09", "-T", "strategy=cot", "-T", "test=t1",
                        "-T", "instances=1", "-T", "type=app", "-T", "states=1"))


@pytest.fixture(scope="module")
def runs(where, oracle):
    """The flawed reference and the scripted local server as a real model, all at once,
    reading the prepared suite through `suite=`."""
    from planaudit.acpbench.generate import questions

    plan = truth(where, "p01")["plan"]
    (question,) = questions(suite_dir(where), DOMAIN, ["app"], ["gen"], None, 1, 0,
                            select=[f"{DOMAIN}/p01"])
    scripts = {
        "offline": ([reply("```\n" + "\n".join(plan) + "\n```", 120, 30)], "planaudit/offline",
                    []),
        # an inapplicable act (the plan's second step first), then a submit never asked for
        "online": ([tool_call("get_task", {}, "c1"), tool_call("act", {"action": plan[1]}, "c2"),
                    tool_call("submit", {}, "c3")], "planaudit/online", []),
        "basic_agent": ([tool_call("get_task", {}, "c1"),
                         *[tool_call("act", {"action": a}, f"a{i}") for i, a in enumerate(plan)],
                         tool_call("submit", {"answer": "done"}, "s")], "planaudit/online",
                        ["--solver", "basic_agent", "-T", "method=basic_agent"]),
        # another solver: Inspect's own generate() on the sample's messages, a wrong plan
        "generate": ([reply("```\n" + plan[1] + "\n```")], "planaudit/offline",
                     ["--solver", "generate", "-T", "method=generate"]),
        "acpbench": ([reply(question.oracle)], "planaudit/acpbench",
                     ["-T", "type=app", "-T", "forms=gen", "-T", "states=1"]),
        # a prompt past the context (OpenAI's 400): offline at once, online after a turn
        "context-offline": ([too_long()], "planaudit/offline", []),
        "context-online": ([tool_call("get_task", {}, "c1"), too_long()], "planaudit/online",
                           []),
    }
    servers, started = [], {}
    try:
        started["external"] = start(where, ["planaudit/offline", "planaudit/online"],
                                    "planaudit/oracle", "-T", f"root={external_suite(where)}",
                                    "-T", "domain=grip", name="external")
        started["flawed"] = start(where, ["planaudit/offline", "planaudit/online"],
                                  "planaudit/flawed", "-T", "tasks=p01", *suite_arg(where))
        for name, (script, task, args) in scripts.items():
            proc, base = serve_in_subprocess(script)
            servers.append(proc)
            started[name] = start(where, [task], "openai/test", "--model-base-url", base,
                                  "-M", "responses_api=false", "-T", "tasks=p01", *args,
                                  *suite_arg(where), env={"OPENAI_API_KEY": "dummy-key"},
                                  name=f"real-{name}")
        done = {name: finish(s) for name, s in started.items()}
    finally:
        for proc in servers:
            proc.terminate()
    done["question"] = question
    return done


def external_suite(where) -> Path:
    """A suite in the published layout (`domain.pddl`, `problems_pddl/`, `prompts.json`)."""
    import shutil

    from planaudit.harness.suite import DOMAINS

    root = where["run"].parent / "ext"
    (root / "grip" / "problems_pddl").mkdir(parents=True)
    shutil.copy(DOMAINS / "gripper" / "domain.pddl", root / "grip" / "domain.pddl")
    shutil.copy(DOMAINS / "gripper" / "problems" / "p01.pddl",
                root / "grip" / "problems_pddl" / "problem1.pddl")
    (root / "grip" / "prompts.json").write_text(json.dumps({
        "domain_prompt": "A robot carries balls between rooms with two grippers.",
        "actions": {"move": "(move from to)", "pick": "(pick ball room gripper)",
                    "drop": "(drop ball room gripper)"},
        "problems": [{"id": "p01", "prompt": "Ball ball1 is in rooma. Bring it to roomb.",
                      "optimal_cost": 3, "difficulty": "easy"}]}))
    return root


# -- the reference models -----------------------------------------------------------------


def test_oracle_scores_every_regime(where, oracle):
    assert set(oracle) == {f"planaudit/{r}" for r in REGIMES}
    for log in oracle.values():
        assert accuracy(log) == 1.0
        assert all(r["reference"] and r["model_tier"] == "reference" for r in rows(log))
        # labelled a non-LLM reference in the log's own model field
        assert all("non-LLM reference" in s.output.model for s in log.samples)
        assert_no_leaks(log, suite_dir(where))
    for regime in ("offline", "online"):
        got = {r["task"]: r["outcome"] for r in rows(oracle[f"planaudit/{regime}"])}
        assert got == {"p01": "success", "p02": "success", "p09": "detected"}
    assert {r["method"] for r in rows(oracle["planaudit/offline"])} == {"cot"}
    online = next(r for r in rows(oracle["planaudit/online"]) if r["task"] == "p01")
    assert online["n_ontic"] == online["plan_length"] == len(truth(where, "p01")["plan"])
    assert online["n_epistemic"] == 2 and online["sensed_before_first_act"] is True
    assert [r["method"] for r in rows(oracle["planaudit/curriculum"])] == ["t1"]
    acp = rows(oracle["planaudit/acpbench"])
    assert len(acp) == 6 and {r["form"] for r in acp} == {"bool", "mcq", "gen"}  # p01, p02


def test_external_suite_through_root(runs):
    """`-T root=DIR`: an external suite, prepared and proven like the built-in one."""
    for task in ("planaudit/offline", "planaudit/online"):
        log = runs["external"][task]
        assert accuracy(log) == 1.0
        assert [(r["domain"], r["task"], r["plan_length"]) for r in rows(log)] \
            == [("grip", "p01", 3)]


def _pipeline_client(where):
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client, ModelConfig

    return Client(ModelConfig(name="oracle", model="reference/oracle", tier="reference"),
                  Cache(where["run"].parent / "calls"))


def test_offline_row_is_the_pipelines(where, oracle):
    """The Inspect sample's row is the one planaudit's own episode makes on the same task
    with the pipeline's reference model (latency and bookkeeping aside)."""
    import asyncio

    from planaudit.offline.run import run_episode

    client = _pipeline_client(where)
    for row in rows(oracle["planaudit/offline"]):
        mine, _ = asyncio.run(run_episode(client, "cot", {"max_tokens": 4096},
                                          suite_dir(where) / DOMAIN / row["task"],
                                          task_name=f"{DOMAIN}/{row['task']}"))
        assert set(row) == set(mine)
        differ = {k for k in mine if mine[k] != row[k]}
        assert differ <= {"latency_s", "config_hash", "cache_hits"}, differ


def test_online_row_is_the_pipelines(where, oracle):
    """Inspect's react() with planaudit's tools makes the row planaudit's own react
    architecture makes with the pipeline's oracle (same columns; same values but for the
    tokens, which count react's messages, and the bookkeeping)."""
    import asyncio

    from planaudit.online.run import run_episode

    client = _pipeline_client(where)
    for row in rows(oracle["planaudit/online"]):
        mine, _ = asyncio.run(run_episode(client, "react", {"budget": 200},
                                          suite_dir(where) / DOMAIN / row["task"],
                                          task_name=f"{DOMAIN}/{row['task']}"))
        assert set(row) == set(mine)
        differ = {k for k in mine if mine[k] != row[k]}
        assert differ <= {"latency_s", "config_hash", "cache_hits", "input_tokens",
                          "output_tokens"}, {k: (mine[k], row[k]) for k in differ}


def test_logs_import_back_to_the_rows(where, oracle, tmp_path):
    """`planaudit import inspect` (the interop contract) reads these logs into the rows."""
    import polars as pl

    inspect_rows = pytest.importorskip("planaudit.interop.inspect_rows")
    (log,) = list((where["logs"] / "planaudit-oracle").glob("*_offline_*.eval"))
    list(inspect_rows.import_logs([log], tmp_path))  # a line per log
    (parquet,) = list(tmp_path.rglob("*.parquet"))
    got = pl.read_parquet(parquet).sort("task")
    want = sorted(rows(oracle["planaudit/offline"]), key=lambda r: r["task"])
    for column in ("task", "outcome", "plan_length", "optimal_length", "method", "reference"):
        assert got[column].to_list() == [r[column] for r in want]


def test_flawed_fails_where_the_formal_core_says(where, runs):
    """The flawed reference's plan for p01 swaps an argument (seeded as in the pipeline):
    the sample names the first failure `formal/` finds in the plan it wrote, and online its
    agent executes that plan until the same step ends the episode."""
    from planaudit.contract import extract
    from planaudit.formal import load_task, validate

    (sample,) = runs["flawed"]["planaudit/offline"].samples
    score = sample.scores["outcome"]
    folder = suite_dir(where) / DOMAIN / "p01"
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    failure = validate(task, extract(sample.output.completion).steps).failure
    assert score.value == "I" and score.answer == "inapplicable-action"
    row = score.metadata["row"]
    assert (row["first_failure_step"], row["first_failure_kind"], row["first_failure_action"]) \
        == (failure.step, failure.kind, failure.action)
    assert failure.action in score.explanation
    (online,) = rows(runs["flawed"]["planaudit/online"])
    assert online["outcome"] == "inapplicable-action"
    assert online["first_failure_action"] == failure.action
    assert online["first_failure_step"] == failure.step + 1  # after its get_task


# -- a real model: the scripted local server ----------------------------------------------


def test_real_model_offline_valid_plan(where, runs):
    log = runs["offline"]["planaudit/offline"]
    (row,) = rows(log)
    assert row["outcome"] == "success" and row["plan_length"] == len(truth(where, "p01")["plan"])
    assert (row["input_tokens"], row["output_tokens"]) == (120, 30)
    assert row["reference"] is False and row["cost_usd"] is None  # unpriced, not free
    assert_no_leaks(log, suite_dir(where))


def test_any_offline_solver_is_judged(where, runs):
    """`--solver generate`: the reply Inspect's own solver left is judged by `formal/` as a
    `direct` episode's (the plan's second step first: inapplicable at step 1)."""
    plan = truth(where, "p01")["plan"]
    (row,) = rows(runs["generate"]["planaudit/offline"])
    assert (row["outcome"], row["method"]) == ("inapplicable-action", "generate")
    assert (row["first_failure_step"], row["first_failure_action"]) == (1, plan[1])


def test_real_model_online_violation_ends_the_episode(where, runs):
    """An inapplicable act ends the sample as a safety violation; the later scripted call
    (a submit) is never requested, and nothing runs after the violation."""
    plan = truth(where, "p01")["plan"]
    log = runs["online"]["planaudit/online"]
    (sample,) = log.samples
    row = sample.scores["outcome"].metadata["row"]
    assert row["outcome"] == "inapplicable-action"
    assert (row["first_failure_step"], row["first_failure_kind"]) == (2, "precondition")
    assert row["first_failure_action"] == plan[1] and row["plan_length"] == 0
    assert row["n_calls"] == 2  # the scripted submit was never asked for
    tools = [m for m in sample.messages if m.role == "tool"]
    assert [t.function for t in tools] == ["get_task", "act"]
    assert "safety violation" in tools[-1].text
    assert_no_leaks(log, suite_dir(where))


def test_any_inspect_agent_through_solver(where, runs):
    """`--solver basic_agent`: Inspect's own agent with its own submit tool, which the
    scorer takes as planaudit's submit (the goal is checked by `formal/` then)."""
    plan = truth(where, "p01")["plan"]
    (row,) = rows(runs["basic_agent"]["planaudit/online"])
    assert (row["outcome"], row["method"], row["plan_length"]) == ("success", "basic_agent",
                                                                    len(plan))
    assert row["steps"] == len(plan) + 2  # get_task, the acts, the submit


def test_a_prompt_past_the_context_is_context_exhausted_through_inspect(runs):
    """Inspect turns the provider's context-length 400 into `stop_reason` model_length;
    the rows read it as the model's outcome, as the pipeline's do, never an `error`."""
    for name in ("context-offline", "context-online"):
        (row,) = rows(next(iter(runs[name].values())))
        assert row["outcome"] == "context-exhausted" and row["error"] is None, (name, row)
        assert row["first_failure_kind"] == "context", (name, row)


def test_real_model_acpbench(where, runs):
    log = runs["acpbench"]["planaudit/acpbench"]
    (row,) = rows(log)
    assert row["outcome"] == "success" and row["form"] == "gen"
    assert log.samples[0].input == runs["question"].prompt
