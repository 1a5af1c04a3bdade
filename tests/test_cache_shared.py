"""One reply cache, two runs at once: two Snakemake runs with different configs and results
folders share one cache directory concurrently (as two cluster nodes would). No entry is
corrupt, none is lost (a third run is answered wholly from the cache, row for row), and
what a concurrent duplicate call costs is measured. A cache folder nothing can be written
to is an error naming it before any request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from planaudit.llm.cache import Cache, CacheUnwritable
from tests.conftest import ROOT
from tests.test_workflow import config, make_suite

BIN = Path(sys.executable).parent
MODELS = [
    {"name": "oracle", "model": "reference/oracle", "tier": "reference"},
    {"name": "flawed", "model": "reference/flawed", "tier": "reference", "seed": 0,
     "faults": {"drop_action": 0.3, "plan_on_unsolvable": 0.5}},
]
KEY = ["regime", "model", "method", "domain", "task"]


def _env() -> dict:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
                PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")


def _config(tmp: Path, root: Path, name: str, offline: list[str], online: list[str]) -> Path:
    cfg = yaml.safe_load(config(tmp, root, external=False).read_text())
    cfg.update(results=str(tmp / name), cache=str(tmp / "cache"), models=MODELS,
               offline={"methods": offline}, online={"methods": online, "budget": 50},
               curriculum={"tests": []}, acpbench={"types": []}, formalize={"methods": []})
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _snakemake(cfg: Path) -> subprocess.Popen:
    results = yaml.safe_load(cfg.read_text())["results"]
    return subprocess.Popen(
        [str(BIN / "snakemake"), f"{results}/episodes.parquet", "--cores", "2", "--nolock",
         "--configfile", str(cfg)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _rows(tmp: Path, name: str):
    import polars as pl

    return pl.read_parquet(tmp / name / "episodes.parquet").sort(KEY)


def _misses(rows) -> int:
    return int((rows["n_calls"] - rows["cache_hits"]).sum())


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shared")
    root = make_suite(tmp, {"p01": "solvable", "p02": "solvable", "p09": "unsolvable"})
    # both run offline `direct` (the calls they share); each has a method of its own
    a = _config(tmp, root, "a", ["direct", "cot"], [])
    b = _config(tmp, root, "b", ["direct"], ["react"])
    start = time.monotonic()
    procs = [_snakemake(a), _snakemake(b)]
    outs = [p.communicate(timeout=1800)[0] for p in procs]
    wall = time.monotonic() - start
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out[-3000:]
    return tmp, root, wall


def _entries(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()]


def _whole(cache: Path) -> None:
    entries = _entries(cache)
    assert not [p for p in entries if p.name.startswith(".tmp-")]  # no half-written entry left
    for p in entries:
        json.loads(p.read_text())  # every entry whole


def test_two_runs_at_once_leave_no_corrupt_and_no_lost_entry(shared):
    import shutil

    tmp, _, wall = shared
    cache = tmp / "cache"
    _whole(cache)
    a, b = _rows(tmp, "a"), _rows(tmp, "b")
    # the key holds the task's folder (results/suite/...): runs with results folders of
    # their own share no entry, so each wrote every one of its calls
    assert _misses(a) + _misses(b) == len(_entries(cache))
    print(f"two runs at once: {wall:.1f} s wall, {len(_entries(cache))} entries")
    cols = [c for c in a.columns if c not in ("latency_s", "cache_hits")]
    # nothing lost: each run's episodes again (its shards deleted), wholly from the cache
    for name in ("a", "b"):
        shutil.rmtree(tmp / name / "episodes")
        (tmp / name / "episodes.parquet").unlink()
    procs = [_snakemake(tmp / "a.yaml"), _snakemake(tmp / "b.yaml")]
    for p in procs:
        out = p.communicate(timeout=1800)[0]
        assert p.returncode == 0, out[-3000:]
    for name, first in (("a", a), ("b", b)):
        rows = _rows(tmp, name)
        assert _misses(rows) == 0 and int(rows["cache_hits"].sum()) == int(rows["n_calls"].sum())
        assert rows.select(cols).equals(first.select(cols))
    assert len(_entries(cache)) == _misses(a) + _misses(b)


def _shard(tmp: Path, cache: Path, out: str) -> subprocess.Popen:
    spec = {"models": [MODELS[0]], "online": {"methods": ["react"], "budget": 50,
                                               "params": {"react": {}}}, "cache": str(cache)}
    return subprocess.Popen(
        [str(BIN / "planaudit"), "online", "shard", "--spec", json.dumps(spec), "--model", "oracle",
         "--method", "react", "--domain", "blocksworld", "--suite", str(tmp / "a" / "suite"),
         "--out", str(tmp / out / "{domain}.parquet"), "--transcripts", str(tmp / out / "tr" / "{domain}")],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_concurrent_duplicate_call_is_paid_twice_and_stays_whole(shared):
    """Two jobs asking the same calls at once (one suite folder, one cache): a key both miss
    is asked twice, each writes a whole entry, the last rename stays; measured, not bounded."""
    import polars as pl

    tmp, _, _ = shared
    cache = tmp / "cache-dup"
    procs = [_shard(tmp, cache, "dup1"), _shard(tmp, cache, "dup2")]
    for p in procs:
        out = p.communicate(timeout=600)[0]
        assert p.returncode == 0, out[-3000:]
    _whole(cache)
    one, two = (pl.read_parquet(tmp / d / "blocksworld.parquet").sort("task") for d in ("dup1", "dup2"))
    calls = int(one["n_calls"].sum())
    duplicates = _misses(one) + _misses(two) - len(_entries(cache))
    assert len(_entries(cache)) == calls and 0 <= duplicates <= calls
    print(f"concurrent duplicates: {duplicates} of {calls} calls asked twice "
          f"(tokens per call {int((one['input_tokens'] + one['output_tokens']).sum()) / calls:.0f})")
    cols = [c for c in one.columns if c not in ("latency_s", "cache_hits")]
    assert one.select(cols).equals(two.select(cols))
    third = _shard(tmp, cache, "dup3")
    assert third.wait(timeout=600) == 0
    rows = pl.read_parquet(tmp / "dup3" / "blocksworld.parquet")
    assert _misses(rows) == 0 and len(_entries(cache)) == calls


def _read_only(path: Path):
    """A folder nothing may write to, root included: a read-only tmpfs (root), or mode 555."""
    path.mkdir()
    if os.geteuid() != 0:
        path.chmod(0o555)
        return lambda: path.chmod(0o755)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(path)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"root cannot mount a read-only tmpfs here: {proc.stderr.strip()}")
    return lambda: subprocess.run(["umount", str(path)], check=True)


def test_a_read_only_cache_is_named_before_any_request(shared, tmp_path):
    tmp, _, _ = shared
    ro = tmp_path / "ro-cache"
    undo = _read_only(ro)
    try:
        with pytest.raises(CacheUnwritable, match=f"cache {ro}: cannot write a reply there"):
            Cache(ro).require_writable()
        spec = {"models": [MODELS[0]], "offline": {"methods": ["direct"], "params": {"direct": {}}},
                "cache": str(ro)}
        out = tmp_path / "out" / "{domain}.parquet"
        shard = subprocess.run(
            [str(BIN / "planaudit"), "offline", "shard", "--spec", json.dumps(spec), "--model", "oracle",
             "--method", "direct", "--domain", "blocksworld", "--suite", str(tmp / "a" / "suite"),
             "--out", str(out), "--transcripts", str(tmp_path / "tr" / "{domain}")],
            env=_env(), capture_output=True, text=True, timeout=300)
        assert shard.returncode == 2, shard.stderr
        assert f"planaudit: cache {ro}: cannot write a reply there" in shard.stderr
        assert "no request was sent" in shard.stderr
        assert not (tmp_path / "out").exists() and not (tmp_path / "tr").exists()
        cfg = tmp_path / "ro.yaml"
        cfg.write_text(yaml.safe_dump({"cache": str(ro), "models": [MODELS[0]]}))
        check = subprocess.run([str(BIN / "planaudit"), "check", "--config", str(cfg)],
                               cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
        assert check.returncode == 2
        assert f"cache {ro}: cannot write a reply there" in check.stderr
    finally:
        undo()
