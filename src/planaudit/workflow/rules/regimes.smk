# Every regime's jobs, from the registry (planaudit.regime): one rule per regime x model,
# named <regime>_<model>, one job per key of the regime's job list (offline a strategy,
# online architecture/setting, the curriculum a test case, ACPBench a question type), a
# thin shell over `planaudit <regime> shard`. A regime adds nothing here: its package's
# `regime.py` says its jobs (keys, inputs, outputs, the config slice each depends on, the
# shard's arguments), so a new regime is its package and its config section.
# Each model gets a rule of its own per regime so that a custom resource per model
# (`--resources model_gpt_4o=2`: `planaudit check` prints each model's name) caps how
# many of its jobs run at once, across regimes. A job's params hold exactly the config
# it depends on, so changing one method's parameters reruns that method only; adding a
# domain reruns the model x method jobs, whose finished episodes the cache answers.
# No shard starts before `check_model` has found its model reachable (provider,
# credentials, server): a run that cannot succeed fails in seconds, before any paid
# call. Its marker stays, so that a later run does not rerun every shard; each shard
# checks its model again before its first call.
import dataclasses
import json
import re
import shlex
import sys
from pathlib import Path

from planaudit.config import planner_view
from planaudit.estimate import paid
from planaudit.llm.preflight import resource_name
from planaudit.regime import Workflow, regimes

MODELS = [m["name"] for m in config.get("models", [])]
ENTRY = {m["name"]: m for m in config.get("models", [])}
RESOURCES = {m: resource_name(m) for m in MODELS}
if len(set(RESOURCES.values())) < len(RESOURCES):
    raise ValueError(
        "config models: two model names share one resource name: "
        + ", ".join(f"{m} -> {r}" for m, r in RESOURCES.items())
    )
VIEW = Workflow(
    config=config,
    results=RESULTS,
    domains=SUITE_DOMAINS,
    ready=READY,
    disguised_ready=DISGUISED_READY,
    disguises=DISGUISES,
    selected=SELECTED,
    selected_tasks=SELECTED_TASKS,
    locate=lambda where: locate(CONFIG_FILES, where, config),
)
JOBS = {name: r.jobs(VIEW) for name, r in regimes().items()}
# a classical planner (planner/lama, planner/astar): offline's `planner` method alone
PLANNERS = [m for m in MODELS if ENTRY[m]["model"].startswith("planner/")]
PLANNER_JOBS = (
    {name: r.jobs(dataclasses.replace(VIEW, config=planner_view(config))) for name, r in regimes().items()}
    if PLANNERS
    else {}
)
# a model that is not a reference model or a planner: only what the user's files name
# (common.smk)
PAID = [m for m in MODELS if not ENTRY[m]["model"].startswith(("reference/", "planner/"))]
PAID_JOBS = (
    {name: r.jobs(dataclasses.replace(VIEW, config=PAID_CONFIG)) for name, r in regimes().items()}
    if PAID
    else JOBS
)


def jobs_of(model):
    """Each regime's jobs as `model` runs them."""
    if model in PLANNERS:
        return PLANNER_JOBS
    return PAID_JOBS if model in PAID else JOBS


def runs_for(name):
    """Whom a regime's jobs run for: the config's models, or its own subjects (people)."""
    subjects = JOBS[name].subjects
    return list(subjects) if subjects is not None else MODELS


# every regime's output files, in the registry's order (collect and `all` read them)
SHARDS = {
    name: [f for m in runs_for(name) for f in (JOBS if JOBS[name].subjects is not None else jobs_of(m))[name].files(m)]
    for name in JOBS
}
REGIME_SHARDS = [f for files in SHARDS.values() for f in files]

# Before the first request: what the run pays for (the same table `planaudit check` shows),
# once, in the process that schedules (not in a cluster job's own Snakemake)
if workflow.is_main_process:
    # the jobs alone: the estimate job prices them (pricing here would cost every start,
    # dry runs included, seconds on a prepared suite)
    print(paid(EXPERIMENT, Path(RESULTS) / "suite", priced=False), file=sys.stderr, flush=True)


# ... and once the suite is prepared, before the first paid job: the calls, tokens, dollars
# and waves (estimate.smk's job, printed to the terminal and kept in ESTIMATE). Every paid
# job waits for it; `ancient`, so a new estimate never reruns a finished job.
ESTIMATE = f"{RESULTS}/estimate.txt"


def job_spec(jobs, model):
    return lambda wc: json.dumps(jobs.spec(ENTRY[model], wc.job))


def job_args(jobs, model):
    return lambda wc: " ".join(shlex.quote(a) for a in jobs.args(model, wc.job))


for _name in JOBS:
    if JOBS[_name].subjects is not None:
        continue  # below: no model behind them
    for _model in MODELS:
        _jobs = jobs_of(_model)[_name]
        if not _jobs.keys:
            continue

        rule:
            name:
                f"{_name}_{_model}"
            input:
                _jobs.inputs,
                f"{RESULTS}/checks/{_model}.json",
                [ancient(ESTIMATE)] if _model in PAID else [],
            output:
                [o.replace("{model}", _model) for o in _jobs.outputs],
            wildcard_constraints:
                job="|".join(re.escape(k) for k in _jobs.keys),
            params:
                regime=_name,
                model=_model,
                spec=job_spec(_jobs, _model),
                args=job_args(_jobs, _model),
            resources:
                **{RESOURCES[_model]: 1},
                **job_resources(_name),
            log:
                f"{RESULTS}/logs/{_name}/{_model}/{{job}}.log",
            conda:
                "../envs/planaudit.yaml"
            shell:
                "planaudit {params.regime} shard --spec {params.spec:q} --model {params.model} "
                "{params.args} 2> {log} || (tail -n 20 {log} >&2; exit 1)"


# A regime whose jobs run for subjects that are not models (the people of a study, whose
# records the config names): a rule per subject, with no model check, estimate or
# resource, since no call is made.
for _name, _jobs in JOBS.items():
    if _jobs.subjects is None:
        continue
    for _subject in _jobs.subjects:

        rule:
            name:
                f"{_name}_{_subject}"
            input:
                _jobs.inputs,
            output:
                [o.replace("{model}", _subject) for o in _jobs.outputs],
            wildcard_constraints:
                job="|".join(re.escape(k) for k in _jobs.keys),
            params:
                regime=_name,
                subject=_subject,
                spec=lambda wc, _jobs=_jobs: json.dumps(_jobs.spec(None, wc.job)),
                args=lambda wc, _jobs=_jobs, _subject=_subject: " ".join(
                    shlex.quote(a) for a in _jobs.args(_subject, wc.job)
                ),
            resources:
                **job_resources(_name),
            log:
                f"{RESULTS}/logs/{_name}/{_subject}/{{job}}.log",
            conda:
                "../envs/planaudit.yaml"
            shell:
                "planaudit {params.regime} shard --spec {params.spec:q} --model {params.subject} "
                "{params.args} 2> {log} || (tail -n 20 {log} >&2; exit 1)"
