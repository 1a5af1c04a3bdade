"""A curriculum job: one model × one test case over every domain of the `curriculum`
section, in one process and one pool of calls (as the episode shards are).

A domain entry is a suite domain's name (cases from `curriculum.generate` on the
prepared tasks) or a PlanBench root `{root, config}` (cases and scoring from
`planaudit.planbench.generate`, imported only when such an entry is run). Each case
is one call through `llm/` (cached, priced, retried, transcribed); its reply is
scored at once, and each domain's rows go to their own Parquet file. A reference
model's call carries the answer that scores full marks (`purpose: curriculum`), so
the oracle can say it and the flawed model can spoil it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from planaudit import __version__, atomic
from planaudit.curriculum import needs
from planaudit.curriculum.world import CurriculumError
from planaudit.experiment import Experiment, ModelEntry, shard_hash
from planaudit.llm.batch import Batching, in_waves
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, context_exhausted, in_pool, price_source, provenance
from planaudit.planbench.cases import TESTS, Case, Verdict

ROW_OUTCOMES = ("success", "goal-not-reached", "inapplicable-action", "malformed",
                "wrong-answer", "context-exhausted", "error")


class CurriculumShardFailed(RuntimeError):
    """Every case of a job ended in `error`: the model was never reached."""


def domain_key(entry) -> str:
    """The name a domain entry's rows and output file go under."""
    if isinstance(entry, str):
        return entry
    return f"planbench-{entry['config']}"


def settings(section: dict, test: str) -> dict:
    """A test case's effective settings: the section's, overridden by `params.<test>`."""
    base = {"instances": section.get("instances", 2), "shots": section.get("shots", 1),
            "seed": section.get("seed", 0), "max_tokens": section.get("max_tokens", 4096)}
    return {**base, **((section.get("params") or {}).get(test) or {})}


def planbench():
    """The PlanBench package, imported only when a PlanBench entry runs."""
    from planaudit.planbench import generate

    return generate

def domain_cases(entry, test: str, cfg: dict, suite_dir: Path,
                 tasks: Sequence[str] | None = None) -> tuple[list[Case], object]:
    """(the cases of one domain entry, the scorer for them); a suite domain's among the
    tasks `tasks` selects (`suite.tasks`; a PlanBench root has no suite tasks to select)."""
    if isinstance(entry, str):
        from planaudit.curriculum.generate import cases
        from planaudit.curriculum.score import score

        return cases(suite_dir, entry, test, cfg["instances"], cfg["seed"], cfg["shots"],
                     tasks=tasks), score
    gen = planbench()
    found = gen.cases(entry["root"], entry["config"], test, cfg["instances"], seed=cfg["seed"],
                      shots=cfg["shots"])
    return found, gen.score


def skip_reason(entry, test: str, cfg: dict, suite_dir: Path) -> str | None:
    """Why `test` cannot be generated on a suite domain entry (`needs.why_not` on the
    prepared suite); a PlanBench root is never skipped here."""
    if not isinstance(entry, str):
        return None
    return needs.why_not(test, needs.in_job(suite_dir, entry), int(cfg["shots"]))


def oracle_text(case: Case) -> tuple[str, str, str | None]:
    """(answer that scores full marks, its kind, a flipped verdict for t3)."""
    if case.source == "suite":
        from planaudit.curriculum.score import oracle_answer, wrong_verdict

        kind = case.truth["kind"]
        return oracle_answer(case), kind, wrong_verdict(case) if kind == "verdict" else None
    gen = planbench()
    kind = {"t3": "verdict", "t7": "state"}.get(case.test, "plan")
    return gen.oracle_answer(case), kind, gen.wrong_verdict(case) if kind == "verdict" else None


def row_outcome(verdict: Verdict) -> str:
    if verdict.correct:
        return "success"
    if verdict.outcome in ROW_OUTCOMES:
        return verdict.outcome
    return "malformed" if verdict.outcome in ("unreadable", "malformed") else "wrong-answer"


def contract_breach(verdict: Verdict | None) -> str | None:
    """Why a reply could not be read at all; a plan that was read but names an unknown
    action or object is malformed too, yet kept no contract from being read (as offline)."""
    if verdict is None or verdict.correct or verdict.outcome not in ("unreadable", "malformed"):
        return None
    if verdict.scores.get("failure"):
        return None
    return verdict.detail or verdict.outcome


def make_row(case: Case, verdict: Verdict | None, call, base: dict, error: str | None) -> dict:
    extra = verdict.scores if verdict else {}
    failure = extra.get("failure") or {}
    truth = case.truth
    full = verdict is None and context_exhausted(error)  # the model's failure (episode.py)
    row = {
        **base, "method": case.test, "domain": base["domain"], "task": case.instance,
        "solvable": True, "optimal_length": truth.get("optimal_length"),
        "outcome": (("context-exhausted" if full else "error") if verdict is None
                    else row_outcome(verdict)),
        "executable": extra.get("executable"), "detected": False,
        "plan_length": extra.get("plan_length"), "efficiency": None,
        "first_failure_step": failure.get("step"),
        "first_failure_kind": "context" if full else failure.get("kind"),
        "first_failure_action": failure.get("action"),
        "first_failure_detail": (error if full else failure.get("detail")
                                 or (verdict.detail or None if verdict else None)),
        "error": None if full else error, "val_valid": None, "val_detail": None,
        # as offline: why a reply could not be read (the row's outcome is then malformed)
        "contract_breach": contract_breach(verdict),
        "truncated": call.truncated,
        "source": case.source, "verdict": verdict.outcome if verdict else None,
        "verdict_detail": (verdict.detail or None) if verdict else None,
        "score_type": extra.get("type") if case.test == "t3" and verdict else None,
        "score_explanation": extra.get("explanation") if case.test == "t3" and verdict else None,
        "n_calls": 1, "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
        "reasoning_tokens": call.reasoning_tokens,
        "cost_usd": call.cost_usd, "price_source": price_source([call]),
        "latency_s": call.latency_s, "cache_hits": int(call.cache_hit),
    }
    row["success"] = row["outcome"] == "success"
    return row


async def _run(entry: ModelEntry, cache: str, test: str,
               work: list[tuple[str, Case, object, int]], transcripts: dict[str, Path],
               cfg: dict) -> list[dict]:
    client = Client(entry.client(), Cache(cache))
    ref = entry.reference
    digest = shard_hash(entry, test, cfg)
    for folder in transcripts.values():
        folder.mkdir(parents=True, exist_ok=True)
    base_of = {"regime": "curriculum", "model": client.cfg.name,
               "model_tier": entry.tier or client.cfg.tier,
               "reference": client.cfg.model.startswith("reference/"),
               "config_hash": digest, "code_version": __version__, **provenance(client.cfg)}

    async def one(key: str, case: Case, scorer, epoch: int) -> dict:
        # the repeat (curriculum.epochs) from the second on: its own cache key and draws
        meta = {"task": f"{test}:{key}/{case.instance}", "purpose": "curriculum",
                **({"epoch": epoch} if epoch else {})}
        if ref is not None:
            answer, kind, wrong = oracle_text(case)
            meta.update(ref, answer=answer, answer_kind=kind, wrong=wrong)
        messages = [{"role": "user", "content": case.prompt}]
        call = await client.complete(messages, temperature=0.0, max_tokens=int(cfg["max_tokens"]),
                                     metadata=meta)
        verdict = None if call.error else scorer(case, call.content or "")
        row = make_row(case, verdict, call, {**base_of, "domain": key, "epoch": epoch},
                       call.error)
        name = case.instance + (f".e{epoch}" if epoch else "")
        atomic.write_text(transcripts[key] / f"{name}.jsonl",
                          json.dumps({"purpose": "curriculum", "messages": messages,
                                      "call": call.to_json()}) + "\n"
                          + json.dumps({"row": row}) + "\n")
        return row

    async def everything() -> list[dict | None]:
        return await in_pool(work, lambda item: one(*item), client.cfg.max_concurrency)

    return await in_waves(client, Batching.of(entry.to_dict()), everything)  # batch mode: in waves


def run_curriculum_shard(experiment: Experiment, entry: ModelEntry, test: str,
                         domains: list[str], suite_dir: Path, out: str,
                         transcripts: str) -> dict[str, pl.DataFrame]:
    """One job: the model `entry` on test case `test` over `domains` (keys of
    `curriculum.domains` entries), suite domains' cases among the tasks `suite.tasks`
    selects, each case `curriculum.epochs` times; `out` and `transcripts` hold `{domain}`."""
    if test not in TESTS:
        raise CurriculumError(f"no test case '{test}' (have: {', '.join(TESTS)})")
    section = experiment.section("curriculum").written
    cfg = settings(section, test)
    entries = {domain_key(e): e for e in section.get("domains") or domains}
    work = []
    skipped = {}
    for key in domains:
        if key not in entries:
            raise CurriculumError(f"curriculum.domains: no entry for '{key}' (have: "
                                  f"{', '.join(entries)})")
        why = skip_reason(entries[key], test, cfg, Path(suite_dir))
        if why:  # the plan left it out too (curriculum.regime.jobs): no call, no row
            skipped[key] = why
            print(needs.skip_line(test, key, why), file=sys.stderr, flush=True)
            continue
        found, scorer = domain_cases(entries[key], test, cfg, Path(suite_dir), experiment.tasks)
        work += [(key, c, scorer, e) for c in found for e in range(experiment.section(
            "curriculum").epochs)]
    paths = {k: Path(str(transcripts).replace("{domain}", k)) for k in domains if k not in skipped}
    Cache(experiment.cache).require_writable()  # before any request
    rows = asyncio.run(_run(entry, experiment.cache, test, work, paths, cfg)) if work else []
    if rows and all(r["outcome"] == "error" for r in rows):
        reasons = sorted({r["error"] or "unknown" for r in rows})
        raise CurriculumShardFailed(f"curriculum/{entry.name}/{test}: all {len(rows)} cases ended in error: "
                          f"{'; '.join(reasons[:3])}")
    frames = {}
    for key in domains:
        mine = [r for r, (k, *_) in zip(rows, work, strict=True) if k == key]
        frame = pl.DataFrame(mine, infer_schema_length=None)
        path = Path(str(out).replace("{domain}", key))
        atomic.write_parquet(frame, path)
        frames[key] = frame
    return frames
