"""Inspect eval logs out of a real run and back into rows (`planaudit export inspect`,
`planaudit import inspect`): a small run of every regime with the reference models
through Snakemake, exported with the command, read back with inspect_ai's own reader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from planaudit.interop import ROW, SCORER, SUCCESSES, InteropError
from tests.conftest import blocksworld_config, snakemake

# CI installs the interop extra: there a missing inspect_ai is a failure, not a skip.
try:
    from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
except ImportError:
    if os.environ.get("CI"):
        raise
    pytest.skip("needs inspect_ai (pip install -e '.[interop]')", allow_module_level=True)

PLANAUDIT = Path(sys.executable).parent / "planaudit"
REFERENCES = [
    {"name": "oracle", "model": "reference/oracle", "family": "reference", "tier": "reference"},
    {"name": "flawed", "model": "reference/flawed", "family": "reference", "tier": "reference",
     "seed": 0, "faults": {"drop_action": 0.3, "wrong_argument": 0.3, "unknown_object": 0.2,
                           "plan_on_unsolvable": 0.5, "drop_fact": 0.5, "wrong_answer": 0.5}},
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(PLANAUDIT), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """Offline (direct, self-refine), online (react, no plan setting), curriculum (t1, t7)
    and ACPBench (app) on three blocksworld tasks, one of them unsolvable, for the oracle and
    the flawed reference; then the whole run exported as Inspect logs by the command."""
    tmp = tmp_path_factory.mktemp("inspect")
    cfg = blocksworld_config(
        tmp, {"p01": "solvable", "p02": "solvable", "p09": "unsolvable"}, models=REFERENCES,
        offline={"methods": ["direct", "self-refine"]},
        online={"methods": ["react"], "plan_settings": ["none"]},
        curriculum={"tests": ["t1", "t7"], "instances": 1, "shots": 1},
        acpbench={"types": ["app"], "tasks": 1, "states": 1})
    results = tmp / "results"
    done = snakemake(cfg, str(results / "episodes.parquet"), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    logs = tmp / "logs"
    exported = cli("export", "inspect", "--results", str(results), "--out", str(logs))
    assert exported.returncode == 0, exported.stderr
    shards = sorted((results / "episodes").rglob("*.parquet"))
    return {"tmp": tmp, "results": results, "logs": logs, "shards": shards,
            "rows": pl.concat([pl.read_parquet(s) for s in shards], how="diagonal_relaxed"),
            "read": {p.name: read_eval_log(p) for p in sorted(logs.glob("*.eval"))}}


def test_every_log_reads_back_with_one_sample_per_row_and_the_rows_tokens(run):
    logs, rows = run["read"], run["rows"]
    # regime x model x method (x plan setting): 2 models x (2 offline + 1 online + 2 + 1)
    assert len(logs) == 12
    assert set(rows["regime"].unique()) == {"offline", "online", "curriculum", "acpbench"}
    samples = [s for log in logs.values() for s in log.samples]
    assert len(samples) == rows.height
    for log in logs.values():
        assert log.status == "success" and log.eval.task.startswith("planaudit/")
        mine = [s.scores[SCORER].metadata[ROW] for s in log.samples]
        assert len({(s.id, s.epoch) for s in log.samples}) == len(log.samples)
        for s, row in zip(log.samples, mine, strict=True):
            (usage,) = s.model_usage.values()
            assert (usage.input_tokens, usage.output_tokens) == (row["input_tokens"],
                                                                  row["output_tokens"])
        (total,) = log.stats.model_usage.values()
        assert total.input_tokens == sum(r["input_tokens"] for r in mine) > 0
        assert total.output_tokens == sum(r["output_tokens"] for r in mine)
        assert log.results.scores[0].metrics["n"].value == len(log.samples)
    assert sum(next(iter(s.model_usage.values())).input_tokens for s in samples) == \
        rows["input_tokens"].sum()


def test_scores_are_the_outcomes_and_results_the_reports_rates(run):
    for log in run["read"].values():
        for s in log.samples:
            score, row = s.scores[SCORER], s.scores[SCORER].metadata[ROW]
            assert score.value == ("C" if row["outcome"] in SUCCESSES else "I")
            assert score.answer == row["outcome"]
            if row.get("first_failure_detail"):
                assert row["first_failure_detail"] in score.explanation
            assert {k: s.metadata[k] for k in ("domain", "task", "regime")} == \
                {k: row[k] for k in ("domain", "task", "regime")}
        metrics = log.results.scores[0].metrics
        mine = [s.scores[SCORER].metadata[ROW] for s in log.samples]
        ok = [r for r in mine if r["outcome"] != "error"]
        if log.eval.task in ("planaudit/offline", "planaudit/online"):
            solvable = [r for r in ok if r["solvable"]]
            assert metrics["success"].value == pytest.approx(
                sum(r["success"] for r in solvable) / len(solvable))
            assert metrics["detection"].value == pytest.approx(
                sum(r["detected"] for r in ok if not r["solvable"])
                / sum(not r["solvable"] for r in ok))
        else:
            assert metrics["accuracy"].value == pytest.approx(
                sum(r["success"] for r in ok) / len(ok))
    flawed = [s for name, log in run["read"].items() if "_flawed_" in name for s in log.samples]
    assert any(s.scores[SCORER].value == "I" for s in flawed)  # the faults show


def test_online_samples_hold_tool_calls_and_tool_results_in_order(run):
    (log,) = [v for k, v in run["read"].items() if k.startswith("planaudit_online_oracle")]
    assert log.eval.task_args["plan_setting"] == "none"
    for s in log.samples:
        called: dict[str, str] = {}
        results = 0
        assert s.messages[0].role == "system" and s.input == "Begin."
        for m in s.messages:
            if m.role == "assistant":
                called.update({tc.id: tc.function for tc in m.tool_calls or []})
            if m.role == "tool":
                assert called[m.tool_call_id] == m.function  # answers a call made before it
                results += 1
        assert "get_task" in called.values() and results >= 1
        if s.metadata["solvable"]:  # the oracle acted: every act but the last answered
            assert "act" in called.values() and results == len(called) - 1
        # the events inspect view's Transcript tab shows: a model call per call, each sent
        # the conversation so far, and a tool event per tool result
        models = [e for e in s.events if e.event == "model"]
        assert len(models) == s.scores[SCORER].metadata[ROW]["n_calls"]
        assert [m.id for m in models[-1].input] == [m.id for m in s.messages[:-1]]
        assert sum(e.event == "tool" for e in s.events) == results
        # the brief reached the agent as get_task's result, once
        assert sum(m.role == "tool" and m.function == "get_task" for m in s.messages) == 1


def test_a_multi_call_episode_is_one_conversation_without_repeats(run):
    (log,) = [v for k, v in run["read"].items() if k.startswith("planaudit_offline_flawed_self")]
    for s in log.samples:
        texts = [m.text for m in s.messages if m.role in ("system", "user")]
        assert len(texts) == len(set(texts))  # the shared prefix once
        assert sum(m.role == "system" for m in s.messages) == 1
        purposes = [m.metadata["purpose"] for m in s.messages if m.role == "assistant"]
        assert purposes[:3] == ["final", "critique", "final"]
    for log in run["read"].values():  # every call's reply once, in every regime
        for s in log.samples:
            assert "transcript" not in s.metadata  # every row found its transcript
            replies = [m for m in s.messages if m.role == "assistant"]
            assert len(replies) == s.scores[SCORER].metadata[ROW]["n_calls"]


def test_reference_models_are_labelled_as_non_llm_references(run):
    for log in run["read"].values():
        assert log.eval.model.startswith("planaudit/")
        assert log.eval.task_args["reference"] is True
        assert "not an LLM" in log.eval.metadata["reference_note"]
        assert all("not an LLM" in s.metadata["reference_note"] for s in log.samples)


def test_round_trip_gives_back_the_same_rows_that_collect_and_tables_take(run, tmp_path):
    from planaudit.analysis.collect import collect, default_schema, load_schema
    from planaudit.interop.inspect_rows import import_logs

    lines = list(import_logs([run["logs"]], tmp_path / "rows"))
    assert lines[-1].startswith(f"import inspect: {run['rows'].height} rows from 12 log(s)")
    imported = sorted((tmp_path / "rows").glob("*/*.parquet"))
    assert len(imported) == 12
    schema = load_schema(default_schema())
    # every column survives: the row travels whole in the score's metadata
    assert_frame_equal(collect(imported, schema), collect(run["shards"], schema))
    out = tmp_path / "episodes.parquet"
    assert cli("collect", "--out", str(out), *map(str, imported)).returncode == 0
    tables = cli("tables", "--episodes", str(out), "--out", str(tmp_path / "report"),
                 "--bootstrap", "50")
    assert tables.returncode == 0, tables.stderr
    assert "oracle" in (tmp_path / "report" / "main.md").read_text()


def _edited(run, tmp_path: Path, name: str, edit) -> Path:
    log: EvalLog = read_eval_log(run["logs"] / name)
    edit(log)
    path = tmp_path / name
    write_eval_log(log, path)
    return path


def test_a_third_party_row_without_model_or_tokens_takes_them_from_the_log(run, tmp_path):
    from planaudit.interop.inspect_rows import import_logs

    def strip(log: EvalLog) -> None:
        for s in log.samples:
            for key in ("model", "reference", "input_tokens", "output_tokens"):
                s.scores[SCORER].metadata[ROW].pop(key)

    path = _edited(run, tmp_path, "planaudit_offline_flawed_direct.eval", strip)
    list(import_logs([path], tmp_path / "rows"))
    rows = pl.read_parquet(tmp_path / "rows" / "offline" / f"{path.stem}.parquet")
    original = run["rows"].filter((pl.col("model") == "flawed") & (pl.col("method") == "direct"))
    assert rows["model"].unique().to_list() == ["flawed"] and rows["reference"].all()
    assert rows["input_tokens"].sum() == original["input_tokens"].sum() > 0


def test_bad_input_is_refused_naming_the_file(run, tmp_path):
    from planaudit.interop.inspect_log import export
    from planaudit.interop.inspect_rows import import_logs

    def other(log: EvalLog) -> None:
        log.eval.task = log.eval.task_registry_name = "theirs/other_task"

    foreign = _edited(run, tmp_path, "planaudit_online_oracle_react_none.eval", other)
    with pytest.raises(InteropError, match=r"planaudit_online_oracle_react_none\.eval.*"
                                           r"'theirs/other_task', not of a planaudit task"):
        list(import_logs([foreign], tmp_path / "rows"))
    assert not (tmp_path / "rows").exists()  # refused before anything was written

    def unscored(log: EvalLog) -> None:
        log.samples[1].scores = {}

    (tmp_path / "u").mkdir()
    bare = _edited(run, tmp_path / "u", "planaudit_offline_oracle_direct.eval", unscored)
    sid = read_eval_log(bare).samples[1].id
    with pytest.raises(InteropError, match=rf"{bare.name}: sample {sid} .*no planaudit score"):
        list(import_logs([bare], tmp_path / "rows"))

    with pytest.raises(InteropError, match="nowhere: no such log file or folder"):
        list(import_logs([tmp_path / "nowhere"], tmp_path / "rows"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InteropError, match="empty: no Inspect logs"):
        list(import_logs([tmp_path / "empty"], tmp_path / "rows"))
    junk = tmp_path / "junk.eval"
    junk.write_text("not a zip")
    with pytest.raises(InteropError, match=r"junk\.eval: not an Inspect eval log"):
        list(import_logs([junk], tmp_path / "rows"))
    with pytest.raises(InteropError, match="episodes: no such folder"):
        list(export(tmp_path / "no-results", tmp_path / "out"))
    failed = cli("import", "inspect", str(foreign), "--out", str(tmp_path / "cli"))
    assert failed.returncode == 2 and "not of a planaudit task" in failed.stderr


def test_a_row_whose_transcript_is_gone_is_still_a_sample_saying_so(run, tmp_path):
    import shutil

    from planaudit.interop.inspect_log import export

    results = tmp_path / "results"
    shutil.copytree(run["results"] / "episodes", results / "episodes")
    shutil.copytree(run["results"] / "transcripts", results / "transcripts")
    gone = results / "transcripts" / "offline" / "oracle" / "direct" / "blocksworld" / "p02.jsonl"
    gone.unlink()
    lines = list(export(results, tmp_path / "logs", workers=1))
    assert "planaudit_offline_oracle_direct.eval: 3 samples (1 without a transcript)" in \
        "\n".join(lines)
    log = read_eval_log(tmp_path / "logs" / "planaudit_offline_oracle_direct.eval")
    (bare,) = [s for s in log.samples if "transcript" in s.metadata]
    assert bare.id == "blocksworld/p02" and bare.messages == [] and bare.input == ""
    assert bare.scores[SCORER].metadata[ROW]["task"] == "p02"
