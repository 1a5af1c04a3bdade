"""Judging an answer to an ACPBench question by its semantics, against the proven truth.

bool and mcq against the proven yes/no and the one right choice; a generative answer
as ACPBench means it: the applicable actions as a set; effects as two sets; an
unreachable fact or action, a landmark or a next action as a member of the set the
exhaustive search proved (so any right one counts, and `none` only when the set is
empty); a validation answer by its step; a justification as a removal of one action or
of two consecutive ones that leaves a plan (every such removal was validated when the
question was made). A reply that keeps no grammar is `unreadable`, apart from `wrong`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planaudit.acpbench.questions import Question
from planaudit.acpbench.read import (
    Unreadable,
    bare,
    body_lines,
    is_none,
    normal_fact,
    read_action,
    read_bool,
    read_choice,
    read_fact,
)


@dataclass(frozen=True)
class Judgement:
    correct: bool
    verdict: str  # "correct", "wrong" or "unreadable"
    detail: str = ""


def _right(detail: str = "") -> Judgement:
    return Judgement(True, "correct", detail)


def _wrong(detail: str) -> Judgement:
    return Judgement(False, "wrong", detail)


def judge(q: Question, reply: str | None) -> Judgement:
    try:
        return _judge(q, reply or "")
    except Unreadable as e:
        return Judgement(False, "unreadable", str(e))


def _judge(q: Question, reply: str) -> Judgement:
    t = q.truth
    if q.form == "bool":
        said = read_bool(reply)
        return _right() if said == t["answer"] else _wrong(f"said {said}, the truth is {t['answer']}")
    if q.form == "mcq":
        said = read_choice(reply, t["choices"])
        if said == t["answer"]:
            return _right()
        return _wrong(f"chose {said} ({t['choices'][said]}); the right choice is {t['answer']}")
    return GEN[t["kind"]](q, body_lines(reply))


def _actions(lines: list[str]) -> list[str]:
    return [read_action(ln, None) for ln in lines]


def _set(q: Question, lines: list[str]) -> Judgement:
    got = set() if is_none(lines) else set(_actions(lines))
    want = set(q.truth["gold"])
    if got == want:
        return _right()
    missed, extra = sorted(want - got), sorted(got - want)
    return _wrong(f"missed {len(missed)}: {' '.join(missed[:3])}; not applicable "
                  f"{len(extra)}: {' '.join(extra[:3])}")


def _effects(q: Question, lines: list[str]) -> Judgement:
    facts = q.truth.get("facts")
    pos, neg = set(), set()
    if not is_none(lines):
        for ln in lines:
            head, sep, rest = ln.partition(":")
            side = normal_fact(head)
            if not sep or side not in ("added", "deleted"):
                raise Unreadable(f'"{ln[:60]}" is neither "added: FACT" nor "deleted: FACT"')
            (pos if side == "added" else neg).add(read_fact(rest, facts))
    want_pos, want_neg = set(q.truth["pos"]), set(q.truth["neg"])
    if pos == want_pos and neg == want_neg:
        return _right()
    parts = []
    for name, got, want in (("added", pos, want_pos), ("deleted", neg, want_neg)):
        if got != want:
            parts.append(f"{name}: missed {' '.join(sorted(want - got)[:3]) or '-'}, "
                         f"wrong {' '.join(sorted(got - want)[:3]) or '-'}")
    return _wrong("; ".join(parts))


def _member(q: Question, lines: list[str]) -> Judgement:
    t = q.truth
    gold = set(t["gold"])
    if is_none(lines):
        if not gold and t.get("none_ok", True):
            return _right("none, and none exists (proven)")
        return _wrong(f"said none; {len(gold)} exist, e.g. {min(gold) if gold else '-'}")
    if len(lines) != 1:
        raise Unreadable(f"{len(lines)} lines where one {t['what']} was asked")
    if normal_fact(lines[0]) in t.get("fixed", ()):  # excluded by the question's wording
        return _wrong(f'"{lines[0][:60]}" is a fact no action changes; the question asks '
                      "for one that can change")
    said = (read_action(lines[0], None) if t["what"] == "action"
            else read_fact(lines[0], t.get("facts")))
    if said in gold:
        return _right()
    if not gold:
        return _wrong(f"{said}: none exists (proven)")
    return _wrong(f"{said} is not one (proven); e.g. {min(gold)} is")


# a step as the prompt numbers it: "3", "3.", "3)", "step 3", "Step 3." (a bullet before it)
_STEP = re.compile(r"(?:[-*•]+\s*)?(?:step\s*)?(\d+)\s*[.):]?", re.I)


def _index(q: Question, lines: list[str]) -> Judgement:
    """The first inapplicable step, numbered as the prompt numbers it: from 1 (the answer
    contract says so; the sequence is listed "1. ...", so "3." is step 3, not a bullet).
    A number outside 1..steps names no step (step 0 least of all: it is never "none")."""
    first = q.truth["gold"]  # 0-based, -1: every action applies
    if len(lines) != 1:
        raise Unreadable(f"{len(lines)} lines where one step number was asked")
    if is_none(lines):
        said = -1
    else:
        m = _STEP.fullmatch(bare(lines[0]))
        if m is None:
            raise Unreadable(f'"{lines[0][:60]}" is not a step number')
        number, steps = int(m.group(1)), q.truth.get("steps")
        if number < 1 or (steps is not None and number > steps):
            last = f"to {steps}" if steps is not None else "up"
            return _wrong(f"said step {number}; the steps are numbered from 1 {last}")
        said = number - 1
    if said == first:
        return _right()
    want = "none" if first < 0 else str(first + 1)
    return _wrong(f"said {'none' if said < 0 else said + 1}; the first inapplicable step is {want}")


def _shorten(q: Question, lines: list[str]) -> Judgement:
    plan = list(q.truth["plan"])
    said = _actions(lines)
    if said in q.truth["gold"]:
        return _right()
    removals = [plan[:i] + plan[i + 1:] for i in range(len(plan))] + \
               [plan[:i] + plan[i + 2:] for i in range(len(plan) - 1)]
    if said in removals:
        return _wrong("what remains is not a plan")
    if said == plan:
        return _wrong("the plan was given back unshortened")
    return _wrong("not the plan with one action, or two consecutive actions, removed")


GEN = {"set": _set, "effects": _effects, "member": _member, "index": _index,
       "shorten": _shorten}
