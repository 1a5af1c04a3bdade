"""An ACPBench job: one model x one question type over every domain of the `acpbench`
section and every form it names, in one process and one pool of calls.

A domain entry is a suite domain's name (questions generated over its prepared tasks'
states) or ACPBench's own files `{root, split}` (their gen items, gold by proof). Each
question is one call through `llm/` (cached, priced, retried, transcribed), judged at
once; the rows go to one Parquet file. A reference model's call carries the answer that
scores full marks and a wrong one (`purpose: acpbench`): the oracle says the first,
the flawed model the second at its `wrong_answer` rate.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import polars as pl

from planaudit import __version__, atomic
from planaudit.acpbench.bound import Bound
from planaudit.acpbench.files import entry_key, item_questions
from planaudit.acpbench.generate import Skipped, questions
from planaudit.acpbench.questions import FORMS, TYPES, Question, QuestionError
from planaudit.acpbench.score import Judgement, judge
from planaudit.experiment import Experiment, ModelEntry, shard_hash
from planaudit.llm.batch import Batching, in_waves
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, context_exhausted, in_pool, price_source, provenance


class AcpbenchShardFailed(RuntimeError):
    """Every question of a job ended in `error`: the model was never reached."""


def settings(section: dict) -> dict:
    """The section's effective settings (defaults as the schema states them)."""
    return {"forms": list(section.get("forms") or FORMS), "tasks": section.get("tasks", 2),
            "states": section.get("states", 2), "items": section.get("items", 10),
            "seed": section.get("seed", 0), "max_tokens": section.get("max_tokens", 4096)}


def job_questions(section: dict, qtype: str, suite_dir: Path, select=None,
                  skipped: Skipped | None = None) -> list[Question]:
    """Every question of one type for the section's domains and forms."""
    if qtype not in TYPES:
        raise QuestionError(f"no ACPBench question type '{qtype}' (have: {', '.join(TYPES)})")
    cfg = settings(section)
    bound = Bound.of(section)  # every gold computation's memory and time
    skipped = skipped if skipped is not None else Skipped()
    out: list[Question] = []
    for entry in section.get("domains") or []:
        if isinstance(entry, str):
            out += questions(suite_dir, entry, [qtype], cfg["forms"], cfg["tasks"],
                             cfg["states"], cfg["seed"], select=select, skipped=skipped,
                             bound=bound)
            continue
        why: dict[str, int] = {}
        out += item_questions(entry, qtype, cfg["items"], why, bound)
        key = entry_key(entry)
        for reason, n in why.items():
            for _ in range(n):
                skipped.add(key, qtype, "gen", reason)
        for form in cfg["forms"]:
            if form != "gen":
                skipped.add(key, qtype, form, "ACPBench's bool and mcq files carry no PDDL "
                            "(no answer can be proven)")
    return out


def make_row(q: Question, j: Judgement | None, call, base: dict, error: str | None) -> dict:
    full = j is None and context_exhausted(error)  # the model's failure (episode.py)
    if j is None:
        outcome = "context-exhausted" if full else "error"
    elif j.correct:
        outcome = "success"
    else:
        outcome = "malformed" if j.verdict == "unreadable" else "wrong-answer"
    row = {
        **base, "method": q.type, "form": q.form, "domain": q.domain,
        "task": f"{q.task}/{q.state}" if q.source == "suite" else q.task,
        "solvable": True if q.source == "suite" else None, "optimal_length": None,
        "outcome": outcome, "success": outcome == "success", "executable": None,
        "detected": False, "plan_length": None, "efficiency": None,
        "first_failure_step": None, "first_failure_action": None,
        "first_failure_kind": "context" if full else None,
        "first_failure_detail": error if full else None, "error": None if full else error,
        "val_valid": None, "val_detail": None,
        "contract_breach": j.detail if j is not None and j.verdict == "unreadable" else None,
        "truncated": call.truncated, "source": q.source,
        "verdict": j.verdict if j else None, "verdict_detail": (j.detail or None) if j else None,
        "n_calls": 1, "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
        "reasoning_tokens": call.reasoning_tokens,
        "cost_usd": call.cost_usd, "price_source": price_source([call]),
        "latency_s": call.latency_s, "cache_hits": int(call.cache_hit),
    }
    return row


async def _run(entry: ModelEntry, cache: str, qtype: str, work: list[tuple[Question, int]],
               transcripts: Path, cfg: dict) -> list[dict]:
    client = Client(entry.client(), Cache(cache))
    ref = entry.reference
    digest = shard_hash(entry, f"acpbench:{qtype}", cfg)
    base = {"regime": "acpbench", "model": client.cfg.name,
            "model_tier": entry.tier or client.cfg.tier,
            "reference": client.cfg.model.startswith("reference/"),
            "config_hash": digest, "code_version": __version__, **provenance(client.cfg)}

    async def one(item: tuple[Question, int]) -> dict:
        q, epoch = item
        # the repeat (acpbench.epochs) from the second on: its own cache key and draws
        meta = {"task": f"acpbench:{qtype}:{q.form}:{q.id}", "purpose": "acpbench",
                **({"epoch": epoch} if epoch else {})}
        if ref is not None:
            meta.update(ref, answer=q.oracle, wrong=q.wrong)
        messages = [{"role": "user", "content": q.prompt}]
        call = await client.complete(messages, temperature=0.0, max_tokens=int(cfg["max_tokens"]),
                                     metadata=meta)
        j = None if call.error else judge(q, call.content)
        row = make_row(q, j, call, {**base, "epoch": epoch}, call.error)
        folder = transcripts / q.domain
        folder.mkdir(parents=True, exist_ok=True)
        name = (f"{q.type}_{q.task}_{q.state}_{q.form}" + (f".e{epoch}" if epoch else "")
                + ".jsonl").replace("/", "_")
        atomic.write_text(folder / name,
                          json.dumps({"purpose": "acpbench", "messages": messages,
                                      "call": call.to_json()}) + "\n"
                          + json.dumps({"row": row}) + "\n")
        return row

    async def everything() -> list[dict | None]:
        return await in_pool(work, one, client.cfg.max_concurrency)

    return await in_waves(client, Batching.of(entry.to_dict()), everything)  # batch mode: in waves


def run_acpbench_shard(experiment: Experiment, entry: ModelEntry, qtype: str, suite_dir: Path,
                       out: str, transcripts: str) -> tuple[pl.DataFrame, Skipped]:
    """One job: the model `entry` on question type `qtype` over the section's domains and
    forms, each question `acpbench.epochs` times; suite domains' questions among the
    tasks `suite.tasks` selects."""
    section = experiment.section("acpbench").written
    cfg = settings(section)
    skipped = Skipped()
    work = job_questions(section, qtype, Path(suite_dir), experiment.tasks, skipped)
    Cache(experiment.cache).require_writable()  # before any request
    repeats = experiment.section("acpbench").epochs
    trials = [(q, e) for q in work for e in range(repeats)]
    rows = (asyncio.run(_run(entry, experiment.cache, qtype, trials, Path(transcripts), cfg))
            if trials else [])
    if rows and all(r["outcome"] == "error" for r in rows):
        reasons = sorted({r["error"] or "unknown" for r in rows})
        raise AcpbenchShardFailed(f"acpbench/{entry.name}/{qtype}: all {len(rows)} questions ended "
                                  f"in error: {'; '.join(reasons[:3])}")
    frame = pl.DataFrame(rows, infer_schema_length=None)
    atomic.write_parquet(frame, Path(out))
    # what was not posed, and why (a gold past its bound among it, each named), beside
    # the rows: the log says it, and this file keeps it for the report
    atomic.write_text(not_posed_path(out), json.dumps(skipped.rows(), indent=1) + "\n")
    return frame, skipped


def not_posed_path(out: str | Path) -> Path:
    """The job's record of the questions it did not pose: `<type>.not_posed.json`
    beside `<type>.parquet`."""
    out = Path(out)
    return out.with_name(out.name.removesuffix(".parquet") + ".not_posed.json")
