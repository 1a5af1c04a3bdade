"""Reading a model's answer to an ACPBench question: the grammar, apart from the judgement.

The rules (docs/howto/acpbench.md), the same for every source:
- bool: the last line of the form `Answer: yes` / `Answer: no` (any case, bold or quoted
  allowed); failing that, a reply that is nothing but yes or no. Anything else is
  unreadable, never guessed from a "yes" somewhere in the reasoning.
- mcq: the last `Answer: X` line, X a choice's letter (`B`, `B.`, `(B)`, optionally
  followed by that same choice's text) or a choice's text verbatim (without case);
  unreadable otherwise, or when it names no choice.
- An answer line counts only when, its formatting stripped (bold, quotes, a trailing
  stop, parentheses), it is exactly one yes/no or one choice: a hedge ("A or B", "yes or
  no", "no idea", "No. Actually yes.", "B is wrong, C is right") names no single answer
  and is unreadable; its first word is never taken for the answer.
- gen: the last fenced block (the reply itself when there is none), one item a line:
  actions in any form the plan contract accepts, facts as their sentence or as
  `(predicate arg ...)`, a step as its number (`3`, `3.`, `step 3`), `none` for none.
"""

from __future__ import annotations

import re

from planaudit.contract import _FENCE, parse_action

_ANSWER = re.compile(r"^[\s>*_`#]*answer\s*[:=-]\s*(.*?)[\s*_`.!]*$", re.I | re.M)
_LEAD = re.compile(r"^\s*(?:[-*•]+|\d+\s*[.):])\s*")


class Unreadable(Exception):
    """The reply keeps no answer grammar; the message says what is missing."""


def normal_fact(text: str) -> str:
    """A fact as compared: lower case, no bullet, no full stop, single spaces; a PDDL
    atom's parentheses and spacing normalised."""
    text = _LEAD.sub("", text.strip().lower(), count=1).rstrip(" .;,")
    if text.startswith("(") and text.endswith(")"):
        return "(" + " ".join(text[1:-1].split()) + ")"
    return " ".join(text.split())


def answer_line(reply: str) -> str | None:
    found = _ANSWER.findall(reply or "")
    return found[-1].strip().strip("*_`\"'") if found else None


def bare(text: str) -> str:
    """`text` with its formatting stripped, repeatedly from both ends: white space,
    markdown emphasis and code marks, quotes, a trailing stop or exclamation, and one
    pair of enclosing brackets at a time; what is left is compared whole."""
    prev = None
    while text != prev:
        prev = text
        text = text.strip().strip("*_`\"'").rstrip(".!").strip()
        if len(text) > 1 and text[0] + text[-1] in ("()", "[]"):
            text = text[1:-1]
    return text


def read_bool(reply: str) -> str:
    line = answer_line(reply)
    if line is None:
        said = bare(reply or "").lower()
        if said in ("yes", "no"):
            return said
        raise Unreadable('no "Answer: yes" or "Answer: no" line')
    said = bare(line).lower()
    if said not in ("yes", "no"):
        raise Unreadable(f'the answer line says "{line[:60]}", not exactly yes or no')
    return said


def read_choice(reply: str, choices: dict[str, str]) -> str:
    line = answer_line(reply)
    if line is None:
        raise Unreadable('no "Answer: X" line')
    said = bare(line)
    by_text = {normal_fact(bare(t)): lb for lb, t in choices.items()}
    if normal_fact(said) in by_text:  # a choice's text, without case, spacing or brackets
        return by_text[normal_fact(said)]
    # a letter, alone or followed by that same choice's text ("B. (drop b1 r2 g1)")
    m = re.fullmatch(r"\(?([A-Za-z])\)?(?:[.):]\s*(.*)|\s+(.*))?", said, re.S)
    if m:
        label, rest = m.group(1).upper(), m.group(2) or m.group(3)
        if label in choices and (not rest or normal_fact(bare(rest))
                                 == normal_fact(bare(choices[label]))):
            return label
    raise Unreadable(f'the answer line "{line[:60]}" is not exactly one choice '
                     f'({", ".join(choices)})')


def body_lines(reply: str) -> list[str]:
    """The lines of the last fenced block (of the reply, when it has none)."""
    blocks = _FENCE.findall(reply or "")
    body = blocks[-1] if blocks else (reply or "")
    return [ln.strip() for ln in body.splitlines() if ln.strip()]


def is_none(lines: list[str]) -> bool:
    return len(lines) == 1 and normal_fact(lines[0]) in ("none", "none.", "(none)")


def read_action(line: str, actions: frozenset[str] | None) -> str:
    step = parse_action(line, actions)
    if step is None:
        raise Unreadable(f'"{line[:60]}" is not an action')
    return "(" + " ".join((step[0], *step[1])) + ")"


def read_fact(line: str, facts: dict[str, str] | None) -> str:
    key = normal_fact(line)
    if facts is not None:
        if key in facts:
            return facts[key]
        raise Unreadable(f'"{line[:60]}" is no fact of the domain')
    if key.startswith("(") and key.endswith(")"):
        return key
    raise Unreadable(f'"{line[:60]}" is not a fact written as (predicate argument ...)')
