"""The experiment config as the episode stages read it: models and method parameters.

Snakemake validates the whole file against `workflow/schemas/config.schema.yaml`;
this module only turns the relevant parts into objects, and fingerprints what
decides a shard's results (so a row says which configuration made it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from planaudit.llm.client import ModelConfig

MODEL_FIELDS = ("name", "model", "family", "tier", "api_base", "input_price", "output_price",
                "max_concurrency", "timeout", "max_retries")


class ConfigError(ValueError):
    """A config that names a model or method it does not define."""


def load_config(path: str | Path) -> dict:
    try:
        return yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not YAML: {e}") from None


def model_entry(config: dict, name: str) -> dict:
    for m in config.get("models", []):
        if m["name"] == name:
            return m
    raise ConfigError(f"config models: no model named '{name}' "
                      f"(have: {', '.join(m['name'] for m in config.get('models', []))})")


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
        raise ConfigError(f"config {regime}.methods: no method '{method}'")
    params = {"max_tokens": section.get("max_tokens", 4096)}
    if "budget" in section:  # online: the same tool-call budget for every architecture
        params["budget"] = section["budget"]
    params.update((section.get("params") or {}).get(method, {}))
    return params


def shard_hash(model: dict, method: str, params: dict) -> str:
    blob = json.dumps({"model": model, "method": method, "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
