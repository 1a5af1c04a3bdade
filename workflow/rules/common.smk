# Config validation and target lists: the only bookkeeping in the workflow.
import json
from pathlib import Path

from snakemake.utils import validate

from planaudit.suite.catalog import load_suite, obfuscated


validate(config, schema="../schemas/config.schema.yaml")

RESULTS = config.get("results", "results")
SUITE = config["suite"]
SUITE_ROOT = SUITE["root"]
SUMMARY = f"{RESULTS}/suite/summary.csv"
AUDIT = f"{RESULTS}/suite/audit.csv"

ENTRIES = {(e.domain, e.id): e for e in load_suite(SUITE)}
TRUTHS = [f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in ENTRIES]
SUITE_DOMAINS = list(dict.fromkeys(d for d, _ in ENTRIES))
# Disguises: each a variant folder <task>@<disguise> per task, built by a job per domain x
# disguise from the undisguised task (so adding one never reruns the undisguised suite job)
DISGUISES = SUITE.get("disguise", ["none"])
DISGUISED = [x for x in DISGUISES if x != "none"]
DISGUISED_TRUTHS = [f"{RESULTS}/suite/{d}/{t}@{x}/truth.json" for x in DISGUISED for d, t in ENTRIES]
EPISODE_TRUTHS = TRUTHS + DISGUISED_TRUTHS


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
