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

Each block is drawn from its own generator (seeded by the seed, the stratum and the block's
number), so the n-th place needs only the block that holds it: `place` finds that block
from the blocks' sizes, kept per (seed, stratum, sizes) once drawn, and shuffles it alone.
It runs inside the study's lock on every entry, where walking the sequence from its start
cost O(n) (3 ms at the 1,000th entry) while every other entry waited.
"""

from __future__ import annotations

import bisect
import random
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

STUDY = "study"  # the one stratum of an unstratified study
STARTS_KEPT = 256  # strata whose block boundaries are kept (a study has one, or one per instance)


def _block(seed: int, stratum: str, blocks: tuple[int, ...], arms: tuple[str, ...],
           block: int) -> tuple[int, tuple[str, ...]]:
    """Block `block` of a stratum: its multiple (drawn first) and its arms in order. The one
    definition of the sequence: `places` and `place` both read it."""
    rng = random.Random(f"{seed}:{stratum}:{block}")
    times = rng.choice(blocks)
    members = [a for a in arms for _ in range(times)]
    rng.shuffle(members)
    return times, tuple(members)


# the block a run of entries keeps landing in (two per stratum: the current and the next)
_shuffled = lru_cache(maxsize=2 * STARTS_KEPT)(_block)


class _Starts:
    """Where each block begins, in multiples of the number of arms (block k begins at
    `ends[k - 1]`), drawn as far as asked and kept for the most recent strata."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ends: OrderedDict[tuple, list[int]] = OrderedDict()

    def find(self, seed: int, stratum: str, blocks: tuple[int, ...], unit: int) -> tuple[int, int]:
        """(k, where block k begins, in units) for the block holding unit `unit`."""
        key = (seed, stratum, blocks)
        with self._lock:
            ends = self._ends.get(key)
            if ends is None:
                ends = self._ends[key] = []
                if len(self._ends) > STARTS_KEPT:
                    self._ends.popitem(last=False)
            else:
                self._ends.move_to_end(key)
            while not ends or ends[-1] <= unit:  # draw the sizes of the blocks not yet seen
                k = len(ends)
                times = random.Random(f"{seed}:{stratum}:{k}").choice(blocks)
                ends.append((ends[-1] if ends else 0) + times)
            k = bisect.bisect_right(ends, unit)
            return k, ends[k - 1] if k else 0


_starts = _Starts()


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
            for arm in _block(self.seed, stratum, self.blocks, tuple(arms), block)[1]:
                yield block, arm
            block += 1

    def place(self, stratum: str, arms: Sequence[str], n: int) -> tuple[int, str]:
        """The n-th place (from 0) of the stratum's sequence: (block number, arm), in O(1)
        amortised. One block size: block n // size. Several: the block boundaries drawn so
        far are kept, so each entry draws at most the sizes of the blocks since the last."""
        if n < 0:
            raise ValueError(f"no place {n}: places count from 0")
        arms = tuple(arms)
        if len(set(self.blocks)) == 1:
            size = self.blocks[0] * len(arms)
            k, start = n // size, n // size * size
        else:
            k, units = _starts.find(self.seed, stratum, self.blocks, n // len(arms))
            start = units * len(arms)
        return k, _shuffled(self.seed, stratum, self.blocks, arms, k)[1][n - start]

    def sequence(self, stratum: str, arms: Sequence[str], n: int) -> list[tuple[int, str]]:
        """The first `n` places, then the rest of the block the n-th falls in (what the
        export writes: every place drawn so far is accounted for)."""
        out: list[tuple[int, str]] = []
        for block, arm in self.places(stratum, arms):
            if len(out) >= n and (not out or block != out[-1][0]):
                return out
            out.append((block, arm))
        return out
