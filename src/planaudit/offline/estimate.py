"""The offline regime's bill before spending: each strategy run for real on every task
against a stand-in model that answers at once with filler of the assumed length (the
calls and prompts are the real ones; only the replies are assumed). The stand-in never
lets a loop stop early, so self-refine, modulo and tot are priced at their upper bound."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from planaudit.experiment import Experiment, ModelEntry
from planaudit.offline.strategies import STRATEGIES, Context
from planaudit.regime import Estimated
from planaudit.shard import selected_folders


def filler(n_tokens: int, k: int) -> str:
    """A reply of about `n_tokens` whose plan differs from every earlier one."""
    return f"```\n(draft-{k})\n```\n" + "step " * max(0, n_tokens - 8)


async def count(method: str, params: dict, brief: dict, out_tokens: dict,
                counter) -> tuple[int, int, int]:
    calls = tin = tout = 0

    async def ask(messages, purpose="final", temperature=None, sample=0) -> str:
        nonlocal calls, tin, tout
        calls += 1
        tin += counter(messages)
        n = int(out_tokens.get(purpose, 400))
        tout += n
        return filler(n, calls)

    ctx = Context(brief, ask, params, check=lambda reply: "a precondition does not hold")
    await STRATEGIES[method](ctx)
    return calls, tin, tout


def estimate(experiment: Experiment, entry: ModelEntry, suite_dir: Path, out_tokens: dict,
             counter) -> list[Estimated]:
    methods = experiment.section("offline").methods
    if not methods:
        return []
    folders = selected_folders(experiment.suite, suite_dir)
    if not folders:
        raise FileNotFoundError(f"{suite_dir}: no briefs yet (run `snakemake suite` first)")
    briefs = [json.loads((f / "brief.json").read_text()) for f in folders]
    rows = []
    for method in methods:
        params = experiment.method("offline", method).to_dict()
        calls = tin = tout = 0
        repeats = experiment.section("offline").epochs  # every repeat pays again
        for brief in briefs:
            c, i, o = asyncio.run(count(method, params, brief, out_tokens, counter))
            calls, tin, tout = calls + c * repeats, tin + i * repeats, tout + o * repeats
        rows.append(Estimated(method, len(briefs), calls, tin, tout))
    return rows
