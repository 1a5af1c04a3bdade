"""Suites: where tasks, their labels and (for external suites) their briefs come from.

Built-in: `domains/<domain>/domain.pddl`, `tasks.yaml` and (optionally) `nl.yaml`.
`tasks.yaml` lists each task's id, problem file, label (`solvable` or
`unsolvable`), the optimal length it claims (or null) and one line on what it
tests.

External (a published benchmark's layout): `<root>/<domain>/domain.pddl`,
`<root>/<domain>/problems_pddl/problemN.pddl` and `<root>/<domain>/prompts.json`
with `domain_prompt`, `actions` and `problems` (`id` such as `p01`, `prompt`,
`optimal_cost` where -1 means unsolvable, `difficulty`). Its briefs come from
the file.

Labels are claims either way: `audit.py` checks them against what is proven.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import yaml

LABELS = ("solvable", "unsolvable")


class CatalogError(ValueError):
    """A malformed tasks.yaml: the message names the file and the field."""


@dataclass(frozen=True)
class TaskEntry:
    domain: str
    id: str
    domain_file: Path
    problem_file: Path
    label: str
    optimal_length: int | None
    tests: str
    external: bool = False
    optimal_cost: float | None = None  # claimed by an external suite
    domain_prompt: str | None = None
    instance_prompt: str | None = None


def load_domain_tasks(root: str | Path, domain: str) -> list[TaskEntry]:
    base = Path(root) / domain
    path = base / "tasks.yaml"
    if not path.is_file():
        raise CatalogError(f"{path}: missing (every domain lists its tasks there)")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CatalogError(f"{path}: not YAML: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise CatalogError(f"{path}: needs a 'tasks' list")
    entries = []
    for i, t in enumerate(data["tasks"]):
        where = f"{path}: tasks[{i}]"
        if not isinstance(t, dict):
            raise CatalogError(f"{where}: not a mapping")
        for key in ("id", "problem", "label"):
            if key not in t:
                raise CatalogError(f"{where}: missing field '{key}'")
        if t["label"] not in LABELS:
            raise CatalogError(f"{where}.label: '{t['label']}' is not one of "
                               f"{', '.join(LABELS)} (fill in what you claim; the suite proves it)")
        opt = t.get("optimal_length")
        if opt is not None and (not isinstance(opt, int) or opt < 0):
            raise CatalogError(f"{where}.optimal_length: must be a whole number or null")
        problem = base / t["problem"]
        if not problem.is_file():
            raise CatalogError(f"{where}.problem: {problem} does not exist")
        entries.append(TaskEntry(domain, str(t["id"]), base / "domain.pddl", problem,
                                 t["label"], opt, str(t.get("tests", ""))))
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise CatalogError(f"{path}: task ids repeat")
    return entries


def find_task(root: str | Path, domain: str, task: str) -> TaskEntry:
    for e in load_domain_tasks(root, domain):
        if e.id == task:
            return e
    raise CatalogError(f"{Path(root) / domain / 'tasks.yaml'}: no task '{task}'")


def load_external_tasks(root: str | Path, domain: str) -> list[TaskEntry]:
    base = Path(root) / domain
    path = base / "prompts.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CatalogError(f"{path}: missing (an external domain needs its prompts)") from None
    except json.JSONDecodeError as e:
        raise CatalogError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    for key in ("domain_prompt", "problems"):
        if key not in data:
            raise CatalogError(f"{path}: missing field '{key}'")
    actions = data.get("actions") or {}
    action_text = "\n".join(f"- {k}: {v}" for k, v in actions.items()) if isinstance(
        actions, dict) else "\n".join(f"- {a}" for a in actions)
    domain_prompt = data["domain_prompt"] + ("\n\nActions:\n" + action_text if action_text else "")
    entries = []
    for i, prob in enumerate(data["problems"]):
        where = f"{path}: problems[{i}]"
        for key in ("id", "prompt", "optimal_cost"):
            if key not in prob:
                raise CatalogError(f"{where}: missing field '{key}'")
        m = re.fullmatch(r"p0*(\d+)", str(prob["id"]))
        if not m:
            raise CatalogError(f"{where}.id: '{prob['id']}' is not of the form p01")
        problem = base / "problems_pddl" / f"problem{int(m.group(1))}.pddl"
        if not problem.is_file():
            raise CatalogError(f"{where}: {problem} does not exist")
        cost = prob["optimal_cost"]
        if not isinstance(cost, int | float):
            raise CatalogError(f"{where}.optimal_cost: must be a number (-1 for unsolvable)")
        label = "unsolvable" if cost == -1 else "solvable"
        entries.append(TaskEntry(domain, str(prob["id"]), base / "domain.pddl", problem, label,
                                 None, f"difficulty {prob.get('difficulty', '?')}", True,
                                 None if cost == -1 else float(cost), domain_prompt,
                                 str(prob["prompt"])))
    return entries


# what every domain folder must hold, and what goes in it (named in the error when missing)
NEEDS = {
    "builtin": {
        "domain.pddl": "the domain in PDDL (the hidden model's actions and predicates)",
        "tasks.yaml": "the task list: id, problem, label (solvable or unsolvable), optimal_length",
        # nl.yaml (the brief templates) is optional: without it, briefs are rendered from
        # the PDDL alone (suite/generic.py)
    },
    "external": {
        "domain.pddl": "the domain in PDDL",
        "prompts.json": "domain_prompt, actions and problems (id, prompt, optimal_cost)",
        "problems_pddl": "the problems, problemN.pddl",
    },
}


def domain_folders(root: Path) -> list[Path]:
    """Every folder of a suite root (hidden and underscore folders aside)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def check_domain_folder(folder: Path, source: str = "builtin") -> None:
    """A domain folder missing a file it needs is an error naming the file and its use,
    never a folder silently skipped."""
    if not folder.is_dir():
        raise CatalogError(f"{folder}: no such domain folder")
    missing = [f"{name} ({what})" for name, what in NEEDS[source].items()
               if not (folder / name).exists()]
    if missing:
        hint = " (`planaudit suite new` writes a skeleton)" if source == "builtin" else ""
        raise CatalogError(f"{folder}: missing {'; '.join(missing)}{hint}")


def suite_domains(suite: dict) -> list[str]:
    """The domains a suite config names; by default every domain folder under its root.
    Each must hold what its layout needs."""
    root = Path(suite["root"])
    source = suite.get("source") or "builtin"
    if not root.is_dir():
        raise CatalogError(f"suite.root: {root} is not a folder")
    folders = [root / d for d in suite["domains"]] if suite.get("domains") else domain_folders(root)
    if not folders:
        raise CatalogError(f"{root}: no domain folder (each domain is a folder holding "
                           f"{', '.join(NEEDS[source])})")
    for folder in folders:
        check_domain_folder(folder, source)
    return [f.name for f in folders]


def obfuscated(suite: dict, domain: str) -> bool:
    """Built-in domains listed under `obfuscate`; external ones under `obfuscate_external`
    (so that an external suite keeps its names unless its own config asks)."""
    key = "obfuscate_external" if suite.get("source") == "external" else "obfuscate"
    return domain in (suite.get(key) or [])


def presentation(suite: dict, domain: str) -> str:
    """How a domain's tasks are shown under a suite config, in words a report can print:
    people and models are compared only on the same presentation."""
    if obfuscated(suite, domain):
        return f"obfuscated names (seed {int(suite.get('seed', 0))})"
    return "plain names"


def load_suite(suite: dict) -> list[TaskEntry]:
    """Every task of a suite config (`source`, `root`, `domains`), whatever `tasks`
    selects (`selected_suite` applies it)."""
    loader = load_external_tasks if suite.get("source") == "external" else load_domain_tasks
    return [e for d in suite_domains(suite) for e in loader(suite["root"], d)]


def find_entry(suite: dict, domain: str, task: str) -> TaskEntry:
    root = Path(suite["root"])
    known = [f.name for f in domain_folders(root)] if root.is_dir() else []
    if domain not in known:
        raise CatalogError(f"suite at {root}: no domain '{domain}' (have: {', '.join(known) or 'none'})")
    entries = load_suite(dict(suite, domains=[domain]))
    for e in entries:
        if e.id == task:
            return e
    raise CatalogError(f"suite at {root}: no task '{domain}/{task}' "
                       f"(have: {', '.join(e.id for e in entries)})")


# -- a selection of tasks (suite.tasks) --------------------------------------------------


class SelectionError(CatalogError):
    """A `suite.tasks` pattern that selects nothing: `where` is the field's path in the
    config (("suite", "tasks", 2)), so the caller can name its file and line."""

    def __init__(self, message: str, where: tuple[str | int, ...]):
        super().__init__(message)
        self.where = where


def _pattern(pattern: str) -> tuple[str, str]:
    """`domain/glob` -> (domain, glob); the schema has checked the form."""
    domain, _, glob = pattern.partition("/")
    return domain, glob


def selects(patterns: Sequence[str] | None, domain: str, task: str) -> bool:
    """Whether `domain/task` is selected (None: every task is). A disguised variant
    (`p01@deceptive`) follows its task, so the selection never names a disguise."""
    if patterns is None:
        return True
    base = task.partition("@")[0]
    return any(d == domain and fnmatchcase(base, glob) for d, glob in map(_pattern, patterns))


def _span(ids: list[str]) -> str:
    return ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} tasks, {ids[0]}..{ids[-1]}"


def select_tasks(entries: Sequence[TaskEntry], patterns: Sequence[str] | None,
                 domains: Sequence[str] | None = None) -> list[TaskEntry]:
    """The entries `patterns` select, in suite order (None: all of them). Every pattern
    must name one of `domains` (default: the entries' domains) and match a task of it: a
    typo would otherwise run, and bill, another experiment than the one meant."""
    if patterns is None:
        return list(entries)
    _check_domains(patterns, list(domains) if domains is not None
                   else list(dict.fromkeys(e.domain for e in entries)))
    for i, pattern in enumerate(patterns):
        domain, glob = _pattern(pattern)
        ids = [e.id for e in entries if e.domain == domain]
        if not any(fnmatchcase(t, glob) for t in ids):
            raise SelectionError(f"suite.tasks[{i}]: '{pattern}' matches no task ({domain} has "
                                 f"{_span(ids) or 'no task'})", ("suite", "tasks", i))
    return [e for e in entries if selects(patterns, e.domain, e.id)]


def _check_domains(patterns: Sequence[str], domains: list[str]) -> None:
    for i, pattern in enumerate(patterns):
        domain = _pattern(pattern)[0]
        if domain not in domains:
            raise SelectionError(f"suite.tasks[{i}]: '{pattern}': no domain '{domain}' in the "
                                 f"suite (have: {', '.join(domains) or 'none'})",
                                 ("suite", "tasks", i))


def selected_suite(suite: dict) -> tuple[list[TaskEntry], list[TaskEntry]]:
    """(the tasks the suite stage prepares, the tasks episodes run on). Without `tasks`,
    every task both times. With it, every task of each domain a pattern names is prepared
    (the curriculum draws examples and t5's family sizes from all of a domain's solvable
    tasks, so a selected task's prompts are the full run's; widening the selection within
    those domains reruns no suite job), and only the selected tasks run."""
    patterns = suite.get("tasks")
    if patterns is None:
        entries = load_suite(suite)
        return entries, entries
    domains = suite_domains(suite)
    _check_domains(patterns, domains)  # before loading: no named domain would load them all
    named = {_pattern(p)[0] for p in patterns}
    prepared = load_suite(dict(suite, domains=[d for d in domains if d in named]))
    return prepared, select_tasks(prepared, patterns, domains)


def run_domains(selection: Sequence[str] | None, suite_dir: Path) -> list[str]:
    """The prepared suite domains a regime runs on when its section lists none (as the
    workflow): those the selection `suite.tasks` names, else every domain folder of
    `suite_dir`."""
    if selection is not None:
        return list(dict.fromkeys(p.partition("/")[0] for p in selection))
    return sorted(p.name for p in suite_dir.iterdir() if p.is_dir()) if suite_dir.is_dir() else []
