"""A finished run as Inspect eval logs: one `.eval` per regime x model x method (x plan
setting), one sample per episode row, written with inspect_ai's own classes and writer.

Rows come from the shards (`results/episodes/...parquet`, each row as its shard holds it,
so the import gives back the very rows `collect` takes); each row's transcript is found in
the shard's transcript folder by the row it ends with (task, disguise, epoch, form), not by
guessing its file name. A row without its transcript (a run whose transcripts were removed)
is still a sample: its messages are empty and its metadata says so. Logs are built in
parallel, one process per group, because reading the transcripts dominates.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from planaudit import atomic
from planaudit.interop import ROW, SAMPLE_KEYS, SCORER, SUCCESSES, InteropError

COMPLIANCE = ("phases", "ppc", "poc", "ppf", "pc")
# what tells a shard's episodes apart inside its transcript folder
EPISODE_KEY = ("model", "domain", "task", "disguise", "epoch", "form", "source")
REFERENCE_NOTE = ("a non-LLM reference model (planaudit's calibrator, with privileged access to "
                  "the hidden model), not an LLM")
CURRICULUM_LIKE = ("curriculum", "acpbench")


def episode_key(row: dict) -> tuple:
    key = {k: row.get(k) for k in EPISODE_KEY}
    key["epoch"] = key["epoch"] or 0
    key["disguise"] = key["disguise"] or "none"
    return tuple(key.values())


def inspect_model(row: dict) -> str:
    """The model as Inspect names it: a reference model under the `planaudit/` provider."""
    return f"planaudit/{row['model']}" if row.get("reference") else str(row["model"])


def groups(results: Path) -> dict[tuple, list[Path]]:
    """Shards by (regime, model, method, plan setting), read from each shard's path by its
    regime's `Regime.layout` (the registry's, so a regime kept outside planaudit and named
    in PLANAUDIT_REGIMES exports like a built-in one); a regime whose layout names no
    method (people's: a study's participants, no model conversation) is left out."""
    from planaudit.regime import PLUGINS, regimes

    root = results / "episodes"
    if not root.is_dir():
        raise InteropError(f"{root}: no such folder (a finished run's results folder holds "
                           "episodes/ and transcripts/)")
    known = regimes()
    found: dict[tuple, list[Path]] = {}
    for shard in sorted(root.rglob("*.parquet")):
        parts = shard.relative_to(root).with_suffix("").parts
        regime = known.get(parts[0])
        if regime is None:
            raise InteropError(f"{shard}: not a shard of a known regime ('{parts[0]}'; have: "
                               f"{', '.join(known)}; a regime kept outside planaudit is "
                               f"named in {PLUGINS})")
        if "method" not in regime.layout:
            continue  # not runs of a model's method (people's rows): no Inspect eval log
        fields = regime.shard_fields(parts[1:])
        if fields is None or not {"model", "method"} <= set(fields):
            layout = "/".join(f"<{f}>" for f in regime.layout)
            raise InteropError(f"{shard}: not a shard of the results layout "
                               f"(episodes/{regime.name}/{layout}.parquet)")
        key = (regime.name, fields["model"], fields["method"], fields.get("setting"))
        found.setdefault(key, []).append(shard)
    if not found:
        raise InteropError(f"{root}: no episode shards (.parquet)")
    return found


def transcript_folder(results: Path, shard: Path) -> Path:
    rel = shard.relative_to(results / "episodes").with_suffix("")
    return results / "transcripts" / rel


def read_transcripts(folder: Path) -> dict[tuple, list[dict]]:
    """Every transcript under a folder, by the episode its last line (the row) names."""
    found = {}
    for path in sorted(folder.rglob("*.jsonl")):
        try:
            steps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        except (OSError, json.JSONDecodeError) as e:
            raise InteropError(f"{path}: not a transcript ({e})") from None
        if steps and "row" in steps[-1]:
            found[episode_key(steps[-1]["row"])] = steps[:-1]
    return found


def sample_id(row: dict) -> str:
    task = f"{row['domain']}/{row['task']}"
    if row.get("disguise") not in (None, "none"):
        task += f"@{row['disguise']}"
    if row.get("form"):
        task += f":{row['form']}"
    if row.get("source") and row.get("regime") == "acpbench" and row["source"] != "suite":
        task = f"{row['source']}:{task}"
    return task


def target(row: dict) -> str:
    """What counts as right: the optimal length, or UNSOLVABLE (the rows keep no gold
    answer of a curriculum or ACPBench question, only its verdict)."""
    if row.get("regime") in ("offline", "online", "curriculum") and row.get("solvable") is False:
        return "UNSOLVABLE"
    return "" if row.get("optimal_length") is None else str(row["optimal_length"])


def explanation(row: dict) -> str | None:
    from planaudit.transcript import failure_line

    return failure_line(row) or row.get("verdict_detail")


def sample(row: dict, steps: list[dict] | None):
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    from planaudit.interop.inspect_messages import first_user_text, to_inspect

    model = inspect_model(row)
    messages, events = to_inspect(steps, model) if steps else ([], [])
    meta = {k: row[k] for k in SAMPLE_KEYS if k in row}
    meta.update({k: row[k] for k in COMPLIANCE if k in row})
    if steps is None:
        meta["transcript"] = "missing: no transcript in the run ends with this row"
    if row.get("reference"):
        meta["reference_note"] = REFERENCE_NOTE
    usage = ModelUsage(input_tokens=row["input_tokens"], output_tokens=row["output_tokens"],
                       total_tokens=row["input_tokens"] + row["output_tokens"],
                       total_cost=row.get("cost_usd"))
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    output = (ModelOutput.from_content(model, last.text) if last is not None
              else ModelOutput(model=model))
    score = Score(value=CORRECT if row["outcome"] in SUCCESSES else INCORRECT,
                  answer=row["outcome"], explanation=explanation(row), metadata={ROW: row})
    return EvalSample(id=sample_id(row), epoch=int(row.get("epoch") or 0) + 1,
                      input=first_user_text(steps or []), target=target(row), messages=messages,
                      output=output, scores={SCORER: score}, metadata=meta, events=events,
                      model_usage={model: usage}, total_time=row.get("latency_s"),
                      working_time=row.get("latency_s"))


def rates(frame: pl.DataFrame, regime: str) -> dict[str, float]:
    """The group's rates as the report shows them (errors left out of every rate)."""
    from planaudit.analysis.rows import OK
    from planaudit.analysis.tables import RATES

    if regime in CURRICULUM_LIKE:
        ok = frame.filter(OK)
        found = {"accuracy": ok["success"].fill_null(False).mean() if ok.height else None}
    else:  # the score (success or detection) first: `inspect view` heads the log with it
        found = frame.select(**RATES).row(0, named=True) if frame.height else {}
        found = {"score": found.pop("score", None), **found}
    out = {k: float(v) for k, v in found.items() if v is not None}
    out.update({"n": float(frame.height), "errors": float(frame.filter(~OK).height)})
    return out


def build_log(results: Path, key: tuple, shards: list[Path]):
    """One group's EvalLog: every row of its shards a sample."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    regime, _model, method, setting = key
    rows, transcripts = [], {}
    for shard in shards:
        try:
            frame = pl.read_parquet(shard)
        except (OSError, pl.exceptions.PolarsError) as e:
            raise InteropError(f"{shard}: cannot read the shard ({e})") from None
        rows += frame.to_dicts()
        transcripts.update(read_transcripts(transcript_folder(results, shard)))
    if not rows:
        raise InteropError(f"{shards[0]}: a shard with no rows")
    samples = [sample(r, transcripts.get(episode_key(r))) for r in rows]
    ids = [(s.id, s.epoch) for s in samples]
    if len(set(ids)) != len(ids):
        dupe = next(i for i in ids if ids.count(i) > 1)
        raise InteropError(f"{shards[0].parent}: two rows are sample {dupe[0]} epoch {dupe[1]}")
    name = inspect_model(rows[0])
    reference = bool(rows[0].get("reference"))
    total = ModelUsage(input_tokens=sum(r["input_tokens"] for r in rows),
                       output_tokens=sum(r["output_tokens"] for r in rows))
    total.total_tokens = total.input_tokens + total.output_tokens
    costs = [r.get("cost_usd") for r in rows]
    total.total_cost = None if any(c is None for c in costs) else sum(costs)
    hashes = sorted({str(r.get("config_hash")) for r in rows})
    when = datetime.fromtimestamp(max(s.stat().st_mtime for s in shards), UTC).isoformat()
    args = {"method": method, **({"plan_setting": setting} if setting else {}),
            "model": name, "reference": reference}
    meta = {"planaudit": True, "regime": regime, "model": rows[0]["model"],
            "reference": reference, "config_hash": hashes[0] if len(hashes) == 1 else hashes,
            "code_version": rows[0].get("code_version"),
            "missing_transcripts": sum(s.metadata.get("transcript") is not None for s in samples),
            **({"reference_note": REFERENCE_NOTE} if reference else {})}
    digest = hashlib.sha256(json.dumps([key, hashes]).encode()).hexdigest()[:22]
    spec = EvalSpec(
        eval_id=digest, run_id=hashlib.sha256(str(results.resolve()).encode()).hexdigest()[:22],
        created=when, task=f"planaudit/{regime}", task_id=digest,
        task_registry_name=f"planaudit/{regime}", task_args=args, task_args_passed=args,
        solver=method, dataset=EvalDataset(name=f"planaudit/{regime}", samples=len(rows)),
        model=name, config=EvalConfig(epochs=max(s.epoch for s in samples)), metadata=meta,
        tags=["planaudit", regime] + (["reference"] if reference else []))
    metrics = {k: EvalMetric(name=k, value=v) for k, v in rates(pl.DataFrame(
        rows, infer_schema_length=None), regime).items()}
    results_ = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                           scores=[EvalScore(name=SCORER, scorer=SCORER,
                                             scored_samples=len(samples), metrics=metrics)])
    return EvalLog(status="success", eval=spec, results=results_,
                   stats=EvalStats(started_at=when, completed_at=when, model_usage={name: total}),
                   samples=samples)


def log_name(key: tuple) -> str:
    regime, model, method, setting = key
    parts = ["planaudit", regime, model, method] + ([setting] if setting else [])
    return "_".join(p.replace("/", "-") for p in parts) + ".eval"


def write_group(results: Path, out: Path, key: tuple, shards: list[Path]) -> str:
    from inspect_ai.log import write_eval_log

    log = build_log(results, key, shards)
    path = out / log_name(key)
    with atomic.atomic_path(path) as tmp:  # a killed export leaves no half log to read
        write_eval_log(log, tmp, format="eval")
    missing = log.eval.metadata["missing_transcripts"]
    return (f"{path}: {len(log.samples)} samples"
            + (f" ({missing} without a transcript)" if missing else ""))


def export(results: Path, out: Path, workers: int | None = None) -> Iterator[str]:
    """Write every group's log under `out`; yields a line per log written."""
    found = groups(results)
    out.mkdir(parents=True, exist_ok=True)
    workers = workers or min(len(found), os.cpu_count() or 1)
    if workers <= 1:
        for key, shards in found.items():
            yield write_group(results, out, key, shards)
    else:
        with ProcessPoolExecutor(workers) as pool:
            jobs = [pool.submit(write_group, results, out, k, s) for k, s in found.items()]
            for job in as_completed(jobs):
                yield job.result()
    yield f"export inspect: {len(found)} logs in {out}"
