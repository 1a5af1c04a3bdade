"""What runs is what the user's files name (issue 37, finding 1).

Snakemake lays config/config.yaml under a user's --configfile, so a file naming one
offline strategy used to inherit every paid section of the default (online, curriculum,
ACPBench: 46 more jobs on gpt-4o). A model that is not a reference model now runs only
the regimes, methods and plan settings the user's own files name; the reference models
keep running the merged config. The workflow's plan (`snakemake -n`), its printed table,
`planaudit check` and `planaudit estimate` read the rule from one place
(`planaudit.config.restrict`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import planaudit

# the repository of the planaudit under test (its workflow and its default config)
REPO = Path(planaudit.__file__).resolve().parents[2]
USER = {"models": [{"name": "gpt-4o", "model": "openai/gpt-4o"}],
        "offline": {"methods": ["direct"]}}


def dry_run(*args: str) -> subprocess.CompletedProcess:
    """`snakemake -n` in the repository, as a user runs it."""
    bin_ = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([str(bin_ / "snakemake"), "-n", "--nolock", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def job_counts(out: str) -> dict[str, int]:
    """Snakemake's job stats: rule -> jobs."""
    stats = out.split("Job stats:")[1].split("total")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\S+)\s+(\d+)$", stats, re.M)}


def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump({"results": str(tmp_path / "results"),
                                    "cache": str(tmp_path / "cache"), **USER}))
    return path


def test_a_user_file_naming_one_offline_strategy_plans_only_that_job(tmp_path):
    """The issue's own file: one offline job on gpt-4o, beside the suite and analysis jobs;
    no online, curriculum or ACPBench job; the printed table lists only it."""
    done = dry_run("--configfile", str(user_file(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout + done.stderr
    counts = job_counts(out)
    paid = {rule: n for rule, n in counts.items() if rule.endswith("_gpt-4o")}
    assert paid == {"offline_gpt-4o": 1}, paid
    assert counts["check_model"] == 1 and counts["report"] == 1
    table = out.split("Paid jobs")[1].split("\n\n")[0]
    assert re.search(r"gpt-4o\s+offline\s+1\s+direct", table), table
    for regime in ("online", "curriculum", "acpbench"):
        assert re.search(rf"gpt-4o\s+{regime}\s+0\s+none", table), table


def test_check_shows_the_table_the_workflow_prints(tmp_path):
    """`planaudit check --config my.yaml` shows the same paid jobs as the workflow."""
    env = dict(os.environ, OPENAI_API_KEY="sk-test-not-used")
    done = subprocess.run([sys.executable, "-m", "planaudit.cli", "check", "--config",
                           str(user_file(tmp_path))], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    workflow = dry_run("--configfile", str(user_file(tmp_path)))
    table = done.stdout.split("Paid jobs")[1].split("\n(")[0]
    assert table in workflow.stderr, (table, workflow.stderr[-2000:])
    assert re.search(r"gpt-4o\s+offline\s+1\s+direct", table)


def test_the_rule_in_one_place():
    """restrict: a section not named is left out; in a named one, each list of what runs
    that is not named is left out (online's plan settings fall back to `none`); what says
    how a named job runs (budget, params) is inherited. Reference models keep all."""
    from planaudit.config import load_named, merge, restrict
    from planaudit.experiment import Experiment

    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    named = {"models": [*base["models"], {"name": "gpt-4o", "model": "openai/gpt-4o"}],
             "online": {"methods": ["react"]}}
    config = merge(base, named)
    mine = restrict(config, named)
    assert "offline" not in mine and "curriculum" not in mine and "acpbench" not in mine
    assert mine["online"]["methods"] == ["react"] and "plan_settings" not in mine["online"]
    assert mine["online"]["budget"] == base["online"]["budget"]
    experiment = Experiment.from_dict(config, named)
    gpt = experiment.for_model(experiment.model("gpt-4o"))
    assert gpt.section("online").plan_settings == ("none",)
    assert gpt.section("offline").methods == ()
    oracle = experiment.for_model(experiment.model("oracle"))
    assert oracle.section("offline").methods == tuple(base["offline"]["methods"])
    assert oracle.section("online").plan_settings == tuple(base["online"]["plan_settings"])
    # with no file of the user's the default is what they run: it names everything
    os.chdir(REPO)
    config, named = load_named()
    assert named == config


@pytest.mark.parametrize("name, planned", [
    # rule -> jobs as c37b3d8 planned them (measured with `snakemake -n` there)
    ("config.yaml", {"offline_oracle": 7, "online_oracle": 10, "curriculum_oracle": 10,
                     "acpbench_oracle": 8}),
    ("paper.yaml", {"offline_gpt-4o": 6, "online_gpt-4o": 21, "offline_gemini-2.0-flash": 6,
                    "online_gemini-2.0-flash-lite": 21}),
    ("local.yaml", {"offline_smollm2": 2, "online_smollm2": 2, "curriculum_smollm2": 2,
                    "acpbench_smollm2": 8}),
])
def test_the_default_and_the_paid_configs_plan_what_they_planned(tmp_path, name, planned):
    """The default still runs everything on the reference models; the repository's paid
    configs, which name every section, plan the jobs they planned before."""
    done = dry_run("--configfile", f"config/{name}", "--config", f"results={tmp_path}/r")
    assert done.returncode == 0, done.stderr[-2000:]
    counts = job_counts(done.stdout + done.stderr)
    assert {rule: counts.get(rule, 0) for rule in planned} == planned


def test_the_estimate_job_prints_calls_and_dollars_before_any_paid_job(tmp_path):
    """Once the suite is prepared and before the first paid job: the workflow's `estimate`
    job prints the paid jobs with their calls and dollars (to the terminal and
    estimate.txt), and every paid job takes it as an input; reference models need none."""
    from tests.conftest import blocksworld_config, snakemake

    gpt = {"name": "gpt-4o", "model": "openai/gpt-4o"}
    cfg = blocksworld_config(tmp_path, {"p01": "solvable", "p02": "solvable"},
                             models=[gpt], offline={"methods": ["direct", "cot"]})
    estimate = tmp_path / "results" / "estimate.txt"
    done = snakemake(cfg, str(estimate))
    assert done.returncode == 0, done.stderr[-3000:]
    text = estimate.read_text()
    assert re.search(r"gpt-4o\s+offline\s+2\s+direct, cot", text), text
    # the estimate's own rows: 2 tasks x 1 call (direct) and 2 x 2 (cot), each priced
    assert re.search(r"gpt-4o\s+offline\s+direct\s+2\s+2\s", text), text
    assert re.search(r"gpt-4o\s+offline\s+cot\s+2\s+4\s", text), text
    assert re.search(r"USD\n.*\n.*direct.*\s\d+\.\d\d\n", text), text
    assert text.strip() in done.stdout, done.stdout[-3000:]  # printed to the terminal
    assert not (tmp_path / "results" / "episodes").exists()  # nothing paid ran
    plan = snakemake(cfg, "-n")
    offline = plan.stdout.split("rule offline_gpt-4o:")[1].split("\n\n")[0]
    assert str(estimate) in offline, offline
    oracle = blocksworld_config(tmp_path / "ref", {"p01": "solvable"},
                                offline={"methods": ["direct"]})
    assert "rule estimate:" not in snakemake(oracle, "-n").stdout
