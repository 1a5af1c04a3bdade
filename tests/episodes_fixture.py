"""Synthetic episode rows for the analysis tests: both regimes, a reference model and
two stand-in models, with known success rates so statistics have something to find.

The rows follow `workflow/schemas/row.schema.yaml`; they are invented, never reported.
"""

from __future__ import annotations

import random

import polars as pl

DOMAINS = ("blocksworld", "gripper", "hospital")
TASKS = [f"p{i:02d}" for i in range(1, 11)]  # p09, p10 unsolvable, as in the suite
OFFLINE = ("direct", "cot", "modulo")
ONLINE = ("react", "critic", "gated")
# (model, tier, reference, success probability per method)
MODELS = (
    ("oracle", "reference", True, {}),
    ("model-a", "large", False, {"direct": 0.5, "cot": 0.55, "modulo": 0.9, "react": 0.45,
                                 "critic": 0.5, "gated": 0.7}),
    ("model-b", "small", False, {"direct": 0.3, "cot": 0.3, "modulo": 0.6, "react": 0.2,
                                 "critic": 0.25, "gated": 0.4}),
)
FAILURES = ("goal-not-reached", "inapplicable-action", "malformed", "false-abstention")


def _row(rng: random.Random, regime: str, model: str, tier: str, reference: bool, method: str,
         domain: str, task: str, p: float) -> dict:
    solvable = task not in ("p09", "p10")
    optimal = 4 + TASKS.index(task) if solvable else None
    if reference:
        outcome = "success" if solvable else "detected"
    elif solvable:
        outcome = "success" if rng.random() < p else rng.choice(FAILURES)
    else:
        outcome = "detected" if rng.random() < p else "missed-unsolvable"
    if rng.random() < 0.01 and not reference:
        outcome = "error"
    success = outcome == "success"
    executable = None if outcome in ("detected", "false-abstention", "error") else (
        outcome in ("success", "goal-not-reached", "missed-unsolvable"))
    plan_length = optimal + rng.choice((0, 0, 2)) if success else (
        None if executable is None else rng.randint(1, 12))
    failing = outcome in ("goal-not-reached", "inapplicable-action", "malformed")
    calls = 1 if regime == "offline" else rng.randint(5, 30)
    tin, tout = calls * rng.randint(800, 1500), calls * rng.randint(50, 400)
    price = 0.0 if reference else (2.5 if tier == "large" else 0.15)
    row = {
        "regime": regime, "model": model, "model_tier": tier, "reference": reference,
        "method": method, "domain": domain, "task": task, "solvable": solvable,
        "optimal_length": optimal, "outcome": outcome, "success": success,
        "executable": executable, "detected": outcome == "detected",
        "plan_length": plan_length,
        "efficiency": optimal / plan_length if success else None,
        "first_failure_step": rng.randint(1, 8) if failing else None,
        "first_failure_kind": {"goal-not-reached": "goal", "inapplicable-action": "precondition",
                               "malformed": "unknown-object"}.get(outcome),
        "first_failure_action": "(stack a b)" if failing else None,
        "first_failure_detail": "precondition does not hold; unsatisfied: (clear b)" if failing else None,
        "error": "InternalServerError: 500 after retries" if outcome == "error" else None,
        "contract_breach": None, "truncated": False,
        "n_calls": calls, "input_tokens": tin, "output_tokens": tout,
        "cost_usd": (tin + 4 * tout) * price / 1e6, "latency_s": calls * rng.uniform(0.5, 3.0),
        "cache_hits": 0, "config_hash": "fixture", "code_version": "0.0.0-fixture",
    }
    if reference:  # a calibrator's expected score (here: what it scores, for certain)
        row.update(calibration_expected=float(success or row["detected"]),
                   calibration_predicted=success or row["detected"])
    if regime == "offline":  # VAL as the witness agrees with every verdict of the fixture
        val = None if plan_length is None else row["first_failure_kind"] is None
        row.update(val_valid=val, val_detail=None if val is None else "valid, value 3" if val
                   else "invalid at step 2: unsatisfied precondition of (stack a b)")
    if regime == "online":
        epistemic, ontic = rng.randint(1, 10), rng.randint(0, 15)
        blocked = rng.randint(0, 2) if method == "gated" else 0
        row.update(n_epistemic=epistemic, n_ontic=ontic,
                   sensing_ratio=epistemic / (epistemic + ontic),
                   sensed_before_first_act=rng.random() < 0.7 if ontic else None,
                   steps=epistemic + ontic + 1, states_revisited=rng.randint(0, 2),
                   critic_rejections=rng.randint(0, 3) if method == "critic" else 0,
                   reflections=0, blocked_actions=blocked,
                   recovered=(success if blocked else None))
        # plan compliance, with no workflow prescribed (no score); drawn without the rng so
        # that every other column stays as it was
        phases = ["U_1", f"S_{epistemic - 1}"] if epistemic > 1 else ["U_1"]
        phases += [f"A_{ontic}"] if ontic else []
        row.update(epoch=0, plan_setting="none", plan_order="", phases=phases, ppc=None,
                   poc=None, ppf=None, pc=None, strict_compliance=None,
                   nodes=min(epistemic + ontic, 1 + ontic + 1), temporal_edges=epistemic + ontic - 1,
                   loops=int(epistemic > 2), loops_bounded=False)
    return row


def make_episodes(seed: int = 0) -> pl.DataFrame:
    """Every model x method x task of the fixture design, one row each, in both regimes."""
    rng = random.Random(seed)
    rows = []
    for model, tier, reference, probs in MODELS:
        for regime, methods in (("offline", OFFLINE), ("online", ONLINE)):
            for method in methods:
                for domain in DOMAINS:
                    for task in TASKS:
                        rows.append(_row(rng, regime, model, tier, reference, method, domain,
                                         task, probs.get(method, 1.0)))
    return pl.DataFrame(rows, infer_schema_length=None)
