"""The config read once into typed objects (planaudit.experiment): what they hold, that the
shard hash and the method parameters are what the dict-picking code gave, and that a bad
field is named before anything runs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from planaudit.compliance.settings import PlanSetting
from planaudit.config import ConfigError, load_config
from planaudit.experiment import Experiment, ModelEntry, Repair, shard_hash
from planaudit.llm.client import ModelConfig

ROOT = Path(__file__).resolve().parents[1]

CONFIG = {
    "models": [
        {"name": "gpt", "model": "openai/gpt-4o", "family": "gpt", "tier": "frontier",
         "api_base": "http://localhost:8080/v1", "input_price": 2.5, "output_price": 10.0,
         "max_concurrency": 2, "timeout": 30, "tool_protocol": "text"},
        {"name": "flawed", "model": "reference/flawed", "seed": 3,
         "faults": {"drop_action": 0.5}, "responses": {"gate": 0.9}},
    ],
    "cache": "/tmp/somewhere",
    "suite": {"tasks": ["gripper/p01"], "disguise": ["none"]},
    "estimate": {"output_tokens": {"final": 100}},
    "offline": {"methods": ["direct", "tot"], "max_tokens": 2048, "witness": "val",
                "repair": {"enabled": True, "timeout": 5},
                "params": {"tot": {"depth": 6, "max_tokens": 999}}},
    "online": {"methods": ["react"], "budget": 50, "plan_settings": ["standard", "none"],
               "epochs": 2, "dead_tools_after": 5,
               "setting_defs": {"standard": {"steps": ["Read the task."], "order": "read"}}},
    "curriculum": {"tests": ["t1"], "instances": 3},
}


def test_the_models_travel_typed():
    exp = Experiment.from_dict(CONFIG)
    gpt, flawed = exp.models
    assert (gpt.name, gpt.model, gpt.tier, gpt.api_base, gpt.tool_protocol) == (
        "gpt", "openai/gpt-4o", "frontier", "http://localhost:8080/v1", "text")
    assert not gpt.is_reference and gpt.reference is None
    assert gpt.client() == ModelConfig(
        name="gpt", model="openai/gpt-4o", family="gpt", tier="frontier",
        api_base="http://localhost:8080/v1", input_price=2.5, output_price=10.0,
        max_concurrency=2, timeout=30)
    assert (flawed.tier, flawed.api_base, flawed.tool_protocol) == ("", None, "native")
    assert flawed.reference == {"faults": {"drop_action": 0.5}, "seed": 3,
                                "responses": {"gate": 0.9}}
    assert flawed.to_dict() == CONFIG["models"][1]
    assert exp.model("flawed") is flawed
    assert (exp.cache, exp.results, exp.tasks) == ("/tmp/somewhere", "results", ["gripper/p01"])
    assert exp.output_tokens == {"final": 100}


def test_method_params_and_sections():
    exp = Experiment.from_dict(CONFIG)
    tot = exp.method("offline", "tot")
    # the method's own params override the section's, as the strategies always read them
    assert (tot.regime, tot.method, tot.setting, tot.max_tokens, tot.witness, tot.budget) == (
        "offline", "tot", None, 999, "val", None)
    assert tot.repair == Repair(only_invalid=True, seed=0, timeout=5.0)
    assert tot.to_dict() == {"max_tokens": 999, "witness": "val",
                             "repair": {"only_invalid": True, "seed": 0, "timeout": 5.0},
                             "depth": 6}
    online = exp.section("online")
    assert (online.methods, online.plan_settings, online.epochs, online.dead_tools_after) == (
        ("react",), ("standard", "none"), 2, 5)
    standard = exp.method("online", "react", "standard")
    assert standard.plan_setting == PlanSetting("standard", ("Read the task.",), "read")
    assert standard.to_dict() == {"max_tokens": 4096, "budget": 50,
                                  "plan_setting": standard.plan_setting.to_json()}
    none = exp.method("online", "react", "none")
    assert none.plan_setting is None and none.to_dict() == {"max_tokens": 4096, "budget": 50}
    # a regime the config leaves out has an empty section; the regime's own keys stay written
    assert exp.section("acpbench").methods == () and exp.section("acpbench").epochs == 1
    assert exp.section("curriculum").written == {"tests": ["t1"], "instances": 3}


def test_the_shard_hash_is_the_one_the_dict_gave():
    """The fingerprint of the entry as written, the method and its params, as before the
    config was typed (so rows of earlier runs keep their config_hash)."""
    exp = Experiment.from_dict(CONFIG)
    entry, params = exp.model("gpt"), exp.method("offline", "tot").to_dict()
    blob = json.dumps({"model": CONFIG["models"][0], "method": "tot", "params": params},
                      sort_keys=True)
    assert shard_hash(entry, "tot", params) == hashlib.sha256(blob.encode()).hexdigest()[:12]


def test_the_default_configs_hashes_are_unchanged():
    """config/config.yaml's oracle x direct as a3e696c fingerprinted it (config_hash in its
    rows, before the config was typed)."""
    exp = Experiment.from_dict(load_config(ROOT / "config" / "config.yaml"))
    params = exp.method("offline", "direct").to_dict()
    assert params == {"max_tokens": 4096, "witness": "val",
                      "repair": {"only_invalid": True, "seed": 0, "timeout": 10.0}}
    assert shard_hash(exp.model("oracle"), "direct", params) == ORACLE_DIRECT


ORACLE_DIRECT = "48cead380462"


def test_a_bad_field_is_named():
    exp = Experiment.from_dict(CONFIG)
    with pytest.raises(ConfigError, match=r"config models: no model named 'nope' \(have: gpt, "
                                          r"flawed\)"):
        exp.model("nope")
    with pytest.raises(ConfigError, match=r"config offline.methods: no method 'cot' \(have: "
                                          r"direct, tot\)"):
        exp.method("offline", "cot")
    with pytest.raises(ConfigError, match="no plan setting named 'missing'"):
        exp.method("online", "react", "missing")
    assert ModelEntry.from_dict({"name": "m", "model": "openai/m"}).tier == ""


def test_a_bad_field_in_the_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("online:\n  methods: [react]\n  epochs: two\n")
    with pytest.raises(ConfigError, match=rf"{path}:3: online.epochs: 'two' is not of type"):
        load_config(path)
