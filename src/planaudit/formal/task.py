"""Ground semantics: states, operators, applicability and successor states.

A state is a pair `(bits, nums)`: `bits` is an int whose bit i says whether
ground atom i holds (closed world), `nums` a tuple of numeric fluent values
(None where undefined). The metric accumulator `total-cost` is not part of the
state: it only sums costs, and keeping it would make every path a new state.

An operator keeps its precondition in two parts: the conjunction of plain
literals as two bitmasks (the fast path, a subset test), and whatever else
(disjunctions, numeric comparisons) as a compiled formula. Effects follow the
PDDL rule: deletes first, then adds; numeric effects read the old state.
"""

from __future__ import annotations

from dataclasses import dataclass

State = tuple[int, tuple]

# Compiled ground formulas:
#   ("atom", i) ("not", f) ("and", fs) ("or", fs) ("true",) ("false",) ("cmp", op, e1, e2)
# Compiled expressions: ("num", v) ("fv", i) ("op", sym, a, b) ("neg", a)
TRUE = ("true",)
FALSE = ("false",)


def atom_indices(mask: int) -> list[int]:
    """The indices of the set bits of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def value(e: tuple, nums: tuple) -> float | None:
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
    if sym == "+":
        return a + b
    if sym == "-":
        return a - b
    if sym == "*":
        return a * b
    return a / b if b != 0 else None


def compare(op: str, a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False  # a comparison on an undefined fluent never holds
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def holds(f: tuple, state: State) -> bool:
    tag = f[0]
    if tag == "atom":
        return bool(state[0] >> f[1] & 1)
    if tag == "and":
        return all(holds(g, state) for g in f[1])
    if tag == "not":
        return not holds(f[1], state)
    if tag == "or":
        return any(holds(g, state) for g in f[1])
    if tag == "cmp":
        return compare(f[1], value(f[2], state[1]), value(f[3], state[1]))
    return tag == "true"


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


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect group: unconditional when `cond` is None."""

    cond: tuple | None
    add: int
    delete: int
    assigns: tuple  # (op, fluent index, compiled expression)


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
    cost: tuple | None  # compiled expression added to total-cost, if any

    @property
    def simple(self) -> bool:
        """Literal preconditions, STRIPS effects: the bitset fast path applies."""
        return self.pre_rest is None and not self.assigns and not self.conditional

    def applicable(self, state: State) -> bool:
        bits = state[0]
        if bits & self.pre_pos != self.pre_pos or bits & self.pre_neg:
            return False
        return self.pre_rest is None or holds(self.pre_rest, state)

    def apply(self, state: State) -> State:
        bits, nums = state
        if self.simple:
            return ((bits & ~self.delete) | self.add, nums)
        add, delete, assigns = self.add, self.delete, list(self.assigns)
        for eff in self.conditional:
            if eff.cond is None or holds(eff.cond, state):
                add |= eff.add
                delete |= eff.delete
                assigns.extend(eff.assigns)
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
            elif op == "increase":
                new[i] = old + v
            elif op == "decrease":
                new[i] = old - v
            elif op == "scale-up":
                new[i] = old * v
            else:
                new[i] = old / v if v else None
        return (new_bits, tuple(new))

    def step_cost(self, state: State) -> float:
        if self.cost is None:
            return 0.0
        v = value(self.cost, state[1])
        return 0.0 if v is None else v
