"""Object names replaced by random identifiers, so a model cannot lean on memory.

Every problem object becomes `<type prefix>_<6 hex digits>` (`airplane_1` →
`air_4f77ec`). The digits come from SHA-256 of the seed, the task and the
original name, so a seed always gives the same bijection; a clash (rare) is
resolved by taking more digits. Domain constants, actions and predicates keep
their names: they carry the meaning the briefs explain.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

from planaudit.formal.syntax import Problem


def prefix(types: tuple[str, ...]) -> str:
    word = re.sub(r"[^a-z0-9]", "", types[0].lower()) or "obj"
    return word[:3]


def name_map(problem: Problem, seed: int | str, task_key: str) -> dict[str, str]:
    """original → obfuscated, a bijection onto fresh names, deterministic for a seed."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(problem.objects):
        digest = hashlib.sha256(f"{seed}:{task_key}:{name}".encode()).hexdigest()
        width = 6
        new = f"{prefix(problem.objects[name])}_{digest[:width]}"
        while new in taken or new in problem.objects:
            width += 1
            new = f"{prefix(problem.objects[name])}_{digest[:width]}"
        taken.add(new)
        out[name] = new
    return out


def _formula(f: tuple, m: dict[str, str]) -> tuple:
    tag = f[0]
    if tag == "atom":
        return ("atom", f[1], tuple(m.get(a, a) for a in f[2]))
    if tag in ("and", "or"):
        return (tag, tuple(_formula(g, m) for g in f[1]))
    if tag == "not":
        return ("not", _formula(f[1], m))
    if tag == "imply":
        return ("imply", _formula(f[1], m), _formula(f[2], m))
    if tag == "eq":
        return ("eq", m.get(f[1], f[1]), m.get(f[2], f[2]))
    if tag == "cmp":
        return ("cmp", f[1], _expr(f[2], m), _expr(f[3], m))
    return (tag, f[1], _formula(f[2], m))  # forall / exists: variables keep their names


def _expr(e: tuple, m: dict[str, str]) -> tuple:
    tag = e[0]
    if tag == "fn":
        return ("fn", e[1], tuple(m.get(a, a) for a in e[2]))
    if tag == "op":
        return ("op", e[1], _expr(e[2], m), _expr(e[3], m))
    if tag == "neg":
        return ("neg", _expr(e[1], m))
    return e


def rename(problem: Problem, m: dict[str, str]) -> Problem:
    """The same problem over renamed objects."""
    return replace(
        problem,
        objects={m.get(o, o): t for o, t in problem.objects.items()},
        init_atoms=[(p, tuple(m.get(a, a) for a in args)) for p, args in problem.init_atoms],
        init_values={(f, tuple(m.get(a, a) for a in args)): v
                     for (f, args), v in problem.init_values.items()},
        goal=_formula(problem.goal, m),
        metric=None if problem.metric is None else (problem.metric[0],
                                                    _expr(problem.metric[1], m)),
    )
