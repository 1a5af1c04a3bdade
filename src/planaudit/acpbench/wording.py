"""Reading an action named in English ("debark car c2 to location l1 from the ferry")
as a ground action of the item's task.

The objects are the words of the phrase that name objects of the task. A reading is a
ground action whose arguments are exactly those objects (as a set: a phrase may name
an object once that the action takes twice) and whose name's words occur in the
phrase; among several, those applicable in the state; a reading still not unique is
reported as ambiguous, never chosen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

from planaudit.formal.ground import Task
from planaudit.formal.task import Operator


@dataclass
class Reading:
    op: Operator | None
    note: str = ""


def phrase(question: str) -> str:
    m = re.search(r'action "([^"]*)"', question)
    return (m.group(1) if m else question).lower()


def read_action(question: str, task: Task) -> Reading:
    text = phrase(question)
    words = re.findall(r"[\w-]+", text)
    named = {w for w in words if w in task.objects}
    if not named:
        return Reading(None, f"no object of the task named in {text!r}")
    candidates = []
    for action, schema in task.domain.actions.items():
        pools = [[o for o in task.objects_of(types) if o in named] for _, types in schema.params]
        for args in product(*pools):
            if set(args) == named:
                candidates.append(task.operator(action, args))
    if not candidates:
        return Reading(None, f"no action takes exactly the objects {sorted(named)} of {text!r}")
    wordset = set(words)

    def mentions(op: Operator) -> int:
        return sum(part in wordset for part in re.split(r"[-_]", op.action))

    best = max(mentions(op) for op in candidates)
    candidates = [op for op in candidates if mentions(op) == best] if best else candidates
    if len(candidates) > 1:
        live = [op for op in candidates if op.applicable(task.init)]
        if live:
            candidates = live
    if len(candidates) > 1:
        return Reading(None, f"ambiguous: {text!r} reads as "
                             + ", ".join(op.name for op in candidates))
    return Reading(candidates[0])
