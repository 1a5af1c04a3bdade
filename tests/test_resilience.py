"""Resilience: a pipeline killed with SIGKILL at several points and rerun ends with the
rows of an uninterrupted run, repeats no call the client had finished, and never takes
half a file for a whole one; a shard of >= 1,000 episodes under injected provider
faults ends every episode in a defined outcome, fails exactly the episodes whose fault
schedule exhausts the retries and caches no failure; its wall time beside the retry
budget is printed, not asserted (a loaded machine may take any time).

The model is a real litellm model (`openai/...`) at the scripted local server
(tests/fake_openai.py, `Responder`): its reply is a function of the prompt, so an
interrupted and an uninterrupted run get the same replies. `benchmarks/resilience.py`
repeats both and prints the figures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl
import psutil
import pytest
import yaml

from tests.conftest import DOMAINS, ROOT
from tests.fake_openai import (
    FAULTS,
    fault_plan,
    serve_in_subprocess,
    set_phase,
    wait_until_logged,
)

BIN = Path(sys.executable).parent
# Columns that measure the run rather than the episode: `latency_s` is the wall time of
# the calls (a cached call counts 0 s), `cache_hits` counts the calls the cache answered,
# which depends on where a kill landed (a rerun answers the finished calls from disk),
# `repair_seconds` is LPG's wall time on a plan.
# Every other column (outcome, plan, tokens, cost, config hash) must be equal.
TIMING = ("latency_s", "cache_hits", "repair_seconds")
REF = re.compile(r"\bref ([0-9a-f]{16})\b")


# -- the reduced default pipeline --------------------------------------------------------

def reduced_suite(tmp: Path) -> Path:
    """Two built-in domains, three tasks each (two solvable, one unsolvable)."""
    root = tmp / "domains"
    for domain in ("blocksworld", "gripper"):
        (root / domain / "problems").mkdir(parents=True)
        for name in ("domain.pddl", "nl.yaml"):
            shutil.copy(DOMAINS / domain / name, root / domain / name)
        listing = yaml.safe_load((DOMAINS / domain / "tasks.yaml").read_text())
        keep = [t for t in listing["tasks"] if t["id"] in ("p01", "p02", "p09")]
        for t in keep:
            shutil.copy(DOMAINS / domain / t["problem"], root / domain / t["problem"])
        (root / domain / "tasks.yaml").write_text(yaml.safe_dump({**listing, "tasks": keep}))
    return root


def model_entry(api_base: str, **over) -> dict:
    return {"name": "fake", "model": "openai/fake-model", "family": "test", "tier": "test",
            "api_base": api_base, "api_key_env": "none", "max_concurrency": 2,
            "timeout": 30, "max_retries": 2, "backoff_base": 0.05, "backoff_cap": 0.2,
            # the fake server drops a timed-out request, as a provider does: retried
            "retry_timeouts": True, **over}


def pipeline_config(tmp: Path, suite_root: Path, api_base: str) -> Path:
    """The default pipeline (every stage of `all`), reduced: one real model at the fake
    server, two offline strategies (one of two calls), one online architecture, one
    curriculum test case, one ACPBench question per domain."""
    cfg = {
        "results": str(tmp / "results"),
        "cache": str(tmp / "cache"),
        "suite": {"source": "builtin", "root": str(suite_root),
                  "domains": ["blocksworld", "gripper"], "obfuscate": ["blocksworld"],
                  "seed": 3},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": False},
        "models": [model_entry(api_base)],
        # two strategies whose prompts differ (self-refine's first call is direct's, one
        # cache entry that two concurrent jobs may both send: the count would be a race)
        "offline": {"methods": ["direct", "cot"], "max_tokens": 512, "witness": "none"},
        "online": {"methods": ["react"], "max_tokens": 512, "budget": 4},
        "curriculum": {"tests": ["t1"], "instances": 1},
        "acpbench": {"types": ["app"], "forms": ["bool"], "tasks": 1, "states": 1},
        "analysis": {"seed": 0, "bootstrap": 200, "alpha": 0.05},
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def start_snakemake(cfg: Path, log: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    with log.open("a") as fh:
        return subprocess.Popen(
            [str(BIN / "snakemake"), *extra, "--cores", "2", "--nolock",
             "--configfile", str(cfg)], cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: the kill takes every child


def kill_tree(proc: subprocess.Popen) -> float:
    """SIGKILL Snakemake, its process group and every descendant (a job in a group of its
    own included); returns when none is left. The time of the kill."""
    try:
        procs = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        procs = []
    t = time.time()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    proc.wait()
    psutil.wait_procs(procs, timeout=30)
    return t


def wait_for(proc: subprocess.Popen, condition, timeout: float = 600) -> bool:
    """Poll until `condition()`; False when the run ended (or timed out) first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def kill_points(results: Path) -> list[tuple[str, object]]:
    """Where to kill, in the order a run reaches them: each a condition on what the run
    (started at `since`) has written."""
    def new(pattern: str, since: float) -> list[Path]:
        out = []
        for p in results.glob(pattern):
            try:
                if p.stat().st_mtime > since:
                    out.append(p)
            except FileNotFoundError:
                pass
        return out

    def exists(pattern: str):
        return lambda since: bool(new(pattern, since))

    def mid_shard(regime: str):
        """Two episodes of this run done in shards whose rows this run has not written:
        a job is mid-way (a count of every shard's files would miss a job that starts after
        another of the regime has finished, as a second plan setting's does)."""
        def cond(since):
            open_done = 0
            for t in new(f"transcripts/{regime}/**/*.jsonl", since):
                rel = t.parent.relative_to(results / "transcripts")
                rows = results / "episodes" / rel.with_suffix(".parquet")
                try:
                    written = rows.stat().st_mtime > since
                except FileNotFoundError:
                    written = False
                open_done += not written
            return open_done >= 2
        return cond

    return [("suite", exists("suite/*/*/brief.json")),
            ("mid-shard (offline)", mid_shard("offline")),
            ("mid-shard (online)", mid_shard("online")),
            ("collect", exists("logs/analysis/collect.log")),
            ("figures", exists("logs/analysis/figures.log"))]


# -- what the disk holds after a kill ----------------------------------------------------

def check_no_half_file(results: Path, cache: Path) -> dict:
    """Every file a stage or a rerun would take as complete is whole: each Parquet reads,
    each cache entry and truth record parses, each transcript ends with its row."""
    counts = Counter()
    for p in results.rglob("*.parquet"):
        if not p.name.startswith("."):
            pl.read_parquet(p)
            counts["parquet"] += 1
    for p in results.rglob("*.json"):
        if not p.name.startswith("."):
            json.loads(p.read_text())
            counts["json"] += 1
    for p in results.rglob("*.jsonl"):
        if not p.name.startswith("."):
            lines = [json.loads(line) for line in p.read_text().splitlines()]
            assert lines and "row" in lines[-1], f"{p}: a transcript without its row"
            counts["transcripts"] += 1
    for p in cache.rglob("*.json"):
        if not p.name.startswith("."):
            assert json.loads(p.read_text())["error"] is None, p
            counts["cache"] += 1
    counts["temporaries"] = sum(1 for p in [*results.rglob(".*"), *cache.rglob(".*")]
                                if p.is_file())
    return dict(counts)


def refs_in(paths) -> set[str]:
    return {m for p in paths for m in REF.findall(p.read_text())}


def cached_refs(cache: Path) -> Counter:
    """How many cache entries hold each reply (several cache keys may share one prompt,
    e.g. an online agent's first turn, the same on every task of a domain)."""
    return Counter(m for p in cache.rglob("*.json") if not p.name.startswith(".")
                   for m in set(REF.findall(p.read_text())))


def server_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def compare(done: pl.DataFrame, reference: pl.DataFrame) -> None:
    order = ["regime", "model", "method", "domain", "task"]
    a = done.drop(TIMING).sort(order)
    b = reference.drop(TIMING).sort(order)
    assert a.columns == b.columns
    assert a.height == b.height, (a.height, b.height)
    if not a.equals(b):
        for ra, rb in zip(a.iter_rows(named=True), b.iter_rows(named=True), strict=True):
            diff = {k: (ra[k], rb[k]) for k in ra if ra[k] != rb[k]}
            assert not diff, diff


def kill_and_rerun(tmp: Path, api_base: str, server_log_path: Path,
                   points: list[str] | None = None) -> dict:
    """An uninterrupted run, then a run killed at each point and rerun to the end; the
    checks of the module docstring. Returns the figures."""
    suite_root = reduced_suite(tmp)
    figures: dict = {"kills": [], "timing_columns": list(TIMING)}
    started = time.monotonic()

    # the uninterrupted run: the rows to reach, and the requests a run sends
    base = tmp / "whole"
    base.mkdir()
    cfg = pipeline_config(base, suite_root, api_base)
    set_phase(api_base, "whole")
    proc = start_snakemake(cfg, base / "snakemake.log")
    assert proc.wait(timeout=900) == 0, (base / "snakemake.log").read_text()[-3000:]
    figures["uninterrupted_s"] = round(time.monotonic() - started, 1)
    reference = pl.read_parquet(base / "results" / "episodes.parquet")
    whole = Counter(r["key"] for r in server_log(server_log_path) if r["phase"] == "whole")

    # the interrupted run: killed at each point, rerun with --rerun-incomplete
    run = tmp / "killed"
    run.mkdir()
    cfg = pipeline_config(run, suite_root, api_base)
    results, cache = run / "results", run / "cache"
    cached_at: list[Counter] = []  # per kill: cache entries per reply
    chosen = [p for p in kill_points(results) if points is None or p[0] in points]
    whole_shards = {p.relative_to(base / "results") for p in
                    (base / "results" / "episodes").rglob("*.parquet")}
    for where, condition in chosen:
        regime = where.partition("(")[2].rstrip(")")
        if regime and all((results / p).exists() for p in whole_shards
                          if p.parts[1] == regime):
            # every shard of the regime was written before this point's run (a fast machine
            # ends the online jobs while the offline kill waits): it cannot land, and a run
            # started for it would run to the end, leaving no later point to kill at
            figures["kills"].append({"at": where, "landed": "its jobs had finished"})
            continue
        phase = f"killed-{len(cached_at)}"  # the loss count below numbers the runs so
        set_phase(api_base, phase)
        since = time.time()
        proc = start_snakemake(cfg, run / "snakemake.log", "--rerun-incomplete")
        if not wait_for(proc, lambda c=condition, s=since: c(s)):
            assert proc.wait() == 0, (run / "snakemake.log").read_text()[-3000:]
            figures["kills"].append({"at": where, "landed": "run had ended"})
            cached_at.append(cached_refs(cache))  # what that run left, for the counts below
            break
        t_kill = kill_tree(proc)
        time.sleep(0.5)  # let the server finish writing what was in flight
        state = check_no_half_file(results, cache)
        cached = cached_refs(cache)
        transcribed = refs_in(p for p in results.rglob("*.jsonl") if not p.name.startswith("."))
        assert transcribed <= set(cached)  # a finished episode's calls are all in the cache
        cached_at.append(cached)
        sent = [r for r in server_log(server_log_path) if r["phase"] == phase]
        figures["kills"].append({
            "at": where, "files": state, "requests": len(sent),
            "delivered": sum(r["delivered"] for r in sent),
            "delivered_after_kill": sum(r["delivered"] and r["t_sent"] > t_kill for r in sent)})
    set_phase(api_base, "final")
    proc = start_snakemake(cfg, run / "snakemake.log", "--rerun-incomplete")
    assert proc.wait(timeout=900) == 0, (run / "snakemake.log").read_text()[-3000:]
    check_no_half_file(results, cache)
    compare(pl.read_parquet(results / "episodes.parquet"), reference)

    # Repeats. A prompt the uninterrupted run sent w times stands for w cache entries (one
    # per call: the cache key adds the task and purpose, which the server does not see).
    # Within one run of the workflow a call is sent at most once and never once cached,
    # so a run started with c of those w entries cached may send the prompt at most
    # w - c times: every request beyond is a loss (a call the client had finished, sent
    # again). Exact for the prompts of one call (w = 1, nearly all); for shared prompts a
    # lower bound, exact again in the last run, which must send exactly w - c. Requests
    # of a killed run that did not become cache entries were in flight at the kill:
    # delivered by the server but not yet written to the cache (the window the issue
    # allows), or never delivered (killed before the server answered: no reply, no cost).
    log = [r for r in server_log(server_log_path) if r["phase"] != "whole"]
    final = cached_refs(cache)
    assert final == whole, "the finished run must hold one cache entry per call"
    lost = in_flight = undelivered = 0
    before: Counter = Counter()
    for n, after in enumerate([*cached_at, final]):
        tag = f"killed-{n}" if n < len(cached_at) else "final"
        asked = Counter(r["key"] for r in log if r["phase"] == tag)
        delivered = Counter(r["key"] for r in log if r["phase"] == tag and r["delivered"])
        for k, r in asked.items():
            lost += max(0, r - (whole[k] - before[k]))
            undelivered += r - delivered[k]
            in_flight += max(0, delivered[k] - (after[k] - before[k]))
        if tag == "final":  # the last run sends exactly what was still uncached
            assert asked == Counter({k: whole[k] - before[k] for k in whole
                                     if whole[k] > before[k]}), "the last run sent a repeat"
        before = after
    figures.update(
        episodes=reference.height, requests_uninterrupted=sum(whole.values()),
        requests_interrupted=len(log), repeated_in_flight=in_flight,
        repeated_lost=lost, repeated_undelivered=undelivered,
        episodes_lost=reference.height - pl.read_parquet(results / "episodes.parquet").height,
        shared_prompts=sum(c > 1 for c in whole.values()),
        wall_s=round(time.monotonic() - started, 1))
    assert not lost, "calls finished before a kill were sent again"
    # a repeat of an undelivered request (killed before the reply was written) costs
    # nothing; a repeat of a delivered one is allowed only inside the in-flight window
    return figures


@pytest.fixture
def server(tmp_path):
    log = tmp_path / "server.jsonl"
    proc, api_base = serve_in_subprocess([], responder={"latency": 0.15}, log=str(log))
    yield api_base, log
    proc.terminate()
    proc.wait()


def test_kill_9_at_several_points_then_rerun_loses_nothing(tmp_path, server):
    api_base, log = server
    figures = kill_and_rerun(tmp_path, api_base, log)
    print(json.dumps(figures, indent=1))
    landed = [k for k in figures["kills"] if "landed" not in k]
    assert len(landed) >= 3, figures["kills"]
    assert figures["repeated_lost"] == 0 and figures["episodes_lost"] == 0


def test_a_write_killed_midway_leaves_the_old_file_or_none(tmp_path):
    """SIGKILL a process rewriting a large Parquet file, a transcript and a cache entry in a
    loop, at random moments: the file under the real name always reads whole."""
    script = tmp_path / "writer.py"
    script.write_text(f"""
import sys
sys.path.insert(0, {str(ROOT / 'src')!r})
import polars as pl
from planaudit import atomic
from planaudit.llm.cache import Cache
out = sys.argv[1]
frame = pl.DataFrame({{"x": list(range(300_000)), "y": ["row"] * 300_000}})
cache = Cache(out + "/cache")
print("ready", flush=True)
n = 0
while True:
    n += 1
    atomic.write_parquet(frame, out + "/shard.parquet")
    atomic.write_text(out + "/t.jsonl", ('{{"step": 1}}\\n' * 20000) + '{{"row": {{}}}}\\n')
    cache.put("ab" * 32, {{"content": "x" * 2_000_000, "error": None, "n": n}})
""")
    rng = __import__("random").Random(0)
    kills = 0
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        if (tmp_path / "shard.parquet").exists():
            assert pl.read_parquet(tmp_path / "shard.parquet").height == 300_000
        if (tmp_path / "t.jsonl").exists():
            assert '"row"' in (tmp_path / "t.jsonl").read_text().splitlines()[-1]
        entry = tmp_path / "cache" / "ab" / f"{'ab' * 32}.json"
        if entry.exists():
            assert len(json.loads(entry.read_text())["content"]) == 2_000_000
    assert kills == 6


# -- provider faults at scale ------------------------------------------------------------

RATES = {"429": 0.04, "429-retry-after": 0.04, "500": 0.04, "502": 0.03, "503": 0.03,
         "timeout": 0.02, "reset": 0.04, "truncated": 0.04, "invalid-json": 0.04,
         "empty-choices": 0.04}  # 36% of attempts fault
assert set(RATES) == set(FAULTS)


def many_tasks(results: Path, n: int) -> Path:
    """`n` prepared tasks (copies of the reduced suite's, each brief marked with an
    instance id so that every episode's prompt differs), as the shard reads them."""
    src = results / "suite"
    suite = results / f"many-{n}"
    folders = sorted(p.parent for p in src.glob("*/*/truth.json"))
    for i in range(n):
        f = folders[i % len(folders)]
        dst = suite / f.parent.name / f"{f.name}-c{i:04d}"
        shutil.copytree(f, dst)
        brief = json.loads((dst / "brief.json").read_text())
        brief["instance"] += f" [instance-id c{i:04d}]"
        (dst / "brief.json").write_text(json.dumps(brief))
    return suite


def prepared_suite(tmp: Path) -> Path:
    """The reduced suite, prepared by the suite rules."""
    suite_root = reduced_suite(tmp)
    cfg = pipeline_config(tmp, suite_root, "http://127.0.0.1:9/v1")
    proc = start_snakemake(cfg, tmp / "snakemake.log", "suite")
    assert proc.wait(timeout=600) == 0, (tmp / "snakemake.log").read_text()[-3000:]
    return tmp / "results"


OUTCOMES = {"success", "detected", "goal-not-reached", "inapplicable-action", "malformed",
            "false-abstention", "missed-unsolvable", "budget-exhausted", "error"}


def fault_run(tmp: Path, regime: str = "offline", method: str = "direct", episodes: int = 1000,
              max_retries: int = 3, concurrency: int = 64, timeout: float = 5.0, seed: int = 0,
              broken_tool_args: float = 0.0, results: Path | None = None) -> dict:
    """One shard (offline direct: one call an episode; online react: a few) on `episodes`
    tasks against the faulty server. Checks every claim of the module docstring;
    returns the figures."""
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard

    results = results or prepared_suite(tmp)
    suite = many_tasks(results, episodes)
    log = tmp / f"faults-{regime}.jsonl"
    limit = max_retries + 1
    proc, api_base = serve_in_subprocess(
        [], responder={"faults": RATES, "seed": seed, "limit": limit,
                       "timeout_delay": timeout + 1.0, "broken_tool_args": broken_tool_args},
        log=str(log))
    cache = tmp / f"cache-{regime}"
    try:
        entry = model_entry(api_base, max_concurrency=concurrency, timeout=timeout,
                            max_retries=max_retries, backoff_base=0.02, backoff_cap=0.1)
        section = {"methods": [method], "max_tokens": 512, "params": {method: {}}}
        section.update({"witness": "none"} if regime == "offline" else {"budget": 4})
        config = {"models": [entry], "cache": str(cache), regime: section}
        out = tmp / "shards" / regime / "{domain}.parquet"
        start = time.monotonic()
        exp = Experiment.from_dict(config)
        frames = run_shard(exp, exp.model("fake"), exp.method(regime, method),
                           ["blocksworld", "gripper"], suite, out,
                           tmp / "transcripts" / regime / "{domain}", progress_every=600)
        wall = time.monotonic() - start
        # a time-out fault still asleep logs its request when it wakes (timeout + 1 s)
        wait_until_logged(api_base, timeout + 6.0)
    finally:
        proc.terminate()
        proc.wait()
    rows = pl.concat(list(frames.values()), how="diagonal_relaxed")
    served = server_log(log)
    assert rows.height == episodes
    assert set(rows["outcome"]) <= OUTCOMES  # every episode ends in a defined outcome

    # Offline: attempts the server never logged, a request the loaded server did not
    # read before the client's time-out (a real time-out, not one of the schedule; seen
    # with a 1 s time-out on a loaded machine, none at 5 s). Counted per episode from its
    # transcript, reported, and allowed for below.
    by_instance: dict[str, set[str]] = {}
    for r in served:
        by_instance.setdefault(r["instance"], set()).add(r["key"])
    logged = Counter(r["instance"] for r in served)
    unscheduled: Counter = Counter()
    exact = regime == "offline"
    for p in (tmp / "transcripts" / regime).rglob("*.jsonl") if exact else ():
        steps = [json.loads(line) for line in p.read_text().splitlines()]
        attempts = sum(s["call"]["attempts"] for s in steps if "call" in s)
        inst = p.stem.rsplit("-", 1)[1]
        unscheduled[inst] = attempts - logged[inst]
        assert unscheduled[inst] >= 0, (inst, attempts, logged[inst])

    # which must fail: the episodes one of whose prompts has a schedule that exhausts the
    # retries (an episode ends at its first failed call)
    plans = {k: fault_plan(k, RATES, seed, limit) for keys in by_instance.values() for k in keys}
    must_fail = {inst for inst, keys in by_instance.items()
                 if any(len(plans[k]) + unscheduled[inst] > max_retries for k in keys)}
    failed = {t.rsplit("-", 1)[1] for t in rows.filter(pl.col("outcome") == "error")["task"]}
    # Offline (one call an episode, its prompt naming the episode): exact. Online, an
    # agent's first turns do not name the task (it reads it with a tool), so one prompt
    # serves every episode of a domain and its schedule counts their attempts together:
    # there only the defined outcomes and the cache are checked.
    if exact:
        assert failed == must_fail, (sorted(failed - must_fail)[:5], sorted(must_fail - failed)[:5])

    # each prompt was sent exactly as often as its schedule says: no retry too many,
    # none too few, and no failure answered from the cache
    sent = Counter(r["key"] for r in served)
    for inst, keys in by_instance.items():
        for key in keys if exact else ():
            expected = min(len(plans[key]) + 1, max_retries + 1)
            if unscheduled[inst]:
                assert expected - unscheduled[inst] <= sent[key] <= expected, (inst, key)
            else:
                assert sent[key] == expected, (key, plans[key], sent[key])
    injected = Counter(r["fault"] for r in served if r["fault"])
    broken = sum(bool(r.get("broken_tool_args")) for r in served)

    # the cache holds exactly the answered calls, each an answer (its ref), no failure
    entries = [json.loads(p.read_text()) for p in cache.rglob("*.json")]
    assert all(e["error"] is None and REF.search(e["content"] or "") for e in entries)
    cached = Counter(REF.search(e["content"]).group(1) for e in entries)
    answered = {r["key"] for r in served if r["fault"] is None}  # a reply was sent
    assert set(cached) <= answered  # no cache entry but from an answer
    if exact:  # every answered call is cached once, bar a reply sent after a time-out
        assert max(cached.values(), default=1) == 1
        assert len(answered) - sum(unscheduled.values()) <= len(entries) <= len(answered)
    if exact and not sum(unscheduled.values()):
        assert len(entries) == sum(len(plan) <= max_retries for plan in plans.values())

    # the retry budget: each attempt's time-out (for a time-out) or a request's worth
    # (0.1 s), plus each backoff (at most backoff_cap = 0.1 s), spread over the pool
    per_call = [sum(timeout if k == "timeout" else 0.1 for k in plan[:max_retries + 1])
                + 0.1 * min(len(plan), max_retries) + 0.1 for plan in plans.values()]
    calls_per_episode = len(plans) / episodes
    budget = sum(per_call) / concurrency + max(per_call) * calls_per_episode
    # wall time against the retry budget is a figure, printed (here and by
    # benchmarks/resilience.py), not asserted: a loaded machine may take any time
    return {"regime": f"{regime}/{method}", "episodes": rows.height, "requests": len(served),
            "faults": dict(sorted(injected.items())), "faults_total": sum(injected.values()),
            "broken_tool_args": broken,
            "unscheduled_failures": sum(unscheduled.values()) if exact else None,
            "errors": len(failed), "must_fail": len(must_fail) if exact else None,
            "cache_entries": len(entries), "outcomes": dict(Counter(rows["outcome"])),
            "wall_s": round(wall, 1), "budget_s": round(budget, 1)}


def test_provider_faults_at_scale(tmp_path):
    results = prepared_suite(tmp_path)
    offline = fault_run(tmp_path, results=results)
    online = fault_run(tmp_path, "online", "react", episodes=150, broken_tool_args=0.3,
                       results=results)
    print(json.dumps([offline, online], indent=1))
    assert offline["episodes"] >= 1000
    assert set(offline["faults"]) == set(FAULTS)  # every kind was injected
    assert online["broken_tool_args"] > 0
