"""Phase-1 texts coded by hand, as the PlanBench paper checked its participants' texts:
the pure logic behind `/admin/coding` (app.py) and the export's `codings.csv` and
`coding.json` (export.py), kept apart from the web application so it can be tested and
reused without a server.

A coder gives either the steps they read in a text (one grounded action a line, checked
against the task's actions) or a verdict. Agreement is measured over one coded category
per coding, whatever its kind: a steps coding is judged by `formal/` on the hidden model
(`Material.check`), so that two coders who read the same plan differently but both
validly agree, and empty steps are `not a plan`. The automatic reading
(`human.reading.read_text`) gets a category the same way, so it can be compared with
each coder. Cohen's kappa is statsmodels' (`cohens_kappa` on the contingency table), and
undefined (None, with the reason) when only one category occurs: chance agreement is
then 1 and the formula divides by zero."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from planaudit.contract import parse_action
from planaudit.formal.plan import format_step

if TYPE_CHECKING:
    from planaudit.human.reading import Reading
    from planaudit.study.materials import Material

VALID, INVALID, NOT_A_PLAN = "valid", "invalid", "not a plan"
CATEGORIES = (VALID, INVALID, NOT_A_PLAN)  # also the verdicts a coder may give
KINDS = ("steps", "verdict")
CODER = re.compile(r"[A-Za-z0-9_-]{1,32}")


class CodingError(ValueError):
    """A coding that cannot be stored; the message names the line or field at fault."""


def read_steps(text: str, m: Material) -> list[str]:
    """A coder's steps: each non-blank line one grounded action of `m`'s task, as
    `(unstack c a)` (numbering and `unstack c a` accepted too); the first line that is
    not one is named, since a coder's slip must not pass for a step."""
    from planaudit.formal.ground import GroundingError

    actions = frozenset(m.task.domain.actions)
    steps = []
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not line.strip():
            continue
        said = f"line {n}: '{line.strip()[:80]}' is not an action of this task"
        parsed = parse_action(line, actions)
        if parsed is None:
            raise CodingError(f"{said} (one grounded action a line, such as (unstack c a))")
        try:
            m.task.operator(*parsed)
        except GroundingError as e:
            raise CodingError(f"{said}: {e.detail}") from None
        steps.append(format_step(parsed))
    return steps


def value_of(kind: str, steps: str, verdict: str, m: Material) -> list[str] | str:
    """What a coding form stores: the steps read (`kind` steps) or the verdict."""
    if kind == "steps":
        return read_steps(steps, m)
    if kind == "verdict":
        if verdict not in CATEGORIES:
            raise CodingError(f"verdict: choose one of {', '.join(CATEGORIES)}")
        return verdict
    raise CodingError("kind: give the steps or a verdict")


def category(kind: str, value, m: Material) -> str:
    """The coded category of a coding: a verdict is itself; steps are judged by `formal/`
    on the hidden model (none: `not a plan`)."""
    if kind == "verdict":
        return str(value)
    if not value:
        return NOT_A_PLAN
    return VALID if m.check(list(value)).valid else INVALID


def from_outcome(text_outcome: str | None) -> str:
    """The automatic reading's category from a row's `text_outcome`: success is valid,
    malformed (no step read) is not a plan, any other plan outcome invalid."""
    if text_outcome == "success":
        return VALID
    return NOT_A_PLAN if text_outcome in (None, "malformed") else INVALID


def planbench_config(m: Material):
    """PlanBench's config of a PlanBench instance (its words read phase 1), else None."""
    pb = m.truth.get("planbench")
    if not pb:
        return None
    from planaudit.planbench.material import load_config

    root = Path(pb["root"])
    return load_config(root if root.is_absolute() or root.exists() else m.folder / root,
                       m.truth["domain"])


def automatic(text: str, m: Material) -> tuple[Reading, str, list[str]]:
    """The automatic reading of a phase-1 text (shown to coders as a suggestion), its
    category as the judge gives it (`human.judge._phase1`) and its steps as actions."""
    from planaudit.human.reading import read_text

    reading = read_text(text, m.task, planbench_config(m))
    if reading.kind != "plan":
        return reading, NOT_A_PLAN, []
    steps = [format_step(s) for s in reading.steps]
    return reading, VALID if m.check(steps).valid else INVALID, steps


def latest(rows: Iterable[dict]) -> dict[tuple[str, str], dict]:
    """The coding that counts per (pseudonym, coder): the last of `rows` (oldest first)."""
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        out[(r["pseudonym"], r["coder"])] = r
    return out


def agree(categories: Iterable[str]) -> bool | None:
    """Whether a text's coders agree (None: fewer than two have coded it)."""
    got = list(categories)
    return None if len(got) < 2 else len(set(got)) == 1


def kappa(pairs: list[tuple[str, str]]) -> dict:
    """Cohen's kappa of two raters' categories, one pair a text: statsmodels' on the
    contingency table, with the texts, the observed and the chance agreement. None with
    a reason when there is no text, or a single category (chance agreement 1)."""
    n = len(pairs)
    if not n:
        return {"texts": 0, "observed_agreement": None, "chance_agreement": None,
                "kappa": None, "kappa_reason": "no text coded by both"}
    cats = [c for c in CATEGORIES if any(c in p for p in pairs)]
    cats += sorted({c for p in pairs for c in p} - set(cats))
    table = [[sum(p == (r, c) for p in pairs) for c in cats] for r in cats]
    observed = sum(table[i][i] for i in range(len(cats))) / n
    chance = sum(sum(table[i]) * sum(row[i] for row in table) for i in range(len(cats))) / n**2
    out = {"texts": n, "observed_agreement": observed, "chance_agreement": chance,
           "table": {"categories": cats, "counts": table}}
    if len(cats) < 2:
        return {**out, "kappa": None,
                "kappa_reason": f"undefined: only one category occurs ({cats[0]}), so chance "
                                "agreement is 1 and kappa divides by zero"}
    from statsmodels.stats.inter_rater import cohens_kappa

    return {**out, "kappa": float(cohens_kappa(table, return_results=False)),
            "kappa_reason": None}


def pair(codes: Mapping[str, Mapping[str, str]]) -> tuple[str, str] | None:
    """The two coders who coded the most texts in common (ties: by name); None with
    fewer than two coders."""
    duos = list(combinations(sorted(codes), 2))
    if not duos:
        return None
    return max(duos, key=lambda d: len(codes[d[0]].keys() & codes[d[1]].keys()))  # first of ties


def summary(codes: Mapping[str, Mapping[str, str]], machine: Mapping[str, str],
            instances: Mapping[str, str] | None = None) -> dict:
    """`coding.json`: `codes` (coder -> pseudonym -> category, the last coding each) as
    kappa between the pair of coders with the most texts in common, over those texts, the
    texts they disagree on (for a third coder), and the automatic reading's agreement
    with each coder (`machine`: pseudonym -> its category)."""
    instances = instances or {}
    two = pair(codes)
    out: dict = {"categories": list(CATEGORIES),
                 "coders": {c: len(codes[c]) for c in sorted(codes)},
                 "method": "Cohen's kappa, statsmodels.stats.inter_rater.cohens_kappa on the "
                           "contingency table of the pair's categories",
                 "pair": None if two is None else list(two)}
    if two is None:
        out.update(kappa([]), kappa_reason="fewer than two coders", disagreements=[])
    else:
        a, b = two
        common = sorted(codes[a].keys() & codes[b].keys())
        out.update(kappa([(codes[a][p], codes[b][p]) for p in common]))
        if "table" in out:
            out["table"].update(rows=a, columns=b)
        out["disagreements"] = [
            {"pseudonym": p, "instance": instances.get(p), "codes": {a: codes[a][p], b: codes[b][p]}}
            for p in common if codes[a][p] != codes[b][p]]
    out["automatic"] = {}
    for coder in sorted(codes):
        common = sorted(codes[coder].keys() & machine.keys())
        k = kappa([(machine[p], codes[coder][p]) for p in common])
        k.pop("table", None)
        out["automatic"][coder] = {**k, "disagreements": [
            {"pseudonym": p, "automatic": machine[p], "coder": codes[coder][p]}
            for p in common if machine[p] != codes[coder][p]]}
    return out
