"""The hidden-model leak scan: what a transcript must never show.

No PDDL text; no original object name of an obfuscated task; and, for a disguised task,
no original action, predicate, function or type name (its `names.json` records them).
Names are matched as whole words (letters, digits, `-` and `_` bound a word), case
aside. A few names are also everyday function words that any English sentence uses
(`at`, `in`, `on`, ...); those cannot be told apart from prose and are not scanned.
The preamble every task shows (the output contract: "a single fenced code block") is
the same for every model, so it is taken out before the scan: it reveals nothing,
while an original name anywhere else (a `block` in a brief) is still found.
"""

from __future__ import annotations

import re

from planaudit.suite.brief import PREAMBLE

PDDL = re.compile(r"\(define|\(:action|:precondition|\(:init|:effect|\(:goal")
PROSE = frozenset({"a", "an", "and", "at", "by", "for", "in", "is", "it", "of", "on", "or",
                   "not", "the", "to", "with"})


def hidden_names(names: dict) -> set[str]:
    """Every name of a task's `names.json` that its transcripts must not contain."""
    if "disguise" in names:
        objects = names["objects"]
        hidden = {o for kind in ("actions", "predicates", "functions", "types")
                  for o in names.get(kind) or {}}
    else:
        objects, hidden = names, set()
    hidden |= {k for k, v in objects.items() if k != v and len(k) > 1}
    return {h.lower() for h in hidden} - PROSE


def leaks(text: str, names: dict, fixed: tuple[str, ...] = ()) -> list[str]:
    """What of the hidden model `text` shows: PDDL fragments and hidden names, sorted.
    `fixed`: more sentences of a method's own wording, the same for every task (a
    strategy's "in a single fenced block", say), taken out like the preamble."""
    found = sorted(set(PDDL.findall(text)))
    for line in (*PREAMBLE.splitlines(), *fixed):  # verbatim, JSON-escaped or not
        text = text.replace(line, " ")
    words = {w.lower() for w in re.findall(r"[\w-]+", text)}
    return found + sorted(words & hidden_names(names))
