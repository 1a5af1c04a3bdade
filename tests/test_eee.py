"""`planaudit export eee` on a small real run (reference models, offline and online shards
through planaudit's own CLI, collected): every written file passes every_eval_ever 0.3.0's
own validator (schema and repository checks), the records' numbers are the rows', the
reference models are labelled, a re-export is byte-identical, a bad input is named, and
the validator does refuse a record with a planted fault (so the checks can fail)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from planaudit.cli import main
from planaudit.formal.truth import Limits
from planaudit.interop import InteropError
from planaudit.interop.eee import REFERENCE_SUFFIX, export
from planaudit.suite.catalog import find_entry
from planaudit.suite.prepare import prepare
from planaudit.suite.records import make_truth

# CI installs the interop extra: there a missing every_eval_ever is a failure, not a skip.
try:
    from every_eval_ever.validator.validation_core import validate_file
except ImportError:
    if os.environ.get("CI"):
        raise
    pytest.skip("needs every_eval_ever (pip install -e '.[interop]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
SUITE = {"source": "builtin", "root": str(ROOT / "domains")}
# p09s: unsolvable
TASKS = ["blocksworld/p04", "blocksworld/p09", "gripper/p03", "logistics/p03", "hospital/p09"]
MODELS = [
    {"name": "oracle", "model": "reference/oracle", "tier": "reference"},
    {"name": "flawed", "model": "reference/flawed", "tier": "reference", "seed": 0,
     "faults": {"drop_action": 0.4, "plan_on_unsolvable": 0.5}},
]
# (regime, method, setting): a single-call method, a multi-call one, an agent
SHARDS = [("offline", "direct", None), ("offline", "self-refine", None),
          ("online", "react", "none")]


def _shard(tmp: Path, suite: Path, model: str, regime: str, method: str,
           setting: str | None) -> Path:
    spec = {"models": MODELS, "cache": str(tmp / "cache"),
            "offline": {"methods": ["direct", "self-refine"], "witness": "val",
                        "params": {"direct": {}, "self-refine": {"rounds": 2}}},
            "online": {"methods": ["react"], "budget": 40, "params": {"react": {}}}}
    where = "/".join(p for p in (regime, model, method, setting) if p)
    out = tmp / "results" / "episodes" / where / "{domain}.parquet"
    argv = [regime, "shard", "--spec", json.dumps(spec), "--model", model, "--method", method,
            "--suite", str(suite), "--out", str(out),
            "--transcripts", str(tmp / "results" / "transcripts" / where / "{domain}")]
    for domain in sorted({t.split("/")[0] for t in TASKS}):
        argv += ["--domain", domain]
    if setting:
        argv += ["--setting", setting]
    assert main(argv) == 0
    return out.parent


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eee")
    suite = tmp / "suite"
    for name in TASKS:
        d, t = name.split("/")
        entry = find_entry(SUITE, d, t)
        prepare(entry, suite / d / t, obfuscate=d in ("blocksworld", "logistics"), seed=0)
        make_truth(entry, suite / d / t, Limits(external=False))
    folders = [_shard(tmp, suite, m["name"], *s) for m in MODELS for s in SHARDS]
    shards = sorted(str(p) for f in folders for p in f.glob("*.parquet"))
    results = tmp / "results"
    assert main(["collect", *shards, "--out", str(results / "episodes.parquet")]) == 0
    out = tmp / "eee"
    lines = list(export(results, out))
    return results, out, lines


def _files(out: Path) -> list[Path]:
    return sorted(p for p in (out / "data").rglob("*") if p.is_file())


def _validate(out: Path, path: Path):
    """As `every_eval_ever validate` does: repository path, sibling files, semantic checks."""
    repo = path.relative_to(out).as_posix()

    class Local:
        def __contains__(self, rel: object) -> bool:
            return isinstance(rel, str) and (out / rel).is_file()

    return validate_file(path, repo_path=repo, available_files=Local(),
                         read_repo_file=lambda rel: (out / rel).read_text(),
                         run_semantic_checks=True)


def _aggregates(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in _files(out) if p.suffix == ".json"]


def _samples(out: Path, agg: dict) -> list[dict]:
    path = out / agg["detailed_evaluation_results"]["file_path"]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_file_passes_the_packages_validator(run):
    _, out, lines = run
    files = _files(out)
    assert len(files) == 2 * len(MODELS)  # an aggregate and its samples per model
    assert {p.suffix for p in files} == {".json", ".jsonl"}
    for path in files:
        report = _validate(out, path)
        assert report.valid and report.errors == [] and report.warnings == [], (path, report)
    assert len(lines) == len(MODELS) and not any("no transcript" in x for x in lines)


def test_the_records_numbers_are_the_rows(run):
    results, out, _ = run
    rows = pl.read_parquet(results / "episodes.parquet")
    aggs = _aggregates(out)
    assert len(aggs) == rows["model"].n_unique()
    for agg in aggs:
        model = agg["model_info"]["additional_details"]["config_name"] \
            if "config_name" in agg["model_info"]["additional_details"] \
            else agg["model_info"]["id"].split("reference-", 1)[1]
        mine = rows.filter(pl.col("model") == model)
        ok = mine.filter(pl.col("outcome") != "error")
        results_by_id = {r["evaluation_result_id"]: r for r in agg["evaluation_results"]}
        # offline: success, detection, score per method; online: the same per plan setting
        assert len(results_by_id) == 3 * len(SHARDS)
        for regime, method, setting in SHARDS:
            g = ok.filter((pl.col("regime") == regime) & (pl.col("method") == method))
            solv, unsolv = g.filter(pl.col("solvable")), g.filter(~pl.col("solvable"))
            expected = {
                "success": (solv.height, int(solv["success"].sum())),
                "detection": (unsolv.height, int(unsolv["detected"].sum())),
                "score": (g.height, int((g["success"] | g["detected"]).sum())),
            }
            for metric, (n, hits) in expected.items():
                res = results_by_id["/".join(p for p in (regime, method, setting, metric) if p)]
                d = res["score_details"]
                assert (int(d["details"]["n"]), int(d["details"]["hits"])) == (n, hits)
                assert d["score"] == pytest.approx(hits / n)
                assert d["uncertainty"]["num_samples"] == n
                assert res["metric_config"]["min_score"] == 0.0
        samples = _samples(out, agg)
        assert len(samples) == mine.height == agg["detailed_evaluation_results"]["total_rows"]
        assert sum(s["token_usage"]["input_tokens"] for s in samples) == mine["input_tokens"].sum()
        assert sum(s["token_usage"]["output_tokens"] for s in samples) == mine["output_tokens"].sum()
        assert sum(s["evaluation"]["score"] for s in samples) == \
            (mine["success"] | mine["detected"]).sum()
        # every instance points at its configuration's score result, which exists
        assert {s["evaluation_result_id"] for s in samples} <= set(results_by_id)
        assert {s["evaluation_id"] for s in samples} == {agg["evaluation_id"]}


def test_intervals_are_the_report_tables(run):
    """The aggregate's bootstrap interval is the main table's (same function, seed, draws)."""
    from planaudit.analysis.tables import main_table

    results, out, _ = run
    table = main_table(pl.read_parquet(results / "episodes.parquet").filter(
        pl.col("regime") == "offline"))
    for agg in _aggregates(out):
        name = agg["model_info"]["name"]
        for res in agg["evaluation_results"]:
            rid = res["evaluation_result_id"].split("/")
            if rid[0] != "offline" or rid[-1] not in ("success", "score"):
                continue
            row = table.filter((pl.col("model") == name) & (pl.col("method") == rid[1]))
            ci = res["score_details"]["uncertainty"].get("confidence_interval")
            lo, hi = row[f"{rid[-1]}_lo"][0], row[f"{rid[-1]}_hi"][0]
            assert (ci is None and lo is None) or (ci["lower"], ci["upper"]) == (lo, hi)
            assert res["score_details"]["score"] == pytest.approx(row[rid[-1]][0])


def test_instances_carry_the_transcripts_and_outcomes(run):
    results, out, _ = run
    rows = pl.read_parquet(results / "episodes.parquet")
    kinds = set()
    for agg in _aggregates(out):
        for s in _samples(out, agg):
            row = s["metadata"]["row"]
            kinds.add((row["regime"], row["method"], s["interaction_type"]))
            assert s["evaluation"]["is_correct"] == (row["outcome"] in ("success", "detected"))
            assert s["answer_attribution"][0]["extracted_value"] == row["outcome"]
            assert s["input"]["raw"].strip() and s["metadata"]["transcript"] == "present"
            if row["first_failure_detail"]:
                assert row["first_failure_detail"] in s["metadata"]["first_failure"]
            if s["interaction_type"] == "agentic":
                # every tool call the agent made is in the messages
                assert s["evaluation"]["tool_calls_count"] >= row["n_epistemic"] + row["n_ontic"]
                assert s["messages"][-1]["role"] == "assistant"
            if s["interaction_type"] == "single_turn":
                assert s["output"]["raw"] and s["output"]["raw"][0]
    assert ("offline", "direct", "single_turn") in kinds
    assert ("offline", "self-refine", "multi_turn") in kinds
    assert ("online", "react", "agentic") in kinds
    assert rows.filter(pl.col("outcome") != "success").height > 0  # flawed failed somewhere


def test_reference_models_are_labelled_and_scoring_is_formal(run):
    _, out, _ = run
    for agg in _aggregates(out):
        info = agg["model_info"]
        assert info["name"].endswith(REFERENCE_SUFFIX)
        assert info["id"].startswith("planaudit/reference-")
        assert "non-LLM reference" in info["additional_details"]["model_kind"]
        meta = agg["source_metadata"]["additional_details"]
        assert meta["reference_model"].startswith("true")
        assert meta["llm_judge"] == "none" and "formal core" in meta["scored_by"]
        assert meta["planaudit_version"] == agg["eval_library"]["version"]
        for res in agg["evaluation_results"]:
            assert "llm_scoring" not in res["metric_config"]
            assert "formal core" in res["metric_config"]["additional_details"]["scored_by"]
        offline = [r for r in agg["evaluation_results"]
                   if r["evaluation_result_id"].startswith("offline/")
                   and r["evaluation_result_id"].endswith("/score")]
        # VAL witnessed the offline plans: counted, and it agreed with the formal core
        assert all("val_witnessed" in r["score_details"]["details"] for r in offline)
        assert all(r["score_details"]["details"]["val_disagreements"] == "0" for r in offline)


def test_a_reexport_is_byte_identical(run, tmp_path):
    results, out, _ = run
    again = tmp_path / "again"
    list(export(results, again))
    first, second = _files(out), _files(again)
    assert [p.relative_to(out) for p in first] == [p.relative_to(again) for p in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second, strict=True))


def test_a_bad_input_is_named(tmp_path, capsys):
    with pytest.raises(InteropError, match=f"{tmp_path / 'episodes.parquet'}: no episodes"):
        list(export(tmp_path, tmp_path / "out"))
    (tmp_path / "episodes.parquet").write_text("not parquet")
    assert main(["export", "eee", "--results", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "episodes.parquet: not a readable Parquet file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_validator_refuses_planted_faults(run, tmp_path):
    """The validation can fail: a score outside [0, 1], a samples line of another
    evaluation, and a total_rows that lies are each refused."""
    _, out, _ = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    agg_path = next(p for p in _files(copy) if p.suffix == ".json")
    agg = json.loads(agg_path.read_text())
    samples_path = copy / agg["detailed_evaluation_results"]["file_path"]

    agg["evaluation_results"][0]["score_details"]["score"] = 1.5
    agg_path.write_text(json.dumps(agg))
    report = _validate(copy, agg_path)
    assert not report.valid and any("outside" in e["msg"] for e in report.errors)

    agg["evaluation_results"][0]["score_details"]["score"] = 0.5
    agg["detailed_evaluation_results"]["total_rows"] += 1
    agg_path.write_text(json.dumps(agg))
    report = _validate(copy, agg_path)
    assert not report.valid and any("total_rows" in e["loc"] for e in report.errors)

    lines = samples_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["evaluation_id"] = "someone/else"
    del first["evaluation"]
    samples_path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    report = _validate(copy, samples_path)
    assert not report.valid
    assert any("evaluation" in e["loc"] for e in report.errors)
