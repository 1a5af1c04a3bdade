"""Phase labels of an online trajectory: deterministic, one label per step.

A trajectory is a list of turns, each `{"text": the assistant's text, "tool": the tool it
called or None, "args": its arguments, "mark": "" | "blocked" | "rejected" |
"ill-formed"}` (`online.environment.Environment.trace`). A turn's text is labelled before
its tool call. The labels are words, not letters: the plan-compliance paper's letters
(N, R, P, V, S: navigation, reproduction, patch, validation, summary) mean other things,
and a single letter here (P for plan, R for replan) read beside the paper's would mislead.

- `read`: `get_task` before the first `act`;  `reread`: `get_task` after it.
- `sense`: `query_state` before the first `act`;  `verify`: `query_state` after it.
- `plan`: text before the first `act` that lays out a plan (below);  `replan`: the same
  after the first `act`.
- `act`: `act`, blocked, refused (ill-formed) or rejected-by-a-critic proposals included
  (the turn's mark says which).
- `summary`: text of at least 20 words in the turn that calls `submit` (it wins over replan).
- `submit` and `declare_unsolvable` end the sequence and get no label; an unknown tool or
  a turn of prose without a plan gets none either.

The first `act` is the first turn that calls `act`, whatever became of the call.

What counts as a plan. The text's grounded actions of the domain are read line by line
(bold `**` and backticks dropped: models bold their actions): a line the action reader
reads as one action is *listed*; otherwise every parenthesised action inside the line is
*inline*. An action is *done* when its clause (the text since the previous action or
`.;!?`) names it as past: `done`, `did`, `after`, `executed`, `applied`, `performed`,
`completed`, `finished`, `previous`, `already` before it, or `done`, `succeeded`,
`worked`, `applied` right after it. The rest are *ahead*. A text is a plan when

1. two or more actions are ahead (a plan of several steps, whatever else it narrates); or
2. exactly one action is ahead, none is done, and the text frames it as the plan: the
   action is a bulleted line or a list's first item (`1.`, `Step 1:`), or the text says
   `[PLAN]`, `plan:`, `my/new/revised/updated/remaining plan`, `remaining`, `left`, or
   `only/single/one/last step` (or action). A one-step plan is then a plan (a task with one
   step to go, a replan with one step left).

So narration of progress, the actions named as done and at most the single next action
("Done with (pick-up a); next (stack a b)."), is not a plan, and neither is a lone mention
of the action about to be taken ("Now (pick-up a).", the action alone on a line, or
`3. (stack a b)`, a later item of a list). Read against PlanBench's recorded replies
(`benchmarks/compliance.py --planbench`): no reply the two-action rule called a plan
stops being one, and 356 of 13,202 become one, nearly all plans of which the action
reader reads only one line (`stack ...` beside PlanBench's `pick up ...`), closed by
`[PLAN END]`. Of 35,255 paragraphs, 20 name two actions and are no plan: 19 of GPT-4o's
steps that name the one before as done ("2. **Succumb object d** ... The previous action
(Attack object d) ensures ...") and its look back over three steps taken ("After Step 1
(Attack object d): ...").

Rows written before the rename carry one-letter labels (`U_1`, order `USPAV`): `LEGACY`
maps them, `runs_named` and `order_names` read both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from planaudit.contract import parse_action

LABELS = ("read", "reread", "sense", "verify", "plan", "replan", "act", "summary")
# the one-letter labels of rows written before the rename, and of plan settings' call
# metadata (kept so the cache keys of calls under a setting, paid ones included, hold)
LEGACY = {"U": "read", "G": "reread", "S": "sense", "V": "verify", "P": "plan",
          "R": "replan", "A": "act", "Y": "summary"}
LETTER = {name: letter for letter, name in LEGACY.items()}
ENDS = frozenset({"submit", "declare_unsolvable"})
SUMMARY_WORDS = 20
_TOOL_LINE = re.compile(r"^\s*TOOL:.*$", re.M)  # the text protocol's call line is not prose
_INLINE = re.compile(r"\(\s*([a-z_][\w-]*)((?:[\s,]+[\w-]+)*)\s*\)", re.I)
_FIRST_ITEM = re.compile(r"^\s*(?:[-*•]|1\s*[.):]|step\s*1\s*[.):-])", re.I)  # a list's start
_CLAUSE = re.compile(r"[.;!?]")
_EMPHASIS = re.compile(r"\*\*|`")  # models bold their actions (`1. **Attack object d**`)
_DONE_BEFORE = re.compile(r"\b(?:done|did|after|executed|applied|performed|completed|finished|"
                          r"previous(?:ly)?|already)\b", re.I)
_DONE_AFTER = re.compile(r"^\W*(?:(?:is|was|has been|have been)\s+)?(?:done|succeeded|worked|"
                         r"applied)\b", re.I)
_FRAMED = re.compile(r"\[plan\b|\bplan(?:\s+is)?(?:\s+as\s+follows)?\s*:|"
                     r"\b(?:my|new|revised|updated|remaining)\s+plan\b|\bremaining\b|\bleft\b|"
                     r"\b(?:only|single|one|last)\s+(?:remaining\s+)?(?:step|action)\b", re.I)


@dataclass(frozen=True)
class Step:
    phase: str
    turn: int  # index of the turn in the trajectory
    mark: str = ""  # for act: blocked, rejected or ill-formed


@dataclass(frozen=True)
class Mention:
    """One grounded action in a text: `listed` (a line that is the action) or inline,
    `enumerated` (a bulleted line or a list's first item), `done` (named as past)."""
    action: str
    listed: bool
    enumerated: bool
    done: bool


def _clause(text: str) -> str:
    """The clause a mention sits in, up to it: the text after the last `.;!?`."""
    return _CLAUSE.split(text)[-1]


def mentions(text: str, actions: frozenset[str]) -> list[Mention]:
    """The grounded actions of the domain a text names, in order."""
    out: list[Mention] = []
    for line in _EMPHASIS.sub("", text).splitlines():
        if not line.strip():
            continue
        step = parse_action(line, actions)
        if step is not None and step[0] in actions:
            out.append(Mention(step[0], True, bool(_FIRST_ITEM.match(line)), False))
            continue
        low = line.lower()
        start = 0
        for m in _INLINE.finditer(low):
            if m.group(1) not in actions:
                continue
            before = _clause(low[start:m.start()])
            after = _CLAUSE.split(low[m.end():])[0]
            done = bool(_DONE_BEFORE.search(before) or _DONE_AFTER.match(after))
            out.append(Mention(m.group(1), False, False, done))
            start = m.end()
    return out


def grounded_actions(text: str, actions: frozenset[str]) -> int:
    """How many grounded actions of the domain a text names (done or ahead)."""
    return len(mentions(text, actions))


def is_plan(text: str, actions: frozenset[str]) -> bool:
    """Whether a text lays out a plan (the module's rule): two or more actions ahead, or
    one action ahead framed as the plan with none named as done."""
    found = mentions(text, actions)
    ahead = [m for m in found if not m.done]
    if len(ahead) >= 2:
        return True
    if len(ahead) != 1 or len(ahead) != len(found):
        return False
    return ahead[0].enumerated or bool(_FRAMED.search(text))


def label(turns: Sequence[dict], actions: Iterable[str]) -> list[Step]:
    actions = frozenset(a.lower() for a in actions)
    out: list[Step] = []
    acted = False
    for i, t in enumerate(turns):
        tool = t.get("tool")
        text = _TOOL_LINE.sub("", t.get("text") or "")
        if tool == "submit" and len(text.split()) >= SUMMARY_WORDS:
            out.append(Step("summary", i))
        elif text.strip() and is_plan(text, actions):
            out.append(Step("replan" if acted else "plan", i))
        if tool == "get_task":
            out.append(Step("reread" if acted else "read", i))
        elif tool == "query_state":
            out.append(Step("verify" if acted else "sense", i))
        elif tool == "act":
            acted = True
            out.append(Step("act", i, t.get("mark") or ""))
        if tool in ENDS:
            break
    return out


def encode(phases: Sequence[str]) -> list[str]:
    """Run-length encoding: ["read", "sense", "sense"] -> ["read_1", "sense_2"]."""
    out: list[str] = []
    prev, n = None, 0
    for p in phases:
        if p == prev:
            n += 1
            continue
        if prev is not None:
            out.append(f"{prev}_{n}")
        prev, n = p, 1
    if prev is not None:
        out.append(f"{prev}_{n}")
    return out


_RUN = re.compile(r"^(.+?)(?:_(\d+))?$")


def decode(runs: Sequence[str]) -> list[str]:
    """Inverse of `encode`; an item without a trailing `_N` counts once
    (`L_navigate_3` is `L_navigate` three times)."""
    out: list[str] = []
    for item in runs:
        m = _RUN.match(str(item))
        if not m:
            raise ValueError(f"cannot read the phase {item!r}")
        out += [m.group(1)] * int(m.group(2) or 1)
    return out


def runs_named(runs: Sequence[str]) -> list[str]:
    """A row's `phases` with today's names: a row written before the rename (every item a
    one-letter label, `U_1`) is translated; any other is returned as it is."""
    runs = [str(r) for r in runs or []]
    parts = [_RUN.match(r) for r in runs]
    if runs and all(m and m.group(1) in LEGACY for m in parts):
        return [f"{LEGACY[m.group(1)]}_{m.group(2) or 1}" for m in parts]
    return runs


def order_names(order: str | Sequence[str] | None) -> list[str]:
    """An expected order as a list of phase names: a list, a comma-separated string
    (`read,sense,plan,act,verify`) or a string of one-letter labels written before the
    rename (`USPAV`)."""
    if not order:
        return []
    if not isinstance(order, str):
        return [str(p).strip() for p in order]
    if "," not in order and all(c in LEGACY for c in order):
        return [LEGACY[c] for c in order]
    return [p.strip() for p in order.split(",")]


def order_text(names: Sequence[str]) -> str:
    """The order as rows and the settings file's readers carry it: names joined by commas."""
    return ",".join(names)
