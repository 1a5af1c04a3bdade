"""What a test case needs of a suite domain, decided before any call: so that a test
that cannot be generated on a domain is left out of the plan when the workflow is built
and named in the build's output, the job's log and the report, instead of failing its
job after the other jobs have paid for their calls (issue 37, finding 15).

A suite domain's prompts are rendered from its `nl.yaml` (every test case); a prompt
with solved examples of other tasks (t3 always, the others but t5 when `shots` > 0)
needs a second solvable task; t5 needs an instance family, built in
(`families.GENERATORS`) or declared beside the domain (`families.FAMILY_FILE`).

The same rule reads the suite's sources when the workflow is built (`at_build`: the
labels tasks.yaml claims) and the prepared suite in a job (`in_job`: the proven truths),
so the plan and the job agree; the report reads the sources, as the build did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from planaudit.curriculum.families import FAMILY_FILE, has_family


@dataclass(frozen=True)
class DomainFacts:
    """What the rule reads of one suite domain."""

    name: str
    folder: Path | None  # the domain's own folder (nl.yaml, family.yaml); None: unknown
    templates: bool  # its briefs are rendered from its nl.yaml
    solvable: int  # its solvable tasks (claimed when built, proven in a job)


def why_not(test: str, facts: DomainFacts, shots: int) -> str | None:
    """Why `test` cannot be generated on the domain (None: it can)."""
    if not facts.templates:
        return ("its briefs do not come from an nl.yaml (an external suite's prompts.json, "
                "or suite.description: generic), and every curriculum prompt is rendered "
                "from a domain's templates")
    if facts.solvable == 0:
        return "it has no solvable task to build a case from"
    if test == "t5" and not has_family(facts.name, facts.folder):
        where = facts.folder / FAMILY_FILE if facts.folder else FAMILY_FILE
        return (f"t5 needs an instance family and the domain has none: declare one in "
                f"{where} (docs: tutorial, your own domain), or leave t5 out")
    if (test == "t3" or (test != "t5" and shots > 0)) and facts.solvable < 2:
        return (f"its prompt shows a solved example of another task, and the domain has "
                f"{facts.solvable} solvable task (set curriculum.shots: 0, or add one)"
                if test != "t3" else
                "t3 shows solved examples of other tasks, and the domain has 1 solvable task")
    return None


def at_build(entries: Iterable, description: str = "templates") -> dict[str, DomainFacts]:
    """Each domain's facts from the suite's sources (`suite.catalog.TaskEntry`s: every
    prepared task of the domain, whatever `suite.tasks` selects)."""
    by_domain: dict[str, list] = {}
    for e in entries:
        by_domain.setdefault(e.domain, []).append(e)
    out = {}
    for name, found in by_domain.items():
        folder = found[0].domain_file.parent
        templates = (not found[0].external and description != "generic"
                     and (folder / "nl.yaml").is_file())
        out[name] = DomainFacts(name, folder, templates,
                                sum(e.label == "solvable" for e in found))
    return out


def in_job(suite_dir: Path, domain: str) -> DomainFacts:
    """A domain's facts from the prepared suite (`results/suite/<domain>/`)."""
    base = Path(suite_dir) / domain
    folders = sorted(p.parent for p in base.glob("*/truth.json") if "@" not in p.parent.name)
    solvable, source = 0, ""
    for folder in folders:
        truth = json.loads((folder / "truth.json").read_text())
        solvable += bool(truth.get("solvable") and truth.get("plan"))
        brief = folder / "brief.json"
        if not source and brief.is_file():
            source = json.loads(brief.read_text()).get("source", "")
    templates = source.endswith("nl.yaml") and Path(source).is_file()
    return DomainFacts(domain, Path(source).parent if templates else None, templates, solvable)


def skips(tests: Sequence[str], facts: dict[str, DomainFacts], domains: Iterable[str],
          shots_of) -> dict[tuple[str, str], str]:
    """(test, domain) -> why, for every pair of `tests` x suite `domains` that cannot be
    generated; `shots_of(test)` is the test's effective `shots`."""
    out = {}
    for test in tests:
        for d in domains:
            if d in facts:
                why = why_not(test, facts[d], int(shots_of(test)))
                if why:
                    out[(test, d)] = why
    return out


def skip_line(test: str, domain: str, why: str) -> str:
    return f"curriculum: {test} is not run on {domain}: {why}"
