"""`tool_choice` is part of a call's cache key: a reply given under one setting never
answers a call made under another. The default ("auto") keys exactly as before the
field was keyed, so a cache written before still answers."""

from __future__ import annotations

import asyncio
import hashlib
import json

from planaudit.llm.cache import Cache, cache_key
from planaudit.llm.client import Client, ModelConfig
from tests.fake_openai import FakeOpenAI, tool_call

MESSAGES = [{"role": "user", "content": "Plan, please."}]
TOOLS = [{"type": "function", "function": {
    "name": "act", "description": "Execute one action.",
    "parameters": {"type": "object", "properties": {"action": {"type": "string"}},
                   "required": ["action"]}}}]
# cache_key of these requests on c37b3d8 (before tool_choice was keyed)
PINNED = {"http://127.0.0.1:8/v1": "33bd1f12d80320387d3e226cf3dbea7f75fa058ba4c93e43310b3819bc223e79",
          None: "08a9834497b2c2f7059263daf9f76cc819ad9f14c0ab81b7c08070c7e34d94c7"}


def request(api_base: str | None) -> dict:
    """What `Client.complete` keys for a call with tools under "auto"."""
    return {"model": "openai/test-model", "messages": MESSAGES, "tools": TOOLS,
            "temperature": 0.0, "max_tokens": 4096, "sample": 0, "metadata": None,
            "api_base": api_base}


def old_key(req: dict) -> str:
    """c37b3d8's key function (checked against PINNED below)."""
    decisive = {k: req.get(k) for k in ("model", "messages", "tools", "temperature",
                                        "max_tokens", "sample", "metadata")}
    if req.get("api_base"):
        decisive["api_base"] = req["api_base"]
    blob = json.dumps(decisive, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def client(srv: FakeOpenAI, cache: Cache, choice: str) -> Client:
    cfg = ModelConfig("test", "openai/test-model", api_base=srv.api_base, api_key_env="none",
                      input_price=1.0, output_price=2.0, tool_choice=choice, max_retries=0)
    return Client(cfg, cache)


def test_the_auto_key_is_the_key_of_c37b3d8():
    for api_base, key in PINNED.items():
        assert old_key(request(api_base)) == key
        assert cache_key(request(api_base)) == key


def test_a_reply_under_one_tool_choice_does_not_answer_another(tmp_path):
    """Two clients share one cache: `omit`, then `required` for the same call. Both reach
    the server; the second carries `tool_choice: required`. Each asked again is a hit."""
    cache = Cache(tmp_path / "cache")
    with FakeOpenAI([tool_call("act", {"action": "(a)"}), tool_call("act", {"action": "(b)"})]
                    ) as srv:
        calls = {choice: asyncio.run(client(srv, cache, choice).complete(MESSAGES, tools=TOOLS))
                 for choice in ("omit", "required")}
        again = {choice: asyncio.run(client(srv, cache, choice).complete(MESSAGES, tools=TOOLS))
                 for choice in ("omit", "required")}
        assert len(srv.requests) == 2
        assert "tool_choice" not in srv.requests[0]
        assert srv.requests[1]["tool_choice"] == "required"
    assert not any(c.cache_hit for c in calls.values())
    assert all(c.cache_hit for c in again.values())
    assert again["required"].tool_calls == calls["required"].tool_calls != calls["omit"].tool_calls


def test_an_auto_call_is_filed_under_the_old_key(tmp_path):
    """A cache written before tool_choice was keyed still answers "auto" calls: the entry a
    call under "auto" writes is the one c37b3d8 wrote for it."""
    cache = Cache(tmp_path / "cache")
    with FakeOpenAI([tool_call("act", {"action": "(a)"})]) as srv:
        call = asyncio.run(client(srv, cache, "auto").complete(MESSAGES, tools=TOOLS))
        assert call.error is None and srv.requests[0]["tool_choice"] == "auto"
        assert cache.get(old_key(request(srv.api_base))) is not None
