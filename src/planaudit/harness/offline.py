"""`planaudit/offline`: one sample per task; a planaudit strategy answers through Inspect's model.

The solver is the offline episode itself (`offline.run.run_episode`) with Inspect's model
behind the client's door (`bridge.InspectClient`): the strategy's prompts, the reading of
the reply and the judgement by `formal/` are the pipeline's, and so is the row.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import store

from planaudit.harness.bridge import InspectClient, to_inspect
from planaudit.harness.scoring import ROW_KEY, TRANSCRIPT_KEY, row_score, stored_row
from planaudit.harness.suite import base_config, prepared
from planaudit.interop import SCORER
from planaudit.llm.client import Call


def task_facts(folder: Path, domain: str, name: str, regime: str, method: str) -> dict:
    truth = json.loads((folder / "truth.json").read_text())
    return {"regime": regime, "method": method, "domain": domain, "task": name,
            "solvable": bool(truth["solvable"]), "optimal_length": truth["optimal_length"],
            "truth_proofs": len(truth.get("proven_by") or []),  # as the pipeline's rows
            "task_dir": str(folder)}


def samples(suite_dir: Path, domain: str, ids: list[str], regime: str, method: str,
            messages) -> list[Sample]:
    out = []
    for name in ids:
        folder = suite_dir / domain / name
        brief = json.loads((folder / "brief.json").read_text())
        out.append(Sample(id=f"{domain}/{name}", input=to_inspect(messages(brief)),
                          metadata=task_facts(folder, domain, name, regime, method)))
    return out


def offline_messages(brief: dict) -> list[dict]:
    from planaudit.offline.strategies import Context

    return Context(brief, None).task_messages()


@solver
def planaudit_strategy(method: str, params: dict):
    """Run planaudit's offline episode for the sample's task; its row goes to the store."""
    from planaudit.offline.run import run_episode

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        client = InspectClient()
        meta = state.metadata
        row, transcript = await run_episode(client, method, params, Path(meta["task_dir"]),
                                            task_name=f"{meta['domain']}/{meta['task']}")
        row["method"] = meta["method"]  # the strategy, or the name `-T method=` gives it
        store().set(ROW_KEY, row)
        store().set(TRANSCRIPT_KEY, transcript[-1])
        if client.exchanges:
            state.messages = client.conversation()
            state.output = client.output or ModelOutput.from_content(
                str(client.cfg.name), client.exchanges[-1][1].content or "")
        return state

    return solve


class Replay:
    """The reply another solver (`--solver generate`, any agent) left in the sample, as the
    one call of a `direct` episode: the episode then reads and judges it as its own."""

    def __init__(self, state: TaskState):
        from planaudit.harness.bridge import model_config

        self.cfg = model_config()
        self.output = state.output

    async def complete(self, messages: list[dict], **_) -> Call:
        from planaudit.harness.bridge import output_call

        return output_call(self.output, self.cfg.model.startswith("reference/"),
                           float(self.output.time or 0.0))


@scorer(metrics=[accuracy(), stderr()], name=SCORER)
def outcome():
    """The episode's outcome as `formal/` decided it: the row the task's solver made, or
    (another solver ran) the row of the reply it left, judged as a `direct` episode's."""
    from planaudit.offline.run import run_episode

    async def score(state: TaskState, target):
        if store().get(ROW_KEY) is None:
            meta = state.metadata
            row, _ = await run_episode(Replay(state), "direct", {}, Path(meta["task_dir"]),
                                       task_name=f"{meta['domain']}/{meta['task']}")
            row["method"] = meta["method"]
            return row_score(row)
        return row_score(stored_row(state))

    return score


def method_params(section: dict, method: str, max_tokens: int | None) -> dict:
    params = {"max_tokens": int(max_tokens or section.get("max_tokens", 4096))}
    params.update((section.get("params") or {}).get(method) or {})
    return params


@task(name="offline")
def offline(domain: str = "blocksworld", strategy: str = "direct", tasks: str | None = None,
            root: str | None = None, suite: str | None = None,
            max_tokens: int | None = None, method: str | None = None) -> Task:
    """planaudit's offline regime: the brief, one strategy, the plan judged by `formal/`;
    `method` names the method in the rows (default the strategy; say which solver
    `--solver` plugs in)."""
    from planaudit.offline.strategies import STRATEGIES

    if strategy not in STRATEGIES:
        raise ValueError(f"no strategy '{strategy}' (have: {', '.join(STRATEGIES)})")
    suite_dir, ids = prepared(domain, tasks, root, suite)
    params = method_params(base_config().get("offline") or {}, strategy, max_tokens)
    method = method or strategy
    return Task(dataset=MemoryDataset(samples(suite_dir, domain, ids, "offline", method,
                                              offline_messages), name=f"planaudit-{domain}"),
                solver=planaudit_strategy(strategy, params), scorer=outcome(),
                metadata={"regime": "offline", "domain": domain, "method": method,
                          "suite_dir": str(suite_dir)})
