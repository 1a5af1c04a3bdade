"""Writing parsed PDDL back out (the obfuscated and the disguised hidden models)."""

from __future__ import annotations

from planaudit.formal import number
from planaudit.formal.number import pddl as _num
from planaudit.formal.syntax import Domain, Problem


def _literal(fn: str, args: tuple[str, ...], v) -> str:
    """An :init value, which PDDL allows only as a number literal: a value with no
    finite decimal (1/3) has none, and an approximation would change the problem."""
    text = _num(v)
    if text.startswith("("):
        raise ValueError(f"(= ({' '.join((fn, *args))}) {number.render(v)}) cannot be written "
                         "in :init: the value has no finite decimal, and PDDL's :init takes "
                         "number literals only")
    return text


def _params(params) -> str:
    return " ".join(f"{p} - {ts[0]}" if len(ts) == 1 else f"{p} - (either {' '.join(ts)})"
                    for p, ts in params)


def expression(e: tuple) -> str:
    tag = e[0]
    if tag == "num":
        return _num(e[1])
    if tag == "fn":
        return "(" + " ".join((e[1], *e[2])) + ")"
    if tag == "neg":
        return f"(- {expression(e[1])})"
    return f"({e[1]} {expression(e[2])} {expression(e[3])})"


def formula(f: tuple) -> str:
    tag = f[0]
    if tag == "atom":
        return "(" + " ".join((f[1], *f[2])) + ")"
    if tag in ("and", "or"):
        return f"({tag} " + " ".join(formula(g) for g in f[1]) + ")"
    if tag == "not":
        return f"(not {formula(f[1])})"
    if tag == "imply":
        return f"(imply {formula(f[1])} {formula(f[2])})"
    if tag == "eq":
        return f"(= {f[1]} {f[2]})"
    if tag == "cmp":
        return f"({f[1]} {expression(f[2])} {expression(f[3])})"
    return f"({tag} ({_params(f[1])}) {formula(f[2])})"


def problem(p: Problem) -> str:
    """A PDDL problem file for `p` (objects grouped by type, one fact a line)."""
    by_type: dict[tuple[str, ...], list[str]] = {}
    for name, types in p.objects.items():
        by_type.setdefault(types, []).append(name)
    objects = "\n    ".join(" ".join(names) + " - " + (types[0] if len(types) == 1 else
                                                      f"(either {' '.join(types)})")
                             for types, names in by_type.items())
    init = [formula(("atom", pred, args)) for pred, args in p.init_atoms]
    init += [f"(= {expression(('fn', fn, args))} {_literal(fn, args, v)})"
             for (fn, args), v in p.init_values.items()]
    lines = [f"(define (problem {p.name})", f"  (:domain {p.domain_name})",
             f"  (:objects\n    {objects})" if objects else "  (:objects)",
             "  (:init\n    " + "\n    ".join(init) + ")",
             f"  (:goal {formula(p.goal)})"]
    if p.metric is not None:
        lines.append(f"  (:metric {p.metric[0]} {expression(p.metric[1])})")
    return "\n".join(lines) + ")\n"


def effect(e: tuple) -> str:
    tag = e[0]
    if tag == "add":
        return formula(("atom", e[1], e[2]))
    if tag == "del":
        return f"(not {formula(('atom', e[1], e[2]))})"
    if tag == "assign":
        return f"({e[1]} {expression(('fn', *e[2]))} {expression(e[3])})"
    if tag == "when":
        return f"(when {formula(e[1])} (and {' '.join(effect(x) for x in e[2])}))"
    return f"(forall ({_params(e[1])}) (and {' '.join(effect(x) for x in e[2])}))"


def _typed(names: dict) -> str:
    return " ".join(f"{n} - {ts[0]}" if len(ts) == 1 else f"{n} - (either {' '.join(ts)})"
                    for n, ts in names.items())


def domain(d: Domain) -> str:
    """A PDDL domain file for `d` (the disguised hidden model): it parses back to `d`."""
    lines = [f"(define (domain {d.name})"]
    if d.requirements:
        lines.append(f"  (:requirements {' '.join(sorted(d.requirements))})")
    if d.types:
        lines.append("  (:types " + " ".join(f"{t} - {p}" for t, p in d.types.items()) + ")")
    if d.constants:
        lines.append(f"  (:constants {_typed(d.constants)})")
    if d.predicates:
        lines.append("  (:predicates\n    " + "\n    ".join(
            "(" + " ".join((p, _params(ps))).strip() + ")" for p, ps in d.predicates.items())
            + ")")
    if d.functions:
        lines.append("  (:functions\n    " + "\n    ".join(
            "(" + " ".join((f, _params(ps))).strip() + ") - number"
            for f, ps in d.functions.items()) + ")")
    for a in d.actions.values():
        lines += [f"  (:action {a.name}", f"    :parameters ({_params(a.params)})",
                  f"    :precondition {formula(a.precondition)}",
                  f"    :effect (and {' '.join(effect(x) for x in a.effects)}))"]
    return "\n".join(lines) + ")\n"
