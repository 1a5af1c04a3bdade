"""PDDL domains and problems as plain data (the lifted model).

Formulas and effects are tuples tagged by their first element, so they can be
read against the PDDL definition at a glance:

    ("atom", pred, args)   ("not", f)   ("and", fs)   ("or", fs)   ("imply", a, b)
    ("eq", t1, t2)         ("cmp", op, e1, e2)         ("forall"|"exists", params, f)
    expressions: ("num", v)  ("fn", name, args)  ("op", sym, e1, e2)  ("neg", e)
    effects:     ("add", pred, args)  ("del", pred, args)  ("assign", op, (fn, args), e)
                 ("when", cond, effects)  ("forall", params, effects)

A parameter list is a tuple of (name, types) where `types` is a tuple of type
names (more than one only for `either`). A number `v` is exact: an int, or a
rational when not integral (`number.parse`), never a float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from planaudit.formal import number
from planaudit.formal.number import Number
from planaudit.formal.sexpr import PDDLError, SExpr, line_of_word, parse, read_file

SUPPORTED_REQUIREMENTS = frozenset(
    {
        ":strips", ":typing", ":negative-preconditions", ":disjunctive-preconditions",
        ":equality", ":existential-preconditions", ":universal-preconditions",
        ":quantified-preconditions", ":conditional-effects", ":adl",
        ":numeric-fluents", ":fluents", ":action-costs",
    }
)
UNSUPPORTED_REQUIREMENTS = frozenset(
    {
        ":durative-actions", ":duration-inequalities", ":continuous-effects",
        ":derived-predicates", ":timed-initial-literals", ":preferences",
        ":constraints", ":object-fluents", ":time", ":processes", ":events",
    }
)
COMPARATORS = frozenset({"<", "<=", ">", ">=", "="})
ASSIGN_OPS = frozenset({"increase", "decrease", "assign", "scale-up", "scale-down"})
ARITH_OPS = frozenset({"+", "-", "*", "/"})

Params = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Action:
    name: str
    params: Params
    precondition: tuple
    effects: tuple


@dataclass
class Domain:
    name: str
    requirements: frozenset[str]
    types: dict[str, str]  # type -> parent ("object" at the root)
    constants: dict[str, tuple[str, ...]]
    predicates: dict[str, Params]
    functions: dict[str, Params]
    actions: dict[str, Action]
    source: str = "<string>"

    def is_subtype(self, sub: str, sup: str) -> bool:
        seen = set()
        while sub not in seen:
            if sub == sup:
                return True
            seen.add(sub)
            sub = self.types.get(sub, "object")
        return sup == "object"

    def fits(self, obj_types: tuple[str, ...], want: tuple[str, ...]) -> bool:
        """Whether an object of `obj_types` may fill a parameter of `want` types."""
        return any(self.is_subtype(t, w) for t in obj_types for w in want)


@dataclass
class Problem:
    name: str
    domain_name: str
    objects: dict[str, tuple[str, ...]]
    init_atoms: list[tuple[str, tuple[str, ...]]]
    init_values: dict[tuple[str, tuple[str, ...]], Number]  # exact (`number.py`)
    goal: tuple
    metric: tuple | None = None  # ("minimize"|"maximize", expression)
    source: str = "<string>"
    extra: dict = field(default_factory=dict)


_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)")


def _is_number(tok: str) -> bool:
    """A PDDL number literal (so `inf`, `nan` and `1e3` are names, as in VAL)."""
    return _NUMBER.fullmatch(tok) is not None


class _Reader:
    """Shared helpers for reading one file, remembering its text for error lines."""

    def __init__(self, text: str, source: str):
        self.text = text
        self.source = source

    def error(self, message: str, near: str | None = None) -> PDDLError:
        line = line_of_word(self.text, near) if near else None
        return PDDLError(message, self.source, line)

    def typed_list(self, items: list, what: str) -> list[tuple[str, tuple[str, ...]]]:
        out: list[tuple[str, tuple[str, ...]]] = []
        pending: list[str] = []
        i = 0
        while i < len(items):
            tok = items[i]
            if tok == "-":
                if i + 1 >= len(items) or not pending:
                    raise self.error(f"'-' without a type in {what}", pending[-1] if pending else None)
                spec = items[i + 1]
                if isinstance(spec, list):
                    if not spec or spec[0] != "either" or not all(isinstance(t, str) for t in spec[1:]):
                        raise self.error(f"bad type {spec!r} in {what}")
                    types = tuple(spec[1:])
                else:
                    types = (spec,)
                out.extend((p, types) for p in pending)
                pending = []
                i += 2
                continue
            if not isinstance(tok, str):
                raise self.error(f"unexpected list {tok!r} in {what}")
            pending.append(tok)
            i += 1
        out.extend((p, ("object",)) for p in pending)
        return out

    # -- formulas -------------------------------------------------------------

    def formula(self, s: SExpr, where: str) -> tuple:
        if not isinstance(s, list):
            raise self.error(f"expected a formula in {where}, found '{s}'", s)
        if not s:
            return ("and", ())
        head = s[0]
        if not isinstance(head, str):
            raise self.error(f"bad formula {s!r} in {where}")
        if head == "and":
            return ("and", tuple(self.formula(x, where) for x in s[1:]))
        if head == "or":
            return ("or", tuple(self.formula(x, where) for x in s[1:]))
        if head == "not":
            if len(s) != 2:
                raise self.error(f"'not' takes one formula in {where}", where)
            return ("not", self.formula(s[1], where))
        if head == "imply":
            if len(s) != 3:
                raise self.error(f"'imply' takes two formulas in {where}", where)
            return ("imply", self.formula(s[1], where), self.formula(s[2], where))
        if head in ("forall", "exists"):
            if len(s) != 3 or not isinstance(s[1], list):
                raise self.error(f"bad '{head}' in {where}", where)
            params = tuple(self.typed_list(s[1], f"{head} in {where}"))
            return (head, params, self.formula(s[2], where))
        if head in COMPARATORS and len(s) == 3:
            a, b = s[1], s[2]
            if head == "=" and isinstance(a, str) and isinstance(b, str) and not (
                _is_number(a) or _is_number(b)
            ):
                return ("eq", a, b)
            return ("cmp", head, self.expression(a, where), self.expression(b, where))
        if not all(isinstance(x, str) for x in s[1:]):
            raise self.error(f"bad atom {s!r} in {where}", head)
        return ("atom", head, tuple(s[1:]))

    def expression(self, s: SExpr, where: str) -> tuple:
        if isinstance(s, str):
            if _is_number(s):
                return ("num", number.parse(s))
            raise self.error(f"expected a number or a function term in {where}, found '{s}'", s)
        if not s:
            raise self.error(f"empty expression in {where}")
        head = s[0]
        if head in ARITH_OPS and len(s) == 3:
            return ("op", head, self.expression(s[1], where), self.expression(s[2], where))
        if head == "-" and len(s) == 2:
            return ("neg", self.expression(s[1], where))
        if not isinstance(head, str) or not all(isinstance(x, str) for x in s[1:]):
            raise self.error(f"bad expression {s!r} in {where}")
        return ("fn", head, tuple(s[1:]))

    def effects(self, s: SExpr, where: str) -> tuple:
        if not isinstance(s, list):
            raise self.error(f"expected an effect in {where}, found '{s}'", s)
        if not s:
            return ()
        head = s[0]
        if head == "and":
            return tuple(e for x in s[1:] for e in self.effects(x, where))
        if head == "not":
            if len(s) != 2 or not isinstance(s[1], list) or not s[1]:
                raise self.error(f"bad delete effect in {where}", where)
            atom = self.formula(s[1], where)
            if atom[0] != "atom":
                raise self.error(f"only atoms can be deleted, in {where}", where)
            return (("del", atom[1], atom[2]),)
        if head in ASSIGN_OPS:
            if len(s) != 3:
                raise self.error(f"'{head}' takes a function term and a value in {where}", where)
            target = self.expression(s[1] if isinstance(s[1], list) else [s[1]], where)
            if target[0] != "fn":
                raise self.error(f"'{head}' needs a function term in {where}", where)
            return (("assign", head, (target[1], target[2]), self.expression(s[2], where)),)
        if head == "when":
            if len(s) != 3:
                raise self.error(f"'when' takes a condition and an effect in {where}", where)
            return (("when", self.formula(s[1], where), self.effects(s[2], where)),)
        if head == "forall":
            if len(s) != 3 or not isinstance(s[1], list):
                raise self.error(f"bad 'forall' effect in {where}", where)
            params = tuple(self.typed_list(s[1], f"forall in {where}"))
            return (("forall", params, self.effects(s[2], where)),)
        atom = self.formula(s, where)
        if atom[0] != "atom":
            raise self.error(f"bad effect {s!r} in {where}", where)
        return (("add", atom[1], atom[2]),)


def _sections(top: list, reader: _Reader, kind: str) -> tuple[str, list[list]]:
    if len(top) != 1:
        raise reader.error(f"expected exactly one (define ...) in the {kind} file")
    d = top[0]
    if not isinstance(d, list) or not d or d[0] != "define":
        raise reader.error(f"the {kind} file does not start with (define ...)")
    if len(d) < 2 or not isinstance(d[1], list) or len(d[1]) != 2 or d[1][0] != kind:
        raise reader.error(f"expected ({kind} NAME) after define", "define")
    sections = []
    for sec in d[2:]:
        if not isinstance(sec, list) or not sec or not isinstance(sec[0], str):
            raise reader.error(f"bad section {sec!r} in {kind}")
        sections.append(sec)
    return d[1][1], sections


def parse_domain(text: str, source: str = "<string>") -> Domain:
    reader = _Reader(text, source)
    name, sections = _sections(parse(text, source), reader, "domain")
    dom = Domain(name, frozenset(), {}, {}, {}, {}, {}, source)
    for sec in sections:
        key, body = sec[0], sec[1:]
        if key == ":requirements":
            for req in body:
                if req in UNSUPPORTED_REQUIREMENTS:
                    raise reader.error(f"requirement {req} is not supported", req)
                if req not in SUPPORTED_REQUIREMENTS:
                    raise reader.error(f"unknown requirement {req}", req)
            dom.requirements = frozenset(body)
        elif key == ":types":
            for t, parents in reader.typed_list(body, ":types"):
                dom.types[t] = parents[0]
        elif key == ":constants":
            dom.constants.update(reader.typed_list(body, ":constants"))
        elif key == ":predicates":
            for p in body:
                if not isinstance(p, list) or not p or not isinstance(p[0], str):
                    raise reader.error(f"bad predicate declaration {p!r}")
                dom.predicates[p[0]] = tuple(reader.typed_list(p[1:], f"predicate {p[0]}"))
        elif key == ":functions":
            i = 0
            while i < len(body):
                f = body[i]
                if not isinstance(f, list) or not f:
                    raise reader.error(f"bad function declaration {f!r}")
                dom.functions[f[0]] = tuple(reader.typed_list(f[1:], f"function {f[0]}"))
                if i + 1 < len(body) and body[i + 1] == "-":
                    kind = body[i + 2] if i + 2 < len(body) else None
                    if kind != "number":
                        raise reader.error(f"function {f[0]} has type {kind}: only numeric "
                                           "functions (- number) are supported", f[0])
                    i += 3
                else:
                    i += 1
        elif key == ":action":
            act = _parse_action(body, reader)
            if act.name in dom.actions:
                raise reader.error(f"action {act.name} defined twice", act.name)
            dom.actions[act.name] = act
        elif key in (":derived", ":durative-action"):
            raise reader.error(f"{key} is not supported", key)
        else:
            raise reader.error(f"unknown domain section {key}", key)
    for t in list(dom.types.values()):
        if t != "object" and t not in dom.types:
            dom.types[t] = "object"
    _check_domain(dom, reader)
    return dom


def _parse_action(body: list, reader: _Reader) -> Action:
    if not body or not isinstance(body[0], str):
        raise reader.error("an :action without a name")
    name = body[0]
    fields: dict[str, SExpr] = {}
    i = 1
    while i < len(body):
        k = body[i]
        if k not in (":parameters", ":precondition", ":effect") or i + 1 >= len(body):
            raise reader.error(f"unexpected '{k}' in action {name}", name)
        fields[k] = body[i + 1]
        i += 2
    params_s = fields.get(":parameters", [])
    if not isinstance(params_s, list):
        raise reader.error(f"bad :parameters in action {name}", name)
    params = tuple(reader.typed_list(params_s, f"action {name}"))
    where = f"action {name}"
    pre = reader.formula(fields[":precondition"], where) if ":precondition" in fields else ("and", ())
    eff = reader.effects(fields[":effect"], where) if ":effect" in fields else ()
    return Action(name, params, pre, eff)


def _check_domain(dom: Domain, reader: _Reader) -> None:
    """Names used in actions must be declared: catch typos here, not mid-plan."""
    check = _Checker(dom, reader, dom.constants, "constant")
    for act in dom.actions.values():
        scope = {p for p, _ in act.params}
        check.formula(act.precondition, scope, act.name)
        check.effects(act.effects, scope, act.name)
        for _, types in act.params:
            for t in types:
                if t != "object" and t not in dom.types:
                    raise reader.error(f"unknown type {t} in action {act.name}", act.name)


class _Checker:
    """Every predicate, function, variable and name used must be declared."""

    def __init__(self, dom: Domain, reader: _Reader, known, noun: str):
        self.dom, self.reader, self.known, self.noun = dom, reader, known, noun

    def terms(self, args, scope: set, where: str) -> None:
        for a in args:
            if a.startswith("?"):
                if a not in scope:
                    raise self.reader.error(f"unbound variable {a} in {where}", where)
            elif a not in self.known:
                raise self.reader.error(f"unknown {self.noun} {a} in {where}", a)

    def formula(self, f: tuple, scope: set, where: str) -> None:
        tag = f[0]
        if tag == "atom":
            arity = self.dom.predicates.get(f[1])
            if arity is None:
                raise self.reader.error(f"unknown predicate {f[1]} in {where}", f[1])
            if len(f[2]) != len(arity):
                raise self.reader.error(f"predicate {f[1]} takes {len(arity)} arguments, "
                                        f"given {len(f[2])} in {where}", f[1])
            self.terms(f[2], scope, where)
        elif tag in ("and", "or"):
            for g in f[1]:
                self.formula(g, scope, where)
        elif tag == "not":
            self.formula(f[1], scope, where)
        elif tag == "imply":
            self.formula(f[1], scope, where)
            self.formula(f[2], scope, where)
        elif tag in ("forall", "exists"):
            self.formula(f[2], scope | {p for p, _ in f[1]}, where)
        elif tag == "eq":
            self.terms(f[1:], scope, where)
        elif tag == "cmp":
            self.expression(f[2], scope, where)
            self.expression(f[3], scope, where)

    def expression(self, e: tuple, scope: set, where: str) -> None:
        if e[0] == "fn":
            if e[1] not in self.dom.functions:
                raise self.reader.error(f"unknown function {e[1]} in {where}", e[1])
            if len(e[2]) != len(self.dom.functions[e[1]]):
                raise self.reader.error(f"function {e[1]} takes {len(self.dom.functions[e[1]])} "
                                        f"arguments, given {len(e[2])} in {where}", e[1])
            self.terms(e[2], scope, where)
        elif e[0] == "op":
            self.expression(e[2], scope, where)
            self.expression(e[3], scope, where)
        elif e[0] == "neg":
            self.expression(e[1], scope, where)

    def effects(self, effs: tuple, scope: set, where: str) -> None:
        for e in effs:
            if e[0] in ("add", "del"):
                self.formula(("atom", e[1], e[2]), scope, where)
            elif e[0] == "assign":
                self.expression(("fn", *e[2]), scope, where)
                self.expression(e[3], scope, where)
            elif e[0] == "when":
                self.formula(e[1], scope, where)
                self.effects(e[2], scope, where)
            elif e[0] == "forall":
                self.effects(e[2], scope | {p for p, _ in e[1]}, where)


def parse_problem(text: str, domain: Domain, source: str = "<string>") -> Problem:
    reader = _Reader(text, source)
    name, sections = _sections(parse(text, source), reader, "problem")
    prob = Problem(name, "", {}, [], {}, ("and", ()), None, source)
    goal_seen = False
    for sec in sections:
        key, body = sec[0], sec[1:]
        if key == ":domain":
            prob.domain_name = body[0] if body else ""
        elif key == ":requirements":
            for req in body:
                if req not in SUPPORTED_REQUIREMENTS:
                    raise reader.error(f"unknown or unsupported requirement {req}", req)
        elif key == ":objects":
            prob.objects.update(reader.typed_list(body, ":objects"))
        elif key == ":init":
            for fact in body:
                _init_fact(fact, prob, domain, reader)
        elif key == ":goal":
            if len(body) != 1:
                raise reader.error(":goal takes exactly one formula", ":goal")
            prob.goal = reader.formula(body[0], ":goal")
            goal_seen = True
        elif key == ":metric":
            if len(body) != 2 or body[0] not in ("minimize", "maximize"):
                raise reader.error("bad :metric (expected minimize|maximize EXPR)", ":metric")
            prob.metric = (body[0], reader.expression(body[1], ":metric"))
        else:
            raise reader.error(f"unknown problem section {key}", key)
    if not goal_seen:
        raise reader.error("the problem has no :goal")
    _check_problem(prob, domain, reader)
    return prob


def _init_fact(fact: SExpr, prob: Problem, domain: Domain, reader: _Reader) -> None:
    if not isinstance(fact, list) or not fact:
        raise reader.error(f"bad fact {fact!r} in :init", fact if isinstance(fact, str) else None)
    if fact[0] == "=" and len(fact) == 3 and isinstance(fact[1], list):
        term, value = fact[1], fact[2]
        if not isinstance(value, str) or not _is_number(value):
            raise reader.error(f"numeric value expected in :init, found {value!r}", fact[1][0])
        if not term or not all(isinstance(x, str) for x in term):
            raise reader.error(f"bad function term {term!r} in :init")
        prob.init_values[(term[0], tuple(term[1:]))] = number.parse(value)
        return
    if fact[0] == "=" and len(fact) == 3:  # (= f 0) for a 0-ary function written bare
        if isinstance(fact[1], str) and fact[1] in domain.functions:
            if not isinstance(fact[2], str) or not _is_number(fact[2]):
                raise reader.error(f"numeric value expected in :init, found {fact[2]!r}", fact[1])
            prob.init_values[(fact[1], ())] = number.parse(fact[2])
            return
    if fact[0] == "not":
        return  # closed world: an explicit negative fact says nothing new
    if not all(isinstance(x, str) for x in fact):
        raise reader.error(f"bad fact {fact!r} in :init")
    prob.init_atoms.append((fact[0], tuple(fact[1:])))


def _check_problem(prob: Problem, domain: Domain, reader: _Reader) -> None:
    objs = {**domain.constants, **prob.objects}
    for t in {t for ts in prob.objects.values() for t in ts}:
        if t != "object" and t not in domain.types:
            raise reader.error(f"unknown type {t} in :objects", t)
    check = _Checker(domain, reader, objs, "object")
    for pred, args in prob.init_atoms:
        check.formula(("atom", pred, args), set(), ":init")
    for fn, args in prob.init_values:
        check.expression(("fn", fn, args), set(), ":init")
    check.formula(prob.goal, set(), ":goal")
    if prob.metric is not None:
        check.expression(prob.metric[1], set(), ":metric")


def load_domain(path: str | Path) -> Domain:
    return parse_domain(read_file(path), str(path))


def load_problem(path: str | Path, domain: Domain) -> Problem:
    return parse_problem(read_file(path), domain, str(path))

