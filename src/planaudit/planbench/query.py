"""A test case's truth recovered from a recorded prompt.

The prompt's last `[STATEMENT]` is the case the model answers; its initial state,
goal, plan (t3, t6), unexpected event (t6) and action sequence (t7) are written
with the config's templates and are read back exactly (any piece that is not a
template's rendering is an error, never skipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planaudit.planbench.language import read_facts, read_plan_exact
from planaudit.planbench.material import Atom, Config, MaterialError

_INIT = re.compile(r"As initial conditions I have that,? (.*?)\.?\s*\n")
_GOAL = re.compile(r"My goal is to have that (.*?)\.?\s*(?:I want to minimize.*)?\n")
_PLAN = re.compile(r"\[PLAN\]\n(.*?)\[PLAN END\]", re.S)
_SEQ = re.compile(r"\[ACTION SEQUENCE\]\n(.*?)\[ACTION SEQUENCE END\]", re.S)
_EVENT = re.compile(r'After executing the action "(.*?)" at step (\d+) in the plan, the following facts '
                    r"unexpectedly became true: (.*?)\n\s*The following facts became unexpectedly "
                    r"false: (.*?)\n")


@dataclass
class Statement:
    init: list[Atom]
    goal: list[Atom]
    plan: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # t3's plan, t6's plan
    sequence: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # t7
    event_step: int | None = None  # t6
    became_true: list[Atom] = field(default_factory=list)
    became_false: list[Atom] = field(default_factory=list)


def last_statement(query: str) -> str:
    at = query.rfind("[STATEMENT]")
    if at < 0:
        raise MaterialError("query: no [STATEMENT]")
    return query[at:]


def read_statement(cfg: Config, query: str) -> Statement:
    text = last_statement(query)
    objects = tuple(cfg.objects)
    m = _INIT.search(text)
    if not m:
        raise MaterialError("query: no 'As initial conditions I have that' in the last [STATEMENT]")
    init = read_facts(cfg, m.group(1), objects)
    g = _GOAL.search(text)
    goal = read_facts(cfg, g.group(1), objects) if g else []
    st = Statement(init, goal)
    p = _PLAN.search(text)
    if p:
        st.plan = read_plan_exact(cfg, p.group(1), objects)
    s = _SEQ.search(text)
    if s:
        st.sequence = read_plan_exact(cfg, s.group(1), objects)
    e = _EVENT.search(text)
    if e:
        st.event_step = int(e.group(2))
        st.became_true = read_facts(cfg, e.group(3), objects)
        st.became_false = read_facts(cfg, e.group(4), objects)
    return st
