"""The online regime's bill before spending: each architecture in the real environment
with a stand-in agent that takes the oracle's path (read, sense once, execute an optimal
plan, submit; declare an unsolvable task), its replies padded to the assumed length. An
online prompt carries the whole history, so this prices the shortest sensible episode
(a lower bound: a real agent that wanders pays more)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from planaudit.compliance.settings import PlanSetting
from planaudit.experiment import Experiment, ModelEntry
from planaudit.regime import Estimated
from planaudit.shard import selected_folders


async def count(method: str, params: dict, folder: Path, out_tokens: dict,
                counter) -> tuple[int, int, int]:
    """Calls and tokens of one online episode along the oracle's path."""
    from planaudit.formal import load_task
    from planaudit.llm.client import Call
    from planaudit.online.architectures import ARCHITECTURES, Agent
    from planaudit.online.environment import Environment
    from planaudit.online.run import DEFAULT_BUDGET
    from planaudit.reference import online_turn

    brief = json.loads((folder / "brief.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    env = Environment(task, brief, None, int(params.get("budget", DEFAULT_BUDGET)),
                      gated=method == "gated")
    calls = tin = tout = 0
    setting = PlanSetting.from_json(params.get("plan_setting"))
    meta = {"task_dir": str(folder)}
    if setting.steps:  # the oracle follows the setting's workflow, as in a real run
        meta |= {"plan_setting": setting.name, "plan_order": setting.call_order}

    async def ask(messages, purpose="act", tools=None) -> Call:
        nonlocal calls, tin, tout
        calls += 1
        tin += counter(messages)
        n = int(out_tokens.get(purpose, 400))
        tout += n
        filler = "step " * max(0, n - 20)
        if purpose == "act":
            name, args = online_turn("oracle", meta, messages)
            return Call(filler, [{"id": f"c{calls}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}])
        if purpose == "final":
            truth = json.loads((folder / "truth.json").read_text())
            plan = "```\n" + "\n".join(truth["plan"]) + "\n```" if truth["solvable"] \
                else "UNSOLVABLE"
            return Call(filler + "\n" + plan)
        return Call("APPROVE " + filler)

    await ARCHITECTURES[method](Agent(env, ask, params, "native", setting=setting))
    return calls, tin, tout


def estimate(experiment: Experiment, entry: ModelEntry, suite_dir: Path, out_tokens: dict,
             counter) -> list[Estimated]:
    section = experiment.section("online")
    if not section.methods:
        return []
    folders = selected_folders(experiment.suite, suite_dir)
    if not folders:
        raise FileNotFoundError(f"{suite_dir}: no briefs yet (run `snakemake suite` first)")
    repeats = section.epochs
    rows = []
    for method in section.methods:
        for setting in section.plan_settings:
            params = experiment.method("online", method, setting).to_dict()
            calls = tin = tout = 0
            for folder in folders:
                c, i, o = asyncio.run(count(method, params, folder, out_tokens, counter))
                # every repeat pays again
                calls, tin, tout = calls + c * repeats, tin + i * repeats, tout + o * repeats
            label = method + (f"+{setting}" if setting and setting != "none" else "")
            rows.append(Estimated(label, len(folders), calls, tin, tout))
    return rows
