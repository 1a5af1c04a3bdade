"""Do two tasks describe the same task? The hidden model against a formalizer's files.

Both are read as deterministic transition systems over one action vocabulary (the
hidden model's operator names; a formalizer's names reach it through `rename`). They
are *equivalent* when, from their initial states, they allow exactly the same action
sequences and call exactly the same of them plans. That is decided on their reachable
product, breadth first: a pair of states whose goal verdicts differ, or whose sets of
applicable action names differ, ends the search with the shortest sequence that tells
the two apart (breadth first visits shorter prefixes first). A product exhausted without
such a pair proves equivalence.

This is stronger than comparing the files (Planetarium's graph isomorphism): facts that
change nothing reachable, goals written differently but holding in the same reachable
states, extra predicates no action reads, all leave the systems equivalent; and it is
weaker in one way that is the point: two files that differ only on unreachable states
are equivalent, since no plan can tell them apart.

The product can be as large as the product of both state spaces, so the search stops at
`max_pairs` state pairs or `max_seconds` of CPU; past either the verdict is `undecided`,
naming the bound, never a guess, unless a known sequence (the hidden optimal plan, the
route's plan: `probes`) walked in both tells them apart: then `different` with that
sequence as a witness, the bound still named, since it is not proven the shortest.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from planaudit.formal.ground import Task
from planaudit.formal.search import _mask_applied, _successors, successor_index
from planaudit.formal.task import State

MAX_PAIRS = 1_000_000
MAX_SECONDS = 60.0

EQUIVALENT, DIFFERENT, UNDECIDED = "equivalent", "different", "undecided"


@dataclass(frozen=True)
class Difference:
    """The shortest sequence that tells the systems apart.

    `kind` is `allowed` (after `prefix`, one system allows `action` and the other does
    not) or `plan` (one calls `prefix` a plan and the other does not); `hidden` is what the
    hidden model says: that it allows the action, or that the prefix is a plan."""

    prefix: tuple[str, ...]
    kind: str
    hidden: bool
    action: str | None = None

    @property
    def sequence(self) -> tuple[str, ...]:
        """The whole distinguishing sequence (the prefix, then the disputed action)."""
        return (*self.prefix, self.action) if self.action else self.prefix

    def words(self) -> str:
        after = f"after {' '.join(self.prefix)}, " if self.prefix else "in the initial state, "
        if self.kind == "allowed":
            yes, no = ("the hidden model", "yours") if self.hidden else ("yours", "the hidden model")
            return f"{after}{yes} allows {self.action} and {no} does not"
        seq = " ".join(self.prefix) if self.prefix else "the empty plan"
        yes, no = ("the hidden model", "yours") if self.hidden else ("yours", "the hidden model")
        return f"{yes} calls {seq} a plan and {no} does not"

    def to_json(self) -> dict:
        return {"kind": self.kind, "prefix": list(self.prefix), "action": self.action,
                "hidden": self.hidden, "sequence": list(self.sequence), "words": self.words()}


@dataclass(frozen=True)
class Equivalence:
    verdict: str  # equivalent, different, undecided
    pairs: int  # state pairs reached
    seconds: float
    difference: Difference | None = None
    bound: str | None = None  # the bound an undecided search reached
    identical: bool = False  # decided without a search: the very files, token for token

    def words(self) -> str:
        if self.identical:
            return "equivalent: the same files as the hidden model's, token for token"
        if self.verdict == EQUIVALENT:
            return f"equivalent: {self.pairs} reachable state pairs agree"
        if self.verdict == UNDECIDED:
            return f"undecided: the bound of {self.bound} was reached ({self.pairs} pairs)"
        assert self.difference is not None
        if self.bound:
            return (f"different: {self.difference.words()} (found past the bound of "
                    f"{self.bound}: a distinguishing sequence, not proven the shortest)")
        return f"different: {self.difference.words()}"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "pairs": self.pairs, "seconds": round(self.seconds, 3),
                "bound": self.bound, "identical": self.identical,
                "difference": self.difference.to_json() if self.difference else None}


class _System:
    """One task's ground operators, indexed for successors, and their names as read."""

    def __init__(self, task: Task, rename: Callable[[str], str] | None):
        self.task = task
        self.ops = task.all_operators()
        self.index = successor_index(self.ops)
        self.simple = _mask_applied(self.ops)
        self.names = [rename(op.name) if rename else op.name for op in self.ops]

    def moves(self, state: State) -> dict[str, State]:
        """Each applicable action's name and its successor (one per name: the systems are
        deterministic in the names; two operators read as one name keep the first)."""
        out: dict[str, State] = {}
        for i, t in _successors(state, self.ops, self.simple, *self.index):
            out.setdefault(self.names[i], t)
        return out


def probe(h: _System, m: _System, sequence: Sequence[str]) -> Difference | None:
    """Where one sequence of actions (in the hidden model's names) tells the systems apart,
    walked in both at once: the first state where one calls it a plan and the other does
    not, or the first action only one allows; None where they agree on all of it (or
    neither allows its next action)."""
    hs, ms = h.task.init, m.task.init
    for i in range(len(sequence) + 1):
        h_goal, m_goal = h.task.goal_holds(hs), m.task.goal_holds(ms)
        if h_goal != m_goal:
            return Difference(tuple(sequence[:i]), "plan", h_goal)
        if i == len(sequence):
            return None
        h_moves, m_moves = h.moves(hs), m.moves(ms)
        name = sequence[i]
        if (name in h_moves) != (name in m_moves):
            return Difference(tuple(sequence[:i]), "allowed", name in h_moves, name)
        if name not in h_moves:
            return None
        hs, ms = h_moves[name], m_moves[name]
    return None


def compare(hidden: Task, model: Task, rename: Callable[[str], str] | None = None,
            max_pairs: int = MAX_PAIRS, max_seconds: float = MAX_SECONDS,
            probes: Sequence[Sequence[str]] = ()) -> Equivalence:
    """Decide equivalence of `model` with `hidden` on their reachable product (see the
    module's docstring); `rename` reads the model's operator names as the hidden model's
    (None: the same names). Where the search meets its bound, each of `probes` (action
    sequences in the hidden model's names: its optimal plan, the route's plan) is walked
    in both: one that tells them apart decides `different` with that sequence, which is
    then a witness, not proven the shortest (the bound stays named); else `undecided`."""
    clock = time.process_time()
    h, m = _System(hidden, None), _System(model, rename)
    start = (hidden.init, model.init)
    parent: dict[tuple[State, State], tuple[tuple[State, State], str] | None] = {start: None}
    queue = deque([start])

    def prefix(pair) -> tuple[str, ...]:
        names = []
        while parent[pair] is not None:
            pair, name = parent[pair]
            names.append(name)
        return tuple(reversed(names))

    def done(verdict: str, difference: Difference | None = None, bound: str | None = None):
        if verdict == UNDECIDED:  # a known sequence may still tell them apart
            difference = next(filter(None, (probe(h, m, p) for p in probes)), None)
            verdict = DIFFERENT if difference else UNDECIDED
        return Equivalence(verdict, len(parent), time.process_time() - clock, difference, bound)

    popped = 0
    while queue:
        pair = queue.popleft()
        popped += 1
        if popped % 512 == 0 and time.process_time() - clock > max_seconds:
            return done(UNDECIDED, bound=f"{max_seconds:g} CPU seconds")
        hs, ms = pair
        h_goal, m_goal = hidden.goal_holds(hs), model.goal_holds(ms)
        if h_goal != m_goal:
            return done(DIFFERENT, Difference(prefix(pair), "plan", h_goal))
        h_moves, m_moves = h.moves(hs), m.moves(ms)
        if h_moves.keys() != m_moves.keys():
            action = min(h_moves.keys() ^ m_moves.keys())
            return done(DIFFERENT, Difference(prefix(pair), "allowed", action in h_moves, action))
        for name in sorted(h_moves):
            nxt = (h_moves[name], m_moves[name])
            if nxt not in parent:
                if len(parent) >= max_pairs:
                    return done(UNDECIDED, bound=f"{max_pairs} state pairs")
                parent[nxt] = (pair, name)
                queue.append(nxt)
    return done(EQUIVALENT)
