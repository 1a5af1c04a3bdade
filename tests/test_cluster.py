"""The workflow on a real SLURM cluster: a single node brought up on this machine by
tests/cluster/slurm.sh (Debian's slurm-wlm, slurmdbd on a local MariaDB, munge), the reduced
default config run through `snakemake --profile workflow/profiles/slurm`.

Every job goes through sbatch (sacct lists one job per job Snakemake ran, under the rule's
name), the rows equal a local run's row for row (timing aside), a model's concurrency cap
holds on the cluster, and a rejected submission names what is wrong and loses nothing.

Needs root (the script starts munged, mariadbd, slurmdbd, slurmctld and slurmd). It runs in
CI, or where PLANAUDIT_CI_TESTS=1 asks for it; without a cluster it skips saying why, unless
CI is set: then failing to bring one up fails.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, outside_ci_unless_asked
from tests.test_workflow import config, make_suite

BIN = Path(sys.executable).parent
SCRIPT = ROOT / "tests" / "cluster" / "slurm.sh"
# the row columns that measure time, not what happened (everything else must match)
TIMING = ["latency_s", "repair_seconds"]  # wall times of calls and of LPG runs
MODELS = [
    {"name": "oracle", "model": "reference/oracle", "tier": "reference"},
    {"name": "flawed", "model": "reference/flawed", "tier": "reference", "seed": 0,
     "faults": {"drop_action": 0.3, "plan_on_unsolvable": 0.5}},
]


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and SLURM cannot be brought up here: {reason}")
    pytest.skip(f"no local SLURM cluster: {reason}")


@pytest.fixture(scope="module")
def cluster():
    """The cluster up for this module; stopped afterwards if this module started it."""
    outside_ci_unless_asked("the SLURM cluster test")
    if os.geteuid() != 0:
        _unavailable("tests/cluster/slurm.sh needs root to start its daemons")
    if not (shutil.which("apt-get") or shutil.which("slurmctld")):
        _unavailable("neither SLURM nor apt-get to install it is on this machine")
    was_up = subprocess.run([str(SCRIPT), "status"], capture_output=True).returncode == 0
    start = time.monotonic()
    proc = subprocess.run([str(SCRIPT), "up"], capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        _unavailable(f"tests/cluster/slurm.sh up failed: {proc.stderr[-2000:]}")
    print(f"SLURM up in {time.monotonic() - start:.1f} s (was up: {was_up})")
    yield
    if not was_up:
        subprocess.run([str(SCRIPT), "down"], capture_output=True, timeout=120)


def _env() -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
                PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")


def _config(tmp: Path, root: Path, name: str) -> Path:
    cfg = yaml.safe_load(config(tmp, root).read_text())
    cfg.update(results=str(tmp / name), cache=str(tmp / f"cache-{name}"), models=MODELS,
               offline={"methods": ["direct", "cot"]},
               online={"methods": ["react"], "budget": 50, "plan_settings": ["none"]},
               curriculum={"tests": []}, acpbench={"types": []}, formalize={"methods": []})
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _slurm(cfg: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "snakemake"), "--profile", "workflow/profiles/slurm", "--nolock",
         "--configfile", str(cfg), "--resources", "model_oracle=1", "model_flawed=1",
         # a test cluster answers at once: poll sacct every 2 s, not the default 40
         "--slurm-init-seconds-before-status-checks", "2",
         "--slurm-logdir", str(tmp / "slurm-logs"), *extra],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=1800)


def _submitted(out: str) -> list[str]:
    return re.findall(r"has been submitted with SLURM jobid (\d+)", out)


def _sacct(ids: list[str]) -> list[dict]:
    if not ids:
        return []  # `sacct -j ''` would list every job
    proc = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-j", ",".join(ids),
         "-o", "JobIDRaw,JobName,Comment,State,Partition,Start,End"],
        capture_output=True, text=True, check=True)
    keys = ("id", "name", "comment", "state", "partition", "start", "end")
    return [dict(zip(keys, line.split("|"), strict=True)) for line in proc.stdout.splitlines()]


def _job_stats(out: str) -> Counter:
    """Snakemake's own count of the jobs it ran ("Job stats:" table), the local rules (`all`,
    `shard_list`, the suite's `ready_<domain>_<disguise>` markers: never submitted) left out."""
    table = out.split("Job stats:")[1].split("total")[0]
    counts = Counter()
    for line in table.splitlines()[3:]:
        rule, *count = line.split() or [""]
        if rule and rule not in ("all", "shard_list") and not rule.startswith("ready_"):
            counts[rule] = int(count[0])
    return counts


def _rule(comment: str) -> str:
    return comment.removeprefix("rule_").split("_wildcards_")[0]


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    root = make_suite(tmp, {"p01": "solvable", "p09": "unsolvable"})
    local, remote = _config(tmp, root, "local"), _config(tmp, root, "cluster")
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", "2", "--nolock", "--configfile", str(local)],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    start = time.monotonic()
    on_cluster = _slurm(remote, tmp)
    print(f"cluster run: {time.monotonic() - start:.1f} s wall")
    assert on_cluster.returncode == 0, (on_cluster.stdout + on_cluster.stderr)[-5000:]
    return tmp, remote, on_cluster.stdout + on_cluster.stderr


def test_every_job_goes_through_sbatch_and_rows_equal_a_local_run(runs):
    import polars as pl

    tmp, _, out = runs
    ids = _submitted(out)
    jobs = _sacct(ids)
    ran = _job_stats(out)
    assert len(jobs) == len(ids) == sum(ran.values())
    # sacct's record of the run, job for job: the rule of each job is in its comment
    assert Counter(_rule(j["comment"]) for j in jobs) == ran
    assert {j["state"] for j in jobs} == {"COMPLETED"}
    assert len({j["name"] for j in jobs}) == 1  # one run: the plugin names every job by its run id
    local = pl.read_parquet(tmp / "local" / "episodes.parquet")
    remote = pl.read_parquet(tmp / "cluster" / "episodes.parquet")
    assert local.height == remote.height == 2 * 3 * 2  # models x methods x tasks
    assert set(TIMING) <= set(local.columns)
    key = ["regime", "model", "method", "domain", "task"]
    assert local.drop(TIMING).sort(key).equals(remote.drop(TIMING).sort(key))


def test_a_models_cap_holds_on_the_cluster(runs):
    """`--resources model_oracle=1`: no two jobs of one model ran at once (sacct's times)."""
    _, _, out = runs
    jobs = _sacct(_submitted(out))
    for model in ("oracle", "flawed"):
        spans = sorted((j["start"], j["end"]) for j in jobs
                       if _rule(j["comment"]) in (f"offline_{model}", f"online_{model}"))
        assert len(spans) == 3
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, (model, spans)


def test_a_partition_the_cluster_lacks_is_named_before_any_job(runs):
    tmp, remote, _ = runs
    proc = _slurm(remote, tmp, "--config", "slurm_partition=nosuch")
    assert proc.returncode != 0
    assert "config slurm_partition: the cluster has no partition 'nosuch'" in proc.stderr
    assert "(have: planaudit, short)" in proc.stderr
    assert not _submitted(proc.stdout + proc.stderr)


def test_a_rejected_submission_is_named_and_loses_nothing(runs):
    """Two new methods, the oracle's jobs sent where the cluster refuses them (a partition
    it lacks; a time limit above the partition's): each refusal names what is wrong, the
    flawed model's new jobs finish, nothing finished is touched, and the next run submits
    only what is left."""
    tmp, remote, _ = runs
    cfg = yaml.safe_load(remote.read_text())
    cfg["offline"]["methods"].append("plan-and-solve")
    cfg["online"]["methods"].append("critic")
    remote.write_text(yaml.safe_dump(cfg))
    shards = sorted((tmp / "cluster" / "episodes").rglob("*.parquet"))
    before = {p: p.read_bytes() for p in shards}
    proc = _slurm(remote, tmp, "--set-resources", "offline_oracle:slurm_partition=nosuch",
                  "online_oracle:slurm_partition=short")  # `short` allows 1 minute, a shard asks 720
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "sbatch: error: invalid partition specified: nosuch" in out
    assert "Requested time limit is invalid" in out
    finished = Counter(_rule(j["comment"]) for j in _sacct(_submitted(out)))
    assert finished == Counter(["offline_flawed", "online_flawed"])
    assert {p: p.read_bytes() for p in shards} == before
    new = tmp / "cluster" / "episodes" / "offline" / "flawed" / "plan-and-solve" / "blocksworld.parquet"
    assert new.exists()
    kept = new.read_bytes()
    again = _slurm(remote, tmp)
    out = again.stdout + again.stderr
    assert again.returncode == 0, out[-3000:]
    resubmitted = Counter(_rule(j["comment"]) for j in _sacct(_submitted(out)))
    assert resubmitted == Counter(
        ["offline_oracle", "online_oracle", "collect", "tables", "figures", "report"])
    assert {p: p.read_bytes() for p in shards} == before and new.read_bytes() == kept
