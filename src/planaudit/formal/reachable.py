"""The graph of the states reachable from one state, explored once and asked many things.

Questions generated over a state (which atoms or actions can ever hold or become
applicable, landmarks, the optimal cost to go after each action) are all read off one
exhaustive exploration: a forward breadth-first search records every state and edge,
and a backward one from the goal states gives each state's exact cost to go (unit
costs). It runs on any task whose operators apply (numbers included: a state is
`(atoms, values)`), unlike `space.py`'s bitset searches, which serve ACPBench's own
STRIPS items. `complete` is False when the exploration stopped at its limit; then only
what was seen proves anything (an atom seen is reachable), never what was not.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from planaudit.formal.ground import Task
from planaudit.formal.task import Operator, State

UNREACHABLE = -1


@dataclass
class Graph:
    task: Task
    ops: list[Operator]
    states: list[State]
    succ: list[list[tuple[int, int]]]  # per state: (operator index, successor state index)
    complete: bool
    index: dict[State, int] = field(repr=False, default_factory=dict)

    @cached_property
    def goal_states(self) -> list[int]:
        return [i for i, s in enumerate(self.states) if self.task.goal_holds(s)]

    @cached_property
    def distance(self) -> list[int]:
        """Every state's optimal number of steps to a goal state (UNREACHABLE: none);
        exact only when the graph is complete."""
        pred: list[list[int]] = [[] for _ in self.states]
        for i, out in enumerate(self.succ):
            for _, j in out:
                pred[j].append(i)
        dist = [UNREACHABLE] * len(self.states)
        queue = deque(self.goal_states)
        for g in queue:
            dist[g] = 0
        while queue:
            j = queue.popleft()
            for i in pred[j]:
                if dist[i] == UNREACHABLE:
                    dist[i] = dist[j] + 1
                    queue.append(i)
        return dist

    @cached_property
    def atoms_seen(self) -> int:
        """The atoms true in some state of the graph (bitmask)."""
        mask = 0
        for s in self.states:
            mask |= s[0]
        return mask

    @cached_property
    def ops_seen(self) -> frozenset[int]:
        """The operators (indices into `ops`) applicable in some state of the graph."""
        return frozenset(k for out in self.succ for k, _ in out)

    def applicable(self, i: int = 0) -> list[int]:
        return sorted({k for k, _ in self.succ[i]})

    def goal_avoiding(self, atom: int) -> bool:
        """Whether some path from the start reaches a goal state through states where
        `atom` is false throughout (so `atom` is no landmark)."""
        if self.states[0][0] >> atom & 1:
            return False
        seen = {0}
        queue = deque([0])
        while queue:
            i = queue.popleft()
            if self.task.goal_holds(self.states[i]):
                return True
            for _, j in self.succ[i]:
                if j not in seen and not self.states[j][0] >> atom & 1:
                    seen.add(j)
                    queue.append(j)
        return False

    def optimal_plan(self, i: int = 0) -> list[Operator] | None:
        """A shortest plan from state `i` (None: no goal state is reachable)."""
        dist = self.distance
        if dist[i] == UNREACHABLE:
            return None
        plan = []
        while dist[i] > 0:
            k, i = next((k, j) for k, j in self.succ[i] if dist[j] == dist[i] - 1)
            plan.append(self.ops[k])
        return plan


def goal_reachable(task: Task, start: State, max_states: int = 200_000) -> bool | None:
    """Whether some plan reaches the goal from `start`: breadth first, stopping at the first
    goal state (True), on exhausting the reachable states (False), or past `max_states`
    (None: not proven either way)."""
    if task.goal_holds(start):
        return True
    ops = task.all_operators()
    seen = {start}
    frontier = deque([start])
    while frontier:
        s = frontier.popleft()
        for op in ops:
            if not op.applicable(s):
                continue
            t = op.apply(s)
            if t in seen:
                continue
            if task.goal_holds(t):
                return True
            if len(seen) >= max_states:
                return None
            seen.add(t)
            frontier.append(t)
    return False


def explore(task: Task, start: State, max_states: int = 20_000) -> Graph:
    """The states reachable from `start` with the task's operators, breadth first, up to
    `max_states` (past it the graph is incomplete: `complete` False)."""
    ops = task.all_operators()
    states = [start]
    index = {start: 0}
    succ: list[list[tuple[int, int]]] = []
    complete = True
    k = 0
    while k < len(states):
        s = states[k]
        out = []
        for n, op in enumerate(ops):
            if not op.applicable(s):
                continue
            t = op.apply(s)
            j = index.get(t)
            if j is None:
                if len(states) >= max_states:
                    complete = False
                    continue
                j = index[t] = len(states)
                states.append(t)
            out.append((n, j))
        succ.append(out)
        k += 1
    return Graph(task, ops, states, succ, complete, index)
