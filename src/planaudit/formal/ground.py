"""Grounding: from a lifted domain and problem to a `Task` over interned atoms.

Two uses, one implementation. Validation grounds lazily: only the actions a
plan names, each once (`Task.operator`). Search grounds everything reachable
(`Task.all_operators`): schemas are instantiated with static preconditions
checked as soon as their variables are bound, then pruned by relaxed
reachability from the initial state.
"""

from __future__ import annotations

from itertools import product

from planaudit.formal.syntax import Domain, Problem
from planaudit.formal.task import (
    FALSE,
    TRUE,
    Effect,
    Operator,
    State,
    atom_indices,
    conjuncts,
    holds,
    split_literals,
)

COST_FUNCTION = "total-cost"


class GroundingError(Exception):
    """An action reference that cannot be grounded: the kind is a failure kind."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def _fmt_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(v)


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
        self.has_cost = COST_FUNCTION in domain.functions and not domain.functions[COST_FUNCTION]
        self.metric_is_cost = problem.metric is not None and problem.metric[1] == (
            "fn", COST_FUNCTION, ())
        bits = 0
        for pred, args in problem.init_atoms:
            bits |= 1 << self.atom(pred, args)
        nums: list = []
        for key, v in problem.init_values.items():
            if key == (COST_FUNCTION, ()):
                continue
            i = self.fluent(*key)
            nums.extend([None] * (i + 1 - len(nums)))
            nums[i] = v
        self.init: State = (bits, tuple(nums))
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
            return e
        if tag == "fn":
            return ("fv", self.fluent(e[1], tuple(b.get(a, a) for a in e[2])))
        if tag == "neg":
            return ("neg", self.compile_expr(e[1], b))
        return ("op", e[1], self.compile_expr(e[2], b), self.compile_expr(e[3], b))

    def _effects(self, effs: tuple, b: dict[str, str], acc: dict) -> None:
        for e in effs:
            tag = e[0]
            if tag == "add":
                acc["add"] |= 1 << self.atom(e[1], tuple(b.get(a, a) for a in e[2]))
            elif tag == "del":
                acc["del"] |= 1 << self.atom(e[1], tuple(b.get(a, a) for a in e[2]))
            elif tag == "assign":
                fn, args = e[2]
                if self.has_cost and fn == COST_FUNCTION and not args:
                    expr = self.compile_expr(e[3], b)
                    if e[1] != "increase":
                        raise ValueError("total-cost may only be increased")
                    acc["cost"] = expr if acc["cost"] is None else ("op", "+", acc["cost"], expr)
                    continue
                i = self.fluent(fn, tuple(b.get(a, a) for a in args))
                acc["assigns"].append((e[1], i, self.compile_expr(e[3], b)))
            elif tag == "when":
                cond = self.compile(e[1], b)
                if cond == FALSE:
                    continue
                inner = {"add": 0, "del": 0, "assigns": [], "cost": None, "when": []}
                self._effects(e[2], b, inner)
                acc["when"].append(Effect(None if cond == TRUE else cond, inner["add"],
                                          inner["del"], tuple(inner["assigns"])))
            elif tag == "forall":
                names = [p for p, _ in e[1]]
                for combo in product(*(self.objects_of(ts) for _, ts in e[1])):
                    self._effects(e[2], {**b, **dict(zip(names, combo, strict=False))}, acc)

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
        acc: dict = {"add": 0, "del": 0, "assigns": [], "cost": None, "when": []}
        self._effects(schema.effects, b, acc)
        name = "(" + " ".join((action, *args)) + ")"
        return Operator(name, action, args, pre, pos, neg, rest, acc["add"], acc["del"],
                        tuple(acc["assigns"]), tuple(acc["when"]), acc["cost"])

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
            return _fmt_num(e[1])
        if tag == "fv":
            fn, args = self.fluents[e[1]]
            return "(" + " ".join((fn, *args)) + ")"
        if tag == "neg":
            return f"(- {self.describe_expr(e[1])})"
        return f"({e[1]} {self.describe_expr(e[2])} {self.describe_expr(e[3])})"

    def facts(self, state: State) -> list[str]:
        """The atoms and fluent values of a state, as PDDL literals, sorted."""
        bits, nums = state
        out = []
        for i in atom_indices(bits):
            pred, args = self.atoms[i]
            out.append("(" + " ".join((pred, *args)) + ")")
        for i, v in enumerate(nums):
            if v is not None:
                fn, args = self.fluents[i]
                out.append(f"(= ({' '.join((fn, *args))}) {_fmt_num(v)})")
        return sorted(out)
