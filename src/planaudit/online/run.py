"""One online episode: an architecture acts on a prepared task through the environment.

Like the offline episode it reads only what the suite stage wrote and sends
every call through `llm/`; the row adds what the agent did (sensing, acting,
rejections, reflections, blocked actions), the transcript every message, every
call record and every observation.
"""

from __future__ import annotations

import json
from pathlib import Path

from planaudit import __version__
from planaudit.compliance.assess import assessment
from planaudit.compliance.settings import PlanSetting
from planaudit.episode import failure_record, online_outcome
from planaudit.formal import load_task
from planaudit.llm.client import (
    Call,
    Client,
    context_exhausted,
    price_source,
    provenance,
    reasoning_tokens,
    total_cost,
)
from planaudit.online.architectures import ARCHITECTURES, Agent
from planaudit.online.disruption import Disruption, off_columns
from planaudit.online.environment import Environment
from planaudit.suite.brief import Renderer, RenderFailed, load_templates

DEFAULT_BUDGET = 200


class CallFailed(Exception):
    """A model call failed after its retries: the episode ends as `error`, or as
    `context-exhausted` when the prompt no longer fit the model's context."""


def contract_breach(env: Environment, last: Call | None) -> str | None:
    """Online the output contract is the tool protocol: the breach, when the actor's last
    turn called no tool it could read (the turn a budget ran out on, say)."""
    if last is None or not env.trace or env.trace[-1]["tool"] is not None:
        return None
    return "reply cut at max_tokens, no tool call" if last.truncated else "no tool call"


async def run_episode(client: Client, method: str, params: dict, folder: Path, *,
                      task_name: str, config_hash: str = "", reference_meta: dict | None = None,
                      tier: str = "", protocol: str = "native",
                      epoch: int = 0) -> tuple[dict, list[dict]]:
    """One episode; `params["plan_setting"]` (a `PlanSetting` as JSON) prescribes a workflow,
    `epoch` is the repeat (a distinct sample in the cache key)."""
    brief = json.loads((folder / "brief.json").read_text())
    truth = json.loads((folder / "truth.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    source = brief.get("source", "")
    renderer = (Renderer(load_templates(source))
                if source.endswith("nl.yaml") and Path(source).is_file() else None)
    if source == "generic":  # described from the PDDL alone (a disguised task, say)
        from planaudit.suite.generic import templates

        renderer = Renderer(templates(task.domain))
    budget = int(params.get("budget", DEFAULT_BUDGET))
    env = Environment(task, brief, renderer, budget, gated=method == "gated",
                      disruption=Disruption.of(params.get("disruption"), task_name, epoch))
    calls: list[Call] = []
    purposes: list[str] = []
    transcript: list[dict] = []

    setting = PlanSetting.from_json(params.get("plan_setting"))
    # a reference agent follows the setting's workflow (it reads the expected order, in the
    # one-letter form calls were keyed with before the labels became names); with no
    # setting the call is keyed exactly as before settings existed (the cache still answers)
    workflow = ({"plan_setting": setting.name, "plan_order": setting.call_order}
                if setting.steps else {})
    # tools that fail: said to a reference agent (the oracle then senses after every act),
    # and part of every call's key; absent, the key is what it always was
    if params.get("disruption"):
        workflow = {**workflow, "disruption": params["disruption"]["kind"]}

    async def ask(messages, purpose="act", tools=None) -> Call:
        meta = {"task_dir": str(folder), "task": task_name, "purpose": purpose,
                "protocol": protocol, "sample": epoch, **workflow, **(reference_meta or {})}
        call = await client.complete(messages, temperature=float(params.get("temperature", 0.0)),
                                     max_tokens=int(params.get("max_tokens", 4096)),
                                     sample=epoch, tools=tools, metadata=meta)
        calls.append(call)
        purposes.append(purpose)
        transcript.append({"purpose": purpose, "messages": list(messages), "call": call.to_json(),
                           "steps": env.count.steps})
        if call.error is not None:
            raise CallFailed(call.error)
        return call

    agent = Agent(env, ask, params, protocol, setting=setting)
    error = None
    try:
        await ARCHITECTURES[method](agent)
    except CallFailed as e:
        if context_exhausted(str(e)):  # the history outgrew the context: the model's outcome
            env.context_out(str(e))
        else:
            env.ending, error = "error", str(e)
    except RenderFailed as e:
        env.ending, error = "error", str(e)
    if env.ending is None:  # an architecture returned without ending the episode
        raise RuntimeError(f"architecture {method!r} returned before the episode ended")
    domain, name = task_name.split("/")
    solvable = bool(truth["solvable"])
    c = env.count
    outcome = online_outcome(solvable, env.ending)
    # the actor's last reply decided how the episode ended (critic and reflection calls
    # only advise it)
    deciding = [x for x, p in zip(calls, purposes, strict=True) if p in ("act", "final")]
    compliance, marks = assessment(env.trace, task.domain.actions, setting.name,
                                   setting.order)
    row = {
        "regime": "online", "model": client.cfg.name, "model_tier": tier or client.cfg.tier,
        "reference": client.cfg.model.startswith("reference/"), "method": method,
        "domain": domain, "task": name, **judged_columns(env, truth),
        "error": error,
        # online the contract is the tool protocol: a final reply with no readable call
        "contract_breach": contract_breach(env, deciding[-1] if deciding else None),
        "truncated": bool(deciding) and deciding[-1].truncated,
        "n_calls": len(calls), "input_tokens": sum(x.input_tokens for x in calls),
        "output_tokens": sum(x.output_tokens for x in calls),
        "reasoning_tokens": reasoning_tokens(calls), **provenance(client.cfg),
        "cost_usd": total_cost(calls), "price_source": price_source(calls),
        "latency_s": sum(x.latency_s for x in calls),
        "cache_hits": sum(x.cache_hit for x in calls), "config_hash": config_hash,
        "code_version": __version__,
        **counter_columns(env, outcome),
        **(env.disruption.columns(outcome) if env.disruption else off_columns()),
        "epoch": epoch,
        **compliance,
    }
    transcript.append({"ending": env.ending, "outcome": outcome, "applied": c.applied,
                       "first_failure": failure_record(row),
                       "phases": marks,
                       # the turns as labelled: labels can be recomputed without a rerun
                       "trace": env.trace})
    return row, transcript


def judged_columns(env, truth: dict) -> dict:
    """The row's verdict columns, from how the environment (and so `formal/`) ended the
    episode: shared by the shard's rows and the Inspect task's (`harness/online.py`)."""
    c, failure = env.count, env.first_failure
    solvable = bool(truth["solvable"])
    outcome = online_outcome(solvable, env.ending)
    tried = c.n_ontic > 0  # a well-formed action was tried (an ill-formed one is refused)
    return {
        "solvable": solvable,
        "optimal_length": truth["optimal_length"], "outcome": outcome,
        "truth_proofs": len(truth.get("proven_by") or []),  # 1: kept on one proof (suite/audit.py)
        "success": outcome == "success", "detected": outcome == "detected",
        "executable": (not any(k == "precondition" for k in env.failure_kinds)) if tried else None,
        "plan_length": len(c.applied),
        "efficiency": (truth["optimal_length"] / len(c.applied)
                       if outcome == "success" and c.applied else None),
        "first_failure_step": failure[0] if failure else None,
        "first_failure_kind": failure[1] if failure else None,
        "first_failure_action": failure[2] if failure else None,
        "first_failure_detail": failure[3] if failure else None,
    }


def counter_columns(env, outcome: str) -> dict:
    """The row's sensing and acting counters, as the environment kept them."""
    c = env.count
    tried = c.n_ontic > 0
    return {
        "n_epistemic": c.n_epistemic, "n_ontic": c.n_ontic,
        "sensing_ratio": (c.n_epistemic / (c.n_epistemic + c.n_ontic)
                          if c.n_epistemic + c.n_ontic else None),
        "sensed_before_first_act": c.queried_before_act if tried else None,
        "steps": c.steps, "states_revisited": c.states_revisited,
        "critic_rejections": c.critic_rejections, "reflections": c.reflections,
        "blocked_actions": c.blocked_actions,
        "recovered": (outcome == "success") if c.blocked_actions else None,
    }
