"""The offline regime as a part of the registry: a system gets the briefs and returns a
plan (a strategy per job, `planaudit offline shard`, episodes through `shard.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from planaudit import shard
from planaudit.experiment import ModelEntry
from planaudit.offline.estimate import count, estimate
from planaudit.regime import Jobs, Regime, Workflow, register, row_columns, section_schema


def part(section: dict, method: str) -> dict:
    """The slice of the `offline` section one strategy's job depends on."""
    found = {"methods": [method], "max_tokens": section.get("max_tokens", 4096),
             "params": {method: section.get("params", {}).get(method, {})}}
    for key in ("witness", "repair", "epochs"):  # VAL, heuristic mode, repeats: a change
        # reruns every job (the cache answers every episode already run)
        if key in section:
            found[key] = section[key]
    return found


def jobs(view: Workflow) -> Jobs:
    section = view.config.get("offline", {})
    return shard.episode_jobs(view, "offline", list(section.get("methods", [])),
                              lambda method: part(section, method))


def waves(section: Mapping[str, Any], method: str) -> int:
    """The sequential calls of one episode of `method` (batch mode waits for each): the
    estimate's stand-in, which never lets a loop stop early, on a brief of placeholders,
    since a strategy's number of calls depends on its parameters, not on the task."""
    brief = {"preamble": "-", "domain": "-", "instance": "-"}
    params = dict((section.get("params") or {}).get(method, {}))
    calls, _, _ = asyncio.run(count(method, params, brief, {}, lambda messages: 0))
    return calls


def episode(entry: ModelEntry):
    from planaudit.offline.run import run_episode

    return run_episode


register(Regime(
    schema=section_schema(__file__),
    name="offline", help="the offline regime: a model writes a whole plan (or UNSOLVABLE) "
    "from the briefs, judged against the hidden model", jobs=jobs,
    layout=("model", "method", "domain"), columns=row_columns(__file__),
    add_parser=lambda sub, config_arg: shard.add_parser(sub, "offline", config_arg),
    estimate=estimate, episode=episode, rank=0, batch=True, choices=("methods",), epochs=True,
    waves=waves))
