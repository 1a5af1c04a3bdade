"""Reasoning as a factor: a model entry's `reasoning` reaches the provider through litellm's
own parameters and the cache key, and the reasoning tokens and text the provider reports are
kept (the text in the transcript, never read as the answer)."""

from __future__ import annotations

import asyncio

import polars as pl
import pytest

from planaudit.llm.cache import Cache
from planaudit.llm.client import (
    Client,
    ModelConfig,
    provenance,
    reasoning_kwargs,
    reasoning_tokens,
)
from tests.fake_openai import FakeOpenAI, reply, thought

MESSAGES = [{"role": "user", "content": "Plan, please."}]
ANSWER = "```\n(pick-up a)\n```"
THINKING = "The block a is clear, so I can pick it up. (stack a b) would be wrong here."


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planaudit-test")


def client(srv: FakeOpenAI, cache: Cache, reasoning: dict | None) -> Client:
    return Client(ModelConfig("r", "openai/test-reasoner", api_base=srv.api_base,
                              input_price=1.0, output_price=4.0, reasoning=reasoning), cache)


def test_effort_reaches_the_provider_and_its_tokens_and_text_are_kept(tmp_path):
    with FakeOpenAI([thought(ANSWER, THINKING, 37, 100, 60)]) as srv:
        call = asyncio.run(client(srv, Cache(tmp_path), {"effort": "high"}).complete(MESSAGES))
    assert call.error is None
    assert srv.requests[0]["reasoning_effort"] == "high"
    assert call.content == ANSWER and THINKING not in call.content  # the answer alone
    assert call.reasoning == THINKING and call.to_json()["reasoning"] == THINKING
    assert call.reasoning_tokens == 37 and call.output_tokens == 60
    # reasoning tokens are output tokens: billed at the output price, counted once
    assert call.cost_usd == pytest.approx((100 * 1.0 + 60 * 4.0) / 1e6)


def test_the_effort_is_in_the_cache_key_and_a_rerun_is_answered_from_the_cache(tmp_path):
    cache = Cache(tmp_path)
    script = [thought(ANSWER, THINKING, 5), thought(ANSWER, THINKING, 50), reply(ANSWER)]
    with FakeOpenAI(script) as srv:
        low = asyncio.run(client(srv, cache, {"effort": "low"}).complete(MESSAGES))
        high = asyncio.run(client(srv, cache, {"effort": "high"}).complete(MESSAGES))
        plain = asyncio.run(client(srv, cache, None).complete(MESSAGES))
        again = asyncio.run(client(srv, cache, {"effort": "high"}).complete(MESSAGES))
    assert len(srv.requests) == 3  # low, high and none are three requests; the rerun is not
    assert "reasoning_effort" not in srv.requests[2]
    assert (low.reasoning_tokens, high.reasoning_tokens, plain.reasoning_tokens) == (5, 50, None)
    assert again.cache_hit and again.reasoning_tokens == 50 and again.reasoning == THINKING


def test_a_token_budget_is_litellms_thinking_and_a_bad_effort_is_refused():
    assert reasoning_kwargs({"budget_tokens": 2048}) == {
        "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert reasoning_kwargs(None) == {}
    with pytest.raises(ValueError, match="use one of low, medium, high"):
        reasoning_kwargs({"effort": "max"})


def test_an_episode_without_reported_reasoning_has_none_not_zero(tmp_path):
    with FakeOpenAI([reply(ANSWER), thought(ANSWER, THINKING, 12)]) as srv:
        c = client(srv, Cache(tmp_path), {"effort": "low"})
        first = asyncio.run(c.complete(MESSAGES))
        second = asyncio.run(c.complete([*MESSAGES, {"role": "user", "content": "again"}]))
    assert reasoning_tokens([first]) is None
    assert reasoning_tokens([first, second]) == 12


def test_a_config_with_reasoning_runs_a_shard_whose_rows_estimate_and_key_show_it(tmp_path,
                                                                                    monkeypatch):
    """An offline shard of a model entry with `reasoning` against a server that reports
    reasoning tokens: the rows carry them, the cache key holds the effort (another effort
    asks again), and the estimate adds the assumed reasoning tokens to the bill."""
    import json

    from planaudit.estimate import DEFAULT_REASONING_TOKENS, estimate
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard
    from tests.test_reference import task_dir

    suite = tmp_path / "suite"
    for name in ("gripper/p03", "gripper/p09"):
        task_dir(name, str(suite))

    def config(api_base: str, effort: str) -> Experiment:
        return Experiment.from_dict({
            "models": [{"name": f"r-{effort}", "model": "openai/test-reasoner",
                        "api_base": api_base, "input_price": 1.0, "output_price": 4.0,
                        "max_concurrency": 1, "reasoning": {"effort": effort}}],
            "offline": {"methods": ["direct"]}, "cache": str(tmp_path / "cache")})

    with FakeOpenAI([thought("UNSOLVABLE", THINKING, 40), thought("UNSOLVABLE", THINKING, 40),
                     thought("UNSOLVABLE", THINKING, 400), thought(ANSWER, THINKING, 400)]
                    ) as srv:
        rows = {}
        for effort in ("low", "high", "low"):  # the second low is answered from the cache
            exp = config(srv.api_base, effort)
            rows[effort] = run_shard(exp, exp.models[0], exp.method("offline", "direct"),
                                     "gripper", suite, tmp_path / f"{effort}.parquet",
                                     tmp_path / "transcripts" / effort)["gripper"]
        asked = [r["reasoning_effort"] for r in srv.requests]
    assert asked == ["low", "low", "high", "high"]  # the rerun sent nothing
    assert rows["low"]["reasoning_tokens"].to_list() == [40, 40]
    assert rows["high"]["reasoning_tokens"].to_list() == [400, 400]
    # one model at two efforts: the reasoning table pairs them on their tasks. p09 is
    # unsolvable: low said so, high planned (wrong); p03 neither got right
    assert set(rows["low"]["model_id"]) == {"openai/test-reasoner"}
    from planaudit.analysis.tables import build_tables

    table = build_tables(pl.concat([rows["low"], rows["high"]], how="diagonal_relaxed"),
                         n_resamples=100)["reasoning"]
    assert table.select("reasoning", "model", "score", "mean_reasoning_tokens").rows() == [
        ("effort=low", "r-low", 0.5, 40.0), ("effort=high", "r-high", 0.0, 400.0)]
    high = table.row(1, named=True)
    assert (high["versus"], high["n"], high["b"], high["c"]) == ("r-low", 2, 0, 1)
    assert high["p"] == 1.0 and high["significant"] is False  # one discordant task decides nothing
    assert table.row(0, named=True)["versus"] is None
    step = json.loads((tmp_path / "transcripts" / "high" / "p03.jsonl").read_text().splitlines()[0])
    assert step["call"]["reasoning"] == THINKING and step["call"]["content"] == "UNSOLVABLE"

    bill = {e: estimate(config("http://127.0.0.1:9/v1", e), suite)[0] for e in ("low", "high")}
    assert bill["high"].calls == bill["low"].calls == 2
    extra = DEFAULT_REASONING_TOKENS["high"] - DEFAULT_REASONING_TOKENS["low"]
    assert bill["high"].output_tokens - bill["low"].output_tokens == 2 * extra
    assert bill["high"].usd - bill["low"].usd == pytest.approx(2 * extra * 4.0 / 1e6)


def test_a_seed_reaches_the_provider_only_when_the_entry_sets_one_and_every_row_says_so(
        tmp_path):
    with FakeOpenAI([reply(ANSWER), reply(ANSWER)]) as srv:
        seeded = Client(ModelConfig("s", "openai/test", api_base=srv.api_base, seed=7,
                                    reasoning={"effort": "medium"}), Cache(tmp_path))
        plain = Client(ModelConfig("p", "openai/test", api_base=srv.api_base), Cache(tmp_path))
        asyncio.run(seeded.complete(MESSAGES))
        asyncio.run(plain.complete(MESSAGES))
    assert srv.requests[0]["seed"] == 7 and "seed" not in srv.requests[1]
    assert len(srv.requests) == 2  # the seed is in the key: the unseeded call was asked anew
    assert provenance(seeded.cfg) == {"model_id": "openai/test", "reasoning": "effort=medium",
                                      "provider_seed": 7}
    assert provenance(plain.cfg) == {"model_id": "openai/test", "reasoning": None,
                                     "provider_seed": None}
    reference = Client(ModelConfig("f", "reference/flawed", seed=3), Cache(tmp_path))
    assert provenance(reference.cfg)["provider_seed"] is None  # its seed draws faults
