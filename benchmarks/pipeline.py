"""The default pipeline end to end, old job design against new, measured in one run.

For each design, into a fresh results folder and a fresh reply cache (so every job
runs): `snakemake --cores N suite` (the suite stage, timed on its own), then
`snakemake --cores N` (everything else), then the same command again, which must
run no job. The old design is the code at `--baseline` (a process per task for the
suite, per model x method x domain for the episodes), unpacked from git into a
temporary folder and run with its own sources on PYTHONPATH; the new design is this
working tree (a process per domain for the suite, per model x method for the
episodes), on the old design's config (no curriculum), then on today's default
config (curriculum included: one more process per model x test case).

The share spent starting processes is estimated as: for each job, the time a fresh
interpreter needs to import what that job's command imports (measured here, per
kind of job), summed over jobs, divided by wall time x cores.

    .venv/bin/python benchmarks/pipeline.py [--cores 2] [--baseline c8b7550] [--only new]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import record

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BASELINE = "c8b7550"  # the last commit with one job per task and per model x method x domain

# what each kind of job imports before it does any work (see cli.py); the suite's jobs
# reach unified-planning through Fast Downward
IMPORTS = {
    "suite": "import planaudit.cli, planaudit.suite.commands, planaudit.suite.prepare, "
             "planaudit.suite.records, unified_planning, up_fast_downward",
    "prepare": "import planaudit.cli, planaudit.suite.commands, planaudit.suite.prepare",
    "check": "import planaudit.cli",  # reference models: litellm is not needed to check them
    # a shard of reference models, up to its first reply's token count: the old design
    # reaches litellm through its reference provider, the new one does not need it
    "shard": "import planaudit.cli, planaudit.shard, planaudit.offline.run, "
             "planaudit.online.run, tempfile\n"
             "from planaudit.llm.client import Client, ModelConfig\n"
             "from planaudit.llm.cache import Cache\n"
             "Client(ModelConfig('oracle', 'reference/oracle'), Cache(tempfile.mkdtemp()))\n"
             "try:\n"
             "    from planaudit.llm.tokens import count_text\n"
             "except ImportError:\n"
             "    import litellm\n"
             "    count_text = lambda t: litellm.token_counter(model='gpt-4o', text=t)\n"
             "count_text('(stack a b)')",
    "collect": "import planaudit.cli, planaudit.analysis.collect",
    "tables": "import planaudit.cli, planaudit.analysis.tables",
    "figures": "import planaudit.cli, planaudit.analysis.figures",
    "report": "import planaudit.cli, planaudit.analysis.report",
    "summary": "import planaudit.cli, planaudit.suite.commands, planaudit.suite.records",
}
# the old design's default config had no curriculum: compare like with like, then run
# today's default (curriculum included) on its own
NO_CURRICULUM = ("curriculum={tests: []}",)
RULE = re.compile(r"^(?:localrule|rule) (\w[\w.-]*):", re.M)


def kind(rule: str) -> str:
    if rule.startswith(("offline_", "online_", "curriculum_")):
        return "shard"
    if rule.startswith("check_model"):
        return "check"
    if rule in IMPORTS:
        return rule  # prepare (old design) imports no planner
    return "suite"  # truth (old), suite_<domain> (new)


def startup(code: str, env: dict, cwd: Path, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=cwd, env=env)
        best = min(best, time.perf_counter() - start)
    return best


def run_design(name: str, tree: Path, cores: int, tmp: Path, env: dict,
               extra_config: tuple[str, ...] = ()) -> dict:
    options = ["--cores", str(cores), "--nolock", "--config", f"results={tmp}/results",
               f"cache={tmp}/cache", *extra_config]
    cmd = [str(BIN / "snakemake"), *options]
    timings, jobs = {}, Counter()
    for stage, extra in (("suite", ["suite"]), ("rest", [])):
        start = time.perf_counter()
        proc = subprocess.run([str(BIN / "snakemake"), *extra, *options], cwd=tree, env=env,
                              capture_output=True, text=True)
        timings[stage] = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"{name} design, {stage}: failed\n{proc.stderr[-3000:]}")
        jobs.update(RULE.findall(proc.stderr))
    jobs.pop("all", None)
    jobs.pop("suite", None)  # the target rule, no command
    start = time.perf_counter()
    again = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    rerun = time.perf_counter() - start
    ran_again = RULE.findall(again.stderr)
    per_kind = {k: startup(code, env, tree) for k, code in IMPORTS.items()}
    counts = Counter()
    for rule, n in jobs.items():
        counts[kind(rule)] += n
    wall = timings["suite"] + timings["rest"]
    spent = sum(per_kind[k] * n for k, n in counts.items())
    return {"wall": wall, "suite": timings["suite"], "jobs": sum(jobs.values()), "counts": counts,
            "per_kind": per_kind, "share": spent / (wall * cores), "rerun": rerun,
            "ran_again": sorted(set(ran_again)), "nothing": "Nothing to be done" in again.stderr}


def report(name: str, r: dict, cores: int) -> None:
    print(f"{name} design: {r['jobs']} jobs in {r['wall']:,.0f} s "
          f"(suite stage {r['suite']:,.0f} s, --cores {cores})")
    for k, n in sorted(r["counts"].items()):
        print(f"  {n:4d} {k} jobs, {r['per_kind'][k]:.2f} s each to start")
    print(f"  share of the {cores} cores' time spent starting processes: {r['share']:.1%}")
    verdict = "runs no job" if not r["ran_again"] and r["nothing"] \
        else f"ran {len(r['ran_again'])} jobs: {r['ran_again']}"
    print(f"  second run with nothing changed: {r['rerun']:.1f} s, {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--baseline", default=BASELINE, help="git revision of the old design")
    ap.add_argument("--only", choices=("old", "new"), help="run one design only")
    ap.add_argument("--no-curriculum-run", action="store_true",
                    help="skip the third run (the new design on today's default config, "
                         "curriculum included)")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        designs = {"new": ROOT}
        if args.only != "new":
            old = tmp / "old-tree"
            old.mkdir()
            archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            designs = {"old": old, **designs}
        if args.only == "old":
            designs.pop("new")
        runs = [(name, tree, NO_CURRICULUM if name == "new" else ()) for name, tree in
                designs.items()]
        if "new" in designs and not args.no_curriculum_run:
            runs.append(("new, curriculum included", ROOT, ()))
        for name, tree, extra in runs:
            env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
                       PYTHONPATH=str(tree / "src"))
            work = tmp / name.replace(" ", "_").replace(",", "")
            work.mkdir()
            results[name] = run_design(name, tree, args.cores, work, env, extra)
            report(name, results[name], args.cores)
    anchor = None
    if "old" in results and "new" in results:
        old, new = results["old"], results["new"]
        print(f"new against old: wall {new['wall'] / old['wall']:.2f}x "
              f"({old['wall']:,.0f} s -> {new['wall']:,.0f} s), suite stage "
              f"{old['suite']:,.0f} s -> {new['suite']:,.0f} s, start-up share "
              f"{old['share']:.1%} -> {new['share']:.1%}")
        anchor = {"name": f"the old job design (a process per task, per model × method × domain; "
                          f"git {args.baseline})", "ratio": round(new["wall"] / old["wall"], 2),
                  "about": "the new design's wall time over the old one's"}
    figures = {}
    for name, r in results.items():
        key = name.replace(", curriculum included", "_curriculum")
        figures[f"{key}_wall"] = record.figure(r["wall"], "s", f"{name}: wall, --cores {args.cores}")
        figures[f"{key}_share"] = record.figure(100 * r["share"], "%",
                                                f"{name}: the cores' time spent starting processes")
    record.write("pipeline", figures, anchor=anchor, tables={"designs": record.table(
        ["design", "jobs", "wall s", "suite stage s", "start-up share", "no-op rerun s",
         "no-op rerun runs no job"],
        [(name, r["jobs"], r["wall"], r["suite"], f"{r['share']:.1%}", r["rerun"],
          "yes" if not r["ran_again"] and r["nothing"] else f"no: {len(r['ran_again'])} jobs")
         for name, r in results.items()], f"Each design, --cores {args.cores}")})


if __name__ == "__main__":
    main()
