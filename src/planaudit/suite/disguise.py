"""Disguises: the same task under other names for its actions, predicates, functions
and types, so a model cannot lean on what the words mean.

`deceptive` draws unrelated real words (the list in `words.txt`, shipped with the
package) without replacement; `randomized` draws strings of letters and digits. The
map is seeded per domain (every task of a domain shares one disguised vocabulary),
bijective, avoids every name the original model uses, and is recorded in the task's
`names.json`. `total-cost` keeps its name (the metric's meaning rests on it), as do
`object` and the objects themselves (those follow `suite.obfuscate`). The disguised
task is a hidden model of its own: its PDDL is written through `formal.write`, its
truth proven on it and checked against the undisguised task's.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import replace
from functools import cache
from importlib import resources

from planaudit.formal.ground import COST_FUNCTION
from planaudit.formal.syntax import Action, Domain, Problem

DISGUISES = ("none", "deceptive", "randomized")
# the PDDL keywords that are also English words; stripped before a leak scan of PDDL text
PDDL_KEYWORDS = re.compile(r"\(define|\(:action|:precondition|\(:init|:effect|\(:goal"
                           r"|\(domain |\(:domain |:parameters|\(problem ")
KINDS = ("actions", "predicates", "functions", "types")
# words a description or PDDL gives a meaning of its own: never a disguise
RESERVED = frozenset({"and", "or", "not", "imply", "forall", "exists", "when", "either",
                      "object", "number", "increase", "decrease", "assign", "define", "domain",
                      "problem", "total-cost", "unsolvable"})


@cache
def words() -> tuple[str, ...]:
    text = resources.files("planaudit.suite").joinpath("words.txt").read_text()
    out = [w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#")]
    return tuple(dict.fromkeys(out))


def vocabulary(domain: Domain) -> dict[str, list[str]]:
    """The names a disguise replaces, by kind."""
    return {"actions": list(domain.actions), "predicates": list(domain.predicates),
            "functions": [f for f in domain.functions if f != COST_FUNCTION],
            "types": [t for t in domain.types if t != "object"]}


def name_map(domain: Domain, disguise: str, seed: int | str, avoid=()) -> dict[str, dict[str, str]]:
    """kind → (original → disguised), a bijection onto names the model does not use."""
    if disguise not in DISGUISES[1:]:
        raise ValueError(f"no disguise named {disguise!r} (have: {', '.join(DISGUISES)})")
    vocab = vocabulary(domain)
    originals = [n for kind in KINDS for n in vocab[kind]]
    taken = {n.lower() for n in originals} | {a.lower() for a in avoid} | RESERVED
    digest = hashlib.sha256(f"{seed}:{domain.name}:{disguise}".encode()).hexdigest()
    rng = random.Random(digest)
    if disguise == "deceptive":
        pool = [w for w in words() if w not in taken]
        if len(pool) < len(originals):
            raise ValueError(f"words.txt holds {len(pool)} usable words; the domain "
                             f"{domain.name} needs {len(originals)}")
        drawn = rng.sample(pool, len(originals))
    else:
        drawn, alphabet = [], "abcdefghijklmnopqrstuvwxyz0123456789"
        while len(drawn) < len(originals):
            new = rng.choice("abcdefghijklmnopqrstuvwxyz") + "".join(
                rng.choice(alphabet) for _ in range(7))
            if new not in taken and new not in drawn:
                drawn.append(new)
    it = iter(drawn)
    return {kind: {n: next(it) for n in vocab[kind]} for kind in KINDS}


class _Renamer:
    def __init__(self, m: dict[str, dict[str, str]]):
        self.a, self.p = m["actions"], m["predicates"]
        self.f, self.t = m["functions"], m["types"]
        self.v: dict[str, str] = {}  # an action's variables → ?x1, ?x2, ... (hints, too)

    def var(self, a: str) -> str:
        if a.startswith("?") and a not in self.v:
            self.v[a] = f"?x{len(self.v) + 1}"
        return self.v.get(a, a)

    def args(self, args: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(self.var(a) for a in args)

    def types(self, ts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(self.t.get(t, t) for t in ts)

    def params(self, ps) -> tuple:
        return tuple((self.var(v), self.types(ts)) for v, ts in ps)

    def expr(self, e: tuple) -> tuple:
        tag = e[0]
        if tag == "fn":
            return ("fn", self.f.get(e[1], e[1]), self.args(e[2]))
        if tag == "op":
            return ("op", e[1], self.expr(e[2]), self.expr(e[3]))
        if tag == "neg":
            return ("neg", self.expr(e[1]))
        return e

    def formula(self, f: tuple) -> tuple:
        tag = f[0]
        if tag == "atom":
            return ("atom", self.p[f[1]], self.args(f[2]))
        if tag in ("and", "or"):
            return (tag, tuple(self.formula(g) for g in f[1]))
        if tag == "not":
            return ("not", self.formula(f[1]))
        if tag == "imply":
            return ("imply", self.formula(f[1]), self.formula(f[2]))
        if tag == "eq":
            return ("eq", self.var(f[1]), self.var(f[2]))
        if tag == "cmp":
            return ("cmp", f[1], self.expr(f[2]), self.expr(f[3]))
        params = self.params(f[1])
        return (tag, params, self.formula(f[2]))

    def effect(self, e: tuple) -> tuple:
        tag = e[0]
        if tag in ("add", "del"):
            return (tag, self.p[e[1]], self.args(e[2]))
        if tag == "assign":
            return ("assign", e[1], (self.f.get(e[2][0], e[2][0]), self.args(e[2][1])),
                    self.expr(e[3]))
        if tag == "when":
            return ("when", self.formula(e[1]), tuple(self.effect(x) for x in e[2]))
        params = self.params(e[1])
        return ("forall", params, tuple(self.effect(x) for x in e[2]))


def rename_domain(domain: Domain, m: dict[str, dict[str, str]]) -> Domain:
    r = _Renamer(m)
    actions = {}
    for a in domain.actions.values():
        new = r.a[a.name]
        r.v = {}
        params = r.params(a.params)
        actions[new] = Action(new, params, r.formula(a.precondition),
                              tuple(r.effect(e) for e in a.effects))
    r.v = {}
    return replace(
        domain,
        types={r.t.get(t, t): r.t.get(p, p) for t, p in domain.types.items()},
        constants={c: r.types(ts) for c, ts in domain.constants.items()},
        predicates={r.p[p]: r.params(ps) for p, ps in domain.predicates.items()},
        functions={r.f.get(f, f): r.params(ps) for f, ps in domain.functions.items()},
        actions=actions,
        source=f"{domain.source} (disguised)",
    )


def rename_problem(problem: Problem, m: dict[str, dict[str, str]]) -> Problem:
    r = _Renamer(m)
    return replace(
        problem,
        objects={o: r.types(ts) for o, ts in problem.objects.items()},
        init_atoms=[(r.p[p], args) for p, args in problem.init_atoms],
        init_values={(r.f.get(f, f), args): v for (f, args), v in problem.init_values.items()},
        goal=r.formula(problem.goal),
        metric=None if problem.metric is None else (problem.metric[0], r.expr(problem.metric[1])),
    )


def rename_plan_step(step: str, m: dict[str, dict[str, str]], objects: dict[str, str]) -> str:
    """An undisguised plan step `(act o1 o2)` in the disguised task's names."""
    words_ = step.strip().strip("()").split()
    return "(" + " ".join([m["actions"][words_[0]], *(objects.get(o, o) for o in words_[1:])]) + ")"


def originals(names: dict) -> set[str]:
    """The original action, predicate, function and type names a disguised task's
    `names.json` records (what no transcript of it may contain)."""
    return {o for kind in KINDS for o in (names.get(kind) or {})}


def mentions(text: str, name: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text, re.I) is not None
