"""Two batch jobs of one model asking the same requests at once: one submits, the other
waits for its answers (llm/claims.py). And a claim left by a killed job is taken over.

The jobs are `planaudit offline shard` processes, as Snakemake runs them, sharing one cache
against the scripted batch server of tests/test_batch.py. The server holds the first
upload until the second job has reached its batch (it owns a lock file in the cache's
`batches/owners/`) or has uploaded too (as it did before claims): so the two jobs are
inside the same wave at the same time, every run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from tests.conftest import ROOT
from tests.test_batch import TASKS, BatchServer, entry, records, shard, suite  # noqa: F401

DEADLINE = 300  # seconds: a guard against a hang, not a measurement


def _job(tmp: Path, suite_dir: Path, model: dict, name: str, method: str = "direct"
         ) -> subprocess.Popen:
    config = {"models": [model], "offline": {"methods": [method], "witness": "none"},
              "cache": str(tmp / "cache")}
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "planaudit"), "offline", "shard",
         "--spec", json.dumps(config), "--model", "m", "--method", method,
         "--domain", "blocksworld", "--domain", "gripper", "--suite", str(suite_dir),
         "--out", str(tmp / name / "{domain}.parquet"),
         "--transcripts", str(tmp / name / "tr" / "{domain}")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _owners(tmp: Path) -> list[Path]:
    return list((tmp / "cache" / "batches" / "owners").glob("*.lock"))


def _claims(tmp: Path) -> dict[str, str]:
    folder = tmp / "cache" / "batches" / "claims"
    return {p.name: p.read_text() for p in folder.glob("[!.]*")} if folder.is_dir() else {}


def _both_in_one_wave(srv, tmp_path: Path, jobs: list[subprocess.Popen]) -> list[str]:
    """Hold the server's uploads until both jobs are inside the same wave (the second owns
    a claim lock, or uploaded as well), then let them finish: their stderr, both ended 0."""
    end = time.monotonic() + DEADLINE
    while srv.uploads < 2 and not (srv.uploads == 1 and len(_owners(tmp_path)) == 2):
        for job in jobs:
            assert job.poll() is None, job.stderr.read()[-2000:]
        assert time.monotonic() < end, "the jobs never reached their batch"
        time.sleep(0.05)
    srv.hold_files.clear()
    errs = [job.communicate(timeout=DEADLINE)[1] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], [e[-2000:] for e in errs]
    return errs


def test_two_jobs_asking_the_same_wave_at_once_submit_it_once(suite, tmp_path):  # noqa: F811
    with BatchServer() as srv:
        srv.hold_files.set()
        model = entry(srv.api_base, batch_poll=0.1)
        jobs = [_job(tmp_path, suite, model, "one"), _job(tmp_path, suite, model, "two")]
        errs = _both_in_one_wave(srv, tmp_path, jobs)
        uploads, made = srv.count("POST", "/files"), srv.count("POST", "/batches")
        assert (uploads, made, len(srv.chat)) == (1, 1, 0), \
            [r["keys"] for r in records(tmp_path)]
    [record] = records(tmp_path)
    assert len(record["keys"]) == len(TASKS) and record["outcome"] == "completed"
    assert any("waiting for its batch, not submitting them again" in e for e in errs)
    for name in ("one", "two"):
        rows = pl.concat([pl.read_parquet(p) for p in sorted((tmp_path / name).glob("*.parquet"))])
        assert rows.height == len(TASKS) and rows["error"].is_null().all()
    assert _claims(tmp_path) == {} and _owners(tmp_path) == []  # released at the end


def test_jobs_of_two_strategies_sharing_a_first_call_submit_it_once(suite, tmp_path):  # noqa: F811
    """`direct` and `self-refine` open with the same call: run at once, that call goes into
    one batch; self-refine's later calls go into batches of their own; no request is in
    two batches."""
    with BatchServer() as srv:
        srv.hold_files.set()
        model = entry(srv.api_base, batch_poll=0.1)
        jobs = [_job(tmp_path, suite, model, "direct"),
                _job(tmp_path, suite, model, "refine", method="self-refine")]
        _both_in_one_wave(srv, tmp_path, jobs)
        assert len(srv.chat) == 0
    batched = [k for r in records(tmp_path) for k in r["keys"]]
    assert len(batched) == len(set(batched)), "a request went into two batches"
    assert len(records(tmp_path)[0]["keys"]) == len(TASKS)
    for name in ("direct", "refine"):
        rows = pl.concat([pl.read_parquet(p) for p in sorted((tmp_path / name).glob("*.parquet"))])
        assert rows.height == len(TASKS) and rows["error"].is_null().all()


def test_a_claim_left_by_a_killed_job_is_taken_over(suite, tmp_path):  # noqa: F811
    """The job is killed (SIGKILL) while its upload is held: its claims stay on disk,
    naming it; the next job finds their owner gone (its flock released by the kernel),
    takes them over and submits the requests itself."""
    with BatchServer() as srv:
        srv.hold_files.set()
        model = entry(srv.api_base)
        killed = _job(tmp_path, suite, model, "killed")
        end = time.monotonic() + DEADLINE
        while srv.uploads < 1:
            assert killed.poll() is None, killed.stderr.read()[-2000:]
            assert time.monotonic() < end, "the job never uploaded"
            time.sleep(0.05)
        killed.kill()
        killed.wait()
        killed.stderr.close()
        left = _claims(tmp_path)
        assert len(left) == len(TASKS)
        assert {owner.split("-")[-2] for owner in left.values()} == {str(killed.pid)}
        srv.hold_files.clear()
        rows = shard(tmp_path, suite, model)
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (1, 0)
    [record] = records(tmp_path)
    assert sorted(record["keys"]) == sorted(left) and record["outcome"] == "completed"
    assert rows["error"].is_null().all()
    assert _claims(tmp_path) == {}
