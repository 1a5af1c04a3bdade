"""Grounding: from a lifted domain and problem to a `Task` over interned atoms.

Two uses, one implementation. Validation grounds lazily: only the actions a
plan names, each once (`Task.operator`). Search grounds everything reachable
(`Task.all_operators`): schemas are instantiated with static preconditions
checked as soon as their variables are bound, then pruned by relaxed
reachability from the initial state.
"""

from __future__ import annotations

from itertools import product

from planaudit.formal import number
from planaudit.formal.number import Number
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.syntax import Domain, Problem
from planaudit.formal.task import (
    ADDITIVE,
    FALSE,
    TRUE,
    Effect,
    Operator,
    State,
    atom_indices,
    conjuncts,
    holds,
    split_literals,
    value,
)
from planaudit.formal.write import expression as write_expression
from planaudit.formal.write import formula as write_formula

COST_FUNCTION = "total-cost"
COST_TERM = ("fn", COST_FUNCTION, ())


class GroundingError(Exception):
    """An action reference that cannot be grounded: the kind is a failure kind."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


class Task:
    """A problem over interned ground atoms and fluents; operators are cached."""

    def __init__(self, domain: Domain, problem: Problem):
        self.domain = domain
        self.problem = problem
        self.objects: dict[str, tuple[str, ...]] = {**domain.constants, **problem.objects}
        self.atom_index: dict[tuple[str, tuple[str, ...]], int] = {}
        self.atoms: list[tuple[str, tuple[str, ...]]] = []
        self.fluent_index: dict[tuple[str, tuple[str, ...]], int] = {}
        self.fluents: list[tuple[str, tuple[str, ...]]] = []
        self._ops: dict[tuple[str, tuple[str, ...]], Operator] = {}
        self._by_type: dict[tuple[str, ...], list[str]] = {}
        self._all: list[Operator] | None = None
        declared = COST_FUNCTION in domain.functions and not domain.functions[COST_FUNCTION]
        # costs count when the metric is total-cost; without a metric the measure is length
        self.has_cost = declared and problem.metric == ("minimize", COST_TERM)
        self.cost_tracked = declared and _cost_is_read(domain, problem)
        # exact numbers even where a caller built the problem with floats (0.1 is 1/10)
        values = {k: number.exact(v) for k, v in problem.init_values.items()}
        self.init_cost: Number = values.get((COST_FUNCTION, ()), 0)
        bits = 0
        for pred, args in problem.init_atoms:
            bits |= 1 << self.atom(pred, args)
        if self.cost_tracked:
            values[(COST_FUNCTION, ())] = self.init_cost
        else:
            values.pop((COST_FUNCTION, ()), None)
        nums: list = []
        for key, v in values.items():
            i = self.fluent(*key)
            nums.extend([None] * (i + 1 - len(nums)))
            nums[i] = v
        self.init: State = (bits, tuple(nums))
        self.defined = frozenset(i for i, v in enumerate(nums) if v is not None)
        self.init_atom_set = frozenset(problem.init_atoms)
        self.goal = self.compile(problem.goal, {})
        self.goal_pos, self.goal_neg, self.goal_rest = split_literals(self.goal)

    # -- interning --------------------------------------------------------------

    def atom(self, pred: str, args: tuple[str, ...]) -> int:
        key = (pred, args)
        i = self.atom_index.get(key)
        if i is None:
            i = self.atom_index[key] = len(self.atoms)
            self.atoms.append(key)
        return i

    def fluent(self, fn: str, args: tuple[str, ...]) -> int:
        key = (fn, args)
        i = self.fluent_index.get(key)
        if i is None:
            i = self.fluent_index[key] = len(self.fluents)
            self.fluents.append(key)
        return i

    def objects_of(self, types: tuple[str, ...]) -> list[str]:
        objs = self._by_type.get(types)
        if objs is None:
            objs = self._by_type[types] = sorted(
                o for o, ts in self.objects.items() if self.domain.fits(ts, types))
        return objs

    # -- compiling formulas, expressions and effects -----------------------------

    def compile(self, f: tuple, b: dict[str, str]) -> tuple:
        tag = f[0]
        if tag == "atom":
            return ("atom", self.atom(f[1], tuple(b.get(a, a) for a in f[2])))
        if tag == "and" or tag == "or":
            return self._combine(tag, [self.compile(g, b) for g in f[1]])
        if tag == "not":
            c = self.compile(f[1], b)
            return FALSE if c == TRUE else TRUE if c == FALSE else ("not", c)
        if tag == "eq":
            return TRUE if b.get(f[1], f[1]) == b.get(f[2], f[2]) else FALSE
        if tag == "imply":
            return self.compile(("or", (("not", f[1]), f[2])), b)
        if tag == "cmp":
            return ("cmp", f[1], self.compile_expr(f[2], b), self.compile_expr(f[3], b))
        if tag in ("forall", "exists"):
            names = [p for p, _ in f[1]]
            pools = [self.objects_of(ts) for _, ts in f[1]]
            parts = [self.compile(f[2], {**b, **dict(zip(names, combo, strict=False))})
                     for combo in product(*pools)]
            return self._combine("and" if tag == "forall" else "or", parts)
        raise ValueError(f"unknown formula {f!r}")

    @staticmethod
    def _combine(tag: str, parts: list[tuple]) -> tuple:
        unit, zero = (TRUE, FALSE) if tag == "and" else (FALSE, TRUE)
        if zero in parts:
            return zero
        parts = [p for p in parts if p != unit]
        if not parts:
            return unit
        return parts[0] if len(parts) == 1 else (tag, tuple(parts))

    def compile_expr(self, e: tuple, b: dict[str, str]) -> tuple:
        tag = e[0]
        if tag == "num":
            return e if type(e[1]) is int else ("num", number.exact(e[1]))
        if tag == "fn":
            return ("fv", self.fluent(e[1], tuple(b.get(a, a) for a in e[2])))
        if tag == "neg":
            return ("neg", self.compile_expr(e[1], b))
        return ("op", e[1], self.compile_expr(e[2], b), self.compile_expr(e[3], b))

    def _effects(self, effs: tuple, b: dict[str, str], cond: tuple, groups: dict) -> None:
        """Collect ground effects into one group per condition (TRUE: unconditional).

        `when` inside `when` (directly or under `forall`) conjoins the conditions."""
        for e in effs:
            tag = e[0]
            if tag == "when":
                inner = self._combine("and", [cond, self.compile(e[1], b)])
                if inner != FALSE:
                    self._effects(e[2], b, inner, groups)
                continue
            if tag == "forall":
                names = [p for p, _ in e[1]]
                for combo in product(*(self.objects_of(ts) for _, ts in e[1])):
                    self._effects(e[2], {**b, **dict(zip(names, combo, strict=False))}, cond, groups)
                continue
            g = groups.get(cond)
            if g is None:
                g = groups[cond] = {"add": 0, "del": 0, "assigns": [], "cost": None}
            if tag == "add":
                g["add"] |= 1 << self.atom(e[1], tuple(b.get(a, a) for a in e[2]))
            elif tag == "del":
                g["del"] |= 1 << self.atom(e[1], tuple(b.get(a, a) for a in e[2]))
            elif tag == "assign":
                op, (fn, args), expr = e[1], e[2], self.compile_expr(e[3], b)
                is_cost = fn == COST_FUNCTION and not args
                if is_cost and not self.cost_tracked:  # then only increase or decrease
                    step = expr if op == "increase" else ("neg", expr)
                    g["cost"] = step if g["cost"] is None else _plus(g["cost"], step)
                    continue
                target = self.fluent(fn, tuple(b.get(a, a) for a in args))
                if is_cost:
                    step = _increment(op, target, expr)
                    g["cost"] = step if g["cost"] is None else _plus(g["cost"], step)
                g["assigns"].append((op, target, expr))

    # -- operators ---------------------------------------------------------------

    def operator(self, action: str, args: tuple[str, ...]) -> Operator:
        """The ground operator `(action args...)`; GroundingError says why not."""
        key = (action, args)
        op = self._ops.get(key)
        if op is not None:
            return op
        schema = self.domain.actions.get(action)
        if schema is None:
            raise GroundingError("unknown-action", f"no action named '{action}' in the domain")
        if len(args) != len(schema.params):
            raise GroundingError(
                "wrong-arity",
                f"'{action}' takes {len(schema.params)} arguments, given {len(args)}")
        for (var, types), obj in zip(schema.params, args, strict=False):
            if obj not in self.objects:
                raise GroundingError("unknown-object", f"no object named '{obj}'")
            if not self.domain.fits(self.objects[obj], types):
                raise GroundingError(
                    "type-mismatch",
                    f"'{obj}' is a {'/'.join(self.objects[obj])}, but {var} of '{action}' "
                    f"must be a {'/'.join(types)}")
        op = self._build(action, args)
        self._ops[key] = op
        return op

    def _build(self, action: str, args: tuple[str, ...]) -> Operator:
        schema = self.domain.actions[action]
        b = {var: obj for (var, _), obj in zip(schema.params, args, strict=False)}
        pre = self.compile(schema.precondition, b)
        pos, neg, rest = split_literals(pre)
        groups: dict = {}
        self._effects(schema.effects, b, TRUE, groups)
        main = groups.pop(TRUE, {"add": 0, "del": 0, "assigns": [], "cost": None})
        conditional = tuple(Effect(cond, g["add"], g["del"], tuple(g["assigns"]), g["cost"])
                            for cond, g in groups.items())
        name = "(" + " ".join((action, *args)) + ")"
        op = Operator(name, action, args, pre, pos, neg, rest, main["add"], main["del"],
                      tuple(main["assigns"]), conditional, main["cost"])
        op.may_fail = self._may_fail(op)
        return op

    def _may_fail(self, op: Operator) -> bool:
        """Whether the effects of `op` can be undefined or conflict in some state.

        A fluent defined initially stays defined (a step that would make it
        undefined fails), so only reads of fluents undefined initially, divisions
        and several updates of one fluent need checking at every step."""
        updates: dict[int, list[str]] = {}
        exprs = [op.cost, *(eff.cost for eff in op.conditional)]
        for eff in (op, *op.conditional):
            for kind, i, expr in eff.assigns:
                updates.setdefault(i, []).append(kind)
                exprs.append(expr)
                if kind != "assign" and i not in self.defined:
                    return True
                if kind == "scale-down":
                    return True
        if any(len(k) > 1 and not ADDITIVE.issuperset(k) for k in updates.values()):
            return True
        return any(e is not None and not _safe(e, self.defined) for e in exprs)

    def static_predicates(self) -> frozenset[str]:
        changed: set[str] = set()

        def walk(effs: tuple) -> None:
            for e in effs:
                if e[0] in ("add", "del"):
                    changed.add(e[1])
                elif e[0] == "when":
                    walk(e[2])
                elif e[0] == "forall":
                    walk(e[2])

        for a in self.domain.actions.values():
            walk(a.effects)
        return frozenset(self.domain.predicates) - changed

    def all_operators(self) -> list[Operator]:
        """Every ground operator that relaxed reachability does not rule out."""
        if self._all is not None:
            return self._all
        if self.problem.metric is not None and not self.has_cost:
            raise PDDLError(f"the metric {self.problem.metric[0]} {write_expression(self.problem.metric[1])}"
                            " is not supported by search (only minimize (total-cost))",
                            self.problem.source)
        static = self.static_predicates()
        ops: list[Operator] = []
        for schema in self.domain.actions.values():
            for args in self._bindings(schema, static):
                op = self.operator(schema.name, args)
                if op.pre_rest != FALSE:
                    ops.append(op)
        reached = self.init[0]
        changed = True
        while changed:
            changed = False
            for op in ops:
                if reached & op.pre_pos == op.pre_pos:
                    new = reached | op.add
                    for eff in op.conditional:
                        new |= eff.add
                    if new != reached:
                        reached, changed = new, True
        self._all = [op for op in ops if reached & op.pre_pos == op.pre_pos]
        return self._all

    def _bindings(self, schema, static: frozenset[str]):
        """Parameter tuples consistent with types, static literals and equalities."""
        params = [p for p, _ in schema.params]
        position = {p: i for i, p in enumerate(params)}
        checks: list[list[tuple]] = [[] for _ in params]
        for lit in conjuncts(schema.precondition):
            negated = lit[0] == "not"
            inner = lit[1] if negated else lit
            if inner[0] == "atom" and inner[1] in static:
                terms = inner[2]
            elif inner[0] == "eq":
                terms = inner[1:]
            else:
                continue
            vars_ = [position[t] for t in terms if t in position]
            at = max(vars_) if vars_ else 0
            if params:
                checks[at].append((negated, inner))
        pools = [self.objects_of(ts) for _, ts in schema.params]
        init = self.init_atom_set
        binding: dict[str, str] = {}
        out: list[tuple[str, ...]] = []

        def ok(negated: bool, inner: tuple) -> bool:
            if inner[0] == "eq":
                truth = binding.get(inner[1], inner[1]) == binding.get(inner[2], inner[2])
            else:
                truth = (inner[1], tuple(binding.get(a, a) for a in inner[2])) in init
            return truth != negated

        def extend(i: int) -> None:
            if i == len(params):
                out.append(tuple(binding[p] for p in params))
                return
            for obj in pools[i]:
                binding[params[i]] = obj
                if all(ok(n, inner) for n, inner in checks[i]):
                    extend(i + 1)
            binding.pop(params[i], None)

        extend(0)
        return out

    # -- states ------------------------------------------------------------------

    def goal_holds(self, state: State) -> bool:
        bits = state[0]
        if bits & self.goal_pos != self.goal_pos or bits & self.goal_neg:
            return False
        return self.goal_rest is None or holds(self.goal_rest, state)

    def unsatisfied(self, lifted: tuple, b: dict[str, str], state: State) -> list[str]:
        """The conjuncts of `lifted` (under binding `b`) that do not hold in `state`.

        A conjunct that grounding decided false (an equality, a quantifier over
        no objects) is named as written, with the binding's objects."""
        out = []
        for c in _lifted_conjuncts(lifted):
            compiled = self.compile(c, b)
            if compiled == FALSE:
                out.append(write_formula(_substitute(c, b)))
            else:
                out.extend(self.describe(g) for g in conjuncts(compiled) if not holds(g, state))
        return out

    def binding(self, op: Operator) -> dict[str, str]:
        schema = self.domain.actions[op.action]
        return {var: obj for (var, _), obj in zip(schema.params, op.args, strict=True)}

    def undefined(self, f: tuple, state: State) -> list[str]:
        """The fluents without a value, and divisions by zero, that `f` reads in `state`."""
        found: list[str] = []

        def walk_expr(e: tuple) -> None:
            tag = e[0]
            if tag == "fv":
                i = e[1]
                if i >= len(state[1]) or state[1][i] is None:
                    found.append(self.describe_expr(e))
            elif tag == "neg":
                walk_expr(e[1])
            elif tag == "op":
                walk_expr(e[2])
                walk_expr(e[3])
                if e[1] == "/" and value(e[3], state[1]) == 0:
                    found.append(f"division by zero in {self.describe_expr(e)}")

        def walk(g: tuple) -> None:
            if g[0] == "cmp":
                walk_expr(g[2])
                walk_expr(g[3])
            elif g[0] in ("and", "or"):
                for h in g[1]:
                    walk(h)
            elif g[0] == "not":
                walk(g[1])

        if f[0] in ("num", "fv", "neg", "op"):
            walk_expr(f)
        else:
            walk(f)
        return list(dict.fromkeys(found))

    def effect_problem(self, op: Operator, state: State) -> str:
        """In words, why the effects of `op` cannot be applied in `state`."""
        why = op.effect_failure(state)
        if why is None:
            return "its effects can be applied"
        kind, what = why
        if kind == "conflict":
            return f"it updates {self.describe_expr(('fv', what))} twice, with an assignment"
        if kind == "target":
            return f"it updates {self.describe_expr(('fv', what))}, which has no value"
        text, why = self.describe_expr(what), self.undefined(what, state)
        detail = "" if why in ([], [text]) else " (" + "; ".join(why) + ")"
        return f"its effect reads {text}, which is undefined{detail}"

    def plan_value(self, state: State, length: int, cost: Number) -> Number | None:
        """What VAL reports for a plan: the metric in the final state, or its length
        without a metric. `cost` is the sum of the step costs."""
        metric = self.problem.metric
        if metric is None:
            return length
        if self.cost_tracked:
            nums = state[1]
            i = self.fluent_index[(COST_FUNCTION, ())]
            final = nums[i] if i < len(nums) else None
        else:
            final = self.init_cost + cost
        if metric[1] == COST_TERM:
            return final
        expr = _substitute_cost(metric[1], final)
        return value(self.compile_expr(expr, {}), state[1]) if expr is not None else None

    def lift(self, f: tuple) -> tuple:
        """A compiled ground formula back in the lifted vocabulary (predicate and object
        names), which the brief's renderer puts in the domain's words: an unmet
        precondition is told to an agent, or to a person in a study, as a sentence."""
        tag = f[0]
        if tag == "atom":
            pred, args = self.atoms[f[1]]
            return ("atom", pred, args)
        if tag == "not":
            return ("not", self.lift(f[1]))
        if tag in ("and", "or"):
            return (tag, tuple(self.lift(g) for g in f[1]))
        if tag == "cmp":
            return ("cmp", f[1], self.lift_expr(f[2]), self.lift_expr(f[3]))
        return ("and", ()) if tag == "true" else ("or", ())

    def lift_expr(self, e: tuple) -> tuple:
        tag = e[0]
        if tag == "fv":
            fn, args = self.fluents[e[1]]
            return ("fn", fn, args)
        if tag == "neg":
            return ("neg", self.lift_expr(e[1]))
        if tag == "op":
            return ("op", e[1], self.lift_expr(e[2]), self.lift_expr(e[3]))
        return e

    def describe(self, f: tuple) -> str:
        tag = f[0]
        if tag == "atom":
            pred, args = self.atoms[f[1]]
            return "(" + " ".join((pred, *args)) + ")"
        if tag == "not":
            return f"(not {self.describe(f[1])})"
        if tag in ("and", "or"):
            return f"({tag} " + " ".join(self.describe(g) for g in f[1]) + ")"
        if tag == "cmp":
            return f"({f[1]} {self.describe_expr(f[2])} {self.describe_expr(f[3])})"
        return "(and)" if tag == "true" else "(or)"

    def describe_expr(self, e: tuple) -> str:
        tag = e[0]
        if tag == "num":
            return number.pddl(e[1])
        if tag == "fv":
            fn, args = self.fluents[e[1]]
            return "(" + " ".join((fn, *args)) + ")"
        if tag == "neg":
            return f"(- {self.describe_expr(e[1])})"
        return f"({e[1]} {self.describe_expr(e[2])} {self.describe_expr(e[3])})"

    def facts(self, state: State) -> list[str]:
        """The atoms and fluent values of a state, as PDDL literals, sorted (a value
        without a finite decimal as `(/ 1 3)`, which parses back to it)."""
        bits, nums = state
        out = []
        for i in atom_indices(bits):
            pred, args = self.atoms[i]
            out.append("(" + " ".join((pred, *args)) + ")")
        for i, v in enumerate(nums):
            if v is not None:
                fn, args = self.fluents[i]
                out.append(f"(= ({' '.join((fn, *args))}) {number.pddl(v)})")
        return sorted(out)


# -- helpers for the lifted model ---------------------------------------------------


def _increment(op: str, target: int, expr: tuple) -> tuple:
    """What an update of total-cost adds to it, as an expression of the old state."""
    if op == "increase":
        return expr
    if op == "decrease":
        return ("neg", expr)
    old = ("fv", target)
    if op == "assign":
        return ("op", "-", expr, old)
    return ("op", "-", ("op", "*" if op == "scale-up" else "/", old, expr), old)


def _plus(a: tuple, b: tuple) -> tuple:
    if a[0] == "num" and b[0] == "num":
        return ("num", a[1] + b[1])
    return ("op", "+", a, b)


def _safe(e: tuple, defined: frozenset[int]) -> bool:
    """Whether a compiled expression is defined in every state (no division, and
    only fluents defined initially)."""
    tag = e[0]
    if tag == "num":
        return True
    if tag == "fv":
        return e[1] in defined
    if tag == "neg":
        return _safe(e[1], defined)
    return e[1] != "/" and _safe(e[2], defined) and _safe(e[3], defined)


def _mentions_cost(x) -> bool:
    """Whether a lifted formula or expression reads (total-cost)."""
    if isinstance(x, tuple):
        if x == COST_TERM:
            return True
        return any(_mentions_cost(y) for y in x)
    return False


def _cost_is_read(domain: Domain, problem: Problem) -> bool:
    """Whether total-cost must be part of the state: it is read somewhere, or set
    other than by increase/decrease, or the metric is more than total-cost."""

    def effects(effs: tuple) -> bool:
        for e in effs:
            if e[0] == "when" and (_mentions_cost(e[1]) or effects(e[2])):
                return True
            if e[0] == "forall" and effects(e[2]):
                return True
            if e[0] == "assign":
                if _mentions_cost(e[3]):
                    return True
                if e[2] == (COST_FUNCTION, ()) and e[1] not in ADDITIVE:
                    return True
        return False

    for act in domain.actions.values():
        if _mentions_cost(act.precondition) or effects(act.effects):
            return True
    if _mentions_cost(problem.goal):
        return True
    return problem.metric is not None and problem.metric[1] != COST_TERM and _mentions_cost(
        problem.metric[1])


def _lifted_conjuncts(f: tuple) -> list[tuple]:
    if f[0] == "and":
        return [c for g in f[1] for c in _lifted_conjuncts(g)]
    return [f]


def _substitute(x, b: dict[str, str]):
    """A lifted formula or expression with the variables of `b` replaced."""
    if isinstance(x, str):
        return b.get(x, x)
    if isinstance(x, tuple):
        return tuple(_substitute(y, b) for y in x)
    return x


def _substitute_cost(e: tuple, final: Number | None) -> tuple | None:
    """A lifted metric expression with (total-cost) replaced by its final value."""
    if e == COST_TERM:
        return None if final is None else ("num", final)
    if e[0] in ("num", "fn"):
        return e
    if e[0] == "neg":
        inner = _substitute_cost(e[1], final)
        return None if inner is None else ("neg", inner)
    a, b = _substitute_cost(e[2], final), _substitute_cost(e[3], final)
    return None if a is None or b is None else ("op", e[1], a, b)
