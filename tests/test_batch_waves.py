"""Batch mode's wall time (issue 37, finding 3): each sequential call of a strategy is a wave,
a provider batch that may take 24 hours. The estimate prints each batched row's waves and
worst-case wait; a strategy past the model's `batch_max_waves` (default 8) is refused
before any request: at workflow build, in `planaudit check` and at the shard's start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import planaudit
from tests.test_batch import BatchServer, entry
from tests.test_reference import task_dir

REPO = Path(planaudit.__file__).resolve().parents[2]
TASKS = ["blocksworld/p04", "gripper/p03"]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    for name in TASKS:
        task_dir(name, str(root))
    return root


def test_estimate_prints_waves_and_the_worst_case_wait(suite):
    """direct 1 wave, self-refine (3 rounds) 7, tot (depth 6, 3 samples, beam 2) 67: the
    last past the default bound of 8, marked REFUSED; an ordinary model's rows say nothing
    of batches."""
    from planaudit.estimate import estimate, render
    from planaudit.experiment import Experiment

    base = {"model": "openai/gpt-4o", "input_price": 2.5, "output_price": 10.0}
    config = {"models": [{"name": "plain", **base}, {"name": "batched", **base, "batch": True}],
              "offline": {"methods": ["direct", "self-refine", "tot"],
                          "params": {"self-refine": {"rounds": 3},
                                     "tot": {"depth": 6, "samples": 3, "beam": 2}}}}
    rows = estimate(Experiment.from_dict(config), suite)
    waves = {r.method: r.waves for r in rows if r.model == "batched"}
    assert waves == {"direct": 1, "self-refine": 7, "tot": 67}
    text = render(rows)
    lines = {(line.split()[0], line.split()[2]): line for line in text.splitlines()
             if line.startswith(("plain", "batched"))}
    assert "1 wave (worst case 24 h)" in lines[("batched", "direct")]
    assert "7 waves (worst case 168 h)" in lines[("batched", "self-refine")]
    assert "REFUSED" not in lines[("batched", "self-refine")]
    assert "67 waves (worst case 1608 h) REFUSED: batch_max_waves 8" in lines[("batched", "tot")]
    assert "wave" not in lines[("plain", "tot")]


def test_a_batch_tot_shard_is_refused_before_the_server_sees_a_request(suite, tmp_path):
    """`planaudit offline shard` of tot on a batch model: exit 2, the strategy, its waves and
    the bound named, and not one request at the scripted server (no upload, no batch, no
    chat). Raising batch_max_waves past the waves lets it through the same check."""
    from planaudit.experiment import Experiment

    with BatchServer() as srv:
        model = entry(srv.api_base)
        spec = {"models": [model], "offline": {"methods": ["tot"], "witness": "none"},
                "cache": str(tmp_path / "cache")}
        done = subprocess.run(
            [sys.executable, "-m", "planaudit.cli", "offline", "shard", "--spec", json.dumps(spec),
             "--model", "m", "--method", "tot", "--domain", "blocksworld", "--domain", "gripper",
             "--suite", str(suite), "--out", str(tmp_path / "rows" / "{domain}.parquet"),
             "--transcripts", str(tmp_path / "tr" / "{domain}")],
            capture_output=True, text=True, timeout=300)
        assert srv.log == [] and srv.chat == []
    assert done.returncode == 2, done.stderr[-2000:]
    assert "offline tot: 67 waves" in done.stderr and "batch_max_waves: 8" in done.stderr
    assert not (tmp_path / "cache" / "batches").exists()
    wider = Experiment.from_dict({**spec, "models": [{**model, "batch_max_waves": 70}]})
    assert wider.model("m").refusal is None


def test_the_workflow_refuses_it_when_it_is_built(tmp_path):
    """`snakemake -n` with a batch model and tot fails before any job, naming it; `planaudit
    check --config` says CANNOT RUN for that model with the same reason."""
    cfg = tmp_path / "batch.yaml"
    cfg.write_text(yaml.safe_dump({
        "results": str(tmp_path / "results"), "cache": str(tmp_path / "cache"),
        "models": [{"name": "gpt-4o", "model": "openai/gpt-4o", "batch": True}],
        "offline": {"methods": ["direct", "tot"]}}))
    bin_ = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}",
               OPENAI_API_KEY="sk-test-not-used")
    done = subprocess.run([str(bin_ / "snakemake"), "-n", "--nolock", "--configfile", str(cfg)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "batch mode refuses offline tot: 67 waves" in done.stderr + done.stdout
    checked = subprocess.run([sys.executable, "-m", "planaudit.cli", "check", "--config",
                              str(cfg)], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=300)
    assert checked.returncode == 2
    assert "CANNOT RUN" in checked.stdout and "offline tot: 67 waves" in checked.stdout
