"""The real litellm path against a scripted local OpenAI-compatible server."""

from __future__ import annotations

import asyncio

import pytest

from planaudit.llm.cache import Cache, cache_key
from planaudit.llm.client import Client, ModelConfig
from tests.fake_openai import FakeOpenAI, delay, reply, status

SECRET = "sk-planaudit-test-secret-0123456789"
MESSAGES = [{"role": "user", "content": "Plan, please."}]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def client(server: FakeOpenAI, tmp_path, **cfg) -> tuple[Client, list[float]]:
    slept: list[float] = []

    async def sleep(s: float) -> None:  # record the backoff instead of waiting it out
        slept.append(s)

    model = ModelConfig("test", "openai/test-model", api_base=server.api_base,
                        input_price=2.5, output_price=10.0, **cfg)
    return Client(model, Cache(tmp_path / "cache"), sleep=sleep), slept


def run(c: Client, **kw):
    return asyncio.run(c.complete(MESSAGES, **kw))


def test_reply_tokens_and_cost(tmp_path):
    with FakeOpenAI([reply("```\n(pick-up a)\n```", 1000, 200)]) as srv:
        c, _ = client(srv, tmp_path)
        call = run(c)
    assert call.error is None and call.content == "```\n(pick-up a)\n```"
    assert (call.input_tokens, call.output_tokens) == (1000, 200)
    assert call.cost_usd == pytest.approx((1000 * 2.5 + 200 * 10.0) / 1e6)
    assert call.attempts == 1 and not call.cache_hit
    assert srv.requests[0]["temperature"] == 0.0 and srv.requests[0]["max_tokens"] == 4096


def test_rate_limit_honours_retry_after_then_succeeds(tmp_path):
    with FakeOpenAI([status(429, {"Retry-After": "7"}), reply("ok")]) as srv:
        c, slept = client(srv, tmp_path)
        call = run(c)
    assert call.content == "ok" and call.attempts == 2
    assert slept == [7.0] and len(srv.requests) == 2


def test_server_error_is_retried_with_growing_jittered_backoff(tmp_path):
    with FakeOpenAI([status(500), status(503), reply("ok")]) as srv:
        c, slept = client(srv, tmp_path, backoff_base=1.0)
        call = run(c)
    assert call.content == "ok" and call.attempts == 3
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0


def test_timeout_is_retried_where_the_provider_drops_the_request(tmp_path):
    with FakeOpenAI([delay(3.0), reply("ok")]) as srv:
        c, slept = client(srv, tmp_path, timeout=0.5, retry_timeouts=True)
        call = run(c)
    assert call.content == "ok" and call.attempts == 2 and len(slept) == 1


def test_a_server_of_ones_own_is_not_sent_a_timed_out_request_again(tmp_path):
    """A CPU server goes on generating a request its client gave up on: a retry would queue
    behind it (and time out too), so with api_base a time-out ends the call at once."""
    with FakeOpenAI([delay(3.0), reply("ok")]) as srv:
        c, slept = client(srv, tmp_path, timeout=0.5)
        call = run(c)
        assert len(srv.requests) == 1 and slept == []
    assert call.content is None and call.attempts == 1
    assert "not retried: timed out after 0.5 s" in call.error and srv.api_base in call.error
    assert ModelConfig("x", "openai/x", api_base="http://127.0.0.1:1/v1").timeout == 600
    assert ModelConfig("x", "openai/gpt-4o").timeout == 120
    assert ModelConfig("x", "openai/gpt-4o").retry_timeouts is True


def test_tools_go_with_tool_choice_auto_and_never_none(tmp_path):
    """Without tool_choice, llama.cpp's and llama-cpp-python's servers drop the tools
    without a word (every online episode then ran to its budget with no tool call)."""
    tools = [{"type": "function", "function": {"name": "submit", "parameters": {
        "type": "object", "properties": {}}}}]
    with FakeOpenAI([reply("a"), reply("b"), reply("c"), reply("d")]) as srv:
        c, _ = client(srv, tmp_path)
        run(c, tools=tools)
        run(c, sample=1)  # no tools: no tool_choice either
        c2, _ = client(srv, tmp_path / "2", tool_choice="required")
        run(c2, tools=tools)
        c3, _ = client(srv, tmp_path / "3", tool_choice="omit")
        run(c3, tools=tools)
        bad, _ = client(srv, tmp_path / "4", tool_choice="none")
        refused = run(bad, tools=tools)
    sent = [r.get("tool_choice") for r in srv.requests]
    assert sent == ["auto", None, "required", None]
    assert [bool(r.get("tools")) for r in srv.requests] == [True, False, True, True]
    assert refused.error and "tool_choice 'none'" in refused.error and len(srv.requests) == 4


def test_finish_reason_is_recorded_and_length_means_truncated(tmp_path):
    cut = reply("```\n(pick-up a)")
    cut["body"]["choices"][0]["finish_reason"] = "length"
    with FakeOpenAI([cut, reply("ok")]) as srv:
        c, _ = client(srv, tmp_path)
        first, second = run(c), run(c, sample=1)
    assert first.finish_reason == "length" and first.truncated
    assert first.to_json()["finish_reason"] == "length"
    assert second.finish_reason == "stop" and not second.truncated
    again = run(c)  # from the cache: the cut is remembered
    assert again.cache_hit and again.truncated


def test_a_model_with_no_known_price_is_unpriced_not_free(tmp_path, capfd):
    from planaudit.llm.client import total_cost

    with FakeOpenAI([reply("ok"), reply("ok")]) as srv:
        unknown = ModelConfig("t", "openai/no-such-model-anywhere", api_base=srv.api_base)
        call = asyncio.run(Client(unknown, Cache(tmp_path / "a")).complete(MESSAGES))
        free = ModelConfig("t", "openai/no-such-model-anywhere-2", api_base=srv.api_base,
                           input_price=0, output_price=0)
        paid = asyncio.run(Client(free, Cache(tmp_path / "b")).complete(MESSAGES))
    assert call.error is None and call.cost_usd is None
    assert paid.cost_usd == 0.0
    assert total_cost([call, paid]) is None and total_cost([paid, paid]) == 0.0
    # planaudit registers the configured price itself: litellm has nothing to warn about
    assert "custom pricing" not in capfd.readouterr().err


def test_persistent_failure_is_an_error_not_an_exception(tmp_path):
    with FakeOpenAI([status(500)] * 3) as srv:
        c, slept = client(srv, tmp_path, max_retries=2)
        call = run(c)
    assert call.content is None and call.attempts == 3 and len(slept) == 2
    assert "InternalServerError" in call.error


def test_bad_request_is_not_retried(tmp_path):
    with FakeOpenAI([status(400)]) as srv:
        c, slept = client(srv, tmp_path)
        call = run(c)
    assert call.error and call.attempts == 1 and slept == [] and len(srv.requests) == 1


def test_cache_answers_a_rerun_without_reaching_the_server(tmp_path):
    with FakeOpenAI([reply("first", 50, 7)]) as srv:
        c, _ = client(srv, tmp_path)
        first = run(c)
        again = run(client(srv, tmp_path)[0])  # a new client: the cache is on disk
        other = run(c, sample=1)  # another sample index is another call
    assert len(srv.requests) == 2
    assert again.cache_hit and again.content == "first" and again.input_tokens == 50
    assert not first.cache_hit and other.content == "(default)"


def test_cache_key_ignores_what_does_not_decide_a_reply():
    base = {"model": "m", "messages": MESSAGES, "tools": None, "temperature": 0.0,
            "max_tokens": 10, "sample": 0}
    assert cache_key(base) == cache_key({**base, "timeout": 5, "retries": 3, "api_key": "x"})
    assert cache_key(base) != cache_key({**base, "temperature": 0.7})


def test_no_api_key_reaches_any_written_file(tmp_path):
    with FakeOpenAI([reply("ok"), status(401)]) as srv:
        c, _ = client(srv, tmp_path)
        run(c)
        failed = run(c, sample=3)
    assert failed.error and SECRET not in failed.error
    written = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert written
    for p in written:
        assert SECRET not in p.read_text()


@pytest.mark.parametrize("kind", ["empty-choices", "invalid-json", "truncated", "reset"])
def test_broken_body_or_connection_is_retried_and_never_cached(tmp_path, kind):
    from tests.fake_openai import Responder

    with FakeOpenAI([Responder().fault(kind), reply("ok")]) as srv:
        c, slept = client(srv, tmp_path)
        call = run(c)
    assert call.content == "ok" and call.attempts == 2 and len(slept) == 1


def test_empty_choices_after_the_retries_is_an_error_not_a_crash(tmp_path):
    from tests.fake_openai import Responder

    with FakeOpenAI([Responder().fault("empty-choices")] * 3) as srv:
        c, _ = client(srv, tmp_path, max_retries=2)
        call = run(c)
    assert call.content is None and call.attempts == 3 and "EmptyReply" in call.error
    assert not [p for p in (tmp_path / "cache").rglob("*.json")]  # a failure is never cached


def test_experiments_with_results_folders_of_their_own_share_every_reply(tmp_path):
    """The task's folder (under the results folder) never reaches the model, so it does
    not split the cache: a second experiment on the same tasks pays nothing."""
    pilot = {"task_dir": "results/pilot/suite/gripper/p03", "task": "gripper/p03",
             "purpose": "final"}
    main_run = {**pilot, "task_dir": "results/main/suite/gripper/p03"}
    with FakeOpenAI([reply("first", 50, 7)]) as srv:
        c, _ = client(srv, tmp_path)
        first = run(c, metadata=pilot)
        again = run(client(srv, tmp_path)[0], metadata=main_run)
        other = run(c, metadata={**main_run, "task": "gripper/p04"})  # another task: a call
    assert len(srv.requests) == 2
    assert not first.cache_hit and again.cache_hit and again.content == "first"
    assert other.content == "(default)"


def test_an_entry_keyed_with_the_task_folder_is_still_found(tmp_path):
    """Entries written while `task_dir` was part of every key are answered, and filed
    under today's key."""
    meta = {"task_dir": "results/suite/gripper/p03", "task": "gripper/p03", "purpose": "final"}
    with FakeOpenAI([reply("new")]) as srv:
        c, _ = client(srv, tmp_path)
        old = {"model": "openai/test-model", "messages": MESSAGES, "tools": None,
               "temperature": 0.0, "max_tokens": 4096, "sample": 0, "metadata": meta,
               "api_base": srv.api_base}
        Cache(tmp_path / "cache").put(cache_key(old), {
            "content": "paid before", "tool_calls": [], "input_tokens": 9, "output_tokens": 3,
            "cost_usd": 0.0001, "latency_s": 1.0, "attempts": 1, "error": None})
        call = run(c, metadata=meta)
        moved = run(c, metadata={**meta, "task_dir": "elsewhere/gripper/p03"})
    assert srv.requests == [] and call.cache_hit and call.content == "paid before"
    assert moved.cache_hit and moved.content == "paid before"
