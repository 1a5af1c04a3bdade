"""What every ACPBench question source produces and the scorer reads.

A `Question` is one prompt in one form with the proven truth its scorer needs, for any
source (a suite domain's generated states, an item of ACPBench's own files). Plain JSON
truth lets `acpbench show` print it and a shard rebuild it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from planaudit.acpbench.items import ORDER

TYPES = ORDER  # app, val, prog, reach, areach, just, land, nexta
FORMS = ("bool", "mcq", "gen")
LABELS = "ABCD"

# what a generative answer is, per type (the reading and the judgement follow it)
GEN_KIND = {"app": "set", "prog": "effects", "reach": "member", "areach": "member",
            "val": "index", "just": "shorten", "land": "member", "nexta": "member"}


class QuestionError(ValueError):
    """A question type, form or domain that cannot be posed; the message names it."""


@dataclass(frozen=True)
class Question:
    type: str  # one of TYPES
    form: str  # one of FORMS
    source: str  # "suite" (generated over a suite task's states) or "acpbench" (its files)
    domain: str
    task: str  # the suite task or ACPBench item id
    state: str  # which state of the task ("s0", "s1", ...; the item's own for ACPBench)
    prompt: str  # the user message, exactly as the model sees it
    truth: dict = field(default_factory=dict)  # JSON: the proven answer and how to read one
    oracle: str = ""  # an answer that scores full marks
    wrong: str = ""  # a readable answer that is wrong (the flawed reference's)

    @property
    def id(self) -> str:
        return f"{self.domain}/{self.task}/{self.state}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Question:
        return cls(**data)


def check_types(types, forms) -> None:
    bad = [t for t in types if t not in TYPES]
    if bad:
        raise QuestionError(f"no ACPBench question type {', '.join(bad)} (have: {', '.join(TYPES)})")
    bad = [f for f in forms if f not in FORMS]
    if bad:
        raise QuestionError(f"no ACPBench form {', '.join(bad)} (have: {', '.join(FORMS)})")
