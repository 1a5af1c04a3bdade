"""A config's natural language: rendering states, goals and plans, and reading
stated facts back (from PlanBench's own prompts, where the text is exact).

PlanBench lists facts sorted by predicate name then arguments, joined as
"A, B, C and D"; a plan is one action phrase a line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

from planaudit.planbench.material import Atom, Config, MaterialError


def sort_key(atom: Atom) -> str:
    return atom[0] + " " + " ".join(atom[1])


def join(parts: list[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def facts_text(cfg: Config, atoms, ordered: bool = False) -> str:
    """Facts as PlanBench states them (sorted unless `ordered`); silent predicates dropped."""
    atoms = list(atoms) if ordered else sorted(atoms, key=sort_key)
    return join([t for a in atoms if (t := cfg.fact_text(a)) is not None])


def plan_text(cfg: Config, steps) -> str:
    """One action phrase a line, each line ended by a newline."""
    return "".join(cfg.action_text(a, tuple(args)) + "\n" for a, args in steps)


@lru_cache(maxsize=64)
def _fact_table(cfg: Config, objects: tuple[str, ...]) -> dict[str, Atom]:
    from planaudit.formal.load import domain_at

    domain = domain_at(cfg.domain_path)
    table: dict[str, Atom] = {}
    for pred, params in domain.predicates.items():
        if not cfg.predicates.get(pred):
            continue
        for args in product(objects, repeat=len(params)):
            table[cfg.fact_text((pred, args)).lower()] = (pred, args)
    return table


_SPLIT = re.compile(r",\s*(?:and\s+)?|\s+and\s+")


def read_facts(cfg: Config, text: str, objects: tuple[str, ...]) -> list[Atom]:
    """The facts of a PlanBench-rendered list ("A, B and C"); MaterialError on a piece
    that is not one of the config's fact phrases over `objects`."""
    table = _fact_table(cfg, tuple(sorted(objects)))
    out = []
    for piece in _SPLIT.split(text.strip().rstrip(".")):
        piece = piece.strip().lower()
        if not piece:
            continue
        atom = table.get(piece)
        if atom is None:
            raise MaterialError(f"{cfg.path}: no predicate template renders '{piece}'")
        out.append(atom)
    return out


@lru_cache(maxsize=64)
def _action_table(cfg: Config, objects: tuple[str, ...]) -> dict[str, tuple[str, tuple[str, ...]]]:
    from planaudit.formal.load import domain_at

    domain = domain_at(cfg.domain_path)
    table = {}
    for name, schema in domain.actions.items():
        for args in product(objects, repeat=len(schema.params)):
            table[cfg.action_text(name, args).lower()] = (name, args)
    return table


def read_plan_exact(cfg: Config, text: str, objects: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """A plan rendered by `plan_text` (one exact phrase a line), as in PlanBench's prompts."""
    table = _action_table(cfg, tuple(sorted(objects)))
    out = []
    for line in text.strip().splitlines():
        line = line.strip().lower()
        if not line:
            continue
        step = table.get(line)
        if step is None:
            raise MaterialError(f"{cfg.path}: no action template renders '{line}'")
        out.append(step)
    return out
