"""Reading a participant's phase-1 plan, written in their own words.

A fenced block goes through the output contract (`contract.extract`, the offline
regime's reader), as a model's reply would. Anything else is read line by line
(`human.paraphrase`): each line is a step (or, "unstack c from a, then put it down",
several), prose, or unreadable, and is marked so on its own (`Reading.lines`). A line is
first read as the strict reading of plans in words reads a model's reply
(`planbench.dialects`: one action a line, its words and exactly its objects), then
through the phrases people use, declared beside the domain (`paraphrases:` in the suite
domain's `nl.yaml`). The vocabulary is the task's own (action names with hyphens and
underscores as spaces, object names as whole words) or, on a PlanBench instance,
PlanBench's config ("the red block", or "the red one").

The verdict: the plan is the steps read, in order; an unreadable line gives no step and
is counted (`Reading.unreadable`; the row's `text_unreadable_lines`), so that the
analysis can send such texts to a human coder rather than trust a plan with a hole in it.
A text with no step is `malformed`: its reason is its first unreadable line, or that no
line reads as an action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from planaudit.contract import extract
from planaudit.formal.ground import Task
from planaudit.human.paraphrase import LineReader, compile_patterns, for_domain
from planaudit.planbench.dialects import read_strict, read_words
from planaudit.planbench.material import Config

Step = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class LineReading:
    """One non-blank line of the text and what it gave."""

    number: int  # 1-based, blank lines counted
    text: str  # as written
    status: str  # "step", "prose" or "unreadable"
    steps: tuple[Step, ...] = ()  # usually one; more for "x, then y"
    reason: str | None = None  # why it is unreadable


@dataclass(frozen=True)
class Reading:
    kind: str  # "plan", "unsolvable" or "malformed"
    reader: str  # "contract" or "words"
    steps: list[Step] = field(default_factory=list)
    reason: str | None = None
    lines: list[LineReading] = field(default_factory=list)  # "words" only

    @property
    def unreadable(self) -> list[LineReading]:
        return [ln for ln in self.lines if ln.status == "unreadable"]


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


def line_reader(task: Task, planbench: Config | None = None,
                paraphrases: Mapping[str, Sequence[str]] | None = None) -> LineReader:
    """The reader of `task`'s lines; `paraphrases` default to those of the built-in domain
    with the task's actions (`paraphrase.for_domain`)."""
    if paraphrases is None:
        paraphrases = for_domain(task.domain)
    patterns = compile_patterns(paraphrases, task.domain)
    if planbench is not None:
        cfg = planbench
        objects = {v.lower(): k for k, v in cfg.objects.items()}
        return LineReader(task, objects, patterns, lambda line: read_strict(cfg, line))
    rewrites, acts, objects = vocabulary(task)
    return LineReader(task, objects, patterns,
                      lambda line: read_words(line, rewrites, acts, objects, whole_words=True))


def read_text(text: str | None, task: Task, planbench: Config | None = None,
              paraphrases: Mapping[str, Sequence[str]] | None = None) -> Reading:
    """The plan in `text`; `planbench` the PlanBench config of a PlanBench instance."""
    if text is None or not text.strip():
        return Reading("malformed", "words", reason="no text")
    if "```" in text:
        ex = extract(text, frozenset(task.domain.actions))
        return Reading(ex.kind, "contract", list(ex.steps), ex.reason)
    reader = line_reader(task, planbench, paraphrases)
    lines: list[LineReading] = []
    steps: list[Step] = []
    since = 0  # "it" names a step read after the last unreadable line
    for n, raw in enumerate(text.splitlines(), 1):
        got = reader.read(raw, steps[since:])
        if got is None:
            continue
        why = None if got.reason is None else f"line {n}: '{raw.strip()}' {got.reason}"
        lines.append(LineReading(n, raw, got.status, got.steps, why))
        steps += got.steps
        if got.status == "unreadable":
            since = len(steps)
    bad = [ln for ln in lines if ln.status == "unreadable"]
    if not steps:
        return Reading("malformed", "words", reason=bad[0].reason if bad else
                       "no line reads as an action", lines=lines)
    reason = None if not bad else (f"{len(bad)} unreadable line(s), first {bad[0].reason}")
    return Reading("plan", "words", steps, reason, lines)
