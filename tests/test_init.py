"""`planaudit init DIR`: a run folder outside the repository whose Snakefile uses the
installed package's workflow as a Snakemake module. Run as a user runs it: `snakemake` in
that folder (the venv's bin first on PATH), nothing of the checkout in reach but the
installed package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from planaudit import paths
from planaudit.cli import main

BIN = Path(sys.executable).parent
# a pilot as docs/howto/pilot.md writes one: two gripper tasks (one labelled
# unsolvable), the oracle, one strategy and one architecture
PILOT = """\
suite:
  tasks: [gripper/p01, gripper/p09]
models:
  - {name: oracle, model: reference/oracle, family: reference, tier: reference}
offline: {methods: [direct]}
online: {methods: [react], plan_settings: [none]}
curriculum: {tests: []}
acpbench: {types: []}
formalize: {methods: []}
"""


def snakemake(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([str(BIN / "snakemake"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("init") / "myrun"
    assert main(["init", str(folder)]) == 0
    return folder


def test_init_writes_the_snakefile_config_domains_and_profiles(run, capsys):
    text = (run / "Snakefile").read_text()
    assert 'configfile: "config/config.yaml"' in text
    assert "module planaudit:" in text and "use rule * from planaudit" in text
    # the workflow is found through the installed package, not a path of this machine
    assert "from planaudit.paths import SNAKEFILE" in text and str(paths.PACKAGE) not in text
    assert (run / "config" / "config.yaml").read_bytes() == paths.DEFAULT_CONFIG.read_bytes()
    assert (run / "config" / "plan_settings.yaml").read_bytes() == paths.PLAN_SETTINGS.read_bytes()
    assert yaml.safe_load((run / "config" / "config.yaml").read_text())["suite"]["root"] == "domains"
    packaged = sorted(p.relative_to(paths.DOMAINS) for p in paths.DOMAINS.rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts)
    copied = sorted(p.relative_to(run / "domains") for p in (run / "domains").rglob("*")
                    if p.is_file())
    assert copied == packaged and len({p.parts[0] for p in copied}) == 5
    for name in ("local", "slurm"):
        profile = (run / "profiles" / name / "config.yaml").read_text()
        assert f"--profile profiles/{name}" in profile and "workflow/profiles" not in profile
    # no profiles/default: Snakemake would load it on every run, under --profile slurm too
    assert not (run / "profiles" / "default").exists()


def test_init_refuses_a_folder_that_is_not_empty_and_force_writes_into_it(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert main(["init", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"planaudit: {folder}: exists and is not empty" in err and "--force" in err
    assert not (folder / "Snakefile").exists()
    assert main(["init", str(folder), "--force"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {folder / 'Snakefile'}" in out and f"cd {folder} && snakemake" in out
    assert (folder / "notes.txt").read_text() == "mine"  # nothing else removed
    assert (folder / "domains" / "gripper" / "domain.pddl").is_file()
    # an empty folder is taken as it is; a file is refused
    (tmp_path / "empty").mkdir()
    assert main(["init", str(tmp_path / "empty")]) == 0
    assert main(["init", str(folder / "notes.txt")]) == 2


def _job_counts(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:", 1)[1]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_the_dry_run_lists_the_default_experiments_jobs(run):
    proc = snakemake(run, "-n", "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = _job_counts(proc.stdout)
    config = yaml.safe_load(paths.DEFAULT_CONFIG.read_text())
    models = [m["name"] for m in config["models"]]
    online = len(config["online"]["methods"]) * len(config["online"]["plan_settings"])
    expected = {"check_model": len(models), "summary": 1, "shard_list": 1, "collect": 1,
                "tables": 1, "figures": 1, "report": 1, "all": 1,
                **{f"suite_{d}": 1 for d in ("blocksworld", "gripper", "hospital",
                                               "loadbalancing", "logistics")},
                **{f"ready_{d}_none": 1 for d in ("blocksworld", "gripper", "hospital",
                                                    "loadbalancing", "logistics")}}
    planners = [m["name"] for m in config["models"] if m["model"].startswith("planner/")]
    assert planners, "the default run has the classical planners' rows"
    for m in planners:  # a planner runs the method `planner` alone, offline and online
        expected |= {f"offline_{m}": 1, f"online_{m}": 1}
    for m in (m for m in models if m not in planners):
        expected |= {f"offline_{m}": len(config["offline"]["methods"]), f"online_{m}": online,
                     f"curriculum_{m}": len(config["curriculum"]["tests"]),
                     f"acpbench_{m}": len(config["acpbench"]["types"]),
                     f"formalize_{m}": len(config["formalize"]["methods"])}
    assert jobs == {**expected, "total": sum(expected.values())}


def test_a_pilot_runs_from_the_folder_to_the_rows(run):
    (run / "config" / "pilot.yaml").write_text(PILOT)
    proc = snakemake(run, "results/episodes.parquet", "--cores", "2",
                     "--configfile", "config/pilot.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pl.read_parquet(run / "results" / "episodes.parquet")
    got = sorted(rows.select("regime", "model", "method", "domain", "task", "outcome").iter_rows())
    assert got == [("offline", "oracle", "direct", "gripper", "p01", "success"),
                   ("offline", "oracle", "direct", "gripper", "p09", "detected"),
                   ("online", "oracle", "react", "gripper", "p01", "success"),
                   ("online", "oracle", "react", "gripper", "p09", "detected")]
    # the suite was prepared from the folder's own domains/, into its own results/
    assert sorted(p.name for p in (run / "results" / "suite").iterdir() if p.is_dir()) == ["gripper"]
    assert (run / ".cache" / "planaudit").is_dir()
