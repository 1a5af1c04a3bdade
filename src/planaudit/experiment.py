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

__all__ = ["ConfigError", "load_config", "method_params", "model_config", "model_entry",
           "reference_meta", "shard_hash"]

MODEL_FIELDS = ("name", "model", "family", "tier", "api_base", "input_price", "output_price",
                "max_concurrency", "timeout", "max_retries", "backoff_base", "backoff_cap",
                "api_key_env")


def model_entry(config: dict, name: str) -> dict:
    for m in config.get("models", []):
        if m["name"] == name:
            return m
    have = ", ".join(m["name"] for m in config.get("models", [])) or "none"
    raise ConfigError(f"config models: no model named '{name}' (have: {have})")


def model_config(entry: dict) -> ModelConfig:
    return ModelConfig(**{k: entry[k] for k in MODEL_FIELDS if k in entry})


def reference_meta(entry: dict) -> dict | None:
    """What a reference model's calls carry besides the task: its faults and seed."""
    if not entry["model"].startswith("reference/"):
        return None
    return {"faults": entry.get("faults", {}), "seed": entry.get("seed", 0)}


def method_params(config: dict, regime: str, method: str) -> dict:
    section = config.get(regime, {})
    if method not in section.get("methods", []):
        have = ", ".join(section.get("methods", [])) or "none"
        raise ConfigError(f"config {regime}.methods: no method '{method}' (have: {have})")
    params = {"max_tokens": section.get("max_tokens", 4096)}
    if "budget" in section:  # online: the same tool-call budget for every architecture
        params["budget"] = section["budget"]
    if section.get("witness", "none") != "none":  # offline: VAL judges the final plan too
        params["witness"] = section["witness"]
    params.update((section.get("params") or {}).get(method, {}))
    return params


def shard_hash(model: dict, method: str, params: dict) -> str:
    blob = json.dumps({"model": model, "method": method, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
