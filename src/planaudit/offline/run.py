"""One offline episode: a strategy answers a prepared task; the hidden model judges it.

The episode reads only what the suite stage wrote (`brief.json`, `truth.json`,
the hidden `domain.pddl`/`problem.pddl`), sends every call through `llm/`, and
returns its row and its transcript (every message and every call record, enough
to re-score it without calling the model again). With the `witness: val` switch,
VAL judges the final plan too (`val_valid`, `val_detail`): a second opinion beside
planaudit's verdict, never instead of it. With `repair` (heuristic mode), LPG repairs
the extracted plan and planaudit judges the repaired one (`repair_columns`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from planaudit import __version__
from planaudit.contract import extract
from planaudit.episode import failure_detail, failure_record, offline_outcome
from planaudit.formal import load_task, validate
from planaudit.formal.diagnosis import read_formula
from planaudit.formal.plan import format_step
from planaudit.formal.repair import levenshtein, repair
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.witness import run_val
from planaudit.llm.client import (
    Call,
    Client,
    context_exhausted,
    price_source,
    provenance,
    reasoning_tokens,
    total_cost,
)
from planaudit.offline.strategies import STRATEGIES, Context
from planaudit.suite.brief import BriefError, Renderer, RenderFailed, load_templates


class CallFailed(Exception):
    """A model call failed after its retries: the episode ends as `error`."""


def feedback(task, renderer: Renderer | None, reply: str, actions: frozenset[str]) -> str | None:
    """The first failure of a reply, in plain words (no PDDL), or None when it is valid."""
    ex = extract(reply, actions)
    if ex.kind == "malformed":
        return f"the answer breaks the output format ({ex.reason})."
    if ex.kind == "unsolvable":
        return None
    verdict = validate(task, ex.steps)
    f = verdict.failure
    if f is None:
        return None

    def words(lits: list[str]) -> str:
        if renderer is None:
            return "; ".join(lits)
        try:
            return "; ".join(renderer.sentence(read_formula(lit)) for lit in lits)
        except (BriefError, PDDLError) as e:  # never a vague sentence to the model
            raise RenderFailed(f"feedback on the reply cannot be put in words: {e}") from e

    if f.kind == "goal":
        return f"after the last action the goal is not reached: not yet true: {words(f.unsatisfied)}."
    if f.kind == "precondition":
        return (f"action {f.step}, {f.action}, cannot be applied: these conditions do not hold "
                f"then: {words(f.unsatisfied)}.")
    return f"action {f.step}, {f.action}: {f.detail}."


REPAIR_COLUMNS = ("repaired", "repair_valid", "repair_seconds", "repair_distance",
                  "repair_distance_reordered", "repair_length", "repair_seed_length",
                  "repair_dropped", "repair_skipped", "repair_status", "repair_detail")


def repair_columns(task, folder: Path, steps, solvable: bool, plan_valid: bool,
                   settings: dict) -> dict:
    """Heuristic mode: LPG repairs the extracted plan, planaudit judges what comes back.

    Not run (`repair_skipped` says why): no plan was extracted (malformed, UNSOLVABLE or
    an error), the task is unsolvable (no valid plan exists to repair towards), the plan
    is valid and `only_invalid` is set, or LPG does not support the domain. Steps that
    do not ground (unknown action or object, wrong arity or types) are not handed to
    LPG: `repair_dropped` counts them, and the distance is still measured from the
    model's whole plan, so a dropped step counts as an edit. `repair_distance` is to
    LPG's plan as LPG returned it; `repair_distance_reordered` to the same actions put
    back in the model's order where that order stays valid (never larger)."""
    row = dict.fromkeys(REPAIR_COLUMNS)
    if steps is None:
        row["repair_skipped"] = "no plan extracted"
    elif not solvable:
        row["repair_skipped"] = "unsolvable task"
    elif plan_valid and settings.get("only_invalid", True):
        row["repair_skipped"] = "valid plan (only_invalid)"
    if row["repair_skipped"]:
        return row
    result = repair(task, folder / "domain.pddl", folder / "problem.pddl", steps,
                    seed=int(settings.get("seed", 0)), timeout=float(settings.get("timeout", 10.0)))
    row.update(repair_status=result.status, repair_seed_length=result.seed_length,
               repair_dropped=len(result.dropped), repair_detail=result.detail or None)
    if result.status == "skipped":
        row.update(repair_skipped=result.detail, repair_detail=None)
        return row
    row.update(repaired=result.repaired, repair_seconds=round(result.seconds, 4))
    if result.repaired:
        row.update(repair_valid=validate(task, result.steps).valid,
                   repair_distance=levenshtein(steps, result.steps),
                   repair_distance_reordered=levenshtein(steps, result.reordered),
                   repair_length=len(result.steps))
    return row


def _sum(calls: list[Call], attr: str):
    return sum(getattr(c, attr) for c in calls)


async def run_episode(client: Client, method: str, params: dict, folder: Path, *,
                      task_name: str, config_hash: str = "", reference_meta: dict | None = None,
                      tier: str = "", epoch: int = 0) -> tuple[dict, list[dict]]:
    """One episode of `method`; `epoch` is the repeat (offline.epochs), in every call's
    metadata past the first, so that each repeat is a distinct cache key (and a reference
    model draws afresh) while the first keeps the key it always had."""
    brief = json.loads((folder / "brief.json").read_text())
    truth = json.loads((folder / "truth.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    actions = frozenset(task.domain.actions)
    calls: list[Call] = []
    purposes: list[str] = []
    transcript: list[dict] = []

    async def ask(messages, purpose="final", temperature=None, sample=0) -> str:
        temp = float(params.get("temperature", 0.0)) if temperature is None else temperature
        meta = {"task_dir": str(folder), "task": task_name, "purpose": purpose,
                "sample": sample, **({"epoch": epoch} if epoch else {}), **(reference_meta or {})}
        call = await client.complete(messages, temperature=temp,
                                     max_tokens=int(params.get("max_tokens", 4096)),
                                     sample=sample, metadata=meta)
        calls.append(call)
        purposes.append(purpose)
        transcript.append({"purpose": purpose, "messages": list(messages), "call": call.to_json()})
        if call.error is not None:
            raise CallFailed(call.error)
        return call.content or ""

    renderer = None
    source = brief.get("source", "")
    if source.endswith("nl.yaml") and Path(source).is_file():
        renderer = Renderer(load_templates(source))
    ctx = Context(brief, ask, params, lambda reply: feedback(task, renderer, reply, actions))
    domain, name = task_name.split("/")
    solvable = bool(truth["solvable"])
    row = {
        "regime": "offline", "model": client.cfg.name, "model_tier": tier or client.cfg.tier,
        "epoch": epoch,
        "reference": client.cfg.model.startswith("reference/"), "method": method,
        "domain": domain, "task": name, "solvable": solvable,
        "optimal_length": truth["optimal_length"],
        "truth_proofs": len(truth.get("proven_by") or []),  # 1: kept on one proof (suite/audit.py)
    }
    error = None
    val = None  # VAL's verdict on the final plan, with the witness switch on
    try:
        reply = await STRATEGIES[method](ctx)
    except (CallFailed, RenderFailed) as e:
        reply, error = None, str(e)
    if reply is None:
        # a prompt past the model's context is the model's failure (episode.py says why)
        full = context_exhausted(error)
        row.update(outcome="context-exhausted" if full else "error", executable=None,
                   plan_length=None, first_failure_step=None,
                   first_failure_kind="context" if full else None, first_failure_action=None,
                   first_failure_detail=error if full else None, contract_breach=None)
        error = None if full else error
    else:
        ex = extract(reply, actions)
        verdict = validate(task, ex.steps) if ex.kind == "plan" else None
        failure = verdict.failure if verdict else None
        if verdict is not None and params.get("witness") == "val":  # off the event loop
            plan = "".join(format_step(s) + "\n" for s in ex.steps)
            val = await asyncio.to_thread(run_val, folder / "domain.pddl", folder / "problem.pddl",
                                          plan)
        row.update(
            outcome=offline_outcome(solvable, ex.kind, failure.kind if failure else None),
            executable=verdict.executable if verdict else None,
            plan_length=len(ex.steps) if ex.kind == "plan" else None,
            first_failure_step=failure.step if failure else None,
            first_failure_kind=failure.kind if failure else None,
            first_failure_action=failure.action if failure else None,
            first_failure_detail=failure_detail(failure, ex),
            contract_breach=ex.reason,
        )
    row["val_valid"] = val.valid if val else None
    row["val_detail"] = val.describe() if val else None
    if "repair" in params:
        plan_ok = (reply is not None and ex.kind == "plan" and verdict is not None
                   and verdict.valid)
        steps = ex.steps if reply is not None and ex.kind == "plan" else None
        row.update(await asyncio.to_thread(
            repair_columns, task, folder, steps, solvable, plan_ok, params["repair"]))
    row["error"] = error
    # the reply that was judged is the last final answer (a self-refine critique may follow it)
    finals = [c for c, p in zip(calls, purposes, strict=True) if p == "final"]
    row["truncated"] = bool(finals) and finals[-1].truncated
    row["success"] = row["outcome"] == "success"
    row["detected"] = row["outcome"] == "detected"
    row["efficiency"] = (truth["optimal_length"] / row["plan_length"]
                         if row["success"] and row["plan_length"] else None)
    row.update(n_calls=len(calls), input_tokens=_sum(calls, "input_tokens"),
               output_tokens=_sum(calls, "output_tokens"), cost_usd=total_cost(calls),
               reasoning_tokens=reasoning_tokens(calls), **provenance(client.cfg),
               price_source=price_source(calls),
               latency_s=_sum(calls, "latency_s"), cache_hits=sum(c.cache_hit for c in calls),
               config_hash=config_hash, code_version=__version__)
    transcript.append({"ending": row["outcome"], "outcome": row["outcome"],
                       "first_failure": failure_record(row), "error": error})
    return row, transcript
