# Config validation and target lists: the only bookkeeping in the workflow.
import json
import shutil
import subprocess
from pathlib import Path

from jsonschema import Draft202012Validator
from snakemake.utils import validate

from planaudit.config import BASE_CONFIG, locate, restrict
from planaudit.experiment import Experiment
from planaudit.regime import regimes
from planaudit.suite.catalog import SelectionError, obfuscated, selected_suite
from planaudit.suite.sweep import SweepError, with_sweeps


# each regime's section is checked against the regime's own schema (planaudit.regime
# `Regime.schema`: planaudit's in src/planaudit/<regime>/schema.yaml), the rest against
# the file; an error names the config file, line and field
_SECTIONS = {r.key: r.schema for r in regimes().values() if r.schema is not None}
validate({k: v for k, v in config.items() if k not in _SECTIONS}, schema="../schemas/config.schema.yaml")

RESULTS = config.get("results", "results")
CONFIG_FILES = [BASE_CONFIG, *(workflow.overwrite_configfiles or [])]  # in the order laid
# difficulty sweeps (suite.sweep): generated tasks laid into the suite as domains of their
# own, written now (their tasks make the DAG) and only where their text changed
if config["suite"].get("sweep"):
    try:
        config["suite"] = with_sweeps(config["suite"], f"{RESULTS}/sweep")
    except SweepError as e:
        raise ValueError(f"{locate(CONFIG_FILES, ('suite', 'sweep'), config)}{e}") from None
SUITE = config["suite"]
SUITE_ROOT = SUITE["root"]
SUMMARY = f"{RESULTS}/suite/summary.csv"
AUDIT = f"{RESULTS}/suite/audit.csv"

# suite.tasks (docs/howto/pilot.md): the suite jobs prepare every task of each
# domain it names, the episode jobs run the selected tasks only. A pattern that selects
# nothing fails here, naming its file and line, before any job (and any paid call) runs.
for _name, _schema in _SECTIONS.items():
    if _name not in config:
        continue  # as the common schema: a section left out is not checked
    for _e in Draft202012Validator(_schema).iter_errors(config[_name]):
        _where = (_name, *_e.absolute_path)
        raise ValueError(f"{locate(CONFIG_FILES, _where, config)}{'.'.join(map(str, _where))}: {_e.message}")
try:
    _PREPARED, SELECTED = selected_suite(SUITE)
except SelectionError as e:
    raise ValueError(f"{locate(CONFIG_FILES, e.where, config)}{e}") from None
ENTRIES = {(e.domain, e.id): e for e in _PREPARED}

# What runs is what the user's files name (docs/tutorial/own-model.md): Snakemake lays config/config.yaml
# under the --configfile files and --config values (`overwrite_config`, empty when there are
# none: then the default is the user's and names all). A model that is not a reference model
# runs only the regimes, methods and plan settings those name (planaudit.config.restrict);
# reference models run the merged config. A batch-mode job past its model's
# batch_max_waves fails the run here, before any job.
NAMED = workflow.config_settings.overwrite_config or config
PAID_CONFIG = restrict(config, NAMED)
EXPERIMENT = Experiment.from_dict(config, NAMED)
for _entry in EXPERIMENT.models:
    if _entry.refusal:
        raise ValueError(_entry.refusal)
# the selection as explicit ids for the shards' specs (a changed set reruns them; the
# cache answers every episode already run); None when it leaves out no prepared task, so
# that a config without suite.tasks keeps its params and its finished jobs
SELECTED_TASKS = (None if len(SELECTED) == len(_PREPARED)
                  else [f"{e.domain}/{e.id}" for e in SELECTED])
TRUTHS = [f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in ENTRIES]
SUITE_DOMAINS = list(dict.fromkeys(d for d, _ in ENTRIES))
# Disguises: each a variant folder <task>@<disguise> per task, built by a job per domain x
# disguise from the undisguised task (so adding one never reruns the undisguised suite job)
DISGUISES = SUITE.get("disguise", ["none"])
DISGUISED = [x for x in DISGUISES if x != "none"]
DISGUISED_TRUTHS = [f"{RESULTS}/suite/{d}/{t}@{x}/truth.json" for x in DISGUISED for d, t in ENTRIES]


def task_folder(task, disguise="none"):
    """A task's folder name under a disguise: <task>, or <task>@<disguise>."""
    return task if disguise == "none" else f"{task}@{disguise}"


def ready_marker(domain, disguise="none"):
    """The file that stands for a domain's prepared tasks under a disguise (suite.smk)."""
    return f"{RESULTS}/suite/{task_folder(domain, disguise)}.ready"


READY = {d: ready_marker(d) for d in SUITE_DOMAINS}
DISGUISED_READY = [ready_marker(d, x) for x in DISGUISED for d in SUITE_DOMAINS]


# What one job asks a cluster for (docs/howto/cluster.md): minutes of wall
# time and MB of memory, sized from the measured jobs with room for real models; locally
# they limit nothing unless `--resources mem_mb=...` is given. `slurm_partition` from the
# config goes to every job (absent: the cluster's default partition).
# A regime's jobs ask for its `Regime.size` (episode jobs: episodes x calls x latency /
# max_concurrency with a real model, 720 min; the curriculum's and ACPBench's, 360 min).
JOB_SIZES = {
    "check": (10, 1000),  # under 1 s; 4-7 s importing litellm
    "estimate": (30, 2000),  # every paid job's stand-in calls on the prepared briefs
    "suite": (120, 4000),  # 10 s - 2 min measured; A* (truth.astar_seconds CPU s) and the
    # external planner (truth.external_seconds) per task bound it; 200 MB measured
    **{name: r.size for name, r in regimes().items()},
    "analysis": (60, 8000),  # collect, tables (bootstrap), figures, report
}


def check_partition(name):
    """A partition the cluster does not have is an error naming it, before any job is
    submitted (sbatch would refuse every job one by one). Without sinfo (a local run), or
    when sinfo cannot reach a controller, nothing is checked here."""
    if not name or not shutil.which("sinfo"):
        return
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return
    have = sorted(set(out.stdout.split()))
    if out.returncode == 0 and have and name not in have:
        raise ValueError(
            f"config slurm_partition: the cluster has no partition '{name}' (have: {', '.join(have)})"
        )


check_partition(config.get("slurm_partition"))


def job_resources(kind):
    runtime, mem_mb = JOB_SIZES[kind]
    res = {"runtime": runtime, "mem_mb": mem_mb}
    if config.get("slurm_partition"):
        res["slurm_partition"] = config["slurm_partition"]
    return res


def domain_inputs(domain):
    """The source files of one domain's tasks: the domain, its problems and its listing."""
    files = []
    for (d, _), e in ENTRIES.items():
        if d != domain:
            continue
        listing = "prompts.json" if e.external else "tasks.yaml"
        files += [str(e.domain_file), str(e.problem_file), str(e.domain_file.parent / listing)]
        if not e.external:
            files.append(str(e.domain_file.parent / "nl.yaml"))
    return list(dict.fromkeys(files))


def model_spec(wildcards):
    entry = next(m for m in config["models"] if m["name"] == wildcards.model)
    return json.dumps({"models": [entry]})
