"""A budget of N pays for at most N model replies, in every architecture: the actor's, a
critic's reviews, a reflector's lessons and a planner's answers (malformed or not) all
count. Counted where the money goes: the requests the scripted server saw."""

from __future__ import annotations

import asyncio

import pytest

from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.online.architectures import ARCHITECTURES
from planaudit.online.run import run_episode
from tests.fake_openai import FakeOpenAI, reply, tool_call
from tests.test_reference import task_dir

TASK = "blocksworld/p04"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return task_dir(TASK, str(tmp_path_factory.mktemp("suite")))


def script(method: str, n: int = 12) -> list[dict]:
    """Replies that would spend the most if nothing capped them: a planner that never
    answers in the format (each malformed answer earns a retry), an actor whose every
    action is ill-formed (each earns a reflector's lesson) and approved by the critic."""
    if method == "plan-execute":
        return [reply("I am not sure how to write the plan.")] * n
    out = []
    for i in range(n):
        out.append(tool_call("act", {"action": "(teleport a b)"}, call_id=f"c{i}"))
        if method == "critic":
            out.append(reply("APPROVE"))
        if method == "reflexion":
            out.append(reply("Lesson: use the task's action names."))
    return out


@pytest.mark.parametrize("budget", [1, 2])
# planner: a classical planner's own, one answer and no retry (tests/test_planners.py)
@pytest.mark.parametrize("method", sorted(set(ARCHITECTURES) - {"planner"}))
def test_a_budget_of_n_pays_at_most_n_replies(method, budget, folder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(script(method)) as srv:
        client = Client(ModelConfig("fake", "openai/fake", api_base=srv.api_base, max_retries=0),
                        Cache(tmp_path / "cache"))
        row, transcript = asyncio.run(run_episode(client, method, {"budget": budget}, folder,
                                                  task_name=TASK))
        sent = len(srv.requests)
    assert sent <= budget, f"{method} at budget {budget}: the server saw {sent} requests"
    assert row["n_calls"] == sent and row["steps"] <= budget
    assert row["outcome"] == "budget-exhausted"
    assert transcript[-1]["ending"] == "budget"


def test_the_critic_is_not_paid_past_the_budget(folder, tmp_path, monkeypatch):
    """A proposal the critic can no longer be paid to review is recorded, not executed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(script("critic")) as srv:
        client = Client(ModelConfig("fake", "openai/fake", api_base=srv.api_base, max_retries=0),
                        Cache(tmp_path / "cache"))
        row, transcript = asyncio.run(run_episode(client, "critic", {"budget": 3}, folder,
                                                  task_name=TASK))
        tools = [bool(r.get("tools")) for r in srv.requests]
    assert tools == [True, False, True] and row["n_calls"] == 3  # act, review, act: no review
    last = transcript[-1]["trace"][-1]
    assert last["tool"] == "act" and last["mark"] == "unreviewed"
    assert row["contract_breach"] is None and row["steps"] == 1  # the one reviewed act ran
