"""The built-in suite: `domains/<domain>/domain.pddl` and `tasks.yaml`.

`tasks.yaml` lists each task's id, problem file, label (`solvable` or
`unsolvable`), the optimal length it claims (or null) and one line on what it
tests. Labels are claims: `audit.py` checks them against what is proven.
"""

from __future__ import annotations

from dataclasses import dataclass
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
            raise CatalogError(f"{where}.label: '{t['label']}' is not one of {LABELS}")
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
