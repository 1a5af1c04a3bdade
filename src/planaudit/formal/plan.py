"""Plan files as VAL reads them.

One parenthesised action a line is the usual form, but only what stands inside
top-level parentheses counts: `;` starts a comment, and text outside the
parentheses (step numbers, timestamps, durations in brackets) is ignored. Names
are case-insensitive. Tolerant reading of free-form model replies is the
offline extractor's job, not this module's.
"""

from __future__ import annotations

import re

_COMMENT = re.compile(r";[^\n]*")
_GROUP = re.compile(r"\(([^()]*)\)")

Step = tuple[str, tuple[str, ...]]


def parse_plan(text: str) -> list[Step]:
    """The steps of a plan file, each as (action, arguments), lower-cased."""
    steps: list[Step] = []
    depth_text = _COMMENT.sub("", text).lower()
    for m in _GROUP.finditer(depth_text):
        words = m.group(1).split()
        steps.append((words[0], tuple(words[1:])) if words else ("", ()))
    return steps


def format_step(step: Step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"
