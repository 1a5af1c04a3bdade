"""The online regime as a part of the registry: an agent acts through tools (an
architecture under a plan setting per job, `planaudit online shard`, episodes through
`shard.py`)."""

from __future__ import annotations

from planaudit import shard
from planaudit.compliance.settings import resolve
from planaudit.experiment import ModelEntry, Section
from planaudit.online.estimate import estimate
from planaudit.regime import Jobs, Regime, Workflow, register, row_columns, section_schema


def part(view: Workflow, section: dict, key: str) -> dict:
    """The slice of the `online` section one architecture x setting job depends on: the
    setting's workflow itself, so that a changed text reruns its jobs."""
    method, _, name = key.partition("/")
    found = {"methods": [method], "max_tokens": section.get("max_tokens", 4096),
             "params": {method: section.get("params", {}).get(method, {})}}
    if "budget" in section:
        found["budget"] = section["budget"]
    found["plan_settings"] = [name]
    found["setting_defs"] = {name: resolve(view.config, name).to_json()}
    found["epochs"] = section.get("epochs", 1)
    if "disruption" in section:  # tools that fail: a change reruns every online job
        found["disruption"] = section["disruption"]
    if "dead_tools_after" in section:  # the shard's alarm for a server that drops tools
        found["dead_tools_after"] = section["dead_tools_after"]
    return found


def jobs(view: Workflow) -> Jobs:
    section = view.config.get("online", {})
    settings = Section.from_dict("online", section).plan_settings
    for name in settings:  # a setting missing from the settings file fails here, named
        resolve(view.config, name)
    keys = [f"{a}/{s}" for a in section.get("methods", []) for s in settings]
    return shard.episode_jobs(view, "online", keys, lambda key: part(view, section, key))


def episode(entry: ModelEntry):
    from functools import partial

    from planaudit.online.run import run_episode

    return partial(run_episode, protocol=entry.tool_protocol)


register(Regime(
    schema=section_schema(__file__),
    name="online", help="the online regime: an agent acts on the hidden model through "
    "tools, one action at a time", jobs=jobs,
    epochs=True, tools=True, layout=("model", "method", "setting", "domain"),
    columns=row_columns(__file__),
    add_parser=lambda sub, config_arg: shard.add_parser(sub, "online", config_arg),
    estimate=estimate, episode=episode, rank=1, choices=("methods", "plan_settings")))
