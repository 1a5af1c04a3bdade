"""Loading tasks from files, parsing each distinct domain and problem once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from planaudit.formal.ground import Task
from planaudit.formal.syntax import Domain, load_domain, load_problem


@lru_cache(maxsize=64)
def _domain(path: str) -> Domain:
    return load_domain(path)


def domain_at(path: str | Path) -> Domain:
    return _domain(str(Path(path).resolve()))


def load_task(domain_path: str | Path, problem_path: str | Path) -> Task:
    """A fresh task (its own operator cache) from a domain and a problem file."""
    domain = domain_at(domain_path)
    return Task(domain, load_problem(problem_path, domain))
