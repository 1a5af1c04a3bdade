"""Phase labels of an online trajectory: deterministic, one label per step.

A trajectory is a list of turns, each `{"text": the assistant's text, "tool": the tool it
called or None, "args": its arguments, "mark": "" | "blocked" | "rejected" |
"ill-formed"}` (`online.environment.Environment.trace`). A turn's text is labelled before
its tool call:

- `U` understand: `get_task` before the first `act`;  `G` re-read: `get_task` after it.
- `S` sense: `query_state` before the first `act`;    `V` verify: `query_state` after it.
- `P` plan: text before the first `act` laying out at least two grounded actions (lines,
  or parenthesised actions inside prose, read with the output contract's action reader and
  the domain's action names);  `R` replan: the same after the first `act`.
- `A` act: `act`, blocked, refused (ill-formed) or rejected-by-a-critic proposals included
  (the turn's mark says which).
- `Y` summary: text of at least 20 words in the turn that calls `submit` (it wins over R).
- `submit` and `declare_unsolvable` end the sequence and get no label; an unknown tool or
  a turn of prose without a plan gets none either.

The first `act` is the first turn that calls `act`, whatever became of the call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from planaudit.contract import parse_action

LABELS = ("U", "G", "S", "V", "P", "R", "A", "Y")
ENDS = frozenset({"submit", "declare_unsolvable"})
SUMMARY_WORDS = 20
PLAN_ACTIONS = 2
_TOOL_LINE = re.compile(r"^\s*TOOL:.*$", re.M)  # the text protocol's call line is not prose
_INLINE = re.compile(r"\(\s*([a-z_][\w-]*)((?:[\s,]+[\w-]+)*)\s*\)", re.I)


@dataclass(frozen=True)
class Step:
    phase: str
    turn: int  # index of the turn in the trajectory
    mark: str = ""  # for A: blocked, rejected or ill-formed


def grounded_actions(text: str, actions: frozenset[str]) -> int:
    """How many grounded actions of the domain a text lays out: every line the action
    reader reads as one, else every parenthesised action inside a line."""
    n = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        step = parse_action(line, actions)
        if step is not None and step[0] in actions:
            n += 1
            continue
        n += sum(1 for m in _INLINE.finditer(line.lower()) if m.group(1) in actions)
    return n


def label(turns: Sequence[dict], actions: Iterable[str]) -> list[Step]:
    actions = frozenset(a.lower() for a in actions)
    out: list[Step] = []
    acted = False
    for i, t in enumerate(turns):
        tool = t.get("tool")
        text = _TOOL_LINE.sub("", t.get("text") or "")
        if tool == "submit" and len(text.split()) >= SUMMARY_WORDS:
            out.append(Step("Y", i))
        elif text.strip() and grounded_actions(text, actions) >= PLAN_ACTIONS:
            out.append(Step("R" if acted else "P", i))
        if tool == "get_task":
            out.append(Step("G" if acted else "U", i))
        elif tool == "query_state":
            out.append(Step("V" if acted else "S", i))
        elif tool == "act":
            acted = True
            out.append(Step("A", i, t.get("mark") or ""))
        if tool in ENDS:
            break
    return out


def encode(phases: Sequence[str]) -> list[str]:
    """Run-length encoding: ["U", "S", "S", "P"] -> ["U_1", "S_2", "P_1"]."""
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
