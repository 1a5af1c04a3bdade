"""The experiment config as the episode stages read it: typed, read once.

`planaudit.config` reads and validates the file (as Snakemake does); an entry point
(a `shard` command, `episode`, `estimate`, `check`) turns the dict into an `Experiment`
once, and what travels below it are its objects (a `ModelEntry`, a `MethodParams`, a
regime's `Section`), so no stage picks the config apart by key again. What decides a
shard's results is fingerprinted (`shard_hash`), so a row says which configuration made it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from planaudit.compliance.settings import PlanSetting, SettingError, resolve
from planaudit.config import ConfigError, load_config
from planaudit.llm.client import ModelConfig

__all__ = ["ConfigError", "Experiment", "MethodParams", "ModelEntry", "Repair", "Section",
           "load_config", "shard_hash"]

CLIENT_FIELDS = tuple(f.name for f in fields(ModelConfig))


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

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> ModelEntry:
        return cls(name=entry["name"], model=entry["model"], tier=entry.get("tier", ""),
                   api_base=entry.get("api_base"),
                   tool_protocol=entry.get("tool_protocol", "native"),
                   written=copy.deepcopy(dict(entry)))

    @property
    def is_reference(self) -> bool:
        return self.model.startswith("reference/")

    def client(self) -> ModelConfig:
        """What `llm/` needs of it (endpoint, pricing, limits): a fresh one per client."""
        return ModelConfig(**{k: self.written[k] for k in CLIENT_FIELDS if k in self.written})

    @property
    def reference(self) -> dict | None:
        """What a reference model's calls carry besides the task: its faults and seed, and
        the responsive calibrator's response rates (None for an LLM)."""
        if not self.is_reference:
            return None
        meta = {"faults": copy.deepcopy(self.written.get("faults", {})),
                "seed": self.written.get("seed", 0)}
        if "responses" in self.written:
            meta["responses"] = copy.deepcopy(self.written["responses"])
        return meta

    def to_dict(self) -> dict:
        return copy.deepcopy(dict(self.written))

    def require(self) -> None:
        """Refuse to start when this model cannot answer (`llm/preflight.py`, which reads
        the entry as the config writes it): before any call, in seconds."""
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

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> Experiment:
        from planaudit.regime import regimes

        return cls(
            models=tuple(ModelEntry.from_dict(m) for m in config.get("models", [])),
            sections={r: Section.from_dict(r, config[r]) for r in regimes() if r in config},
            cache=config.get("cache", ".cache/planaudit"),
            results=config.get("results", "results"),
            suite=copy.deepcopy(dict(config.get("suite") or {})),
            output_tokens=dict((config.get("estimate") or {}).get("output_tokens") or {}))

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
