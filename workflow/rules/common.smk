# Config validation and target lists: the only bookkeeping in the workflow.
import yaml
from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml")

RESULTS = config.get("results", "results")
DOMAIN_ROOT = config["suite"]["root"]
DOMAINS = config["suite"]["domains"]
SUMMARY = f"{RESULTS}/suite/summary.csv"


def suite_tasks():
    """(domain, task) pairs, read from each domain's tasks.yaml."""
    pairs = []
    for d in DOMAINS:
        listing = Path(DOMAIN_ROOT) / d / "tasks.yaml"
        if not listing.is_file():
            raise ValueError(f"config suite.domains: {d!r} has no {listing}")
        for t in yaml.safe_load(listing.read_text())["tasks"]:
            pairs.append((d, str(t["id"])))
    return pairs


SUITE_TASKS = suite_tasks()
TRUTHS = [f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in SUITE_TASKS]


def task_problem(wildcards):
    listing = Path(DOMAIN_ROOT) / wildcards.domain / "tasks.yaml"
    for t in yaml.safe_load(listing.read_text())["tasks"]:
        if str(t["id"]) == wildcards.task:
            return str(Path(DOMAIN_ROOT) / wildcards.domain / t["problem"])
    raise ValueError(f"{listing}: no task {wildcards.task}")
