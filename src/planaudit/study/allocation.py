"""Randomised assignment to arms: seeded permuted blocks within each stratum.

A reviewer accepts an arm comparison when assignment was random and balanced, and when
the sequence can be shown: alternation (what the server did before) is balanced but
predictable from the order of entry. Here each stratum (the whole study, or each
instance when assignment is stratified) has its own sequence: blocks of `m × arms`
places, `m` drawn from `blocks`, each block holding every arm m times in a seeded random
order. The n-th person to enter a stratum gets its n-th place; the count is read inside
the enrolment's transaction (`store.enrol`), so concurrent entries never share a place.
The sequence is a function of the seed alone, so the export writes it out in full, and a
cohort generator can say in advance which arms N entries will get.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

STUDY = "study"  # the one stratum of an unstratified study


@dataclass(frozen=True)
class Assignment:
    """How a study assigns arms: its strata (`study`: one sequence; `instance`: one per
    instance, the least-filled instance chosen first), the seed, and the block sizes as
    multiples of the number of arms (a size is drawn per block; more than one size makes
    the end of a block harder to foresee)."""

    strata: str = STUDY
    seed: int = 0
    blocks: tuple[int, ...] = (1,)

    @classmethod
    def of(cls, given) -> Assignment:
        """From the config's `assignment`: `balanced` (one stratum), `stratified` (one
        per instance), or `{strata, seed, blocks}`."""
        if isinstance(given, str):
            return cls(strata="instance" if given == "stratified" else STUDY)
        given = dict(given or {})
        return cls(strata=given.get("strata", STUDY), seed=int(given.get("seed", 0)),
                   blocks=tuple(given.get("blocks") or (1,)))

    def to_json(self) -> dict:
        return {"method": "permuted blocks", "strata": self.strata, "seed": self.seed,
                "blocks": list(self.blocks)}

    def places(self, stratum: str, arms: Sequence[str]) -> Iterator[tuple[int, str]]:
        """The stratum's sequence, place by place: (block number, arm)."""
        block = 0
        while True:
            rng = random.Random(f"{self.seed}:{stratum}:{block}")
            times = rng.choice(self.blocks)
            members = [a for a in arms for _ in range(times)]
            rng.shuffle(members)
            for arm in members:
                yield block, arm
            block += 1

    def place(self, stratum: str, arms: Sequence[str], n: int) -> tuple[int, str]:
        """The n-th place (from 0) of the stratum's sequence."""
        for i, found in enumerate(self.places(stratum, arms)):
            if i == n:
                return found
        raise AssertionError("unreachable: the sequence never ends")

    def sequence(self, stratum: str, arms: Sequence[str], n: int) -> list[tuple[int, str]]:
        """The first `n` places, then the rest of the block the n-th falls in (what the
        export writes: every place drawn so far is accounted for)."""
        out: list[tuple[int, str]] = []
        for block, arm in self.places(stratum, arms):
            if len(out) >= n and (not out or block != out[-1][0]):
                return out
            out.append((block, arm))
        return out
