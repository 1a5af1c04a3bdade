"""The experiment config as the episode stages read it: models and method parameters.

`planaudit.config` reads and validates the file (as Snakemake does); this module
turns the relevant parts into objects, and fingerprints what decides a shard's
results (so a row says which configuration made it).
"""

from __future__ import annotations

import hashlib
import json

from planaudit.config import ConfigError, load_config
from planaudit.llm.client import ModelConfig

__all__ = ["ConfigError", "epochs", "load_config", "method_params", "model_config",
           "model_entry", "plan_settings", "reference_meta", "shard_hash"]

MODEL_FIELDS = ("name", "model", "family", "tier", "api_base", "input_price", "output_price",
                "max_concurrency", "timeout", "max_retries", "backoff_base", "backoff_cap",
                "api_key_env", "tool_choice", "retry_timeouts")


def model_entry(config: dict, name: str) -> dict:
    for m in config.get("models", []):
        if m["name"] == name:
            return m
    have = ", ".join(m["name"] for m in config.get("models", [])) or "none"
    raise ConfigError(f"config models: no model named '{name}' (have: {have})")


def model_config(entry: dict) -> ModelConfig:
    return ModelConfig(**{k: entry[k] for k in MODEL_FIELDS if k in entry})


def reference_meta(entry: dict) -> dict | None:
    """What a reference model's calls carry besides the task: its faults and seed, and
    the responsive calibrator's response rates."""
    if not entry["model"].startswith("reference/"):
        return None
    meta = {"faults": entry.get("faults", {}), "seed": entry.get("seed", 0)}
    if "responses" in entry:
        meta["responses"] = entry["responses"]
    return meta


def method_params(config: dict, regime: str, method: str, setting: str | None = None) -> dict:
    """What one method's episodes depend on; online, `setting` names the plan setting
    (its workflow goes into the params, so a changed workflow changes the shard hash)."""
    section = config.get(regime, {})
    if method not in section.get("methods", []):
        have = ", ".join(section.get("methods", [])) or "none"
        raise ConfigError(f"config {regime}.methods: no method '{method}' (have: {have})")
    params = {"max_tokens": section.get("max_tokens", 4096)}
    if "budget" in section:  # online: the same tool-call budget for every architecture
        params["budget"] = section["budget"]
    if section.get("witness", "none") != "none":  # offline: VAL judges the final plan too
        params["witness"] = section["witness"]
    repair = section.get("repair") or {}
    if repair.get("enabled"):  # offline: heuristic mode, LPG repairs the final plan
        params["repair"] = {"only_invalid": bool(repair.get("only_invalid", True)),
                            "seed": int(repair.get("seed", 0)),
                            "timeout": float(repair.get("timeout", 10.0))}
    params.update((section.get("params") or {}).get(method, {}))
    if regime == "online" and setting is not None:
        from planaudit.compliance.settings import SettingError, resolve

        try:
            chosen = resolve(config, setting)
        except SettingError as e:
            raise ConfigError(str(e)) from None
        if chosen.steps:  # `none` leaves the params (and the shard hash) as they were
            params["plan_setting"] = chosen.to_json()
    return params


def plan_settings(config: dict) -> list[str]:
    """The online regime's plan settings (default: `none`, no workflow)."""
    return list(config.get("online", {}).get("plan_settings") or ["none"])


def epochs(config: dict) -> int:
    """How many times the online regime runs every episode (each a distinct sample)."""
    return int(config.get("online", {}).get("epochs", 1))


def shard_hash(model: dict, method: str, params: dict) -> str:
    blob = json.dumps({"model": model, "method": method, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
