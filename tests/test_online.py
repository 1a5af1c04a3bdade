"""Online episodes end to end through the real litellm path: a scripted local server
drives every architecture to every ending; the reference models act through the
same tools; the hidden model never reaches the agent."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from planaudit.formal import load_task
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.offline.run import run_episode as offline_episode
from planaudit.online.architectures import ARCHITECTURES
from planaudit.online.environment import Environment
from planaudit.online.run import run_episode
from tests.fake_openai import FakeOpenAI, reply, tool_call
from tests.test_reference import TASKS, task_dir

ARCHS = ["react", "reflexion", "critic", "gated", "plan-execute"]
ACTORS = ["react", "reflexion", "critic", "gated"]  # the tool-calling ones
TASK = "blocksworld/p04"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in TASKS}


def online(model: str, method: str, folder, name: str, tmp, params=None, **kw):
    client = Client(ModelConfig(model, model, api_base=kw.pop("api_base", None), max_retries=1),
                    Cache(tmp / "cache"))
    return asyncio.run(run_episode(client, method, params or {}, folder, task_name=name, **kw))


def plan_of(folder) -> list[str]:
    return json.loads((folder / "truth.json").read_text())["plan"]


# -- scripted scenarios: the actor's tool calls, adapted to each architecture -------------

def script_for(method: str, calls: list[tuple[str, object]]) -> list[dict]:
    """Server replies for a sequence of actor calls: a critic's APPROVE after each act or
    submit whose arguments decode, a reflector's lesson after each ill-formed call (marked
    by name 'bad:')."""
    out = []
    for i, (name, args) in enumerate(calls, 1):
        bad = name.startswith("bad:")
        name = name.removeprefix("bad:")
        if name == "none":
            out.append(reply("Let me think about what to do."))
        else:
            out.append(tool_call(name, args, call_id=f"c{i}"))
        if method == "critic" and name in ("act", "submit") and not isinstance(args, str):
            out.append(reply("APPROVE"))
        if method == "reflexion" and bad:
            out.append(reply("Lesson: use the object names of the task."))
    return out


def acts(steps: list[str]) -> list[tuple[str, object]]:
    return [("act", {"action": s}) for s in steps]


@pytest.fixture
def server_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def scenario(method, folders, tmp_path, calls, name=TASK, params=None):
    with FakeOpenAI(script_for(method, calls)) as srv:
        row, transcript = online("openai/test", method, folders[name], name, tmp_path,
                                 params=params, api_base=srv.api_base)
        return row, transcript, srv.requests


def test_every_registered_architecture_is_covered():
    # planner: a classical planner's own, covered with a planner in tests/test_planners.py
    assert sorted(ARCHITECTURES) == sorted([*ARCHS, "planner"])


@pytest.mark.parametrize("method", ACTORS)
def test_success(method, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    calls = [("get_task", {}), ("query_state", {"predicate": "clear"}), *acts(plan), ("submit", {})]
    row, transcript, requests = scenario(method, folders, tmp_path, calls)
    assert row["outcome"] == "success" and row["plan_length"] == len(plan)
    # each call's messages are recorded as they were sent, not as the history ended
    sent = [len(t["messages"]) for t in transcript if t.get("purpose") == "act"]
    assert sent == [len(r["messages"]) for r in requests if r.get("tools")]
    assert sent == sorted(set(sent))
    assert row["n_epistemic"] == 2 and row["n_ontic"] == len(plan) and row["steps"] == len(calls)
    assert row["sensed_before_first_act"] is True and row["efficiency"] == 1.0
    assert row["first_failure_step"] is None and row["executable"] is True
    assert requests[0]["tools"] and {t["function"]["name"] for t in requests[0]["tools"]} == {
        "get_task", "query_state", "act", "submit", "declare_unsolvable"}


@pytest.mark.parametrize("method", ACTORS)
def test_violation(method, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    calls = [("get_task", {}), *acts([plan[1]])]  # the second step first: inapplicable
    if method == "gated":
        calls += [*acts(plan), ("submit", {})]
    row, transcript, _ = scenario(method, folders, tmp_path, calls)
    assert row["first_failure_step"] == 2 and row["first_failure_kind"] == "precondition"
    assert row["executable"] is False and row["sensed_before_first_act"] is False
    if method == "gated":  # blocked, told which conditions fail, and the agent recovers
        assert row["outcome"] == "success" and row["blocked_actions"] == 1
        assert row["recovered"] is True
        blocked = [m["content"] for t in transcript if "messages" in t for m in t["messages"]
                   if m["role"] == "tool" and m["content"].startswith("Blocked")]
        assert blocked and "do not hold" in blocked[0]
    else:
        assert row["outcome"] == "inapplicable-action" and row["n_ontic"] == 1
        assert row["blocked_actions"] == 0 and row["recovered"] is None


@pytest.mark.parametrize("method", ACTORS)
def test_ill_formed_then_recovery(method, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    calls = [("get_task", {}), ("bad:act", {"action": "(teleport a b)"}),
             ("bad:act", {"action": plan[0].replace(")", " extra)")}), *acts(plan), ("submit", {})]
    row, _, requests = scenario(method, folders, tmp_path, calls)
    assert row["outcome"] == "success" and row["first_failure_kind"] == "unknown-action"
    assert row["first_failure_step"] == 2 and row["plan_length"] == len(plan)
    if method == "reflexion":
        assert row["reflections"] == 2
        later = [r for r in requests if r.get("tools")][-1]
        assert "use the object names of the task" in later["messages"][0]["content"]
    else:
        assert row["reflections"] == 0


@pytest.mark.parametrize("method", ACTORS)
def test_early_submit(method, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    row, *_ = scenario(method, folders, tmp_path, [("get_task", {}), *acts(plan[:1]),
                                                    ("submit", {})])
    assert row["outcome"] == "goal-not-reached" and row["first_failure_kind"] == "goal"
    assert row["first_failure_step"] == 3 and row["executable"] is True


@pytest.mark.parametrize("method", ACTORS)
def test_budget(method, folders, tmp_path, server_env):
    calls = [("get_task", {}), ("none", None), ("query_state", {}), ("none", None), ("none", None)]
    row, _, requests = scenario(method, folders, tmp_path, calls, params={"budget": 4})
    assert row["outcome"] == "budget-exhausted" and row["steps"] == 4
    assert row["first_failure_kind"] == "budget"
    # checked before each call: a budget of 4 pays for 4 actor replies, not a 5th
    assert len(requests) == 4 and row["n_calls"] == 4
    assert row["contract_breach"] == "no tool call" and row["truncated"] is False


@pytest.mark.parametrize("method", ACTORS)
def test_refused_actions_are_not_ontic_and_prove_no_executability(method, folders, tmp_path,
                                                                  server_env):
    """An act refused as ill-formed changed nothing: an episode of only such acts applied no
    action, so executability is unknown (null), not true, and sensing counts none of them."""
    calls = [("get_task", {}), ("bad:act", {"action": "(no-such-action a b)"}),
             ("bad:act", {"action": "(pick-up nosuchblock)"}),
             ("bad:query_state", {"predicate": "nosuchpredicate"}), ("submit", {})]
    row, *_ = scenario(method, folders, tmp_path, calls)
    assert row["outcome"] == "goal-not-reached" and row["plan_length"] == 0
    assert row["n_ontic"] == 0 and row["n_epistemic"] == 1
    assert row["executable"] is None and row["sensing_ratio"] == 1.0
    assert row["sensed_before_first_act"] is None


@pytest.mark.parametrize("method", ACTORS)
def test_a_reply_cut_at_max_tokens_is_flagged_truncated(method, folders, tmp_path, server_env):
    calls = [("get_task", {}), ("none", None)]
    script = script_for(method, calls)
    script[-1]["body"]["choices"][0]["finish_reason"] = "length"
    with FakeOpenAI(script) as srv:
        row, transcript = online("openai/test", method, folders[TASK], TASK, tmp_path,
                                 params={"budget": 2}, api_base=srv.api_base)
    assert row["outcome"] == "budget-exhausted" and row["truncated"] is True
    assert row["contract_breach"] == "reply cut at max_tokens, no tool call"
    assert [t["call"]["finish_reason"] for t in transcript if "call" in t][-1] == "length"


@pytest.mark.parametrize("method", ACTORS)
def test_declared_unsolvable(method, folders, tmp_path, server_env):
    row, *_ = scenario(method, folders, tmp_path, [("get_task", {}), ("declare_unsolvable", {})],
                       name="blocksworld/p09")
    assert row["outcome"] == "detected" and row["n_ontic"] == 0
    assert row["sensed_before_first_act"] is None


@pytest.mark.parametrize("method", ACTORS)
def test_malformed_tool_arguments(method, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    calls = [("get_task", {}), ("bad:act", '{"action": "(pick-up'), ("bad:act", {}),
             ("bad:fly", {}), *acts(plan), ("submit", {})]
    row, transcript, _ = scenario(method, folders, tmp_path, calls)
    assert row["outcome"] == "success" and row["first_failure_kind"] == "bad-arguments"
    errors = [m["content"] for t in transcript if "messages" in t for m in t["messages"]
              if m["role"] == "tool" and m["content"].startswith("Error")]
    assert any("not valid JSON" in e for e in errors) and any("no tool named" in e for e in errors)


def test_critic_rejection_goes_back_to_the_actor_and_counts(folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    script = [tool_call("get_task", {}, "c1"), tool_call("act", {"action": plan[1]}, "c2"),
              reply("REJECT: the block is not clear yet"),
              *[s for i, a in enumerate(plan) for s in (
                  tool_call("act", {"action": a}, f"d{i}"), reply("APPROVE"))],
              tool_call("submit", {}, "s"), reply("APPROVE")]
    with FakeOpenAI(script) as srv:
        row, transcript = online("openai/test", "critic", folders[TASK], TASK, tmp_path,
                                 api_base=srv.api_base)
    assert row["outcome"] == "success" and row["critic_rejections"] == 1
    assert row["steps"] == 1 + 1 + len(plan) + 1 and row["executable"] is True
    rejected = [m["content"] for t in transcript if "messages" in t for m in t["messages"]
                if m["role"] == "tool" and "Rejected by the critic" in m["content"]]
    assert rejected and "not clear yet" in rejected[0]


def test_text_protocol(folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    script = [reply("I read first.\nTOOL: get_task {}"),
              *[reply(f"Next.\nTOOL: act {json.dumps({'action': a})}") for a in plan[:-1]],
              reply(f"TOOL: act {plan[-1]}"), reply("Done.\nTOOL: submit {}")]
    with FakeOpenAI(script) as srv:
        client = Client(ModelConfig("t", "openai/test", api_base=srv.api_base), Cache(tmp_path))
        row, _ = asyncio.run(run_episode(client, "react", {}, folders[TASK], task_name=TASK,
                                         protocol="text"))
        assert "tools" not in srv.requests[0]
        assert "TOOL: <name>" in srv.requests[0]["messages"][0]["content"]
    assert row["outcome"] == "success" and row["n_ontic"] == len(plan)


# -- plan-execute: a plan, then execution ------------------------------------------------

def plan_reply(steps: list[str]) -> dict:
    return reply("```\n" + "\n".join(steps) + "\n```")


@pytest.mark.parametrize(("replies", "outcome", "name"), [
    (lambda p: [plan_reply(p)], "success", TASK),
    (lambda p: [plan_reply([p[1], *p])], "inapplicable-action", TASK),
    (lambda p: [plan_reply(p[:1])], "goal-not-reached", TASK),
    (lambda p: [reply("UNSOLVABLE")], "detected", "blocksworld/p09"),
    (lambda p: [reply("UNSOLVABLE")], "false-abstention", TASK),
    (lambda p: [plan_reply(["(teleport x)"]), plan_reply(p)], "success", TASK),
    (lambda p: [reply("no idea"), plan_reply(p)], "success", TASK),
])
def test_plan_execute_endings(replies, outcome, name, folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    with FakeOpenAI(replies(plan)) as srv:
        row, transcript = online("openai/test", "plan-execute", folders[name], name, tmp_path,
                                 api_base=srv.api_base)
    assert row["outcome"] == outcome
    if "teleport" in json.dumps(transcript):  # the surprise: sensed, then replanned
        assert row["n_epistemic"] == 2 and row["first_failure_kind"] == "unknown-action"


def test_plan_execute_budget(folders, tmp_path, server_env):
    plan = plan_of(folders[TASK])
    with FakeOpenAI([plan_reply(plan)]) as srv:
        row, _ = online("openai/test", "plan-execute", folders[TASK], TASK, tmp_path,
                        params={"budget": 2}, api_base=srv.api_base)
    assert row["outcome"] == "budget-exhausted"


def test_a_failed_call_ends_the_episode_as_error(folders, tmp_path, server_env):
    from tests.fake_openai import status

    with FakeOpenAI([tool_call("get_task", {}), status(500), status(500)]) as srv:
        row, _ = online("openai/test", "react", folders[TASK], TASK, tmp_path,
                        api_base=srv.api_base)
    assert row["outcome"] == "error" and row["n_calls"] == 2


# -- reference models ---------------------------------------------------------------------

@pytest.mark.parametrize("method", ARCHS)
def test_oracle_succeeds_and_detects_under_every_architecture(method, folders, tmp_path):
    for name, folder in folders.items():
        row, _ = online("reference/oracle", method, folder, name, tmp_path)
        assert row["outcome"] == ("success" if row["solvable"] else "detected"), (name, row)
        assert row["reference"] is True
        if row["success"]:
            assert row["plan_length"] == row["optimal_length"] and row["executable"] is True
            if method != "plan-execute":
                assert row["sensed_before_first_act"] is True


def test_oracle_online_never_below_offline(folders, tmp_path):
    for name, folder in folders.items():
        client = Client(ModelConfig("o", "reference/oracle"), Cache(tmp_path))
        off, _ = asyncio.run(offline_episode(client, "direct", {}, folder, task_name=name))
        for method in ARCHS:
            on, _ = online("reference/oracle", method, folder, name, tmp_path)
            assert on["success"] >= off["success"] and on["detected"] >= off["detected"]


@pytest.mark.parametrize(("fault", "name", "outcomes"), [
    ("drop_action", TASK, {"goal-not-reached", "inapplicable-action"}),
    ("swap_adjacent", TASK, {"goal-not-reached", "inapplicable-action"}),
    ("unknown_object", TASK, {"goal-not-reached", "inapplicable-action"}),
    ("unsolvable_on_solvable", TASK, {"false-abstention"}),
    ("plan_on_unsolvable", "blocksworld/p09", {"missed-unsolvable"}),
])
def test_flawed_agent_faults_show_up(fault, name, outcomes, folders, tmp_path):
    meta = {"faults": {fault: 1.0}, "seed": 0}
    row, _ = online("reference/flawed", "react", folders[name], name, tmp_path,
                    reference_meta=meta)
    assert row["outcome"] in outcomes, row
    assert row["n_epistemic"] == 1  # it reads the task, and never senses
    if fault == "unknown_object":
        assert row["first_failure_kind"] == "unknown-object"


def test_transcripts_never_show_the_hidden_model(folders, tmp_path):
    for name, folder in folders.items():
        names = json.loads((folder / "names.json").read_text())
        hidden = {k for k, v in names.items() if k != v and len(k) > 1}
        for method in ARCHS:
            _, transcript = online("reference/flawed", method, folder, name, tmp_path,
                                   reference_meta={"faults": {"wrong_argument": 1.0}})
            text = json.dumps(transcript)
            assert not re.search(r"\(define|\(:action|:precondition|\(:init|:effect|\(:goal", text)
            assert not set(re.findall(r"[\w-]+", text)) & hidden, (name, method)


# -- the environment on its own -------------------------------------------------------------

def test_query_state_filters_and_renders_through_templates(folders):
    from planaudit.suite.brief import Renderer, load_templates

    folder = folders[TASK]
    brief = json.loads((folder / "brief.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    env = Environment(task, brief, Renderer(load_templates(brief["source"])), budget=10)
    everything = env.call("query_state", {}).text.splitlines()[1:]
    clear = env.call("query_state", {"predicate": "clear"}).text.splitlines()[1:]
    assert 0 < len(clear) < len(everything) and set(clear) <= set(everything)
    obj = task.problem.objects and sorted(task.problem.objects)[0]
    about = env.call("query_state", {"object": obj}).text.splitlines()[1:]
    assert about and all(obj in line for line in about)
    assert not any(line.lstrip("- ").startswith("(") for line in everything)
    bad = env.call("query_state", {"predicate": "levitating"})
    # refused: a step of the budget, but nothing was sensed
    assert bad.kind == "ill-formed" and env.count.n_epistemic == 3 and env.count.steps == 4


def test_estimate_prices_online_episodes_along_the_oracles_path(folders):
    from planaudit.estimate import estimate
    from planaudit.experiment import Experiment

    suite_dir = next(iter(folders.values())).parent.parent
    config = {"models": [{"name": "gpt", "model": "openai/gpt-4o", "input_price": 2.5,
                          "output_price": 10.0}],
              "online": {"methods": ["react", "critic", "plan-execute"]},
              "estimate": {"output_tokens": {"act": 100, "critic": 10}}}
    rows = {r.method: r for r in estimate(Experiment.from_dict(config), suite_dir)}
    lengths = [json.loads((f / "truth.json").read_text())["optimal_length"]
               for f in folders.values()]
    react = sum(3 + n if n is not None else 2 for n in lengths)  # read, sense, act..., submit
    assert rows["react"].calls == react and rows["react"].regime == "online"
    assert rows["critic"].calls == react + sum(n + 1 for n in lengths if n is not None)
    assert rows["plan-execute"].calls == len(lengths)  # one planning call each
    assert rows["react"].output_tokens == 100 * react
    assert rows["critic"].input_tokens > rows["react"].input_tokens > 1000 * len(lengths)


def test_episode_command_runs_either_regime_and_names_bad_input(folders, tmp_path, capsys):
    import yaml

    from planaudit.cli import main

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "suite").symlink_to(folders[TASK].parent.parent)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({
        "models": [{"name": "oracle", "model": "reference/oracle", "tier": "reference"}],
        "cache": str(tmp_path / "cache"),
        "offline": {"methods": ["direct"]}, "online": {"methods": ["critic"], "budget": 40}}))
    base = ["episode", "--config", str(cfg), "--model", "oracle", "--task", TASK,
            "--results", str(tmp_path / "results")]
    assert main([*base, "--method", "critic"]) == 0
    out = capsys.readouterr().out
    assert '"regime": "online"' in out and '"outcome": "success"' in out
    assert "tool call act" in out and "(critic):" in out
    assert main([*base, "--method", "direct"]) == 0
    assert '"regime": "offline"' in capsys.readouterr().out
    assert main([*base, "--method", "reflexion"]) == 2
    assert "no method 'reflexion'" in capsys.readouterr().err


def _tool_shard(folders, tmp_path, script, method="react", **online_cfg):
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard

    suite = folders[TASK].parent.parent  # blocksworld/p04 and blocksworld/p09 prepared there
    with FakeOpenAI(script) as srv:
        config = {"cache": str(tmp_path / "cache"),
                  "models": [{"name": "fake", "model": "openai/fake", "api_base": srv.api_base,
                              "api_key_env": "none", "max_concurrency": 1}],
                  "online": {"methods": [method], "budget": 3, **online_cfg}}
        try:
            exp = Experiment.from_dict(config)
            return run_shard(exp, exp.model("fake"), exp.method("online", method),
                             ["blocksworld"], suite, tmp_path / "{domain}.parquet",
                             tmp_path / "tr" / "{domain}", progress_every=1e9), srv.requests
        except Exception as e:
            return e, srv.requests


def test_a_server_that_drops_the_tools_stops_the_shard_before_it_spends_the_rest(folders,
                                                                                tmp_path):
    """Text-only replies to requests that carry tools: after dead_tools_after tool-less
    replies the shard fails, naming the likely cause, instead of running every episode to
    its budget."""
    from planaudit.shard import DeadTools

    text = [reply("I will first look at the task.")] * 20
    failed, requests = _tool_shard(folders, tmp_path, text, dead_tools_after=1)
    assert isinstance(failed, DeadTools)
    assert "not one native tool call" in str(failed) and "--jinja" in str(failed)
    assert "tool_protocol: text" in str(failed)
    assert len(requests) == 1  # one tool-less reply; nothing more was sent
    assert all(r.get("tools") and r.get("tool_choice") == "auto" for r in requests)
    # at the end of a shard with fewer tool-less replies than K too (6 < 20)
    failed, requests = _tool_shard(folders, tmp_path / "b", text)
    assert isinstance(failed, DeadTools) and len(requests) == 6


def test_a_model_that_calls_tools_raises_no_alarm(folders, tmp_path):
    calls = [tool_call("get_task", {}, call_id="c1"), reply("Thinking."), reply("Thinking.")]
    frames, requests = _tool_shard(folders, tmp_path, calls * 2, dead_tools_after=1)
    assert isinstance(frames, dict), frames
    assert frames["blocksworld"]["steps"].to_list() == [3, 3] and len(requests) == 6


def test_the_workflow_hands_dead_tools_after_to_the_online_shards(tmp_path):
    """The alarm reads online.dead_tools_after from the shard's spec: the workflow must
    put it there (the spec is a slice of the config, not all of it)."""
    import yaml

    from tests.conftest import snakemake

    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump({
        "results": str(tmp_path / "results"), "cache": str(tmp_path / "cache"),
        "suite": {"source": "builtin", "root": "domains", "domains": ["blocksworld"],
                  "tasks": ["blocksworld/p01"]},
        "models": [{"name": "oracle", "model": "reference/oracle"}],
        "offline": {"methods": []},
        "online": {"methods": ["react"], "plan_settings": ["none"], "dead_tools_after": 2},
        "curriculum": {"tests": []}, "acpbench": {"types": []}, "formalize": {"methods": []}}))
    proc = snakemake(cfg, "-n", "-p", str(tmp_path / "results" / "episodes" / "online" / "oracle"
                                         / "react" / "none" / "blocksworld.parquet"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"dead_tools_after": 2' in proc.stdout
