"""Ground semantics: states, operators, applicability and successor states.

A state is a pair `(bits, nums)`: `bits` is an int whose bit i says whether
ground atom i holds (closed world), `nums` a tuple of numeric fluent values
(None where undefined). The metric accumulator `total-cost` is part of the
state only when something reads it (a condition, an effect's value, a metric
other than itself) or sets it otherwise than by `increase`/`decrease`; else it
only sums step costs, and keeping it would make every path a new state.

An operator keeps its precondition in two parts: the conjunction of plain
literals as two bitmasks (the fast path, a subset test), and whatever else
(disjunctions, numeric comparisons) as a compiled formula. Effects follow the
PDDL rule: deletes first, then adds; numeric effects and the conditions of
conditional effects read the old state.

Numbers are exact (`number.py`: an int when integral, an exact rational otherwise) and
are compared exactly (no tolerance). A value is undefined when it reads
a fluent without a value or divides by zero. Conditions use three-valued
(Kleene) logic: a comparison on an undefined value is unknown, `not` keeps it
unknown, `and`/`or` decide only when the known parts decide, and a condition
holds only when it is definitely true. An action cannot be applied where its
effects would use an undefined value or update one fluent twice with an
assignment among the updates (`assign`, `scale-up`, `scale-down`); several
`increase`/`decrease` of one fluent add up.
"""

from __future__ import annotations

from dataclasses import dataclass

from planaudit.formal.number import Number, Q, divide

State = tuple[int, tuple]

# Compiled ground formulas:
#   ("atom", i) ("not", f) ("and", fs) ("or", fs) ("true",) ("false",) ("cmp", op, e1, e2)
# Compiled expressions: ("num", v) ("fv", i) ("op", sym, a, b) ("neg", a)
TRUE = ("true",)
FALSE = ("false",)
ADDITIVE = frozenset({"increase", "decrease"})


def atom_indices(mask: int) -> list[int]:
    """The indices of the set bits of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def value(e: tuple, nums: tuple) -> Number | None:
    """The exact value of a compiled expression; None when undefined."""
    tag = e[0]
    if tag == "num":
        return e[1]
    if tag == "fv":
        i = e[1]
        return nums[i] if i < len(nums) else None
    if tag == "neg":
        v = value(e[1], nums)
        return None if v is None else -v
    a, b = value(e[2], nums), value(e[3], nums)
    if a is None or b is None:
        return None
    sym = e[1]
    if sym == "/":
        return divide(a, b)
    r = a + b if sym == "+" else a - b if sym == "-" else a * b
    if type(r) is Q and r.denominator == 1:
        return int(r.numerator)  # integral again: back to the fast int
    return r


def compare(op: str, a: Number | None, b: Number | None) -> bool | None:
    """Exact comparison; None (unknown) when either side is undefined."""
    if a is None or b is None:
        return None
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    return a == b


def truth(f: tuple, state: State) -> bool | None:
    """True, False, or None when an undefined value leaves the formula unknown."""
    tag = f[0]
    if tag == "atom":
        return bool(state[0] >> f[1] & 1)
    if tag == "and" or tag == "or":
        decisive = tag == "or"
        out: bool | None = not decisive
        for g in f[1]:
            t = truth(g, state)
            if t is decisive:
                return decisive
            if t is None:
                out = None
        return out
    if tag == "not":
        t = truth(f[1], state)
        return None if t is None else not t
    if tag == "cmp":
        return compare(f[1], value(f[2], state[1]), value(f[3], state[1]))
    return tag == "true"


def holds(f: tuple, state: State) -> bool:
    """Whether `f` is definitely true in `state`."""
    return truth(f, state) is True


def conjuncts(f: tuple) -> list[tuple]:
    """The top-level conjuncts of a formula (for reporting which ones failed)."""
    if f[0] == "and":
        return [c for g in f[1] for c in conjuncts(g)]
    if f == TRUE:
        return []
    return [f]


def split_literals(f: tuple) -> tuple[int, int, tuple | None]:
    """(positive mask, negative mask, rest) of a formula's top-level conjunction."""
    pos = neg = 0
    rest = []
    for c in conjuncts(f):
        if c[0] == "atom":
            pos |= 1 << c[1]
        elif c[0] == "not" and c[1][0] == "atom":
            neg |= 1 << c[1][1]
        else:
            rest.append(c)
    return pos, neg, (("and", tuple(rest)) if rest else None)


def constant(e: tuple | None) -> Number | None:
    """The value of an expression that reads no fluent (None if it reads one)."""
    if e is None:
        return 0
    return value(e, ()) if not _reads_fluent(e) else None


def _reads_fluent(e: tuple) -> bool:
    tag = e[0]
    if tag == "num":
        return False
    if tag == "fv":
        return True
    if tag == "neg":
        return _reads_fluent(e[1])
    return _reads_fluent(e[2]) or _reads_fluent(e[3])


@dataclass(frozen=True, slots=True)
class Effect:
    """One conditional effect group: what happens when `cond` holds."""

    cond: tuple
    add: int
    delete: int
    assigns: tuple  # (op, fluent index, compiled expression)
    cost: tuple | None = None  # compiled expression added to the step cost


@dataclass(slots=True, eq=False)
class Operator:
    name: str  # "(stack a b)"
    action: str
    args: tuple[str, ...]
    pre: tuple  # the whole compiled precondition (for diagnosis)
    pre_pos: int
    pre_neg: int
    pre_rest: tuple | None
    add: int
    delete: int
    assigns: tuple
    conditional: tuple[Effect, ...]
    cost: tuple | None  # compiled expression added to the step cost, if any
    may_fail: bool = False  # its effects may be undefined or conflict in some state

    @property
    def simple(self) -> bool:
        """Literal preconditions, STRIPS effects: the bitset fast path applies."""
        return self.pre_rest is None and not self.assigns and not self.conditional

    @property
    def constant_cost(self) -> Number | None:
        """The step cost if it is the same in every state, else None."""
        if any(eff.cost is not None for eff in self.conditional):
            return None
        return constant(self.cost)

    @property
    def cost_bound(self) -> Number:
        """A lower bound on the step cost in any state, for admissible heuristics:
        a part that depends on the state or on a condition counts as 0, unless it
        is a negative constant (which lowers the bound)."""
        c = constant(self.cost)
        bound = c if c is not None else 0
        for eff in self.conditional:
            ce = constant(eff.cost)
            if ce is not None and ce < 0:
                bound += ce
        return max(0, bound)

    def precondition_holds(self, state: State) -> bool:
        bits = state[0]
        if bits & self.pre_pos != self.pre_pos or bits & self.pre_neg:
            return False
        return self.pre_rest is None or holds(self.pre_rest, state)

    def applicable(self, state: State) -> bool:
        """The precondition holds and the effects are defined in `state`."""
        bits = state[0]  # precondition_holds, inlined: this is the search's inner loop
        if bits & self.pre_pos != self.pre_pos or bits & self.pre_neg:
            return False
        if self.pre_rest is not None and not holds(self.pre_rest, state):
            return False
        return not self.may_fail or self.effect_failure(state) is None

    def _active(self, state: State) -> tuple[int, int, list, list]:
        add, delete, assigns = self.add, self.delete, list(self.assigns)
        costs = [] if self.cost is None else [self.cost]
        for eff in self.conditional:
            if holds(eff.cond, state):
                add |= eff.add
                delete |= eff.delete
                assigns.extend(eff.assigns)
                if eff.cost is not None:
                    costs.append(eff.cost)
        return add, delete, assigns, costs

    def effect_failure(self, state: State) -> tuple | None:
        """Why the effects cannot be applied in `state`: ("value", expression) for an
        undefined value, ("target", fluent) for an update of a fluent without a
        value, ("conflict", fluent) for conflicting updates; None if they can."""
        nums = state[1]
        _, _, assigns, costs = self._active(state)
        ops_on: dict[int, list[str]] = {}
        for op, i, expr in assigns:
            if value(expr, nums) is None:
                return ("value", expr)
            if op == "scale-down" and value(expr, nums) == 0:
                return ("value", ("op", "/", ("fv", i), expr))
            if op != "assign" and (i >= len(nums) or nums[i] is None):
                return ("target", i)
            ops_on.setdefault(i, []).append(op)
        for i, ops in ops_on.items():
            if len(ops) > 1 and not ADDITIVE.issuperset(ops):
                return ("conflict", i)
        for expr in costs:
            if value(expr, nums) is None:
                return ("value", expr)
        return None

    def apply(self, state: State) -> State:
        bits, nums = state
        if self.simple:
            return ((bits & ~self.delete) | self.add, nums)
        add, delete, assigns, _ = self._active(state)
        new_bits = (bits & ~delete) | add
        if not assigns:
            return (new_bits, nums)
        new = list(nums)
        for op, i, expr in assigns:
            v = value(expr, nums)
            if i >= len(new):
                new.extend([None] * (i + 1 - len(new)))
            old = new[i]
            if op == "assign":
                new[i] = v
            elif old is None or v is None:
                new[i] = None
            elif op == "scale-down":
                new[i] = divide(old, v)
            else:
                r = old + v if op == "increase" else old - v if op == "decrease" else old * v
                if type(r) is Q and r.denominator == 1:
                    r = int(r.numerator)
                new[i] = r
        return (new_bits, tuple(new))

    def step_cost(self, state: State) -> Number:
        """What this step adds to total-cost in `state` (conditional parts included)."""
        total: Number = 0  # not 0 + v: an exact addition costs a rational's time
        if self.cost is not None:
            total = value(self.cost, state[1]) or 0
        for eff in self.conditional:
            if eff.cost is not None and holds(eff.cond, state):
                total += value(eff.cost, state[1]) or 0
        if type(total) is Q and total.denominator == 1:
            return int(total.numerator)
        return total
