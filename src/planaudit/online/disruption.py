"""Tools that fail: injected faults of the online environment's `act`, each made only where
the hidden model proves the task still solvable from the true state.

Three kinds (PlanBench-XL's): `explicit`, the action fails with an error and nothing
changes; `silent`, the tool reports success and nothing changes; `misleading`, the action
runs, and the next state query reports one wrong fact (a true fact left out, or a false one
added, seeded). Each applicable action is a candidate at the configured rate, drawn from a
generator seeded by the config's seed, the task and the repeat, so that a rerun injects the
same faults. Before an injection the goal is proven reachable from the state the world will
then truly be in (`formal.reachable.goal_reachable`, breadth first within a bound); where it
is not proven (a dead end already, or past the bound) the injection is withheld and counted,
so that no injection can be blamed for a task it made unsolvable.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from planaudit.formal.reachable import goal_reachable
from planaudit.formal.task import State

KINDS = ("explicit", "silent", "misleading")
# the most states a reachability proof may visit before the injection is withheld
MAX_STATES = 200_000


@dataclass
class Injection:
    step: int  # the environment's step counter when it was made
    kind: str
    action: str
    state: State  # the true state after it: the one proven to reach the goal
    resensed: bool = False  # a state query came before the agent's next act or ending


@dataclass
class Disruption:
    kind: str
    rate: float
    rng: random.Random
    made: list[Injection] = field(default_factory=list)
    withheld: int = 0
    pending_lie: bool = False  # misleading: the next query reports one wrong fact
    _proven: dict[State, bool] = field(default_factory=dict)
    _since_act: list[Injection] = field(default_factory=list)  # made at the last act

    @classmethod
    def of(cls, spec: dict | None, task_name: str, epoch: int) -> Disruption | None:
        """The disruption `online.disruption` configures for one episode (None: off)."""
        if not spec:
            return None
        kind = spec["kind"]
        if kind not in KINDS:
            raise ValueError(f"online.disruption.kind {kind!r}: use one of {', '.join(KINDS)}")
        seed = f"{spec.get('seed', 0)}:{task_name.partition('@')[0]}:{epoch}"
        return cls(kind, float(spec["rate"]), random.Random(seed))

    def reachable(self, task, state: State) -> bool:
        if state not in self._proven:
            self._proven[state] = goal_reachable(task, state, MAX_STATES) is True
        return self._proven[state]

    def strike(self, task, step: int, action: str, before: State, after: State) -> bool:
        """Whether this applicable action is disrupted: drawn at the rate, then made only
        if the goal is proven reachable from the true state it leaves (for explicit and
        silent the state before it, which they keep; for misleading the state after)."""
        if self.rng.random() >= self.rate:
            return False
        true = after if self.kind == "misleading" else before
        if not self.reachable(task, true):
            self.withheld += 1
            return False
        made = Injection(step, self.kind, action, true)
        self.made.append(made)
        self._since_act.append(made)
        self.pending_lie = self.kind == "misleading"
        return True

    def sensed(self) -> None:
        """A state query: the injections of the last act were followed by one."""
        for inj in self._since_act:
            inj.resensed = True

    def acted(self) -> None:
        """A new act: an injection not followed by a query by now never is."""
        self._since_act = []

    def mislead(self, lines: list[str], false: list[str]) -> list[str]:
        """The next query's fact lines with one wrong (misleading, once after its
        injection): a true fact left out, or a false one added, seeded."""
        if not lines and not false:
            return lines
        if false and (not lines or self.rng.random() < 0.5):
            return sorted([*lines, self.rng.choice(sorted(false))])
        drop = self.rng.choice(lines)
        return [x for x in lines if x != drop]

    def columns(self, outcome: str) -> dict:
        """The row's disruption columns (`COLUMNS`)."""
        made = len(self.made)
        return dict(zip(COLUMNS, (self.kind, made, self.withheld,
                                  sum(i.resensed for i in self.made),
                                  (outcome == "success") if made else None), strict=True))


COLUMNS = ("disruption", "injections", "injections_withheld", "resensed",
           "disruption_recovered")


def off_columns() -> dict:
    """The row's disruption columns where the tools do not fail: all null."""
    return dict.fromkeys(COLUMNS)
