"""The cost curve: time and peak memory of each analysis stage from 10^3 to 10^6 rows.

For each size, synthetic episode rows with the real row schema are written as the
workflow lays its shards out (results/episodes/<regime>/<model>/<method>/<domain>.parquet,
online: .../<architecture>/<plan setting>/<domain>.parquet, ACPBench:
acpbench/<model>/<type>.parquet), drawn with a seeded RNG: outcomes from a per-model x
method skill, tokens and latency log-normal, costs at a per-model price (null for the
reference models), online behaviour (phases, compliance, graph counts) per plan setting.
The matrix grows the way a user grows it: more models, more tasks, more repeats
(`online.epochs`), over 7 offline strategies and 5 online architectures x 7 plan settings,
beside the curriculum's 10 test cases and ACPBench's 8 types x 3 forms.

Each stage runs as the workflow runs it: the `planaudit` command in a subprocess with the
flags of workflow/rules/analysis.smk and report.smk, under /usr/bin/time -v when present
(wall, user + system CPU, maximum resident set); otherwise from getrusage of the children.
The growth exponent of each stage is the least-squares slope of log(seconds) against
log(rows) (and of log(peak MB)) over the sizes from the second one up: the smallest size
is start-up (importing polars and matplotlib, about a second), and fitting over it would
flatter every stage. The reply cache is measured through the real `Cache` class: puts and
gets of N entries in one cache folder (which fans out into 256 subfolders by key).
`--dag` times `snakemake -n` for 100 models x 12 methods x 7 plan settings.
`--reference-run K` runs the workflow for real on the default config with each of its
reference models K times (seeds 0..K-1: K times the default matrix's rows), then measures
each analysis stage again on its rows, as a real point beside the synthetic ones.

    .venv/bin/python benchmarks/scale.py                      # 1e3,1e4,1e5,1e6; a table
    .venv/bin/python benchmarks/scale.py --quick --json       # 1e3,1e4: a quick check
    .venv/bin/python benchmarks/scale.py --sizes 1e3,1e5 --stages collect,tables
    .venv/bin/python benchmarks/scale.py --episodes results/episodes.parquet  # a real run as a point
    .venv/bin/python benchmarks/scale.py --dag --stages none
    .venv/bin/python benchmarks/scale.py --reference-run 10 --stages none --work /tmp/scale
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import record

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PLANAUDIT = str(BIN / "planaudit")
SCHEMA = ROOT / "workflow" / "schemas" / "row.schema.yaml"
STAGES = ("collect", "tables", "figures", "report", "cache")

DOMAINS = ("blocksworld", "gripper", "logistics", "loadbalancing", "hospital")
OFFLINE = ("direct", "cot", "plan-and-solve", "step-back", "self-refine", "modulo", "tot")
ONLINE = ("react", "reflexion", "critic", "gated", "plan-execute")
SETTINGS = {"none": [], "standard": ["read", "sense", "plan", "act", "verify"],
            "no-sense": ["read", "plan", "act", "verify"],
            "no-verify": ["read", "sense", "plan", "act"],
            "summary": ["read", "sense", "plan", "act", "verify", "summary"],
            "reordered": ["read", "plan", "sense", "act", "verify"],
            "reminded": ["read", "sense", "plan", "act", "verify"]}
TESTS = ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8_1", "t8_2", "t8_3")
TYPES = ("app", "val", "prog", "reach", "areach", "just", "land", "nexta")
FORMS = ("bool", "mcq", "gen")
FAILURES = ("goal-not-reached", "inapplicable-action", "malformed", "budget-exhausted")
KIND = {"goal-not-reached": "goal", "inapplicable-action": "precondition",
        "malformed": "unknown-object", "budget-exhausted": "budget"}


# -- the matrix -------------------------------------------------------------------------

def rows_of(models: int, tasks: int, epochs: int) -> int:
    """Rows of the synthetic matrix: tasks per domain x 5 domains, every model running
    every offline strategy once and every architecture x setting `epochs` times, plus the
    curriculum (10 test cases on 2 tasks a domain) and ACPBench (8 types x 3 forms on 2
    tasks a domain)."""
    per_model = 5 * tasks * (len(OFFLINE) + len(ONLINE) * len(SETTINGS) * epochs)
    return models * (per_model + 5 * 2 * len(TESTS) + 5 * 2 * len(TYPES) * len(FORMS))


def matrix(n: int) -> tuple[int, int, int]:
    """(models, tasks per domain, epochs) for about n rows: the fixed ladder of the
    default sizes (10^6 = 100 models x 25 tasks a domain x 2 epochs), else models grown
    on 20 tasks a domain, then epochs past 100 models."""
    ladder = {1_000: (1, 4, 1), 10_000: (4, 10, 1), 100_000: (20, 20, 1),
              1_000_000: (100, 25, 2)}
    if n in ladder:
        return ladder[n]
    epochs = 1
    while True:
        models = max(1, round(n / rows_of(1, 20, epochs)))
        if models <= 100:
            return models, 20, epochs
        epochs += 1


def _models(m: int) -> list[dict]:
    """The models: the first the oracle (a reference, scoring 100%), the second flawed (a
    reference), the rest LLMs at a per-model price."""
    out = []
    for i in range(m):
        if i == 0:
            out.append({"name": "oracle", "tier": "reference", "reference": True, "price": None})
        elif i == 1:
            out.append({"name": "flawed", "tier": "reference", "reference": True, "price": None})
        else:
            out.append({"name": f"llm-{i:03d}", "tier": ("small", "medium", "large")[i % 3],
                        "reference": False, "price": float(10 ** (-7 + (i % 4) * 0.5))})
    return out


def _common(rng: np.random.Generator, n: int, models: list[dict], mi: np.ndarray,
            skill: np.ndarray, solvable: np.ndarray, oracle: np.ndarray) -> dict:
    """Columns every regime's rows carry, with outcomes drawn from `skill` (per row)."""
    u = rng.random(n)
    success = solvable & ((u < skill) | oracle)
    detected = ~solvable & ((u < skill * 0.8) | oracle)
    fail = np.array(FAILURES)[rng.integers(0, len(FAILURES), n)]
    outcome = np.where(success, "success", np.where(detected, "detected", fail))
    outcome = np.where(~solvable & ~detected, np.where(u > 0.95, "false-abstention",
                                                       "missed-unsolvable"), outcome)
    outcome = np.where(solvable & ~success & (u > 0.97), "false-abstention", outcome)
    err = (rng.random(n) < 0.002) & ~oracle
    outcome = np.where(err, "error", outcome)
    success &= ~err
    detected &= ~err
    failed = ~(success | detected) & ~err
    inp = np.exp(rng.normal(7.5, 0.8, n)).astype(np.int64)
    out = np.exp(rng.normal(5.5, 1.0, n)).astype(np.int64)
    price = np.array([m["price"] if m["price"] is not None else np.nan for m in models])[mi]
    cost = (inp + 4 * out) * price
    ref = np.array([m["reference"] for m in models])[mi]
    step = rng.integers(1, 12, n)
    optimal = rng.integers(2, 30, n)
    plan_len = optimal + rng.integers(0, 5, n)
    kinds = pl.Series(outcome).replace_strict(KIND, default=None, return_dtype=pl.String)
    return {
        "model": np.array([m["name"] for m in models])[mi],
        "model_tier": np.array([m["tier"] for m in models])[mi],
        "reference": ref, "solvable": solvable,
        "optimal_length": pl.Series(optimal).set(pl.Series(~solvable), None),
        "outcome": outcome, "success": success,
        "executable": pl.Series(success | (outcome == "goal-not-reached")).set(
            pl.Series(np.isin(outcome, ["detected", "false-abstention", "error"])), None),
        "detected": detected,
        "plan_length": pl.Series(plan_len).set(pl.Series(~success), None),
        "efficiency": pl.Series(optimal / plan_len).set(pl.Series(~success), None),
        "first_failure_step": pl.Series(step).set(pl.Series(~failed), None),
        "first_failure_kind": kinds.set(pl.Series(~failed), None),
        "first_failure_action": pl.Series(
            [f"(stack b{k} b{k + 1})" for k in step % 7], dtype=pl.String).set(
                pl.Series(~failed), None),
        "first_failure_detail": pl.Series(np.full(n, "precondition (clear b2) is false"),
                                          dtype=pl.String).set(pl.Series(~failed), None),
        "error": pl.Series(np.full(n, "timeout after 3 retries"), dtype=pl.String).set(
            pl.Series(~err), None),
        "contract_breach": pl.Series(np.full(n, "no fenced block"), dtype=pl.String).set(
            pl.Series(outcome != "malformed"), None),
        "truncated": rng.random(n) < 0.01,
        "n_calls": rng.integers(1, 8, n), "input_tokens": inp, "output_tokens": out,
        "cost_usd": pl.Series(cost).fill_nan(None),
        "latency_s": np.round(np.exp(rng.normal(1.0, 0.7, n)), 3),
        "cache_hits": rng.integers(0, 2, n),
        "config_hash": np.full(n, "3f2a9c1d"), "code_version": np.full(n, "20c1fa2"),
    }


def _grid(*axes: np.ndarray) -> list[np.ndarray]:
    """Every combination of the axes (the first slowest), each as a flat array."""
    mesh = np.meshgrid(*axes, indexing="ij")
    return [a.ravel() for a in mesh]


def synthesize(n: int, seed: int = 0) -> list[pl.DataFrame]:
    """About n episode rows (see `matrix`) with the row schema's columns, drawn from `seed`:
    a frame per regime, each with that regime's columns only (as its shards have)."""
    rng = np.random.default_rng(seed)
    m, k, epochs = matrix(n)
    models = _models(m)
    oracle_of = np.array([md["name"] == "oracle" for md in models])
    tasks = np.arange(k)
    d = np.arange(len(DOMAINS))
    frames = []

    def skill_of(mi: np.ndarray, meth: np.ndarray, base: float) -> np.ndarray:
        table = np.clip(rng.beta(4, 3, (m, 64)) * base + 0.1, 0, 1)
        return table[mi, meth]

    def domains_tasks(di: np.ndarray, ti: np.ndarray) -> dict:
        unsolvable = (ti % 5) == 4  # two of every ten tasks, as in the built-in suite
        return {"domain": np.array(DOMAINS)[di],
                "task": np.char.add("p", np.char.zfill((ti + 1).astype(str), 2)),
                "solvable": ~unsolvable}

    # offline
    mi, meth, di, ti = _grid(np.arange(m), np.arange(len(OFFLINE)), d, tasks)
    dt = domains_tasks(di, ti)
    off = _common(rng, mi.size, models, mi, skill_of(mi, meth, 0.8), dt["solvable"],
                  oracle_of[mi])
    frames.append(pl.DataFrame({"regime": "offline", **off, "method": np.array(OFFLINE)[meth],
                                "domain": dt["domain"], "task": dt["task"], "disguise": "none"}))
    # online
    setting_names = list(SETTINGS)
    mi, meth, si, ep, di, ti = _grid(np.arange(m), np.arange(len(ONLINE)),
                                     np.arange(len(setting_names)), np.arange(epochs), d, tasks)
    dt = domains_tasks(di, ti)
    size = mi.size
    on = _common(rng, size, models, mi, skill_of(mi, meth + 10, 0.7), dt["solvable"],
                 oracle_of[mi])
    n_ep = rng.integers(1, 10, size)
    n_on = rng.integers(0, 40, size)
    orders = [",".join(SETTINGS[s]) for s in setting_names]
    phase_sets = [SETTINGS[s] or ["read", "sense", "plan", "act"] for s in setting_names]
    lengths = rng.integers(1, 6, size)
    phases = [[f"{p}_{1 + (j * 7 + int(ln)) % 9}" for j, p in enumerate(phase_sets[s][:ln + 1])]
              for s, ln in zip(si.tolist(), lengths.tolist(), strict=True)]
    has_order = si != 0
    metric = rng.beta(5, 2, (4, size))

    def ordered(x: np.ndarray) -> pl.Series:
        return pl.Series(np.round(x, 4)).set(pl.Series(~has_order), None)

    frames.append(pl.DataFrame({
        "regime": "online", **on, "method": np.array(ONLINE)[meth],
        "domain": dt["domain"], "task": dt["task"], "disguise": "none",
        "n_epistemic": n_ep, "n_ontic": n_on,
        "sensing_ratio": np.round(n_ep / (n_ep + n_on), 4), "sensed_before_first_act": n_ep > 2,
        "steps": n_ep + n_on + rng.integers(0, 3, size),
        "states_revisited": rng.integers(0, 5, size),
        "critic_rejections": np.where(meth == 2, rng.integers(0, 4, size), 0),
        "reflections": np.where(meth == 1, rng.integers(0, 3, size), 0),
        "blocked_actions": np.where(meth == 3, rng.integers(0, 3, size), 0),
        "recovered": pl.Series(rng.random(size) < 0.6).set(pl.Series(meth != 3), None),
        "epoch": ep, "plan_setting": np.array(setting_names)[si],
        "plan_order": np.array(orders)[si],
        "phases": pl.Series(phases, dtype=pl.List(pl.String)),
        "ppc": ordered(metric[0]), "poc": ordered(metric[1]), "ppf": ordered(metric[2]),
        "pc": ordered(np.cbrt(metric[0] * metric[1] * metric[2])),
        "strict_compliance": pl.Series(metric[3] > 0.8).set(pl.Series(~has_order), None),
        "nodes": n_ep + n_on, "temporal_edges": n_ep + n_on, "loops": rng.integers(0, 4, size),
        "loops_bounded": np.zeros(size, dtype=bool),
    }))
    # curriculum: 10 test cases on the first 2 tasks of each domain
    mi, meth, di, ti = _grid(np.arange(m), np.arange(len(TESTS)), d, np.arange(2))
    dt = domains_tasks(di, ti)
    cur = _common(rng, mi.size, models, mi, skill_of(mi, meth + 20, 0.6), dt["solvable"],
                  oracle_of[mi])
    wrong = (cur["outcome"] != "success") & (cur["outcome"] != "error")
    cur["outcome"] = np.where(wrong & (rng.random(mi.size) < 0.5), "wrong-answer",
                              cur["outcome"])
    frames.append(pl.DataFrame({
        "regime": "curriculum", **cur, "method": np.array(TESTS)[meth], "domain": dt["domain"],
        "task": dt["task"], "source": "suite",
        "verdict": np.where(cur["success"], "correct", "wrong"),
        "verdict_detail": pl.Series(np.full(mi.size, "a wrong state"), dtype=pl.String).set(
            pl.Series(cur["success"]), None),
        "score_type": pl.Series(cur["success"]).set(pl.Series(meth != 2), None),
        "score_explanation": pl.Series(cur["success"]).set(pl.Series(meth != 2), None),
    }))
    # ACPBench: 8 types x 3 forms on the first 2 tasks of each domain (a state each)
    mi, meth, fi, di, ti = _grid(np.arange(m), np.arange(len(TYPES)), np.arange(len(FORMS)),
                                 d, np.arange(2))
    dt = domains_tasks(di, ti)
    acp = _common(rng, mi.size, models, mi, skill_of(mi, meth + 40, 0.7),
                  np.ones(mi.size, dtype=bool), oracle_of[mi])
    acp["outcome"] = np.where(np.isin(acp["outcome"], ["success", "error", "malformed"]),
                              acp["outcome"], "wrong-answer")
    frames.append(pl.DataFrame({
        "regime": "acpbench", **acp, "method": np.array(TYPES)[meth], "domain": dt["domain"],
        "task": np.char.add(dt["task"], "/s0"), "form": np.array(FORMS)[fi], "source": "suite",
        "verdict": np.where(acp["success"], "correct", "wrong"),
    }))
    return frames


def write_shards(frames: list[pl.DataFrame], root: Path) -> list[Path]:
    """The rows as the episode jobs write them, one Parquet file per shard."""
    paths = []
    for frame in frames:
        regime = frame["regime"][0]
        keys = {"offline": ["model", "method", "domain"],
                "online": ["model", "method", "plan_setting", "domain"],
                "curriculum": ["model", "method", "domain"],
                "acpbench": ["model", "method"]}[regime]
        for key, part in frame.partition_by(keys, as_dict=True).items():
            path = root / "episodes" / regime / Path(*map(str, key))
            path = path.with_name(path.name + ".parquet")
            path.parent.mkdir(parents=True, exist_ok=True)
            part.write_parquet(path)
            paths.append(path)
    return paths


# -- measuring --------------------------------------------------------------------------

TIME_V = Path("/usr/bin/time").is_file()


def measure(cmd: list[str], log: Path, cwd: Path | None = None, stdout: bool = False) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one command (its
    standard output into `log` too when `stdout`)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if TIME_V:
        cmd = ["/usr/bin/time", "-v", *cmd]
    with open(log, "w") as err:
        proc = subprocess.run(cmd, stdout=err if stdout else subprocess.DEVNULL, stderr=err,
                              cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = log.read_text()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # without time -v: the largest child so far, which may be this process's own peak (a
    # child started by vfork keeps it across exec), so a ceiling
    peak = after.ru_maxrss / 1024
    if TIME_V:
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        if found:
            peak = int(found.group(1)) / 1024
    return {"seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "peak_mb": round(peak, 1)}


def spec_json(models: list[str]) -> str:
    """The config the report describes (the default one, its models replaced)."""
    sys.path.insert(0, str(ROOT / "src"))
    import yaml

    from planaudit.config import BASE_CONFIG

    config = yaml.safe_load(Path(BASE_CONFIG).read_text())
    config["models"] = [{"name": n, "model": f"reference/{n}" if n in ("oracle", "flawed")
                         else f"openai/{n}"} for n in models]
    return json.dumps(config)


def run_stages(shards: list[Path], work: Path, stages: list[str], episodes: Path | None = None,
               analysis: tuple[int, int, float] = (0, 2000, 0.05)) -> dict[str, dict]:
    """Every analysis stage, as analysis.smk and report.smk run it, on these shards (or on
    a collected episodes file, which skips collect)."""
    seed, bootstrap, alpha = (str(x) for x in analysis)
    out: dict[str, dict] = {}
    report = work / "report"
    figures = report / "figures"
    if episodes is None:
        episodes = work / "episodes.parquet"
        listing = work / "episodes.shards"
        listing.write_text("".join(f"{s}\n" for s in shards))
        if "collect" in stages or not episodes.is_file():
            # the shard paths go in a file, as the rule passes them (analysis.smk)
            out["collect"] = measure([PLANAUDIT, "collect", "--schema", str(SCHEMA), "--out",
                                      str(episodes), "--shards-from", str(listing)],
                                     work / "collect.log")
    common = ["--seed", seed, "--bootstrap", bootstrap, "--alpha", alpha]
    if "tables" in stages:
        out["tables"] = measure([PLANAUDIT, "tables", "--episodes", str(episodes), "--out",
                                 str(report), *common], work / "tables.log")
    if "figures" in stages:
        out["figures"] = measure([PLANAUDIT, "figures", "--episodes", str(episodes), "--out",
                                  str(figures), *common, "--regime", "acpbench"], work / "figures.log")
    if "report" in stages:
        models = pl.read_parquet(episodes, columns=["model"])["model"].unique().sort().to_list()
        summary = work / "suite" / "summary.csv"
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text("domain,task,solvable,certificate,methods_agreeing\n")
        out["report"] = measure([PLANAUDIT, "report", "--episodes", str(episodes), "--spec",
                                 spec_json(models), "--tables", str(report), "--figures",
                                 str(figures), "--out", str(report / "index.html")],
                                work / "report.log", cwd=work)
        html = report / "index.html"
        out["report"]["html_mb"] = round(html.stat().st_size / 2**20, 2)
    return out


CACHE_PROBE = """
import json, random, resource, sys, time
sys.path.insert(0, {src!r})
from planaudit.llm.cache import Cache, cache_key
n, root = {n}, {root!r}
cache = Cache(root)
reply = {{"content": "```\\n" + "(stack b1 b2)\\n" * 12 + "```", "finish_reason": "stop",
          "usage": {{"prompt_tokens": 1800, "completion_tokens": 240}}}}
keys = [cache_key({{"model": "openai/llm", "messages": [{{"role": "user", "content": str(i)}}],
                   "temperature": 0, "sample": 0, "metadata": {{"task": i}}}}) for i in range(n)]
t = time.perf_counter(); c = time.process_time()
for k in keys:
    cache.put(k, reply)
put = (time.perf_counter() - t, time.process_time() - c)
random.Random(0).shuffle(keys)
t = time.perf_counter(); c = time.process_time()
hits = sum(cache.get(k) is not None for k in keys)
get = (time.perf_counter() - t, time.process_time() - c)
t = time.perf_counter(); c = time.process_time()
missing = sum(cache.get(k[::-1]) is None for k in keys[: n // 10])
miss = (time.perf_counter() - t, time.process_time() - c)
assert hits == n and missing == n // 10
# VmHWM, not ru_maxrss: a child started by vfork keeps its parent's peak across exec
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM:")) / 1024
print(json.dumps({{"put": put, "get": get, "miss": miss, "peak_mb": peak}}))
"""


def run_cache(n: int, work: Path) -> dict:
    """N puts, then N gets in a shuffled order, then N/10 misses, through the real Cache
    into one fresh cache folder; seconds (wall, CPU) of each, and the folder's size."""
    root = work / "cache"
    shutil.rmtree(root, ignore_errors=True)
    code = CACHE_PROBE.format(src=str(ROOT / "src"), n=n, root=str(root))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"cache probe failed:\n{proc.stderr[-3000:]}")
    found = json.loads(proc.stdout)
    du = subprocess.run(["du", "-sm", str(root)], capture_output=True, text=True).stdout.split()
    t = time.perf_counter()
    folders = sum(1 for _ in root.iterdir())
    files = sum(1 for f in root.iterdir() for _ in os.scandir(f))
    listing = time.perf_counter() - t
    shutil.rmtree(root, ignore_errors=True)
    return {"seconds": round(found["put"][0] + found["get"][0], 2),
            "cpu_seconds": round(found["put"][1] + found["get"][1], 2),
            "peak_mb": round(found["peak_mb"], 1),
            "put_us": round(1e6 * found["put"][0] / n, 1),
            "get_us": round(1e6 * found["get"][0] / n, 1),
            "miss_us": round(1e6 * found["miss"][0] / max(1, n // 10), 1),
            "disk_mb": int(du[0]) if du else None, "folders": folders, "files": files,
            "list_seconds": round(listing, 2)}


# -- the DAG ----------------------------------------------------------------------------

def run_dag(work: Path, models: int = 100) -> dict:
    """`snakemake -n` on the default config with `models` reference models x every offline
    strategy and online architecture x 7 plan settings (curriculum and ACPBench as in the
    default config), into a results folder of its own (its suite jobs listed, not run)."""
    import yaml

    config = {"results": str(work / "dag-results"),
              "models": [{"name": f"oracle{i:03d}", "model": "reference/oracle",
                          "family": "reference", "tier": "reference"} for i in range(models)],
              "offline": {"methods": list(OFFLINE)},
              "online": {"methods": list(ONLINE), "plan_settings": list(SETTINGS)}}
    path = work / "dag.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake = str(BIN / "snakemake")
    result = measure([snakemake, "-n", "--nolock", "--cores", "2", "--configfile", str(path)],
                     work / "dag.log", cwd=ROOT, stdout=True)
    text = (work / "dag.log").read_text()
    total = re.search(r"^total\s+(\d+)", text, re.M)
    result["jobs"] = int(total.group(1)) if total else None
    result["models"] = models
    return result


# -- a real reference run ----------------------------------------------------------------

def run_reference(work: Path, times: int, cores: int) -> dict:
    """The whole workflow, for real, on the default config with each reference model
    `times` times (`<name>-<i>`, seed i), into a results folder and cache of its own; then
    every analysis stage again on its shards, as run_stages measures the synthetic ones."""
    import yaml

    sys.path.insert(0, str(ROOT / "src"))
    from planaudit.config import BASE_CONFIG

    base = yaml.safe_load(Path(BASE_CONFIG).read_text())
    results = work / f"reference-{times}x"
    models = [dict(m, name=f"{m['name']}-{i}", **({"seed": i} if "seed" in m else {}))
              for i in range(times) for m in base["models"]]
    path = work / f"reference-{times}x.yaml"
    path.write_text(yaml.safe_dump({"results": str(results), "cache": str(work / "cache"),
                                    "models": models}))
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ['PATH']}"  # rules call this venv's planaudit
    run = measure([str(BIN / "snakemake"), "--cores", str(cores), "--configfile", str(path)],
                  work / f"reference-{times}x.log", cwd=ROOT, stdout=True)
    log = (work / f"reference-{times}x.log").read_text()
    done = re.findall(r"(\d+) of (\d+) steps \(100%\) done", log)
    run["jobs"] = int(done[-1][1]) if done else None
    episodes = results / "episodes.parquet"
    rows = pl.scan_parquet(episodes).select(pl.len()).collect().item()
    shards = [Path(s) for s in (results / "episodes.shards").read_text().split()]
    (work / f"reference-{times}x-stages").mkdir(exist_ok=True)
    stages = run_stages(shards, work / f"reference-{times}x-stages",
                        ["collect", "tables", "figures", "report"])
    return {"times": times, "models": len(models), "rows": rows, "shards": len(shards),
            "workflow": run, "stages": stages}


# -- the fit and the table -------------------------------------------------------------

def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y on log x; None below two points."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    x = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    return round(float(np.polyfit(x, y, 1)[0]), 2)


def exponents(points: dict[int, dict]) -> dict:
    """The growth exponents of one stage, fitted from the second-smallest size up (the
    smallest is start-up), or over every size when there are only two."""
    sizes = sorted(points)
    fit = sizes[1:] if len(sizes) > 2 else sizes
    return {"seconds": slope(fit, [points[s]["seconds"] for s in fit]),
            "cpu_seconds": slope(fit, [points[s]["cpu_seconds"] for s in fit]),
            "peak_mb": slope(fit, [points[s]["peak_mb"] for s in fit]),
            "fitted_on": fit}


def render(result: dict) -> str:
    lines = [f"load average at start {result['load'][0]:.2f}, at end {result['load_end'][0]:.2f};"
             f" {os.cpu_count()} cores", ""]
    head = f"{'stage':<9}{'rows':>10}{'wall s':>10}{'cpu s':>10}{'peak MB':>10}  extra"
    lines.append(head)
    for stage, entry in result["stages"].items():
        for rows, p in sorted(entry["points"].items(), key=lambda kv: int(kv[0])):
            extra = {k: v for k, v in p.items() if k not in ("seconds", "cpu_seconds", "peak_mb")}
            lines.append(f"{stage:<9}{int(rows):>10,}{p['seconds']:>10.2f}{p['cpu_seconds']:>10.2f}"
                         f"{p['peak_mb']:>10.1f}  {json.dumps(extra) if extra else ''}")
        e = entry["exponent"]
        fitted = ", ".join(f"{r:,}" for r in e["fitted_on"])
        lines.append(f"{'':<9}{'exponent':>10}{_fmt(e['seconds']):>10}{_fmt(e['cpu_seconds']):>10}"
                     f"{_fmt(e['peak_mb']):>10}  (fitted on {fitted} rows)")
    if "real" in result:
        lines += ["", f"real run ({result['real']['rows']:,} rows): "
                  + json.dumps(result["real"]["stages"])]
    if "reference_run" in result:
        r = result["reference_run"]
        w = r["workflow"]
        lines += ["", f"reference run, {r['times']}x the default matrix ({r['models']} models, "
                  f"{r['rows']:,} rows, {r['shards']:,} shards, {w['jobs']} jobs): snakemake "
                  f"{w['seconds']:.0f} s wall, {w['cpu_seconds']:.0f} s CPU, "
                  f"{w['peak_mb']:.0f} MB peak of one process"]
        for stage, p in r["stages"].items():
            lines.append(f"{stage:<9}{r['rows']:>10,}{p['seconds']:>10.2f}{p['cpu_seconds']:>10.2f}"
                         f"{p['peak_mb']:>10.1f}")
    if "dag" in result:
        d = result["dag"]
        lines += ["", f"snakemake -n, {d['models']} models: {d['jobs']} jobs, {d['seconds']:.1f} s "
                  f"wall, {d['cpu_seconds']:.1f} s CPU, {d['peak_mb']:.0f} MB"]
    return "\n".join(lines)


def _record(result: dict, args: argparse.Namespace) -> None:
    """The run's record: a table per measure, and the largest point's figures."""
    figures: dict = {}
    tables: dict = {}
    analysis = {k: v for k, v in result["stages"].items() if k != "cache"}
    if analysis:
        tables["analysis"] = record.table(
            ["stage", "rows", "wall s", "CPU s", "peak MB"],
            [(stage, int(rows), p["seconds"], p["cpu_seconds"], p["peak_mb"])
             for stage, entry in analysis.items()
             for rows, p in sorted(entry["points"].items(), key=lambda kv: int(kv[0]))],
            "Each analysis stage as its rule runs it, on synthetic rows")
        tables["exponents"] = record.table(
            ["stage", "wall", "CPU", "peak MB", "fitted on rows"],
            [(stage, e["exponent"]["seconds"], e["exponent"]["cpu_seconds"],
              e["exponent"]["peak_mb"], ", ".join(f"{r:,}" for r in e["exponent"]["fitted_on"]))
             for stage, e in analysis.items()],
            "Growth exponents (slope of log cost on log rows)")
        for stage, entry in analysis.items():
            rows, p = max(entry["points"].items(), key=lambda kv: int(kv[0]))
            figures[f"{stage}_cpu"] = record.figure(p["cpu_seconds"], "CPU s",
                                                    f"{stage} at {int(rows):,} rows")
            figures[f"{stage}_peak"] = record.figure(p["peak_mb"], "MB",
                                                     f"{stage} at {int(rows):,} rows, peak")
    if "cache" in result["stages"]:
        points = result["stages"]["cache"]["points"]
        tables["cache"] = record.table(
            ["entries", "put µs", "get µs", "miss µs", "CPU s", "disk MB", "peak MB"],
            [(int(n), p["put_us"], p["get_us"], p["miss_us"], p["cpu_seconds"], p["disk_mb"],
              p["peak_mb"]) for n, p in sorted(points.items(), key=lambda kv: int(kv[0]))],
            "The reply cache through the real Cache class: N puts, N gets, N/10 misses")
        n, p = max(points.items(), key=lambda kv: int(kv[0]))
        figures["cache_get"] = record.figure(p["get_us"], "µs", f"a cache hit at {int(n):,} entries")
    if "real" in result:
        tables["real"] = record.table(
            ["stage", "rows", "wall s", "CPU s", "peak MB"],
            [(stage, result["real"]["rows"], p["seconds"], p["cpu_seconds"], p["peak_mb"])
             for stage, p in result["real"]["stages"].items()], "A real run's rows")
    if "reference_run" in result:
        r = result["reference_run"]
        w = r["workflow"]
        figures |= {"reference_rows": record.figure(r["rows"], "rows", f"{r['times']}× the default "
                                                    f"matrix ({r['models']} models)"),
                    "reference_jobs": record.figure(w["jobs"], "jobs", "snakemake jobs"),
                    "reference_wall": record.figure(w["seconds"], "s", "the workflow, wall"),
                    "reference_cpu": record.figure(w["cpu_seconds"], "CPU s", "the workflow, CPU"),
                    "reference_peak": record.figure(w["peak_mb"], "MB", "peak of one process")}
        tables["reference_run"] = record.table(
            ["stage", "rows", "wall s", "CPU s", "peak MB"],
            [(stage, r["rows"], p["seconds"], p["cpu_seconds"], p["peak_mb"])
             for stage, p in r["stages"].items()], "The analysis on the reference run's rows")
    if "dag" in result:
        d = result["dag"]
        figures |= {"dag_jobs": record.figure(d["jobs"], "jobs", f"snakemake -n, {d['models']} models"),
                    "dag_wall": record.figure(d["seconds"], "s", "snakemake -n, wall"),
                    "dag_cpu": record.figure(d["cpu_seconds"], "CPU s", "snakemake -n, CPU"),
                    "dag_peak": record.figure(d["peak_mb"], "MB", "snakemake -n, peak")}
    variant = ("reference-run" if args.reference_run else
               "dag" if args.dag and not result["stages"] else None)
    record.write("scale", figures, variant=variant, tables=tables)


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6",
                    help="episode rows, comma-separated (default 1e3,1e4,1e5,1e6)")
    ap.add_argument("--quick", action="store_true", help="sizes 1e3,1e4 only")
    ap.add_argument("--stages", default=",".join(STAGES),
                    help=f"comma-separated of {', '.join(STAGES)} (none: only --dag)")
    ap.add_argument("--episodes", help="also measure tables, figures and report on this "
                                       "collected episodes file (a real run), as a point")
    ap.add_argument("--dag", action="store_true",
                    help="time snakemake -n for 100 models x 12 methods x 7 plan settings")
    ap.add_argument("--dag-models", type=int, default=100)
    ap.add_argument("--reference-run", type=int, metavar="K",
                    help="run the workflow on the default config, each reference model K "
                         "times, and measure the analysis on its rows")
    ap.add_argument("--cores", type=int, default=2, help="Snakemake's cores (--reference-run)")
    ap.add_argument("--work", help="keep the synthetic runs here (default: a temporary folder)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    sizes = [1_000, 10_000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    stages = [s for s in args.stages.split(",") if s and s != "none"]
    if unknown := set(stages) - set(STAGES):
        ap.error(f"unknown stage(s): {', '.join(sorted(unknown))}")
    base = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="planaudit-scale-"))
    result: dict = {"load": os.getloadavg(), "stages": {}}
    analysis_stages = [s for s in stages if s != "cache"]
    for n in sizes:
        work = base / f"n{n}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        if analysis_stages:
            t = time.perf_counter()
            frames = synthesize(n, args.seed)
            shards = write_shards(frames, work)
            rows = sum(f.height for f in frames)
            print(f"{rows:,} rows in {len(shards):,} shards written in "
                  f"{time.perf_counter() - t:.1f} s {matrix(n)}", file=sys.stderr)
            for stage, point in run_stages(shards, work, analysis_stages).items():
                point["shards"] = len(shards) if stage == "collect" else None
                if point["shards"] is None:
                    del point["shards"]
                result["stages"].setdefault(stage, {"points": {}})["points"][rows] = point
                print(f"  {stage}: {point}", file=sys.stderr)
        if "cache" in stages:
            point = run_cache(n, work)
            result["stages"].setdefault("cache", {"points": {}})["points"][n] = point
            print(f"  cache: {point}", file=sys.stderr)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    for entry in result["stages"].values():
        entry["exponent"] = exponents(entry["points"])
    if args.episodes:
        work = base / "real"
        work.mkdir(parents=True, exist_ok=True)
        rows = pl.scan_parquet(args.episodes).select(pl.len()).collect().item()
        result["real"] = {"rows": rows, "stages": run_stages(
            [], work, ["tables", "figures", "report"], episodes=Path(args.episodes).resolve())}
    if args.reference_run:
        result["reference_run"] = run_reference(base, args.reference_run, args.cores)
    if args.dag:
        result["dag"] = run_dag(base, args.dag_models)
    result["load_end"] = os.getloadavg()
    if not args.work:
        shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(result, indent=1) if args.json else render(result))
    _record(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
