"""Briefs: the natural-language form of a task, rendered from its hidden PDDL.

A planner sees three texts: a shared preamble (the output contract, and that a
task may be unsolvable), a domain brief (the world, the object types, every
action with its parameters, preconditions, effects and cost) and an instance
brief (the objects, every initial fact, the goal, what to minimise). Both
briefs are rendered mechanically from the parsed model through the domain's
`nl.yaml` templates, so they say everything the model says and nothing else.
The coverage audit then proves it for the instance: every initial and goal fact
must appear, through its predicate's template, with all of its objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from planaudit.formal import number
from planaudit.formal.ground import COST_FUNCTION
from planaudit.formal.syntax import Domain, Problem
from planaudit.formal.task import conjuncts
from planaudit.formal.write import formula

PREAMBLE = (
    "You are given a planning task: a description of a world and its actions, "
    "an initial state and a goal.\n"
    "Answer with a plan: one grounded action per line, written as "
    "(action-name argument1 argument2 ...) with the arguments in the order the "
    "action lists them, all inside a single fenced code block.\n"
    "Some tasks cannot be solved: if no sequence of actions reaches the goal from "
    "the initial state, answer with the single word UNSOLVABLE instead of a plan."
)

_CMP = {"<": "is less than", "<=": "is at most", ">": "is greater than",
        ">=": "is at least", "=": "equals"}


class BriefError(ValueError):
    """A template that is missing or drops part of a fact: names file and fact."""


class RenderFailed(Exception):
    """What an episode would tell the model cannot be put in the brief's words: the
    episode ends as `error` naming the condition, rather than telling the model something
    vaguer than its brief (a fallback sentence would reach the model unnoticed)."""


@dataclass
class Templates:
    source: str
    world: str
    types: dict[str, str]
    predicates: dict[str, str]
    functions: dict[str, str]
    actions: dict[str, str]


def load_templates(path: str | Path) -> Templates:
    """The templates of one nl.yaml (read once per process and file version)."""
    path = Path(path)
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        stamp = None
    return _load_templates(str(path), stamp)


@lru_cache(maxsize=32)
def _load_templates(name: str, _stamp: int | None) -> Templates:
    path = Path(name)
    if not path.is_file():
        raise BriefError(f"{path}: missing (every domain needs its brief templates)")
    data = yaml.safe_load(path.read_text()) or {}
    for key in ("world", "types", "predicates", "actions"):
        if key not in data:
            raise BriefError(f"{path}: missing field '{key}'")
    for key in ("types", "predicates", "functions", "actions"):
        for k in data.get(key) or {}:
            if not isinstance(k, str):  # YAML reads a bare on/off/yes/no as a boolean
                raise BriefError(f"{path}: {key}: the name {k!r} is not a string; quote it")
    left = [key for key in ("world",) if str(data[key]).startswith("TODO")] + [
        f"{key}.{k}" for key in ("types", "predicates", "functions", "actions")
        for k, v in (data.get(key) or {}).items() if str(v).startswith("TODO")]
    if left:  # placeholders written by `planaudit suite new`
        raise BriefError(f"{path}: still a placeholder (replace the TODO text): {', '.join(left)}")
    return Templates(str(path), str(data["world"]).strip(), dict(data["types"] or {}),
                     dict(data["predicates"] or {}), dict(data.get("functions") or {}),
                     dict(data["actions"] or {}))


class Renderer:
    """Turns formulas, expressions and effects into English through templates."""

    def __init__(self, t: Templates):
        self.t = t

    def atom(self, pred: str, args: tuple[str, ...]) -> str:
        tpl = self.t.predicates.get(pred)
        if tpl is None:
            raise BriefError(f"{self.t.source}: no template for predicate '{pred}'")
        try:
            return tpl.format(*args)
        except IndexError:
            raise BriefError(f"{self.t.source}: template of '{pred}' uses more arguments "
                             f"than the predicate has: {tpl!r}") from None

    def function(self, fn: str, args: tuple[str, ...]) -> str:
        tpl = self.t.functions.get(fn)
        if tpl is None:
            raise BriefError(f"{self.t.source}: no template for function '{fn}'")
        return tpl.format(*args)

    def expr(self, e: tuple) -> str:
        tag = e[0]
        if tag == "num":
            return number.render(e[1])  # exact: 0.3, or 1/3 where no decimal is
        if tag == "fn":
            return self.function(e[1], e[2])
        if tag == "neg":
            return f"minus {self.expr(e[1])}"
        return f"({self.expr(e[2])} {e[1]} {self.expr(e[3])})"

    def sentence(self, f: tuple) -> str:
        tag = f[0]
        if tag == "atom":
            return self.atom(f[1], f[2])
        if tag == "not":
            g = f[1]
            if g[0] == "eq":
                return f"{g[1]} and {g[2]} are different objects"
            return f"it is not the case that {self.sentence(g)}"
        if tag == "and":
            return "all of: " + "; ".join(self.sentence(g) for g in f[1])
        if tag == "or":
            return "at least one of: " + "; ".join(self.sentence(g) for g in f[1])
        if tag == "imply":
            return f"if {self.sentence(f[1])}, then {self.sentence(f[2])}"
        if tag == "eq":
            return f"{f[1]} and {f[2]} are the same object"
        if tag == "cmp":
            return f"{self.expr(f[2])} {_CMP[f[1]]} {self.expr(f[3])}"
        quant = "every" if tag == "forall" else "some"
        over = ", ".join(f"{v} ({' or '.join(ts)})" for v, ts in f[1])
        return f"for {quant} {over}: {self.sentence(f[2])}"

    def literals(self, f: tuple) -> list[str]:
        return [self.sentence(c) for c in conjuncts(f) if c != ("and", ())]

    def effect(self, e: tuple) -> str:
        tag = e[0]
        if tag == "add":
            return f"now true: {self.atom(e[1], e[2])}"
        if tag == "del":
            return f"no longer true: {self.atom(e[1], e[2])}"
        if tag == "assign":
            target = self.function(*e[2])
            verb = {"increase": "increases by", "decrease": "decreases by", "assign": "becomes",
                    "scale-up": "is multiplied by", "scale-down": "is divided by"}[e[1]]
            return f"{target} {verb} {self.expr(e[3])}"
        if tag == "when":
            inner = "; ".join(self.effect(x) for x in e[2])
            return f"if {self.sentence(e[1])}, then: {inner}"
        over = ", ".join(f"{v} ({' or '.join(ts)})" for v, ts in e[1])
        return f"for every {over}: " + "; ".join(self.effect(x) for x in e[2])


def _cost(effects: tuple) -> tuple | None:
    for e in effects:
        if e[0] == "assign" and e[2] == (COST_FUNCTION, ()):
            return e[3]
    return None


def domain_brief(domain: Domain, t: Templates) -> str:
    r = Renderer(t)
    lines = [t.world, "", "Object types:"]
    for ty in sorted(set(domain.types) | {"object"}):
        if ty == "object" and domain.types:
            continue
        if ty not in t.types:
            raise BriefError(f"{t.source}: no description for type '{ty}'")
        parent = domain.types.get(ty, "object")
        kind = f" (a kind of {parent})" if parent != "object" else ""
        lines.append(f"- {ty}{kind}: {t.types[ty]}")
    has_cost = COST_FUNCTION in domain.functions
    lines += ["", "Actions (write each as (name argument1 argument2 ...), in the order of "
              "its parameters):"]
    for act in domain.actions.values():
        if act.name not in t.actions:
            raise BriefError(f"{t.source}: no description for action '{act.name}'")
        sig = " ".join((act.name, *(p for p, _ in act.params)))
        lines += ["", f"({sig})", f"  {t.actions[act.name]}"]
        if act.params:
            lines.append("  Parameters: " + ", ".join(
                f"{p} ({' or '.join(ts)})" for p, ts in act.params) + ".")
        pre = r.literals(act.precondition)
        lines.append("  Preconditions:" if pre else "  Preconditions: none.")
        lines += [f"  - {s}" for s in pre]
        effects = [e for e in act.effects if not (e[0] == "assign" and e[2] == (COST_FUNCTION, ()))]
        lines.append("  Effects:")
        lines += [f"  - {r.effect(e)}" for e in effects]
        if has_cost:
            cost = _cost(act.effects)
            lines.append(f"  Cost: {r.expr(cost) if cost is not None else 0}.")
    return "\n".join(lines)


def _objects_line(domain: Domain, problem: Problem) -> list[str]:
    by_type: dict[str, list[str]] = {}
    for name, types in {**domain.constants, **problem.objects}.items():
        by_type.setdefault(" or ".join(types), []).append(name)
    return [f"- {ty}: {', '.join(sorted(names))}" for ty, names in sorted(by_type.items())]


def instance_parts(domain: Domain, problem: Problem, t: Templates) -> tuple[list, list, list]:
    """(initial facts, goal conditions, numeric values) as (fact, sentence) pairs."""
    r = Renderer(t)
    init = [(("atom", p, a), r.atom(p, a)) for p, a in problem.init_atoms]
    values = [((fn, a, v), f"{r.function(fn, a)} is {r.expr(('num', v))}")
              for (fn, a), v in problem.init_values.items() if fn != COST_FUNCTION]
    goal = [(c, r.sentence(c)) for c in conjuncts(problem.goal) if c != ("and", ())]
    return init, goal, values


def instance_brief(domain: Domain, problem: Problem, t: Templates) -> str:
    init, goal, values = instance_parts(domain, problem, t)
    lines = ["Objects:", *_objects_line(domain, problem), "", "Initial state (every fact not "
             "listed here is false):"]
    lines += [f"- {s}" for _, s in init]
    lines += [f"- {s}" for _, s in values]
    lines += ["", "Goal (all of these must hold at the end):"]
    lines += [f"- {s}" for _, s in goal]
    metric = problem.metric
    if metric is not None and metric[1] == ("fn", COST_FUNCTION, ()):
        lines += ["", "Minimise the total cost of the plan (the sum of its actions' costs)."]
    else:
        lines += ["", "Minimise the number of actions in the plan."]
    return "\n".join(lines)


def _objects_of(f: tuple) -> set[str]:
    tag = f[0]
    if tag == "atom":
        return {a for a in f[1:][1] if not a.startswith("?")}
    if tag in ("and", "or"):
        return set().union(*(_objects_of(g) for g in f[1])) if f[1] else set()
    if tag == "not":
        return _objects_of(f[1])
    if tag == "imply":
        return _objects_of(f[1]) | _objects_of(f[2])
    if tag == "eq":
        return {a for a in f[1:] if not a.startswith("?")}
    if tag in ("forall", "exists"):
        return _objects_of(f[2])
    if tag == "cmp":
        return _expr_objects(f[2]) | _expr_objects(f[3])
    return set()


def _expr_objects(e: tuple) -> set[str]:
    if e[0] == "fn":
        return {a for a in e[2] if not a.startswith("?")}
    if e[0] == "op":
        return _expr_objects(e[2]) | _expr_objects(e[3])
    if e[0] == "neg":
        return _expr_objects(e[1])
    return set()


def _mentions(text: str, name: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text) is not None


def audit(domain: Domain, problem: Problem, t: Templates, instance: str) -> int:
    """Every initial and goal fact appears with all its objects; returns the count."""
    init, goal, values = instance_parts(domain, problem, t)
    checked = 0
    for fact, text in init + goal:
        for obj in sorted(_objects_of(fact)):
            if not _mentions(text, obj):
                raise BriefError(f"{t.source}: the template of '{_pred(fact)}' drops '{obj}': "
                                 f"{formula(fact)} renders as {text!r}")
        if f"- {text}" not in instance:
            raise BriefError(f"{t.source}: {formula(fact)} is missing from the instance brief")
        checked += 1
    for (fn, args, _v), text in values:
        for obj in args:
            if not _mentions(text, obj):
                raise BriefError(f"{t.source}: the template of function '{fn}' drops '{obj}': "
                                 f"{text!r}")
        checked += 1
    return checked


def _pred(f: tuple) -> str:
    while f[0] == "not":
        f = f[1]
    return f[1] if f[0] == "atom" else f[0]


def render(domain: Domain, problem: Problem, t: Templates) -> dict:
    """The brief record of one task, audited for coverage."""
    instance = instance_brief(domain, problem, t)
    facts = audit(domain, problem, t, instance)
    return {"preamble": PREAMBLE, "domain": domain_brief(domain, t), "instance": instance,
            "facts_covered": facts}
