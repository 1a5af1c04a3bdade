"""Preparing a task for the experiment: the hidden model (obfuscated where the
config says so), its name map, and its briefs.

Everything downstream reads `results/suite/<domain>/<task>/`: `domain.pddl`
and `problem.pddl` are the hidden model exactly as truth is computed on it and
as plans are judged against it; `names.json` maps original → shown names;
`brief.json` holds the three texts a planner sees.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

from planaudit import atomic
from planaudit.formal import write
from planaudit.formal.syntax import load_domain, load_problem
from planaudit.suite import generic
from planaudit.suite.brief import PREAMBLE, load_templates, render
from planaudit.suite.catalog import TaskEntry
from planaudit.suite.obfuscate import name_map, rename


def describe(entry: TaskEntry, description: str = "templates") -> str:
    """How a built-in task is described: its domain's `nl.yaml` templates, or the
    generic description from PDDL alone (asked for, or no `nl.yaml` to use)."""
    if description == "generic" or not (entry.domain_file.parent / "nl.yaml").is_file():
        return "generic"
    return "templates"


def prepare(entry: TaskEntry, outdir: Path, obfuscate: bool, seed: int,
            description: str = "templates", disguise: str = "none") -> dict:
    outdir.mkdir(parents=True, exist_ok=True)
    domain = load_domain(entry.domain_file)
    problem = load_problem(entry.problem_file, domain)
    if disguise != "none":
        return _prepare_disguised(entry, outdir, obfuscate, seed, disguise, domain, problem)
    atomic.copy_file(entry.domain_file, outdir / "domain.pddl")
    if obfuscate:
        names = name_map(problem, seed, f"{entry.domain}/{entry.id}")
        problem = rename(problem, names)
        atomic.write_text(outdir / "problem.pddl", write.problem(problem))
    else:
        names = {o: o for o in sorted(problem.objects)}
        atomic.copy_file(entry.problem_file, outdir / "problem.pddl")
    if entry.external:
        brief = {"preamble": PREAMBLE, "domain": entry.domain_prompt,
                 "instance": entry.instance_prompt, "facts_covered": None,
                 "source": str(entry.problem_file.parent.parent / "prompts.json")}
        if obfuscate:  # the published prompts name the original objects
            brief["instance"] = _rename_text(brief["instance"], names)
    elif describe(entry, description) == "generic":
        brief = generic.render(domain, problem)
    else:
        templates = load_templates(entry.domain_file.parent / "nl.yaml")
        brief = {**render(domain, problem, templates), "source": templates.source}
    atomic.write_text(outdir / "names.json", json.dumps(names, indent=1, sort_keys=True) + "\n")
    atomic.write_text(outdir / "brief.json", json.dumps(brief, indent=1) + "\n")
    return brief


def _prepare_disguised(entry: TaskEntry, outdir: Path, obfuscate: bool, seed: int,
                       disguise: str, domain, problem) -> dict:
    """The task under a disguise: a hidden model of its own (renamed PDDL written through
    formal/), described from that model alone; names.json records every renaming."""
    from planaudit.suite import disguise as dg

    avoid = [*problem.objects, *domain.constants, entry.domain, problem.name]
    vocab = dg.name_map(domain, disguise, seed, avoid)
    tag = hashlib.sha256(f"{seed}:{entry.domain}:{disguise}:name".encode()).hexdigest()[:8]
    dname = f"domain-{tag}"
    domain = replace(dg.rename_domain(domain, vocab), name=dname)
    problem = replace(dg.rename_problem(problem, vocab), name=f"{dname}-{entry.id}",
                      domain_name=dname)
    if obfuscate:  # object prefixes come from the disguised types
        objects = name_map(problem, seed, f"{entry.domain}/{entry.id}")
        problem = rename(problem, objects)
    else:
        objects = {o: o for o in sorted(problem.objects)}
    (outdir / "domain.pddl").write_text(write.domain(domain))
    (outdir / "problem.pddl").write_text(write.problem(problem))
    if entry.external:
        raise ValueError(f"{entry.domain}/{entry.id}: disguises apply to built-in suites only "
                         "(an external suite's published prompts name the original model)")
    brief = generic.render(domain, problem)
    names = {"disguise": disguise, "seed": seed, "objects": objects, **vocab}
    (outdir / "names.json").write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    (outdir / "brief.json").write_text(json.dumps(brief, indent=1) + "\n")
    return brief


def object_names(names: dict) -> dict[str, str]:
    """original → shown object names, from either form of names.json (a disguised task's
    records its other renamings beside the objects)."""
    return names["objects"] if "disguise" in names else names


def _rename_text(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"(?<![\w-])(" + "|".join(
        re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w-])", re.I)
    return pattern.sub(lambda m: names[m.group(1).lower()], text)


def prepare_task(config: dict, domain: str, task: str, results: Path,
                 progress=lambda _msg: None) -> Path:
    """One task prepared and proven exactly as the suite rules would, for a command that
    needs just that task (`planaudit episode` on a fresh clone); returns its folder."""
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import find_entry, obfuscated
    from planaudit.suite.records import make_disguised_truth, make_truth

    suite, truth = config["suite"], config["truth"]
    task, _, disguise = task.partition("@")  # p01@deceptive: the task under a disguise
    entry = find_entry(suite, domain, task)
    folder = results / "suite" / domain / task
    seed, hide = int(suite.get("seed", 0)), obfuscated(suite, domain)
    limits = Limits(truth["bfs_states"], truth["astar_seconds"], truth["external_seconds"],
                    truth["external"])
    if not (folder / "brief.json").is_file():
        prepare(entry, folder, hide, seed, suite.get("description", "templates"))
    if not (folder / "truth.json").is_file():
        make_truth(entry, folder, limits, suite.get("audit", "strict"), progress)
    if not disguise:
        return folder
    variant = folder.with_name(f"{task}@{disguise}")
    if not (variant / "truth.json").is_file():
        prepare(entry, variant, hide, seed, disguise=disguise)
        make_disguised_truth(entry, variant, folder, disguise, limits,
                             suite.get("audit", "strict"), progress)
    return variant
