"""`planaudit suite new`: the files a domain of one's own needs, written from its PDDL.

A user brings `domain.pddl` and `problems/*.pddl`; this writes `tasks.yaml` (one
entry per problem, its label left to fill: labels are claims the audit checks,
so they must come from the user, never from our own proof) and `nl.yaml` (one
template per type, predicate, function and action). Every value to fill starts
with `TODO`, and the suite refuses to run until none is left, naming each one.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from planaudit.formal.syntax import load_domain
from planaudit.suite.catalog import CatalogError

PLACEHOLDER = "TODO"


def _quote(text: str) -> str:
    """Double-quoted, so that names such as on/off/yes/no stay strings."""
    return yaml.safe_dump(text, default_style='"', width=1000).strip()


def nl_skeleton(domain) -> str:
    lines = ["# Brief templates: {0}, {1}, ... stand for a fact's arguments in order.",
             "# Replace every TODO; the suite refuses to run while one is left.",
             f"world: {_quote(PLACEHOLDER + ': describe the world in a sentence or two')}",
             "types:"]
    types = sorted(t for t in domain.types if t != "object") or ["object"]
    lines += [f"  {_quote(t)}: {_quote(f'{PLACEHOLDER}: what a {t} is')}" for t in types]
    lines.append("predicates:")
    for name, params in sorted(domain.predicates.items()):
        args = " ".join(f"{{{i}}}" for i in range(len(params)))
        lines.append(f"  {_quote(name)}: "
                     + _quote(f"{PLACEHOLDER}: a sentence saying {name} of {args}".strip()))
    fns = sorted(domain.functions)
    if fns:
        lines.append("functions:")
        for name in fns:
            args = " ".join(f"{{{i}}}" for i in range(len(domain.functions[name])))
            lines.append(f"  {_quote(name)}: "
                         + _quote(f"{PLACEHOLDER}: the quantity {name} of {args}".strip()))
    lines.append("actions:")
    lines += [f"  {_quote(a)}: {_quote(f'{PLACEHOLDER}: what {a} does, in one sentence')}"
              for a in sorted(domain.actions)]
    return "\n".join(lines) + "\n"


def tasks_skeleton(domain_name: str, problems: list[Path]) -> str:
    lines = [f"domain: {domain_name}",
             "# label: solvable or unsolvable (a claim: the suite proves it and audits it);",
             "# optimal_length: the claimed optimal plan length, or null.",
             "tasks:"]
    for i, p in enumerate(problems, 1):
        lines += [f"  - id: p{i:02d}", f"    problem: problems/{p.name}",
                  f"    label: {PLACEHOLDER}", "    optimal_length: null",
                  f"    tests: {_quote(PLACEHOLDER + ': what this task tests')}"]
    return "\n".join(lines) + "\n"


def new_domain(folder: Path) -> list[Path]:
    """Write tasks.yaml and nl.yaml beside a domain's PDDL; never overwrite."""
    domain_file = folder / "domain.pddl"
    if not domain_file.is_file():
        raise CatalogError(f"{domain_file}: missing (put the domain's PDDL there first, and its "
                           "problems in problems/*.pddl)")
    problems = sorted((folder / "problems").glob("*.pddl"))
    if not problems:
        raise CatalogError(f"{folder / 'problems'}: no *.pddl problem files")
    targets = {folder / "tasks.yaml": None, folder / "nl.yaml": None}
    if existing := [str(t) for t in targets if t.exists()]:
        raise CatalogError(f"{', '.join(existing)}: already there (not overwritten)")
    domain = load_domain(domain_file)
    (folder / "tasks.yaml").write_text(tasks_skeleton(folder.name, problems))
    (folder / "nl.yaml").write_text(nl_skeleton(domain))
    return list(targets)
