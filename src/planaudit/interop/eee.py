"""A finished run as Every Eval Ever records (`planaudit export eee`).

Per model one aggregate record, `data/planaudit/<developer>/<model>/<uuid>.json`, with one
evaluation result per regime x method (x plan setting) and metric, and beside it
`<uuid>_samples.jsonl`, one instance record per episode (its transcript, its outcome as
the score, its first failure). The records are built with every_eval_ever's own pydantic
types (schema 0.3.0), so a record the schema refuses is never written.

Why the records say so much about scoring: Every Eval Ever's default reading of a score is
"an answer matched or a judge said so". planaudit's scores are decided by its formal core
(the plan run against the hidden PDDL model), with VAL as an independent witness where the
row has `val_valid`; no LLM judges anything. `source_metadata`, `eval_library` and every
metric's `additional_details` state it, with planaudit's version and the config hashes.

The file names are UUIDs derived from the run (uuid5 of the config hashes, the code
version and the model, stamped as version 4 because the datastore accepts only that
shape), and the timestamps are the rows' file's, so a re-export writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from planaudit.analysis.rows import MAIN_REGIMES, PLANNER_SUFFIX, REFERENCE_SUFFIX
from planaudit.interop import InteropError

BENCHMARK = "planaudit"
KEY = ("regime", "model", "method", "plan_setting", "domain", "task", "disguise", "form", "epoch")
NEEDED = ("regime", "model", "reference", "method", "domain", "task", "solvable", "outcome",
          "success", "detected", "input_tokens", "output_tokens", "latency_s", "n_calls",
          "config_hash", "code_version")
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/planaudit/every-eval-ever")
SEED, RESAMPLES, LEVEL = 0, 2000, 0.95  # the report's tables' defaults (config analysis)
SCORED_BY = ("planaudit's formal core: the answer (plan, tool calls or verdict) is checked "
             "against the hidden PDDL model by planaudit's own validator; no LLM judge")
WITNESS = ("VAL (the IPC plan validator) re-checks offline plans where the row has val_valid; "
           "its verdicts are counted beside each offline result")
# (metric, name, which rows count, description)
METRICS = {
    "success": ("planaudit.success_rate", "Success rate (solvable tasks)",
                "the share of solvable tasks solved with a valid plan"),
    "detection": ("planaudit.detection_rate", "Detection rate (unsolvable tasks)",
                  "the share of unsolvable tasks declared unsolvable"),
    "score": ("planaudit.score", "Score (all tasks)",
              "the share of tasks ending in success or detection (error episodes left out)"),
}


def _uuid(*parts: str) -> str:
    """A UUID4-shaped identifier that is a function of `parts` (the datastore takes v4 only)."""
    raw = uuid.uuid5(NAMESPACE, "\x1f".join(parts))
    return str(uuid.UUID(bytes=raw.bytes, version=4))


def _clean(value):
    """A row value as JSON holds it (NaN and numpy scalars out)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _key(row: dict) -> tuple:
    epoch = row.get("epoch")
    return tuple(str(row.get(k)) if k != "epoch" else str(int(epoch or 0)) for k in KEY)


def read_rows(results: Path) -> pl.DataFrame:
    path = results / "episodes.parquet"
    if not path.is_file():
        raise InteropError(f"{path}: no episodes.parquet (run `planaudit collect` first)")
    try:
        rows = pl.read_parquet(path)
    except Exception as e:  # polars raises several kinds for a file that is not Parquet
        raise InteropError(f"{path}: not a readable Parquet file ({e})") from e
    missing = [c for c in NEEDED if c not in rows.columns]
    if missing:
        raise InteropError(f"{path}: not planaudit episode rows (no column {', '.join(missing)})")
    if rows.is_empty():
        raise InteropError(f"{path}: no rows")
    return rows


def read_transcripts(results: Path) -> dict[tuple, list[dict]]:
    """Every transcript under results/transcripts by its episode (from the row it ends with,
    not from its path: a path need not name the model that wrote it)."""
    found: dict[tuple, list[dict]] = {}
    folder = results / "transcripts"
    for path in sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []:
        try:
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        except (OSError, json.JSONDecodeError) as e:
            raise InteropError(f"{path}: not a planaudit transcript ({e})") from e
        if not lines or "row" not in lines[-1]:
            raise InteropError(f"{path}: not a planaudit transcript (no closing row)")
        found[_key(lines[-1]["row"])] = lines[:-1]
    return found


def _arguments(text) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        value = None
    return value if isinstance(value, dict) else {"raw": "" if text is None else str(text)}


def _message(m: dict) -> dict:
    out = {"role": m.get("role", "?"), "content": _text(m.get("content"))}
    calls = [{"id": tc.get("id") or f"call_{i}", "name": (tc.get("function") or {}).get("name")
              or "?", "arguments": _arguments((tc.get("function") or {}).get("arguments"))}
             for i, tc in enumerate(m.get("tool_calls") or [])]
    if calls:
        out["tool_calls"] = calls
    if m.get("tool_call_id"):
        out["tool_call_id"] = [m["tool_call_id"]]
    return out


def _text(content) -> str | None:
    if content is None:
        return None
    return content if isinstance(content, str) else json.dumps(content, sort_keys=True)


def conversation(transcript: list[dict]) -> list[dict]:
    """The episode's messages in order, each once, merged as the Inspect export merges them
    (`inspect_messages.merge`: a call continues the earlier call with the longest prefix of
    its messages; one that continues none adds all of its own)."""
    from planaudit.interop.inspect_messages import merge

    return [{"turn_idx": i, **_message(m)} for i, (m, *_) in enumerate(merge(transcript))]


def _failure(row: dict) -> str | None:
    from planaudit.transcript import failure_line

    return failure_line(row)


def _truth(row: dict) -> list[str]:
    if row["regime"] not in MAIN_REGIMES or row["solvable"] is None:
        return []
    if row["solvable"]:
        return [f"solvable (optimal plan length {row['optimal_length']})"]
    return ["unsolvable (the goal cannot be reached)"]


def _scored(row: dict) -> bool:
    return bool(row["success"]) or bool(row["detected"])


def _config(row: dict) -> tuple[str, str, str | None]:
    setting = row.get("plan_setting") if row["regime"] == "online" else None
    return row["regime"], row["method"], setting


def _config_name(config: tuple[str, str, str | None]) -> str:
    regime, method, setting = config
    return f"{BENCHMARK} {regime} {method}" + (f" (plan setting {setting})" if setting else "")


def _result_id(config: tuple[str, str, str | None], metric: str) -> str:
    return "/".join(p for p in (*config, metric) if p)


def _sample_id(row: dict) -> str:
    sid = f"{row['domain']}/{row['task']}"
    if row.get("disguise") not in (None, "none"):
        sid += f"@{row['disguise']}"
    if row.get("form"):
        sid += f"#{row['form']}"
    if row.get("epoch"):
        sid += f".e{row['epoch']}"
    return sid


# the programs planaudit runs in process in a model's place: (label, id prefix, kind, reference)
IN_PROCESS = {
    "reference": (REFERENCE_SUFFIX, "reference", "non-LLM reference model (a calibrator written "
                  "in planaudit: it reads the hidden PDDL model), not a language model", "true"),
    "planner": (PLANNER_SUFFIX, "planner", "classical planner (Fast Downward or planaudit's own "
                "A*, planning on the hidden PDDL model), not a language model", "false"),
}


def model_identity(model: str, reference: bool, planner: bool = False) -> dict:
    """model_info: a reference model or a classical planner is a program planaudit runs,
    labelled so in its name, its id (developer `planaudit`, `reference-<name>` or
    `planner-<name>`) and its details; an LLM keeps the config's name (the rows do not
    carry the provider's model id)."""
    if reference or planner:
        suffix, prefix, kind, ref = IN_PROCESS["reference" if reference else "planner"]
        return {"name": model + suffix, "id": f"{BENCHMARK}/{prefix}-{model}",
                "developer": BENCHMARK, "inference_platform": "planaudit (in process, no model)",
                "additional_details": {"model_kind": kind, "reference": ref,
                                       "deployment_type": "self_deployed",
                                       "model_availability": "unknown"}}
    ident = model if "/" in model else f"unspecified/{model}"
    return {"name": model, "id": ident,
            "additional_details": {"model_kind": "LLM", "reference": "false",
                                   "config_name": model}}


def _rate(values: list[bool]) -> tuple[float, tuple[float, float] | None] | None:
    from planaudit.analysis.stats import bootstrap_ci

    if not values:
        return None
    return sum(values) / len(values), bootstrap_ci([float(v) for v in values], SEED, RESAMPLES,
                                                   LEVEL)


def _val_details(rows: list[dict]) -> dict[str, str]:
    witnessed = [r for r in rows if r.get("val_valid") is not None]
    if not witnessed:
        return {}
    disagree = sum(bool(r["val_valid"]) != (r["outcome"] == "success") for r in witnessed)
    return {"val_witnessed": str(len(witnessed)), "val_disagreements": str(disagree)}


def results_of(config: tuple[str, str, str | None], rows: list[dict], source: dict,
               timestamp: str) -> list[dict]:
    """The configuration's evaluation results: success, detection and score for offline and
    online; score alone for the curriculum and ACPBench (their rows' `success`)."""
    valid = [r for r in rows if r["outcome"] != "error"]
    groups = {"score": valid}
    if config[0] in MAIN_REGIMES:
        groups = {"success": [r for r in valid if r["solvable"] is True],
                  "detection": [r for r in valid if r["solvable"] is False], **groups}
    out = []
    for metric, group in groups.items():
        hits = [bool(r["success"]) if metric == "success" else bool(r["detected"])
                if metric == "detection" else _scored(r) for r in group]
        rate = _rate(hits)
        if rate is None:
            continue
        value, ci = rate
        metric_id, name, description = METRICS[metric]
        if config[0] not in MAIN_REGIMES:  # the curriculum's cases, ACPBench's questions
            name, description = "Accuracy (all cases)", ("the share of cases answered "
                                                         "correctly (error episodes left out)")
        uncertainty: dict = {"num_samples": len(group)}
        if ci is not None:
            uncertainty.update(num_bootstrap_samples=RESAMPLES, confidence_interval={
                "lower": ci[0], "upper": ci[1], "confidence_level": LEVEL,
                "method": f"percentile bootstrap over tasks, seed {SEED} "
                          "(planaudit.analysis.stats.bootstrap_ci, as the report's tables)"})
        details = {"n": str(len(group)), "hits": str(sum(hits)),
                   "errors": str(len(rows) - len(valid)), "episodes": str(len(rows)),
                   **(_val_details(group) if config[0] == "offline" else {})}
        out.append({
            "evaluation_result_id": _result_id(config, metric),
            "evaluation_name": _config_name(config),
            "source_data": source,
            "evaluation_timestamp": timestamp,
            "metric_config": {
                "evaluation_description": f"{description}; {_config_name(config)}",
                "metric_id": metric_id, "metric_name": name, "metric_kind": "accuracy",
                "metric_unit": "proportion", "lower_is_better": False,
                "score_type": "continuous", "min_score": 0.0, "max_score": 1.0,
                "additional_details": {"scored_by": SCORED_BY,
                                       "error_episodes": "left out (the model could not be "
                                                         "reached: not a model failure)"}},
            "score_details": {"score": value, "details": details, "uncertainty": uncertainty},
            "generation_config": {"additional_details": {
                "regime": config[0], "method": config[1],
                **({"plan_setting": config[2]} if config[2] else {})}},
        })
    return out


def instance(row: dict, transcript: list[dict] | None, evaluation_id: str, model_id: str,
             result_id: str, name: str) -> dict:
    """One episode's instance record: agentic (online) or multi-turn when it took more than
    one call, single-turn otherwise; the score is the formal outcome."""
    messages = conversation(transcript) if transcript is not None else []
    calls = [s for s in transcript or [] if "call" in s]
    # the brief: what the model read before its first reply (online: the task comes later,
    # from get_task, and is in the messages)
    first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
    prompt = "\n\n".join(m["content"] or "" for m in messages[:first])
    if transcript is None:
        prompt = "(no transcript of this episode in the results folder)"
    record: dict = {"input": {"raw": prompt, "reference": _truth(row)}}
    if row["regime"] == "online":
        record["interaction_type"] = "agentic"
    elif len(calls) > 1:
        record["interaction_type"] = "multi_turn"
    else:
        record["interaction_type"] = "single_turn"
    if record["interaction_type"] == "single_turn":
        context = [m for m in messages if m["role"] != "assistant"]
        if context:
            record["input"]["formatted"] = json.dumps(
                [{"role": m["role"], "content": m["content"]} for m in context])
        record["output"] = {"raw": [calls[0]["call"].get("content") or ""] if calls else []}
        source, turn = "output.raw[0]", 0
    else:
        record["messages"] = messages
        turn = max(len(messages) - 1, 0)
        source = f"messages[{turn}]"
    failure = _failure(row)
    tool_calls = sum(len(m.get("tool_calls") or []) for m in messages)
    total = int(row["input_tokens"]) + int(row["output_tokens"])
    record.update({
        "schema_version": _schema_version(),
        "evaluation_id": evaluation_id, "model_id": model_id, "evaluation_name": name,
        "evaluation_result_id": result_id, "sample_id": _sample_id(row),
        "sample_hash": hashlib.sha256((record["input"]["raw"] + "\x1f".join(
            record["input"]["reference"])).encode()).hexdigest(),
        "answer_attribution": [{
            "turn_idx": turn, "source": source, "extracted_value": row["outcome"],
            "extraction_method": "planaudit output contract, then the formal core "
                                 "(planaudit.episode outcomes)", "is_terminal": True}],
        "evaluation": {"score": 1.0 if _scored(row) else 0.0, "is_correct": _scored(row),
                       "num_turns": max(int(row["n_calls"]), 1),
                       "tool_calls_count": tool_calls if record["interaction_type"] == "agentic"
                       else None},
        "token_usage": {"input_tokens": int(row["input_tokens"]),
                        "output_tokens": int(row["output_tokens"]), "total_tokens": total},
        "performance": {"latency_ms": float(row["latency_s"]) * 1000.0},
        "error": row.get("error"),
        "metadata": {"outcome": row["outcome"], "first_failure": failure,
                     "scored_by": SCORED_BY,
                     "transcript": "present" if transcript is not None else "missing",
                     "row": row},
    })
    return record


def _schema_version() -> str:
    from every_eval_ever.schema import get_schema_version

    return get_schema_version()


def _dump(record, indent: int | None = None) -> str:
    return json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False,
                      sort_keys=True, indent=indent)


def _source_data(rows: pl.DataFrame) -> dict:
    domains = sorted(set(rows["domain"].to_list()))
    tasks = rows.select("domain", "task").unique().height
    return {"dataset_name": f"{BENCHMARK} suite ({', '.join(domains)})", "source_type": "other",
            "additional_details": {"domains": ",".join(domains), "tasks": str(tasks),
                                   "hidden_model": "the PDDL domain and problem stay hidden "
                                                   "from the model; only planaudit reads them"}}


def export(results: Path, out: Path) -> Iterator[str]:
    """Write the run's records under out/data/planaudit/; yield a line per model."""
    from every_eval_ever.eval_types import EvaluationLog
    from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog

    frame = read_rows(results)
    transcripts = read_transcripts(results)
    timestamp = str(int((results / "episodes.parquet").stat().st_mtime))
    source = _source_data(frame)
    missing = 0
    all_rows = [{k: _clean(v) for k, v in r.items()} for r in frame.iter_rows(named=True)]
    by_model: dict[tuple[str, bool], list[dict]] = {}
    for r in all_rows:
        by_model.setdefault((r["model"], bool(r["reference"])), []).append(r)
    for (model, reference), rows in sorted(by_model.items()):
        rows.sort(key=lambda r: tuple(str(r.get(k)) for k in KEY))
        info = model_identity(model, reference,
                              planner=any(r.get("model_tier") == "planner" for r in rows))
        hashes = sorted({r["config_hash"] for r in rows})
        versions = sorted({r["code_version"] for r in rows})
        file_id = _uuid(BENCHMARK, model, str(reference), ",".join(versions), *hashes)
        developer, name = info["id"].split("/", 1)
        folder = Path("data") / BENCHMARK / developer / name.replace("/", "_")
        (out / folder).mkdir(parents=True, exist_ok=True)
        evaluation_id = f"{BENCHMARK}/{info['id']}/{timestamp}"
        configs: dict[tuple, list[dict]] = {}
        for r in rows:
            configs.setdefault(_config(r), []).append(r)
        lines = []
        for r in rows:
            transcript = transcripts.get(_key(r))
            missing += transcript is None
            config = _config(r)
            record = InstanceLevelEvaluationLog.model_validate(instance(
                r, transcript, evaluation_id, info["id"], _result_id(config, "score"),
                _config_name(config)))
            lines.append(_dump(record) + "\n")
        samples = "".join(lines)
        provenance = {
            "scored_by": SCORED_BY, "witness": WITNESS, "planaudit_version": ",".join(versions),
            "config_hashes": ",".join(hashes), "llm_judge": "none",
            "reference_model": "true: a non-LLM calibrator, not a language model" if reference
            else "false"}
        aggregate = EvaluationLog.model_validate({
            "schema_version": _schema_version(),
            "evaluation_id": evaluation_id,
            "evaluation_timestamp": timestamp,
            "retrieved_timestamp": timestamp,
            "source_metadata": {
                "source_name": "planaudit", "source_type": "evaluation_run",
                "source_organization_name": "planaudit",
                "evaluator_relationship": "first_party" if reference else "third_party",
                "additional_details": provenance},
            "eval_library": {"name": "planaudit", "version": ",".join(versions),
                             "additional_details": {"config_hashes": ",".join(hashes),
                                                    "scored_by": SCORED_BY}},
            "model_info": info,
            "evaluation_results": [res for config, group in sorted(
                configs.items(), key=lambda kv: tuple(str(p) for p in kv[0]))
                for res in results_of(config, group, source, timestamp)],
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": (folder / f"{file_id}_samples.jsonl").as_posix(),
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(samples.encode()).hexdigest(),
                "total_rows": len(lines)},
        })
        (out / folder / f"{file_id}_samples.jsonl").write_text(samples)
        (out / folder / f"{file_id}.json").write_text(_dump(aggregate, 2) + "\n")
        yield (f"{folder}/{file_id}.json: {model}{REFERENCE_SUFFIX if reference else ''}, "
               f"{len(aggregate.evaluation_results)} results, {len(lines)} episodes")
    if missing:
        yield f"{missing} episodes had no transcript in {results / 'transcripts'} (input left empty)"
