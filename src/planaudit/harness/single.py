"""What the curriculum and ACPBench tasks share: one call per sample, judged from its reply.

The solver puts the call's planaudit metadata in the store (a reference model's answer
among it) and generates once; the scorer turns Inspect's output back into the `Call`
record the regimes' `make_row` reads, so any solver that leaves a completion is judged
the same way.
"""

from __future__ import annotations

from inspect_ai.solver import Generate, TaskState, solver

from planaudit.harness import bridge
from planaudit.harness.bridge import model_config, set_call
from planaudit.llm.client import Call


@solver
def planaudit_call():
    """One call with the sample's planaudit metadata (`metadata["call"]`)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = dict(state.metadata["call"])
        if model_config().model.startswith("reference/"):
            meta.update(state.metadata.get("reference") or {})
        set_call(meta)
        return await generate(state)

    return solve


def output_call(state: TaskState) -> Call:
    """The sample's reply as planaudit's call record (tokens and stop reason)."""
    out = state.output
    return bridge.output_call(out, model_config().model.startswith("reference/"),
                              float(out.time or 0.0))


def base_row(regime: str) -> dict:
    from planaudit import __version__

    cfg = model_config()
    return {"regime": regime, "model": cfg.name, "model_tier": cfg.tier,
            "reference": cfg.model.startswith("reference/"), "config_hash": "",
            "code_version": __version__}
