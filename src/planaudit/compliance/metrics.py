"""How well a phase sequence follows an expected order of m phases.

- PPC (plan phase coverage): the share of the m phases that occur at least once.
- POC (plan order compliance): the length of the longest strictly increasing subsequence
  of the first-occurrence positions of the phases that occur, taken in expected order,
  divided by m.
- PPF (plan phase fidelity): m / (m + the number of distinct out-of-plan phase types that
  occur).
- PC (plan compliance): the geometric mean of the three; 0 when any of them is 0.
- strict: only plan phases occur, all of them, their first occurrences in order.

Worked examples in the paper's letters (expected N R P V: navigation, reproduction, patch,
validation): `N R R P V V V P V` -> PC 1; `R R R R N N N P P V V`
-> PPC 1, POC 0.75, PPF 1, PC 0.909; `N N N P` -> PPC 0.5, POC 0.5, PPF 1, PC 0.630.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Compliance:
    ppc: float
    poc: float
    ppf: float
    pc: float
    strict: bool

    def to_json(self) -> dict:
        return asdict(self)


def exact(phase: str, expected: Sequence[str]) -> str | None:
    return phase if phase in expected else None


def prefixed(phase: str, expected: Sequence[str]) -> str | None:
    """The paper's rule: an actual phase counts for an expected one when equal to it or
    prefixed by it plus `_` (`L_navigate` counts for `L`); the longest match wins."""
    best = None
    for e in expected:
        if (phase == e or phase.startswith(e + "_")) and (best is None or len(e) > len(best)):
            best = e
    return best


def longest_increasing(values: Sequence[int]) -> int:
    """Length of the longest strictly increasing subsequence (patience sorting)."""
    tails: list[int] = []
    for v in values:
        i = bisect_left(tails, v)
        if i == len(tails):
            tails.append(v)
        else:
            tails[i] = v
    return len(tails)


def score(sequence: Sequence[str], expected: Sequence[str],
          match: Callable[[str, Sequence[str]], str | None] = exact) -> Compliance:
    """The metrics of one phase sequence (one label per step, not run-length encoded)."""
    m = len(expected)
    if m == 0:
        raise ValueError("an expected order needs at least one phase")
    if len(set(expected)) != m:
        raise ValueError(f"the expected order names a phase twice: {list(expected)}")
    first: dict[str, int] = {}
    outside: set[str] = set()
    for pos, phase in enumerate(sequence):
        hit = match(phase, expected)
        if hit is None:
            outside.add(phase)
        elif hit not in first:
            first[hit] = pos
    positions = [first[e] for e in expected if e in first]
    ppc = len(positions) / m
    lis = longest_increasing(positions)
    poc = lis / m
    ppf = m / (m + len(outside))
    pc = 0.0 if min(ppc, poc, ppf) == 0 else (ppc * poc * ppf) ** (1 / 3)
    strict = not outside and len(positions) == m and lis == m
    return Compliance(ppc, poc, ppf, pc, strict)
