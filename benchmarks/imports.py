"""What each step of the workflow imports, and what that costs, from its real command.

Runs every kind of job's command once on a one-task suite under `python -X importtime`
and prints, per step, the seconds spent importing (the cumulative time of every
top-level import) and whether it loaded litellm, unified-planning, matplotlib or polars.
The suite, summary, collect, tables, figures and report steps must never load
litellm, nor a shard of reference models; a real model's shard loads it once.

    .venv/bin/python benchmarks/imports.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import record

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("litellm", "unified_planning", "matplotlib", "polars", "scipy")
ORACLE = {"name": "oracle", "model": "reference/oracle", "tier": "reference"}
# a real model's shard: litellm's path to a scripted local OpenAI-compatible server
REAL = {"name": "local", "model": "openai/local", "api_key_env": "none"}


def steps(t: Path, api_base: str) -> list[tuple[str, list[str]]]:
    spec = json.dumps({"models": [ORACLE], "offline": {"methods": ["direct"]},
                       "cache": str(t / "cache")})
    real = json.dumps({"models": [{**REAL, "api_base": api_base}], "offline": {"methods": ["direct"]},
                       "cache": str(t / "cache")})
    return [
        ("suite build", ["suite", "build", "--domain", "gripper", "--task", "p01", "--task", "p09",
                         "--suite-dir", str(t / "suite"), "--obfuscate"]),
        ("summary", ["suite", "summary", str(t / "suite/gripper/p01/truth.json"),
                     str(t / "suite/gripper/p09/truth.json"), "--out", str(t / "summary.csv")]),
        ("check", ["check", "--spec", json.dumps({"models": [ORACLE]})]),
        ("shard", ["offline", "shard", "--spec", spec, "--model", "oracle", "--method", "direct",
                   "--domain", "gripper", "--suite", str(t / "suite"),
                   "--out", str(t / "ep/{domain}.parquet"), "--transcripts", str(t / "tr/{domain}")]),
        ("shard (real model)", ["offline", "shard", "--spec", real, "--model", "local",
                                "--method", "direct", "--domain", "gripper",
                                "--suite", str(t / "suite"),
                                "--out", str(t / "ep-real/{domain}.parquet"),
                                "--transcripts", str(t / "tr-real/{domain}")]),
        ("collect", ["collect", str(t / "ep/gripper.parquet"), "--out", str(t / "episodes.parquet")]),
        ("tables", ["tables", "--episodes", str(t / "episodes.parquet"), "--out", str(t / "report"),
                    "--bootstrap", "200"]),
        ("figures", ["figures", "--episodes", str(t / "episodes.parquet"),
                     "--out", str(t / "report/figures")]),
        ("report", ["report", "--episodes", str(t / "episodes.parquet"), "--tables",
                    str(t / "report"), "--figures", str(t / "report/figures"),
                    "--out", str(t / "report/index.html")]),
    ]


def importtime(args: list[str]) -> tuple[float, set[str]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "planaudit.cli", *args],
                          cwd=ROOT, capture_output=True, text=True, env=dict(os.environ))
    if proc.returncode != 0:
        sys.exit(f"planaudit {' '.join(args[:2])} failed:\n{proc.stderr[-2000:]}")
    total, loaded = 0, set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if not name.startswith("  "):  # a top-level import: its cumulative time holds its children
            total += int(cumulative)
        loaded.add(name.strip().split(".")[0])
    return total / 1e6, loaded


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from tests.fake_openai import FakeOpenAI

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as server:
        rows = [(name, *importtime(args)) for name, args in steps(Path(tmp), server.api_base)]
    print(f"| step | import time (s) | {' | '.join(HEAVY)} |")
    print("|---|---:|" + "---|" * len(HEAVY))
    for name, seconds, loaded in rows:
        marks = " | ".join("yes" if h in loaded else "no" for h in HEAVY)
        print(f"| {name} | {seconds:.2f} | {marks} |")
    bad = [n for n, _, loaded in rows if n != "shard (real model)" and "litellm" in loaded]
    print("litellm outside a real model's shard:", ", ".join(bad) or "none")
    slowest = max(rows, key=lambda r: r[1])
    record.write("imports", {
        "litellm_outside": record.figure(", ".join(bad) or "none", "",
                                         "steps other than a real model's shard that load litellm"),
        "slowest": record.figure(slowest[1], "s", f"largest import time ({slowest[0]})"),
    }, tables={"steps": record.table(
        ["step", "import s", *HEAVY],
        [(name, seconds, *("yes" if h in loaded else "no" for h in HEAVY))
         for name, seconds, loaded in rows], "Import time per step, and what it loads")})


if __name__ == "__main__":
    main()
