"""Reading ACPBench files: one item per question, its task built from the item's PDDL."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from planaudit.formal.ground import Task
from planaudit.formal.syntax import Domain, parse_domain, parse_problem

# ACPBench's group names (the `group` field) and the short names of its folders
TASKS = {
    "applicable_actions_gen": "app",
    "progression_gen": "prog",
    "reachable_atom_gen": "reach",
    "validation_gen": "val",
    "reachable_action_gen": "areach",
    "action_justification_gen": "just",
    "landmarks_gen": "land",
    "goal_closer_gen": "nexta",
}
ORDER = ("app", "val", "prog", "reach", "areach", "just", "land", "nexta")


class ItemsError(Exception):
    """A file that is not an ACPBench gen file: the message names it."""


@dataclass(frozen=True)
class Item:
    id: str
    task: str  # the short type name: app, prog, ...
    question: str
    domain: str  # PDDL text
    problem: str  # PDDL text; its :init is the state asked about
    answer: object  # the file's answer: only agree.py reads it
    context: str = ""  # the domain and state in words, as the file poses them

    def planning_task(self) -> Task:
        """A fresh task (its own operator cache) for this item's PDDL."""
        dom = _domain(self.domain)
        return Task(dom, parse_problem(self.problem, dom, f"<item {self.id}>"))


@lru_cache(maxsize=32)
def _domain(text: str) -> Domain:
    return parse_domain(text, "<acpbench domain>")


def read_items(path: str | Path) -> list[Item]:
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            rows = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ItemsError(f"{path}: {e}") from e
    if not isinstance(rows, list):
        raise ItemsError(f"{path}: not a list of items")
    items = []
    for n, row in enumerate(rows):
        try:
            group = row["group"]
            task = TASKS[group]
            items.append(Item(str(row["id"]), task, row["question"], row["PDDL_domain"],
                              row["PDDL_problem"], row.get("answer"),
                              str(row.get("context", ""))))
        except (KeyError, TypeError) as e:
            raise ItemsError(f"{path}: item {n}: not an ACPBench gen item ({e})") from e
    return items
