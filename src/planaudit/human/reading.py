"""Reading a participant's phase-1 plan, written in their own words, as a model's reply
is read: a fenced block goes through the output contract (`contract.extract`, the
offline regime's reader); anything else through the strict reading of PlanBench's plans
in words (`planbench.dialects.read_words`: one action a line, its words and exactly its
objects, in order; prose lines skipped; a line that starts like an action but is not one
makes the text unreadable). The vocabulary is the task's own (action names with hyphens
and underscores as spaces, object names as whole words) or, on a PlanBench instance,
PlanBench's config (`red block`), exactly as a model's reply on it is read."""

from __future__ import annotations

from dataclasses import dataclass, field

from planaudit.contract import extract
from planaudit.formal.ground import Task
from planaudit.planbench.dialects import Unreadable, read_strict, read_words
from planaudit.planbench.material import Config

Step = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Reading:
    kind: str  # "plan", "unsolvable" or "malformed"
    reader: str  # "contract" or "strict"
    steps: list[Step] = field(default_factory=list)
    reason: str | None = None


def vocabulary(task: Task) -> tuple[list[tuple[str, str]], list[tuple[str, int]], dict[str, str]]:
    """The task's own words: (phrase, action) rewrites, (action, arity), object words."""
    rewrites, acts = [], []
    for name, action in task.domain.actions.items():
        phrase = name.replace("-", " ").replace("_", " ").lower()
        rewrites.append((phrase, name))
        if phrase != name.lower():  # "put-down b" as written in the list is a step too
            rewrites.append((name.lower(), name))
        acts.append((name, len(action.params)))
    rewrites.sort(key=lambda r: -len(r[0]))  # "put down" before "put"
    objects = {o.lower(): o for o in task.objects}
    return rewrites, acts, objects


def read_text(text: str | None, task: Task, planbench: Config | None = None) -> Reading:
    """The plan in `text`; `planbench` the PlanBench config of a PlanBench instance."""
    if text is None or not text.strip():
        return Reading("malformed", "strict", reason="no text")
    if "```" in text:
        ex = extract(text, frozenset(task.domain.actions))
        return Reading(ex.kind, "contract", list(ex.steps), ex.reason)
    try:
        if planbench is not None:
            steps = read_strict(planbench, text)
        else:
            rewrites, acts, objects = vocabulary(task)
            steps = read_words(text, rewrites, acts, objects, whole_words=True)
    except Unreadable as e:
        return Reading("malformed", "strict", reason=str(e))
    if not steps:
        return Reading("malformed", "strict", reason="no line reads as an action")
    return Reading("plan", "strict", steps)
