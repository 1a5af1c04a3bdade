"""The Snakemake workflow end to end on a small suite: truth records, summary, the
label audit failing a mislabelled task, config errors naming the field, reruns."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import DOMAINS, ROOT

BIN = Path(sys.executable).parent


def make_suite(tmp: Path, labels: dict[str, str]) -> Path:
    root = tmp / "domains"
    (root / "blocksworld" / "problems").mkdir(parents=True)
    for name in ("domain.pddl", "nl.yaml"):
        shutil.copy(DOMAINS / "blocksworld" / name, root / "blocksworld" / name)
    tasks = []
    for tid, label in labels.items():
        shutil.copy(DOMAINS / "blocksworld" / "problems" / f"{tid}.pddl",
                    root / "blocksworld" / "problems" / f"{tid}.pddl")
        tasks.append({"id": tid, "problem": f"problems/{tid}.pddl", "label": label,
                      "optimal_length": None, "tests": "fixture"})
    (root / "blocksworld" / "tasks.yaml").write_text(
        yaml.safe_dump({"domain": "blocksworld", "tasks": tasks}))
    return root


def config(tmp: Path, root: Path, **truth) -> Path:
    cfg = {
        "results": str(tmp / "results"),
        "suite": {"source": "builtin", "root": str(root), "domains": ["blocksworld"],
                  "obfuscate": ["blocksworld"], "seed": 3},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": True, **truth},
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def snakemake(cfg: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        [str(BIN / "snakemake"), "suite", *extra, "--cores", "2", "--nolock",
         "--configfile", str(cfg)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_suite_rule_writes_truth_and_summary_and_reruns_nothing(tmp_path):
    root = make_suite(tmp_path, {"p01": "solvable", "p09": "unsolvable"})
    cfg = config(tmp_path, root)
    proc = snakemake(cfg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = tmp_path / "results" / "suite"
    rows = list(csv.DictReader((res / "summary.csv").open()))
    assert [(r["task"], r["label"], r["solvable"]) for r in rows] == [
        ("p01", "solvable", "True"), ("p09", "unsolvable", "False")]
    assert rows[0]["optimal_length"] == "2"
    assert rows[0]["methods_agreeing"] == "fast-downward-opt+own"
    assert rows[1]["certificate"] == "reachable-states"
    assert (res / "blocksworld" / "p09" / "certificate.json").exists()
    names = json.loads((res / "blocksworld" / "p01" / "names.json").read_text())
    assert names and all(v.startswith("blo_") for v in names.values())
    problem = (res / "blocksworld" / "p01" / "problem.pddl").read_text()
    assert all(f" {o} " not in problem for o in names)  # the hidden model is obfuscated
    assert (res / "audit.csv").read_text().startswith("domain,task,kind")
    shown = subprocess.run([str(BIN / "planaudit"), "suite", "show", "blocksworld/p09",
                            "--results", str(tmp_path / "results")],
                           capture_output=True, text=True)
    assert shown.returncode == 0
    for part in ("== domain brief ==", "== instance brief ==", "label: unsolvable",
                 "proven: solvable=False", "certificate: reachable-states", "UNSOLVABLE"):
        assert part in shown.stdout, part
    instance = shown.stdout.split("== instance brief ==")[1].split("== truth ==")[0]
    hidden = json.loads((res / "blocksworld" / "p09" / "names.json").read_text())
    assert not set(re.findall(r"[\w-]+", instance)) & set(hidden)
    assert all(v in instance for v in hidden.values())
    again = snakemake(cfg)
    assert again.returncode == 0
    assert "Nothing to be done" in again.stdout + again.stderr


def test_mislabelled_task_fails_its_rule_and_is_named(tmp_path):
    root = make_suite(tmp_path, {"p01": "unsolvable"})
    proc = snakemake(config(tmp_path, root, external=False))
    assert proc.returncode != 0
    log = (tmp_path / "results" / "logs" / "suite" / "blocksworld.log").read_text()
    assert "blocksworld/p01: labelled unsolvable but proven solvable" in log
    # the reason reaches the console too, not only the log file
    assert "blocksworld/p01: labelled unsolvable but proven solvable" in proc.stderr


def test_bad_config_field_is_named(tmp_path):
    root = make_suite(tmp_path, {"p01": "solvable"})
    proc = snakemake(config(tmp_path, root, bfs_states="many"))
    assert proc.returncode != 0
    assert "bfs_states" in proc.stderr and "'many' is not of type 'integer'" in proc.stderr


def test_external_suite_runs_and_its_wrong_label_is_audited(tmp_path):
    from tests.test_suite import _external_suite

    root = _external_suite(tmp_path)
    cfg = {
        "results": str(tmp_path / "results"),
        "suite": {"source": "external", "root": str(root), "audit": "warn"},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": True},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake(path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    audit = list(csv.DictReader((tmp_path / "results" / "suite" / "audit.csv").open()))
    assert [(a["domain"], a["task"], a["kind"]) for a in audit] == [("grip", "p02", "solvability")]
    assert "label audit: 1 disagreement(s)" in proc.stderr  # the end of the run says so
    brief = json.loads((tmp_path / "results" / "suite" / "grip" / "p01" / "brief.json").read_text())
    assert brief["instance"] == "Ball ball1 is in rooma. Bring it to roomb."
    strict = dict(cfg, results=str(tmp_path / "strict"), suite=dict(cfg["suite"], audit="strict"))
    path.write_text(yaml.safe_dump(strict))
    assert snakemake(path).returncode != 0
    log = (tmp_path / "strict" / "logs" / "suite" / "grip.log").read_text()
    assert "grip/p02: labelled solvable but proven unsolvable" in log


def test_episode_shards_run_and_only_a_changed_method_reruns(tmp_path):
    import polars as pl

    root = make_suite(tmp_path, {"p01": "solvable", "p09": "unsolvable"})
    cfg_path = config(tmp_path, root)
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["models"] = [{"name": "oracle", "model": "reference/oracle", "tier": "reference"}]
    cfg["cache"] = str(tmp_path / "cache")
    cfg["offline"] = {"methods": ["direct", "tot"], "params": {"tot": {"depth": 2, "samples": 2}}}
    cfg["online"] = {"methods": ["react", "critic"], "budget": 50}
    cfg["curriculum"] = {"tests": []}  # tests/test_curriculum.py runs the curriculum's jobs
    cfg["acpbench"] = {"types": []}  # and tests/test_acpbench_questions.py ACPBench's
    cfg["formalize"] = {"methods": []}  # and tests/test_formalize_workflow.py the formalizers'
    cfg_path.write_text(yaml.safe_dump(cfg))
    secret = "sk-planaudit-never-written-4242"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", OPENAI_API_KEY=secret)

    def run(*extra):
        return subprocess.run([str(BIN / "snakemake"), *extra, "--cores", "2", "--nolock",
                               "--configfile", str(cfg_path)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)

    proc = run()
    assert proc.returncode == 0, proc.stderr[-3000:]
    shard = tmp_path / "results" / "episodes" / "offline" / "oracle" / "direct" / "blocksworld.parquet"
    rows = pl.read_parquet(shard).sort("task")
    assert rows["outcome"].to_list() == ["success", "detected"]
    assert rows["reference"].all()
    # VAL judged the final plan too (offline.witness: val in config/config.yaml); no plan on p09
    assert rows["val_valid"].to_list() == [True, None]
    # heuristic mode (offline.repair in config/config.yaml): only rejected plans go to LPG
    assert rows["repair_skipped"].to_list() == ["valid plan (only_invalid)", "no plan extracted"]
    assert rows["repaired"].to_list() == [None, None]
    witness = list(csv.DictReader((tmp_path / "results" / "report" / "witness.csv").open()))
    assert [(w["method"], w["plans"], w["agree"], w["disagree"]) for w in witness] == [
        ("direct", "1", "1", "0"), ("tot", "1", "1", "0")]
    transcript = tmp_path / "results" / "transcripts" / "offline" / "oracle" / "direct" / \
        "blocksworld" / "p01.jsonl"
    assert transcript.read_text().count('"purpose"') == 1
    # online: one job per architecture x plan setting (config/config.yaml: standard, none)
    # (a `none` shard's score columns are all null: read the shards apart, as collect does)
    online = pl.concat([pl.read_parquet(p) for p in (tmp_path / "results" / "episodes" / "online"
                                                     / "oracle").glob("*/*/blocksworld.parquet")],
                       how="diagonal_relaxed").sort("method", "plan_setting", "task")
    assert online["outcome"].to_list() == ["success", "detected"] * 4
    assert online["method"].to_list() == ["critic"] * 4 + ["react"] * 4
    assert online["plan_setting"].to_list() == ["none", "none", "standard", "standard"] * 2
    # the oracle follows the standard workflow exactly; `none` has labels but no score
    assert online.filter(pl.col("outcome") == "success")["pc"].to_list() == [None, 1.0] * 2
    assert [p[0] for p in online["phases"].to_list()] == ["read_1"] * 8
    compliance = list(csv.DictReader((tmp_path / "results" / "report" / "compliance.csv").open()))
    assert {r["plan_setting"] for r in compliance} == {"standard", "none"}
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".parquet"]
    assert len(written) > 10 and not any(secret in p.read_text(errors="ignore") for p in written)
    # the hidden model never reaches a model: no PDDL and no original name in any transcript
    names = json.loads((tmp_path / "results" / "suite" / "blocksworld" / "p01" / "names.json")
                       .read_text())
    hidden = {k for k, v in names.items() if k != v}
    transcripts = list((tmp_path / "results" / "transcripts").rglob("*.jsonl"))
    assert hidden and len(transcripts) == 2 * 2 + 2 * 2 * 2
    for path in transcripts:
        text = path.read_text()
        assert not re.search(r"\(define|\(:action|:precondition|\(:init|:effect", text), path
        # the fixture's names (a, b, c) are English words too: look where objects are named
        groups = {w for g in re.findall(r"\(([^()]*)\)", text) for w in re.findall(r"[\w-]+", g)}
        assert groups and not groups & hidden, path
    # the analysis ran on these rows, and Snakemake's own report gathers it with captions
    assert (tmp_path / "results" / "report" / "index.html").is_file()
    report = tmp_path / "report.zip"
    proc = run("--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    import zipfile

    with zipfile.ZipFile(report) as z:
        names = z.namelist()
        assert any(n.endswith("main.csv") for n in names), names
        assert any(n.endswith("outcomes.png") for n in names), names
        assert any(n.endswith("phase_flow.png") for n in names), names
    # a changed workflow text reruns that setting's online jobs only
    settings = yaml.safe_load((ROOT / "config" / "plan_settings.yaml").read_text())
    settings["standard"]["steps"][0] = "Start by reading the task with get_task."
    (tmp_path / "settings.yaml").write_text(yaml.safe_dump(settings))
    cfg["online"]["plan_settings_file"] = str(tmp_path / "settings.yaml")
    cfg_path.write_text(yaml.safe_dump(cfg))
    dry = run("-n")
    assert re.search(r"online_oracle\s+2\n", dry.stdout), dry.stdout
    assert len(re.findall(r"output: \S+/oracle/\w+/standard/blocksworld\.parquet", dry.stdout)) == 2
    assert "offline_oracle" not in dry.stdout
    del cfg["online"]["plan_settings_file"]
    cfg["offline"]["params"]["tot"] = {"depth": 3, "samples": 2}
    cfg_path.write_text(yaml.safe_dump(cfg))
    dry = run("-n")
    assert re.search(r"offline_oracle\s+1\n", dry.stdout), dry.stdout  # one shard reruns...
    assert re.search(r"output: \S+/oracle/tot/blocksworld\.parquet", dry.stdout)  # ...tot's
    stats = dry.stdout.split("Job stats:")[1].split("Reasons:")[0]
    jobs = dict(re.findall(r"^(\w[\w-]*)\s+(\d+)$", stats, re.M))
    # nothing else reruns: no suite job, no check, no online job, no other method, and not
    # the shard listing (the same shards)
    assert jobs == {"offline_oracle": "1", "collect": "1", "tables": "1",
                    "figures": "1", "report": "1", "all": "1", "total": "6"}, stats
    # turning the witness off reruns every offline job, and no online one
    cfg["offline"]["params"]["tot"] = {"depth": 2, "samples": 2}
    cfg["offline"]["witness"] = "none"
    cfg_path.write_text(yaml.safe_dump(cfg))
    dry = run("-n")
    assert re.search(r"offline_oracle\s+2\n", dry.stdout), dry.stdout
    assert "online_oracle" not in dry.stdout, dry.stdout
    # so does changing heuristic mode's settings
    cfg["offline"]["witness"] = "val"
    cfg["offline"]["repair"] = {"enabled": True, "only_invalid": False, "seed": 1}
    cfg_path.write_text(yaml.safe_dump(cfg))
    dry = run("-n")
    assert re.search(r"offline_oracle\s+2\n", dry.stdout), dry.stdout
    assert "online_oracle" not in dry.stdout, dry.stdout


def test_the_published_matrix_config_is_valid():
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([str(BIN / "snakemake"), "-n", "--cores", "2", "--nolock",
                           "--configfile", str(ROOT / "config" / "paper.yaml")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for model in ("gpt-4o", "gpt-4o-mini", "gemini-2.0-flash", "gemini-2.0-flash-lite"):
        # per model: one job per strategy (6) and per architecture (3) x plan setting (7),
        # each over 5 domains
        assert re.search(rf"\noffline_{re.escape(model)}\s+6\n", proc.stdout), model
        assert re.search(rf"\nonline_{re.escape(model)}\s+21\n", proc.stdout), model


def test_adding_a_disguise_adds_its_jobs_and_reruns_no_undisguised_suite_job(tmp_path):
    root = make_suite(tmp_path, {"p01": "solvable", "p09": "unsolvable"})
    cfg = config(tmp_path, root, external=False)
    assert snakemake(cfg).returncode == 0
    data = yaml.safe_load(cfg.read_text())
    data["suite"]["disguise"] = ["none", "deceptive", "randomized"]
    cfg.write_text(yaml.safe_dump(data))
    proc = snakemake(cfg)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ran = re.findall(r"rule (\w+):", proc.stdout + proc.stderr)
    assert sorted(set(ran)) == ["suite", "suite_blocksworld_deceptive",
                                "suite_blocksworld_randomized"], ran
    res = tmp_path / "results" / "suite" / "blocksworld"
    for d in ("deceptive", "randomized"):
        for t in ("p01", "p09"):
            rec = json.loads((res / f"{t}@{d}" / "truth.json").read_text())
            plain = json.loads((res / t / "truth.json").read_text())
            assert rec["disguise_agrees"] and rec["solvable"] == plain["solvable"]
            assert rec["optimal_length"] == plain["optimal_length"]
            names = json.loads((res / f"{t}@{d}" / "names.json").read_text())
            assert names["disguise"] == d and names["actions"]["stack"] != "stack"
    assert "Nothing to be done" in (lambda p: p.stdout + p.stderr)(snakemake(cfg))
