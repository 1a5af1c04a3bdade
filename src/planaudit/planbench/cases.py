"""What every generator of PlanBench test cases produces and every scorer returns.

A `Case` is one prompt of one test case with the ground truth its scorer needs, for
any source of domains (our suite, a PlanBench root). Keeping the record plain JSON
lets a shard cache it, a transcript show it and `planbench show` print it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# PlanBench's test-case ids, in its order
TESTS = ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8_1", "t8_2", "t8_3")


@dataclass(frozen=True)
class Case:
    test: str  # one of TESTS
    source: str  # "suite" (our domains, nl.yaml) or "planbench" (a PlanBench root)
    domain: str  # the domain's name within its source
    instance: str  # the instance id within the domain
    prompt: str  # the user message, exactly as the model sees it
    truth: dict = field(default_factory=dict)  # JSON: what the source's scorer needs

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Case:
        return cls(**data)


@dataclass(frozen=True)
class Verdict:
    correct: bool
    outcome: str  # e.g. "valid", "invalid", "not_optimal", "wrong_state", "unreadable"
    detail: str = ""  # why, in a line: the first failure, the facts missed
    scores: dict = field(default_factory=dict)  # extra named scores (t3: binary/type/expl)


@dataclass
class Outcome:
    """One recorded answer of a PlanBench results file, replayed."""

    instance_id: object
    correct: bool | None  # None: left out (no response, or an empty one)
    outcome: str
    why: str = ""
    scores: dict = field(default_factory=dict)
