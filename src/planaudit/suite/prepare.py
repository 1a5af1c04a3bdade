"""Preparing a task for the experiment: the hidden model (obfuscated where the
config says so), its name map, and its briefs.

Everything downstream reads `results/suite/<domain>/<task>/`: `domain.pddl`
and `problem.pddl` are the hidden model exactly as truth is computed on it and
as plans are judged against it; `names.json` maps original → shown names;
`brief.json` holds the three texts a planner sees.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from planaudit import atomic
from planaudit.formal import write
from planaudit.formal.syntax import load_domain, load_problem
from planaudit.suite.brief import PREAMBLE, load_templates, render
from planaudit.suite.catalog import TaskEntry
from planaudit.suite.obfuscate import name_map, rename


def prepare(entry: TaskEntry, outdir: Path, obfuscate: bool, seed: int) -> dict:
    outdir.mkdir(parents=True, exist_ok=True)
    domain = load_domain(entry.domain_file)
    problem = load_problem(entry.problem_file, domain)
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
    else:
        templates = load_templates(entry.domain_file.parent / "nl.yaml")
        brief = {**render(domain, problem, templates), "source": templates.source}
    atomic.write_text(outdir / "names.json", json.dumps(names, indent=1, sort_keys=True) + "\n")
    atomic.write_text(outdir / "brief.json", json.dumps(brief, indent=1) + "\n")
    return brief


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
    from planaudit.suite.records import make_truth

    suite, truth = config["suite"], config["truth"]
    entry = find_entry(suite, domain, task)
    folder = results / "suite" / domain / task
    if not (folder / "brief.json").is_file():
        prepare(entry, folder, obfuscated(suite, domain), int(suite.get("seed", 0)))
    if not (folder / "truth.json").is_file():
        limits = Limits(truth["bfs_states"], truth["astar_seconds"], truth["external_seconds"],
                        truth["external"])
        make_truth(entry, folder, limits, suite.get("audit", "strict"), progress)
    return folder
