"""Reference models through `llm/`'s client: the oracle is perfect, each fault of the
flawed model shows up as the outcome it should, a process that runs only references
never imports litellm, and their token counts are litellm's."""

from __future__ import annotations

import asyncio
import json
from functools import cache
from pathlib import Path

import pytest

from planaudit.contract import extract
from planaudit.episode import offline_outcome
from planaudit.formal import load_task, parse_plan, validate
from planaudit.formal.truth import Limits
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.suite.catalog import find_entry
from planaudit.suite.prepare import prepare
from planaudit.suite.records import make_truth

SUITE = {"source": "builtin", "root": str(Path(__file__).resolve().parents[1] / "domains")}
TASKS = ["blocksworld/p04", "gripper/p03", "logistics/p03", "loadbalancing/p03",
         "hospital/p04", "blocksworld/p09", "hospital/p09"]


@cache
def task_dir(name: str, root: str) -> Path:
    d, t = name.split("/")
    out = Path(root) / d / t
    entry = find_entry(SUITE, d, t)
    prepare(entry, out, obfuscate=d in ("blocksworld", "gripper", "logistics"), seed=0)
    make_truth(entry, out, Limits(external=False))
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in TASKS}


def ask(model: str, folder: Path, tmp: Path, **meta) -> str:
    client = Client(ModelConfig(model, model), Cache(tmp / "cache"))
    brief = json.loads((folder / "brief.json").read_text())
    messages = [{"role": "system", "content": brief["preamble"]},
                {"role": "user", "content": brief["domain"] + "\n\n" + brief["instance"]}]
    call = asyncio.run(client.complete(messages, metadata={"task_dir": str(folder), **meta}))
    assert call.error is None and call.cost_usd == 0.0 and call.input_tokens > 0
    return call.content


def outcome(folder: Path, reply: str) -> str:
    truth = json.loads((folder / "truth.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    ex = extract(reply)
    failure = None
    if ex.kind == "plan":
        v = validate(task, parse_plan(ex.plan_text))
        failure = v.failure.kind if v.failure else None
    return offline_outcome(truth["solvable"], ex.kind, failure)


@pytest.mark.parametrize("name", TASKS)
def test_oracle_succeeds_or_detects(prepared, name, tmp_path):
    folder = prepared[name]
    truth = json.loads((folder / "truth.json").read_text())
    got = outcome(folder, ask("reference/oracle", folder, tmp_path, task=name))
    assert got == ("success" if truth["solvable"] else "detected")


@pytest.mark.parametrize(("fault", "expected"), [
    ("drop_action", {"goal-not-reached", "inapplicable-action"}),
    ("swap_adjacent", {"inapplicable-action", "success", "goal-not-reached"}),
    ("wrong_argument", {"inapplicable-action", "malformed", "goal-not-reached"}),
    ("unknown_object", {"malformed"}),
    ("unsolvable_on_solvable", {"false-abstention"}),
])
def test_each_fault_on_a_solvable_task(prepared, fault, expected, tmp_path):
    folder = prepared["logistics/p03"]
    got = outcome(folder, ask("reference/flawed", folder, tmp_path, task="logistics/p03",
                              faults={fault: 1.0}))
    assert got in expected
    if fault in ("drop_action", "unknown_object", "unsolvable_on_solvable"):
        assert got != "success"


def test_plan_on_unsolvable_is_missed(prepared, tmp_path):
    folder = prepared["hospital/p09"]
    reply = ask("reference/flawed", folder, tmp_path, task="hospital/p09",
                faults={"plan_on_unsolvable": 1.0})
    assert outcome(folder, reply) == "missed-unsolvable"


def test_flawed_without_faults_is_the_oracle_and_faults_are_seeded(prepared, tmp_path):
    folder = prepared["blocksworld/p04"]
    oracle = ask("reference/oracle", folder, tmp_path, task="x")
    assert ask("reference/flawed", folder, tmp_path, task="x", faults={}) == oracle
    a = ask("reference/flawed", folder, tmp_path / "a", task="x", faults={"drop_action": 1.0})
    b = ask("reference/flawed", folder, tmp_path / "b", task="x", faults={"drop_action": 1.0})
    assert a == b != oracle


def test_intermediate_and_scoring_calls(prepared, tmp_path):
    folder = prepared["gripper/p03"]
    assert ask("reference/oracle", folder, tmp_path, purpose="score") == "10"
    assert "reference model" in ask("reference/oracle", folder, tmp_path, purpose="reasoning")


def test_a_reference_run_never_imports_litellm(prepared, tmp_path):
    """A shard of reference models imports neither litellm nor what only it needs; the
    same client path still caches and counts tokens."""
    import subprocess
    import sys

    folder = prepared["gripper/p03"]
    code = f"""
import asyncio, sys
from pathlib import Path
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
import planaudit.shard, planaudit.offline.run, planaudit.online.run
client = Client(ModelConfig("oracle", "reference/oracle"), Cache(Path({str(tmp_path)!r})))
call = asyncio.run(client.complete([{{"role": "user", "content": "plan"}}],
                                   metadata={{"task_dir": {str(folder)!r}}}))
assert call.error is None and call.output_tokens > 0, call
print(sorted(m for m in ("litellm", "openai") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_reference_tokens_are_counted_as_litellm_counts_them():
    import litellm

    from planaudit.llm.tokens import count_messages, count_text

    call = {"id": "call_1", "type": "function",
            "function": {"name": "act", "arguments": json.dumps({"action": "(pick-up a)"})}}
    conversations = [
        [{"role": "system", "content": "You are a planner."},
         {"role": "user", "content": "Blocks a and b.\n```\n(stack a b)\n```", "name": "u"}],
        [{"role": "assistant", "content": "", "tool_calls": [call]},
         {"role": "tool", "tool_call_id": "call_1", "content": "Applied (pick-up a)."}],
    ]
    for messages in conversations:
        assert count_messages(messages) == litellm.token_counter(model="gpt-4o",
                                                                 messages=messages)
    text = "```\n(unstack b a)\n(put-down b)\n```"
    assert count_text(text) == litellm.token_counter(model="gpt-4o", text=text)
