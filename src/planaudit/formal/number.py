"""Exact numbers for numeric fluents: an `int` when integral, a rational `Q` otherwise.

PDDL's numbers are rationals. In binary floating point `(increase (f) 0.1)` three
times from 0 does not reach `(= (f) 0.3)`, so values are kept exact. Integers stay
Python ints (the common case: costs, counts, capacities), whose arithmetic is the
fastest; a value becomes a rational only when it is not integral, and `exact` turns
an integral rational back into an int. The rational is GMP's (`gmpy2.mpq`), not the
standard library's `Fraction`: the same exact arithmetic, equal and hashing alike
(`Q(1, 3) == Fraction(1, 3)`), in C, about nine times faster per operation, which
keeps validating plans over decimals within reach of integer speed. A scaled integer
was not chosen: `(/ 1 3)` has no finite decimal scale.

Text gets the shortest exact decimal when the value has one (`0.3`), else the
fraction (`1/3`); PDDL text gets `(/ 1 3)`, which parses back to the same value.
Only at the boundary to JSON (`to_json`: `validate`'s verdicts, curriculum case
files) may a non-integral value become the nearest float; result rows hold no plan
cost.
"""

from __future__ import annotations

import numbers
import re

from gmpy2 import mpq as Q

Number = int | Q

_LITERAL = re.compile(r"(-?)(\d*)(?:\.(\d*))?")


def parse(tok: str) -> Number:
    """The exact value of a PDDL number literal (`3`, `-0.25`, `.5`, `2.`)."""
    m = _LITERAL.fullmatch(tok)
    if m is None or not (m[2] or m[3]):
        raise ValueError(f"not a number literal: {tok!r}")
    sign, whole, frac = m[1], m[2] or "0", m[3] or ""
    n = int(whole + frac)
    if sign:
        n = -n
    return exact(Q(n, 10 ** len(frac))) if frac else n


def exact(v) -> Number:
    """`v` as an exact Number: an int when integral. A float (handed in by code
    outside the formal core) is read as the decimal it prints as, 0.1 as 1/10."""
    if type(v) is int:
        return v
    if type(v) is Q:
        return int(v.numerator) if v.denominator == 1 else v
    if isinstance(v, numbers.Integral):  # bool, numpy's integers, GMP's mpz
        return int(v)
    if isinstance(v, numbers.Rational):  # a Fraction (unified-planning's values)
        return exact(Q(int(v.numerator), int(v.denominator)))
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"not a finite number: {v!r}")
        return exact(Q(repr(float(v))))  # the decimal it prints as; numpy prints otherwise
    if isinstance(v, str):
        return parse(v)
    raise TypeError(f"not a number: {v!r}")


def divide(a: Number, b: Number) -> Number | None:
    """a / b exactly; None (undefined) when b is 0."""
    if b == 0:
        return None
    if type(a) is int and type(b) is int:
        q, r = divmod(a, b)
        return q if r == 0 else Q(a, b)
    q = Q(a) / b  # a rational is on one side: the quotient is one
    return int(q.numerator) if q.denominator == 1 else q


def _decimal(v: Q) -> str | None:
    """The shortest exact decimal of `v`, or None when its denominator has a prime
    factor other than 2 and 5 (no finite decimal)."""
    q = int(v.denominator)
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    if q != 1:
        return None
    places = max(twos, fives)
    scaled = abs(int(v.numerator)) * 10 ** places // int(v.denominator)
    digits = str(scaled).rjust(places + 1, "0")
    whole, frac = digits[:-places], digits[-places:].rstrip("0")
    return ("-" if v < 0 else "") + whole + ("." + frac if frac else "")


def render(v) -> str:
    """`v` as text for people: `3`, `0.3`, `-1.25`, or `1/3` when no decimal is exact
    (`inf` for an infinite float, a search's dead-end estimate)."""
    if not isinstance(v, int | Q | str) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"  # a float, or GMP's after an exact value met one
    v = exact(v)
    if type(v) is int:
        return str(v)
    dec = _decimal(v)
    return dec if dec is not None else f"{v.numerator}/{v.denominator}"


def pddl(v) -> str:
    """`v` as PDDL text that parses back to it: a decimal literal, or `(/ p q)`."""
    v = exact(v)
    if type(v) is int:
        return str(v)
    dec = _decimal(v)
    return dec if dec is not None else f"(/ {v.numerator} {v.denominator})"


def to_json(v) -> int | float | None:
    """`v` for JSON or Parquet: an int when integral, else the nearest float (the one
    place where exactness ends; a decimal such as 0.3 still prints as 0.3)."""
    if v is None:
        return None
    v = exact(v)
    return v if type(v) is int else float(v)
