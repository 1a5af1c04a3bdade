"""The dead-tools alarm against the scripted server, through the real litellm path: it
counts tool-less replies across the shard (not whole episodes), stops the episodes in
flight when it rings, and sets aside the cached replies that rang it, so that a rerun
against the repaired server (the same URL) asks it again."""

from __future__ import annotations

import pytest

from planaudit.experiment import Experiment
from planaudit.shard import DeadTools, run_shard
from tests.fake_openai import FakeOpenAI, reply, tool_call
from tests.test_reference import task_dir

TASKS = ("blocksworld/p04", "blocksworld/p09")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    for name in TASKS:
        task_dir(name, str(root))
    return root


def shard(srv: FakeOpenAI, suite, tmp_path, concurrency: int = 1, **online):
    """One online react shard of the fake model over blocksworld; its frames, or the
    exception it raised."""
    config = {"cache": str(tmp_path / "cache"),
              "models": [{"name": "fake", "model": "openai/fake", "api_base": srv.api_base,
                          "api_key_env": "none", "max_concurrency": concurrency}],
              "online": {"methods": ["react"], **online}}
    exp = Experiment.from_dict(config)
    try:
        return run_shard(exp, exp.model("fake"), exp.method("online", "react"), ["blocksworld"],
                         suite, tmp_path / "{domain}.parquet", tmp_path / "tr" / "{domain}",
                         progress_every=1e9)
    except DeadTools as e:
        return e


def test_a_rerun_against_the_repaired_server_asks_it_again(suite, tmp_path):
    """Alarm; the server is fixed (same URL, so the same cache keys); the rerun sends its
    requests and the tool calls arrive, instead of the cached tool-less replies ringing
    the alarm again with nothing sent."""
    with FakeOpenAI([reply("I will look at the task first.")] * 6) as srv:
        first = shard(srv, suite, tmp_path, budget=3, dead_tools_after=2)
        assert isinstance(first, DeadTools), first
        sent = len(srv.requests)
        # repaired: the server now calls tools (get_task, then submit, each episode)
        srv.script = [tool_call("get_task", {}, call_id="c1"),
                      tool_call("submit", {}, call_id="c2")] * 2
        second = shard(srv, suite, tmp_path, budget=3, dead_tools_after=2)
        rerun = srv.requests[sent:]
    assert not isinstance(second, DeadTools), f"the alarm rang again: {second}"
    assert len(rerun) == 4, f"the rerun sent {len(rerun)} requests"
    assert second["blocksworld"]["n_epistemic"].to_list() == [1, 1]
    assert second["blocksworld"]["steps"].to_list() == [2, 2]
    # the message says where the replies went; they are kept there, out of the cache's reach
    aside = tmp_path / "cache" / "set-aside"
    held = list(aside.glob("*/*.json"))
    assert len(held) == sent == 2 and "moved out of the cache" in str(first)
    assert str(held[0].parent) in str(first)


def test_the_alarm_counts_replies_across_the_shard_and_stops_those_in_flight(suite, tmp_path):
    """Three episodes at a time, each of which would run to its budget of 30: the shard
    stops once 4 tool-less replies have come back, and the episodes in flight with it."""
    slow = {**reply("Let me think about it."), "delay": 0.3}
    with FakeOpenAI([slow] * 400) as srv:
        failed = shard(srv, suite, tmp_path, concurrency=3, budget=30, epochs=4,
                       dead_tools_after=4)
        sent = len(srv.requests)
    assert isinstance(failed, DeadTools), failed
    assert sent <= 4 + 3, f"the server saw {sent} requests (threshold 4, concurrency 3)"
    assert "4 replies and not one native tool call" in str(failed)
    assert "in flight were cancelled" in str(failed)


def test_a_tool_call_anywhere_in_the_shard_silences_the_alarm(suite, tmp_path):
    """A model that thinks aloud at first but calls tools is no dead server: the alarm
    stays silent and nothing is set aside."""
    script = [reply("Thinking."), reply("Still thinking."), tool_call("get_task", {}),
              reply("Thinking."), tool_call("get_task", {}), reply("Hm.")]
    with FakeOpenAI(script) as srv:
        frames = shard(srv, suite, tmp_path, budget=3, dead_tools_after=3)
    assert isinstance(frames, dict), frames
    assert not (tmp_path / "cache" / "set-aside").exists()
