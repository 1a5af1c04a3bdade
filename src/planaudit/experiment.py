"""The experiment config as the episode stages read it: typed, read once.

`planaudit.config` reads and validates the file (as Snakemake does); an entry point
(a `shard` command, `episode`, `estimate`, `check`) turns the dict into an `Experiment`
once, and what travels below it are its objects (a `ModelEntry`, a `MethodParams`, a
regime's `Section`), so no stage picks the config apart by key again. What decides a
shard's results is fingerprinted (`shard_hash`), so a row says which configuration made it.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from planaudit.compliance.settings import PlanSetting, SettingError, resolve
from planaudit.config import PLANNED, ConfigError, load_config, planner_view, restrict
from planaudit.llm.client import ModelConfig

__all__ = ["ConfigError", "Experiment", "MethodParams", "ModelEntry", "Repair", "Section",
           "load_config", "shard_hash"]

CLIENT_FIELDS = tuple(f.name for f in fields(ModelConfig))
# A batch-mode job waits up to 24 h for each wave (one sequential call of its longest
# episode). 8 admits every default strategy but tree of thoughts (self-refine at 3 rounds is
# 7 waves, modulo 4, the rest 1-2) and refuses tot's 67 (up to 67 days); no wave count fits
# the SLURM job's 720 minutes in the worst case, but a job past its time resumes by the
# batch ids on disk, so the bound is on the days to a result, not on one cluster job.
BATCH_MAX_WAVES = 8


@dataclass(frozen=True)
class ModelEntry:
    """One entry of `models`. `written` is the entry as the config writes it: the shard
    hash fingerprints it and the preflight checks it, so it travels whole (`to_dict`)."""

    name: str
    model: str  # the litellm model string, or reference/...
    tier: str
    api_base: str | None
    tool_protocol: str  # native (the provider's tool calls) or text
    written: Mapping[str, Any]
    # why batch mode refuses this model's jobs in its experiment (too many waves), or None
    refusal: str | None = None

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> ModelEntry:
        planner = entry["model"].startswith("planner/")
        return cls(name=entry["name"], model=entry["model"],
                   tier="planner" if planner else entry.get("tier", ""),
                   api_base=entry.get("api_base"),
                   tool_protocol=entry.get("tool_protocol", "native"),
                   written=copy.deepcopy(dict(entry)))

    @property
    def is_reference(self) -> bool:
        return self.model.startswith("reference/")

    @property
    def is_planner(self) -> bool:
        """A classical planner as a subject (`planner/lama`, `planner/astar`): not an LLM."""
        return self.model.startswith("planner/")

    @property
    def in_process(self) -> bool:
        """Answered in this process (a reference model or a planner): no key, no network,
        no bill."""
        return self.is_reference or self.is_planner

    def client(self) -> ModelConfig:
        """What `llm/` needs of it (endpoint, pricing, limits): a fresh one per client."""
        return ModelConfig(**{k: self.written[k] for k in CLIENT_FIELDS if k in self.written})

    @property
    def reference(self) -> dict | None:
        """What a model answered in process carries besides the task (None for an LLM): a
        reference model's faults and seed, and the responsive calibrator's response rates; a
        planner's budget in seconds, the matched budget: the entry's `timeout`, by default
        one LLM call's at a provider (120 s)."""
        if self.is_planner:
            return {"seconds": float(self.client().timeout)}
        if not self.is_reference:
            return None
        meta = {"faults": copy.deepcopy(self.written.get("faults", {})),
                "seed": self.written.get("seed", 0)}
        if "responses" in self.written:
            meta["responses"] = copy.deepcopy(self.written["responses"])
        return meta

    def to_dict(self) -> dict:
        return copy.deepcopy(dict(self.written))

    @property
    def max_waves(self) -> int:
        """batch_max_waves: the most waves (a day each at worst) a batch-mode job may take."""
        return int(self.written.get("batch_max_waves", BATCH_MAX_WAVES))

    def require(self) -> None:
        """Refuse to start when this model cannot answer (`llm/preflight.py`, which reads
        the entry as the config writes it), or when batch mode would wait too long for it
        (`refusal`): before any call, in seconds."""
        if self.refusal:
            raise ConfigError(self.refusal)
        from planaudit.llm.preflight import require_models

        require_models([self.to_dict()])


@dataclass(frozen=True)
class Repair:
    """Offline heuristic mode: LPG repairs the final plan (only an invalid one, by default)."""

    only_invalid: bool
    seed: int
    timeout: float


@dataclass(frozen=True)
class MethodParams:
    """What one method's episodes depend on. The typed fields are what the shard reads
    (the witness and repairer to require, the plan setting); `values` is the same as the
    strategies and architectures read it by name (their own parameters, `params.<method>`,
    are theirs to define) and as the shard hash fingerprints it (`to_dict`)."""

    regime: str
    method: str
    setting: str | None  # online: the plan setting's name
    max_tokens: int
    budget: int | None  # online: the tool-call budget
    witness: str | None  # offline: VAL judges the final plan too
    repair: Repair | None
    plan_setting: PlanSetting | None  # online: the prescribed workflow (None: no workflow)
    values: Mapping[str, Any]

    def to_dict(self) -> dict:
        return copy.deepcopy(dict(self.values))


@dataclass(frozen=True)
class Section:
    """A regime's section. The fields are what the shared code reads (the methods, the
    online regime's settings and repeats); what only the regime's own code reads (the
    curriculum's tests, ACPBench's types, a plugin's keys) stays in `written`."""

    regime: str
    methods: tuple[str, ...]
    plan_settings: tuple[str, ...]  # online (default: `none`, no workflow)
    epochs: int  # online: how many times every episode runs (each a distinct sample)
    dead_tools_after: int | None  # online: the shard's alarm for a server that drops tools
    written: Mapping[str, Any]

    @classmethod
    def from_dict(cls, regime: str, section: Mapping[str, Any] | None) -> Section:
        section = section or {}
        after = section.get("dead_tools_after")
        return cls(regime=regime, methods=tuple(section.get("methods") or ()),
                   plan_settings=tuple(section.get("plan_settings") or ["none"]),
                   epochs=int(section.get("epochs", 1)),
                   dead_tools_after=None if after is None else int(after),
                   written=copy.deepcopy(dict(section)))

    def method(self, method: str, setting: str | None = None) -> MethodParams:
        """One method's parameters (ConfigError for a method the section does not list);
        online, `setting` names the plan setting (its workflow goes into the values, so a
        changed workflow changes the shard hash)."""
        section = self.written
        if method not in self.methods:
            have = ", ".join(self.methods) or "none"
            raise ConfigError(f"config {self.regime}.methods: no method '{method}' (have: {have})")
        values: dict[str, Any] = {"max_tokens": section.get("max_tokens", 4096)}
        if "budget" in section:  # online: the same tool-call budget for every architecture
            values["budget"] = section["budget"]
        if section.get("witness", "none") != "none":
            values["witness"] = section["witness"]
        repair = section.get("repair") or {}
        if repair.get("enabled"):
            values["repair"] = {"only_invalid": bool(repair.get("only_invalid", True)),
                                "seed": int(repair.get("seed", 0)),
                                "timeout": float(repair.get("timeout", 10.0))}
        # formalize: the route's planner, the bound; online: tools that fail
        for key in ("planner", "equivalence", "disruption"):
            if key in section:
                values[key] = copy.deepcopy(section[key])
        values.update((section.get("params") or {}).get(method, {}))
        chosen = None
        if self.regime == "online" and setting is not None:
            try:
                chosen = resolve({"online": dict(section)}, setting)
            except SettingError as e:
                raise ConfigError(str(e)) from None
            if chosen.steps:  # `none` leaves the values (and the shard hash) as they were
                values["plan_setting"] = chosen.to_json()
            else:
                chosen = None
        fixed = values.get("repair")
        return MethodParams(
            regime=self.regime, method=method, setting=setting,
            max_tokens=int(values["max_tokens"]),
            budget=int(values["budget"]) if "budget" in values else None,
            witness=values.get("witness"),
            repair=Repair(bool(fixed.get("only_invalid", True)), int(fixed.get("seed", 0)),
                          float(fixed.get("timeout", 10.0))) if fixed else None,
            plan_setting=chosen, values=copy.deepcopy(values))


@dataclass(frozen=True)
class Experiment:
    """The config, read once at an entry point: its models, its regimes' sections, and
    where the cache and results go. `suite` is the suite section as `suite/` reads it."""

    models: tuple[ModelEntry, ...]
    sections: Mapping[str, Section]
    cache: str
    results: str
    suite: Mapping[str, Any]
    output_tokens: Mapping[str, int]  # estimate.output_tokens: the bill's assumed replies
    # estimate.reasoning_tokens: the reasoning tokens a call is assumed to spend per effort
    reasoning_tokens: Mapping[str, int]
    # the sections a model that is not a reference model runs: only what the user's own
    # files name (`planaudit.config.restrict`); the same as `sections` when all is named
    paid: Mapping[str, Section] | None = None
    # the sections a classical planner runs (`config.planner_view`: offline's `planner`)
    planned: Mapping[str, Section] | None = None

    @classmethod
    def from_dict(cls, config: Mapping[str, Any], named: Mapping[str, Any] | None = None
                  ) -> Experiment:
        """`named`: what the user's own files name (`config.load_named`); None when the
        config names all it runs (a job's slice, a test's dict)."""
        from planaudit.regime import regimes

        def sections(c: Mapping[str, Any]) -> dict[str, Section]:
            return {n: Section.from_dict(n, c[r.key]) for n, r in regimes().items() if r.key in c}

        models = tuple(ModelEntry.from_dict(m) for m in config.get("models", []))
        for name in PLANNED:
            section = config.get(name)
            if isinstance(section, Mapping) and "planner" in (section.get("methods") or []) \
                    and any(not m.is_planner for m in models):
                raise ConfigError(f"config {name}.methods: 'planner' is the method a classical "
                                  "planner (planner/lama, planner/astar) runs by itself; an "
                                  "LLM cannot run it: remove it from the list")
        experiment = cls(
            models=models,
            sections=sections(config),
            cache=config.get("cache", ".cache/planaudit"),
            results=config.get("results", "results"),
            suite=copy.deepcopy(dict(config.get("suite") or {})),
            output_tokens=dict((config.get("estimate") or {}).get("output_tokens") or {}),
            reasoning_tokens=dict((config.get("estimate") or {}).get("reasoning_tokens") or {}),
            paid=None if named is None else sections(restrict(config, named)),
            planned=sections(planner_view(config)))
        return dataclasses.replace(experiment, models=tuple(
            dataclasses.replace(m, refusal=experiment.batch_refusal(m))
            for m in experiment.models))

    def for_model(self, entry: ModelEntry) -> Experiment:
        """The experiment as `entry` runs it: a model that is not a reference model runs
        only the sections, methods and plan settings the user's files name."""
        if entry.is_planner and self.planned is not None:
            return dataclasses.replace(self, sections=self.planned, paid=None, planned=None)
        if entry.is_reference or self.paid is None:
            return self
        return dataclasses.replace(self, sections=self.paid, paid=None)

    def waves(self, entry: ModelEntry) -> dict[tuple[str, str], int]:
        """(regime, method) -> waves of each batched job of `entry` in batch mode (a
        regime without `Regime.waves` asks one call an episode: one wave)."""
        from planaudit.regime import regimes

        if not entry.written.get("batch") or entry.in_process:
            return {}
        mine = self.for_model(entry)
        return {(name, m): r.waves(mine.section(name).written, m)
                for name, r in regimes().items() if r.batch and r.waves is not None
                for m in mine.section(name).methods}

    def batch_refusal(self, entry: ModelEntry) -> str | None:
        """Why batch mode refuses `entry`'s jobs: a method whose waves (up to 24 h each)
        exceed the entry's `batch_max_waves`; None when every job fits."""
        over = [(r, m, n) for (r, m), n in self.waves(entry).items() if n > entry.max_waves]
        if not over:
            return None
        what = ", ".join(f"{r} {m}: {n} waves (up to {n} days)" for r, m, n in over)
        return (f"config models[{entry.name}]: batch mode refuses {what}; the bound is "
                f"batch_max_waves: {entry.max_waves} (each wave is a provider batch that may "
                "take 24 h). Raise batch_max_waves, drop batch: true for this model, or "
                "leave the method out")

    def model(self, name: str) -> ModelEntry:
        for m in self.models:
            if m.name == name:
                return m
        have = ", ".join(m.name for m in self.models) or "none"
        raise ConfigError(f"config models: no model named '{name}' (have: {have})")

    def section(self, regime: str) -> Section:
        """The regime's section (an empty one when the config has none)."""
        return self.sections.get(regime) or Section.from_dict(regime, None)

    def method(self, regime: str, method: str, setting: str | None = None) -> MethodParams:
        return self.section(regime).method(method, setting)

    @property
    def tasks(self) -> list[str] | None:
        """suite.tasks: the selected tasks (None: every prepared task)."""
        return self.suite.get("tasks")


def shard_hash(model: ModelEntry, method: str, params: Mapping[str, Any]) -> str:
    """The fingerprint of what decides a shard's rows: the model entry as written, the
    method (or test case) and its parameters."""
    blob = json.dumps({"model": model.to_dict(), "method": method, "params": dict(params)},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
