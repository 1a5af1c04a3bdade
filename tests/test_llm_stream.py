"""`Client.complete` with `on_text`: the reply streamed from the tests' own OpenAI-compatible
server through the real litellm path, each delta passed on as it arrives, and the same
`Call` (text, tokens, cost, cache entry) as the unstreamed call's."""

from __future__ import annotations

import asyncio
import json

import pytest

from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from tests.fake_openai import FakeOpenAI, reply, status, streamed

MESSAGES = [{"role": "user", "content": "Plan, please."}]
TEXT = "Here is a plan:\n```\n(unstack c a)\n(put-down c)\n```"
PIECES = ["Here is ", "a plan:\n```\n", "(unstack c a)\n", "(put-down c)\n```"]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planaudit-test-stream")


def client(server: FakeOpenAI, cache: Cache) -> Client:
    async def sleep(s: float) -> None:  # no backoff waited out
        pass

    model = ModelConfig("test", "openai/test-model", api_base=server.api_base,
                        input_price=2.5, output_price=10.0)
    return Client(model, cache, sleep=sleep)


def streaming(c: Client, **kw):
    """(the call, the deltas passed on, each with the requests the server had seen then)."""
    got: list[str] = []

    async def on_text(text: str) -> None:
        got.append(text)

    return asyncio.run(c.complete(MESSAGES, on_text=on_text, **kw)), got


def test_the_deltas_arrive_in_order_and_the_call_is_the_unstreamed_ones(tmp_path):
    # one server (its address is part of the key): the streamed call, then the same
    # request unstreamed into a cache of its own
    with FakeOpenAI([streamed(TEXT, PIECES, prompt_tokens=1000, completion_tokens=200),
                     reply(TEXT, 1000, 200)]) as srv:
        call, got = streaming(client(srv, Cache(tmp_path / "streamed")))
        whole = asyncio.run(client(srv, Cache(tmp_path / "whole")).complete(MESSAGES))
        sent, unstreamed = srv.requests
    assert got == PIECES and "".join(got) == call.content == whole.content == TEXT
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert "stream" not in unstreamed and "stream_options" not in unstreamed
    assert (call.input_tokens, call.output_tokens) == (whole.input_tokens, whole.output_tokens) == (1000, 200)
    assert call.cost_usd == whole.cost_usd == pytest.approx((1000 * 2.5 + 200 * 10.0) / 1e6)
    assert call.price_source == whole.price_source == "config"
    assert (call.finish_reason, call.reasoning_tokens, call.reasoning) == ("stop", None, None)
    assert (call.error, call.attempts, call.cache_hit) == (None, 1, False)
    # the same cache entry as the unstreamed call wrote (stream is not part of the key),
    # holding the same reply
    entries = [sorted(p for p in (tmp_path / name).rglob("*") if p.is_file())
               for name in ("streamed", "whole")]
    assert [p.name for p in entries[0]] == [p.name for p in entries[1]] and len(entries[0]) == 1
    kept = [json.loads(p[0].read_text()) for p in entries]
    assert {**kept[0], "latency_s": 0} == {**kept[1], "latency_s": 0}


def test_a_second_call_is_a_hit_and_gives_its_text_once(tmp_path):
    cache = Cache(tmp_path / "cache")
    with FakeOpenAI([streamed(TEXT, PIECES)]) as srv:
        first, _ = streaming(client(srv, cache))
        again, got = streaming(client(srv, cache))
        plain = asyncio.run(client(srv, cache).complete(MESSAGES))  # unstreamed: the same entry
        assert len(srv.requests) == 1
    assert again.cache_hit and plain.cache_hit and got == [TEXT]
    assert again.content == plain.content == first.content
    assert (again.input_tokens, again.output_tokens, again.cost_usd) == (
        first.input_tokens, first.output_tokens, first.cost_usd)


def test_a_server_that_sends_no_usage_is_counted_by_litellm(tmp_path):
    with FakeOpenAI([streamed(TEXT, PIECES, usage=False, prompt_tokens=1000,
                              completion_tokens=200)]) as srv:
        call, got = streaming(client(srv, Cache(tmp_path / "cache")))
    assert "".join(got) == call.content == TEXT
    # not the server's 1000 and 200 (never sent): litellm's token counter on the prompt and text
    assert 0 < call.input_tokens < 100 and 0 < call.output_tokens < 100
    assert call.cost_usd == pytest.approx((call.input_tokens * 2.5 + call.output_tokens * 10.0) / 1e6)


def test_a_failure_before_any_text_is_retried(tmp_path):
    with FakeOpenAI([status(503), streamed(TEXT, PIECES)]) as srv:
        call, got = streaming(client(srv, Cache(tmp_path / "cache")))
        assert len(srv.requests) == 2
    assert call.attempts == 2 and call.error is None and got == PIECES


def test_a_failure_after_text_was_streamed_is_the_calls_error(tmp_path):
    cache = Cache(tmp_path / "cache")
    with FakeOpenAI([streamed(TEXT, PIECES, break_after=2), streamed(TEXT, PIECES)]) as srv:
        call, got = streaming(client(srv, cache))
        assert len(srv.requests) == 1  # not sent again: half a reply was shown
    assert got == PIECES[:2] and call.content is None and call.attempts == 1
    assert call.error.startswith("not retried: failed after its text began to stream")
    with FakeOpenAI([streamed(TEXT, PIECES)]) as srv:  # nothing was cached: asked again
        again, got = streaming(client(srv, cache))
    assert not again.cache_hit and "".join(got) == again.content == TEXT



def test_each_delta_is_passed_on_when_it_arrives_not_at_the_end(tmp_path):
    import time
    from itertools import pairwise

    seen: list[float] = []
    with FakeOpenAI([streamed(TEXT, PIECES, gap=0.3)]) as srv:
        c = client(srv, Cache(tmp_path / "cache"))
        call = asyncio.run(c.complete(MESSAGES, on_text=lambda t: seen.append(time.monotonic())))
        end = time.monotonic()
    assert call.content == TEXT and len(seen) == len(PIECES)
    # the server waits 0.3 s between pieces: each was passed on before the next was sent
    assert all(b - a >= 0.2 for a, b in pairwise(seen)) and end - seen[0] >= 0.6
