"""An episode whose prompt outgrows the model's context is the model's failure: the
outcome `context-exhausted`, counted in every rate and kept in the paired tables, never
an `error` (which would drop the long, failing episodes from both sides). Driven through
the real litellm path: the scripted server answers OpenAI's 400 `context_length_exceeded`,
which litellm maps to ContextWindowExceededError."""

from __future__ import annotations

import asyncio

import polars as pl
import pytest

from planaudit.analysis.tables import main_table, outcomes_table, pairs
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.offline.run import run_episode as offline_episode
from planaudit.online.run import run_episode
from tests.fake_openai import FakeOpenAI, tool_call
from tests.test_reference import task_dir

TASK = "blocksworld/p04"


def too_long() -> dict:
    """OpenAI's answer to a prompt past the context, as its API sends it."""
    return {"status": 400, "headers": {}, "body": {"error": {
        "message": "This model's maximum context length is 2048 tokens. However, your messages "
                   "resulted in 2301 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error", "param": "messages",
        "code": "context_length_exceeded"}}}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return task_dir(TASK, str(tmp_path_factory.mktemp("suite")))


def client_for(srv: FakeOpenAI, tmp_path) -> Client:
    return Client(ModelConfig("small", "openai/small", api_base=srv.api_base,
                              api_key_env="none", max_retries=2), Cache(tmp_path / "cache"))


def react_row(folder, tmp_path, turns: int) -> tuple[dict, list[dict], int]:
    """A react episode whose history outgrows the context after `turns` replies."""
    script = [tool_call("query_state", {}, call_id=f"c{i}") for i in range(turns)] + [too_long()]
    with FakeOpenAI(script) as srv:
        row, transcript = asyncio.run(run_episode(client_for(srv, tmp_path), "react",
                                                  {"budget": 50}, folder, task_name=TASK))
        return row, transcript, len(srv.requests)


def test_a_history_past_the_context_ends_as_context_exhausted(folder, tmp_path):
    row, transcript, sent = react_row(folder, tmp_path, turns=3)
    assert row["outcome"] == "context-exhausted", (row["outcome"], row["error"])
    assert sent == 4  # a bad request is not retried
    assert row["error"] is None and row["success"] is False and row["steps"] == 3
    assert row["first_failure_kind"] == "context"
    assert "ContextWindowExceededError" in row["first_failure_detail"]
    assert transcript[-1]["ending"] == "context-exhausted"


def test_context_exhausted_counts_in_every_rate_and_keeps_the_pair(folder, tmp_path):
    """Against a method that succeeds on the same task: the exhausted episode is a failure
    in the denominator (success 0 of 1, no error), and the task stays in the pair."""
    lost, _, _ = react_row(folder, tmp_path / "a", turns=2)
    won = {**lost, "method": "gated", "outcome": "success", "success": True,
           "first_failure_kind": None, "first_failure_detail": None}
    ep = pl.DataFrame([lost, won], infer_schema_length=None)
    table = {r["method"]: r for r in main_table(ep, n_resamples=50).iter_rows(named=True)}
    assert table["react"]["errors"] == 0 and table["react"]["n_solvable"] == 1
    assert table["react"]["success"] == 0.0 and table["react"]["score"] == 0.0
    assert table["gated"]["success"] == 1.0
    paired = pairs(ep.filter(pl.col("method") == "react"), ep.filter(pl.col("method") == "gated"))
    assert paired.height == 1 and paired["score_a"].to_list() == [False]
    counts = outcomes_table(ep).filter(pl.col("method") == "react").row(0, named=True)
    assert counts["context-exhausted"] == 1 and counts["error"] == 0


def test_an_offline_brief_past_the_context_is_the_models_failure_too(folder, tmp_path):
    """The first call does not fit: counted as the model's failure (episode.py says why)."""
    with FakeOpenAI([too_long()]) as srv:
        row, _ = asyncio.run(offline_episode(client_for(srv, tmp_path), "direct", {}, folder,
                                             task_name=TASK))
        assert len(srv.requests) == 1
    assert row["outcome"] == "context-exhausted" and row["error"] is None
    assert row["first_failure_kind"] == "context"


def test_an_unreachable_server_is_still_an_error(folder, tmp_path):
    """Only the context's 400 changes outcome: a server error after retries stays `error`."""
    status = {"status": 500, "headers": {}, "body": {"error": {"message": "down"}}}
    with FakeOpenAI([status] * 3) as srv:
        client = client_for(srv, tmp_path)
        client.sleep = lambda s: asyncio.sleep(0)
        row, _ = asyncio.run(run_episode(client, "react", {"budget": 5}, folder,
                                         task_name=TASK))
    assert row["outcome"] == "error" and row["error"]


def test_the_report_and_the_outcomes_figure_show_how_many(folder, tmp_path):
    """The design section counts the exhausted episodes apart from the errors, and the
    outcomes figure draws them with a style of their own (not left out of its bars)."""
    from planaudit.analysis.figures import OUTCOME_STYLE, draw_outcomes
    from planaudit.analysis.report import design_html

    lost, _, _ = react_row(folder, tmp_path, turns=1)
    ep = pl.DataFrame([lost, {**lost, "task": "p09"}], infer_schema_length=None)
    html = design_html(ep, {"models": [{"name": "small", "model": "openai/small"}]}, set())
    assert "0 ended in <code>error</code>" in html
    assert "2 ended in <code>context-exhausted</code>" in html
    assert "context-exhausted" in OUTCOME_STYLE
    legend = draw_outcomes(ep).axes[0].get_legend_handles_labels()[1]
    assert "context-exhausted" in legend, legend


def test_a_curriculum_or_acpbench_prompt_past_the_context_is_the_models_failure(tmp_path):
    """The single-call regimes read the same failed call the same way: their rows say
    `context-exhausted` (error null, kind `context`), and a 500 after retries stays `error`."""
    from planaudit.acpbench.questions import Question
    from planaudit.acpbench.shard import make_row as acp_row
    from planaudit.curriculum.shard import make_row as curriculum_row
    from planaudit.planbench.cases import Case

    case = Case("t1", "suite", "blocksworld", "p04", "a prompt", {"optimal_length": 4})
    question = Question("reach", "gen", "suite", "blocksworld", "p04", "s0", "a prompt")
    base = {"regime": "x", "model": "small", "domain": "blocksworld"}
    status = {"status": 500, "headers": {}, "body": {"error": {"message": "down"}}}
    with FakeOpenAI([too_long(), status, status, status]) as srv:
        client = client_for(srv, tmp_path)
        client.sleep = lambda s: asyncio.sleep(0)
        full = asyncio.run(client.complete([{"role": "user", "content": "a"}]))
        down = asyncio.run(client.complete([{"role": "user", "content": "b"}]))
    for row in (curriculum_row(case, None, full, base, full.error),
                acp_row(question, None, full, base, full.error)):
        assert row["outcome"] == "context-exhausted" and row["error"] is None, row
        assert row["first_failure_kind"] == "context" and row["success"] is False
    for row in (curriculum_row(case, None, down, base, down.error),
                acp_row(question, None, down, base, down.error)):
        assert row["outcome"] == "error" and row["error"], row
