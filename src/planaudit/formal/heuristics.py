"""Admissible heuristics for the project's own A*.

h_max: the cost of the most expensive goal atom in the delete relaxation, where
an atom costs the cheapest achiever's cost plus its most expensive positive
precondition. Negative and numeric preconditions are dropped, which only
weakens the estimate, so it stays admissible (and consistent). Infinity means
the goal is unreachable even with deletes ignored: a dead end.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from planaudit.formal.ground import Task
from planaudit.formal.search import unit_cost
from planaudit.formal.task import State

INF = float("inf")


def _bits(mask: int) -> list[int]:
    out, i = [], 0
    while mask:
        low = mask & -mask
        i = low.bit_length() - 1
        out.append(i)
        mask ^= low
    return out


def hmax(task: Task) -> Callable[[State], float]:
    """A function state -> h_max(state) for this task's reachable operators."""
    ops = task.all_operators()
    unit = unit_cost(task, ops)
    n_atoms = len(task.atoms)
    pre = [_bits(op.pre_pos) for op in ops]
    adds = []
    for op in ops:
        mask = op.add
        for eff in op.conditional:
            mask |= eff.add
        adds.append(_bits(mask))
    cost = [1.0 if unit else max(0.0, op.step_cost(task.init)) for op in ops]
    by_pre: list[list[int]] = [[] for _ in range(n_atoms)]
    for j, ps in enumerate(pre):
        for p in ps:
            by_pre[p].append(j)
    no_pre = [j for j, ps in enumerate(pre) if not ps]
    goal = _bits(task.goal_pos)
    n_pre = [len(ps) for ps in pre]

    def h(state: State) -> float:
        dist = [INF] * n_atoms
        heap: list[tuple[float, int]] = []
        for a in _bits(state[0]):
            if a < n_atoms:
                dist[a] = 0.0
                heap.append((0.0, a))
        waiting = n_pre[:]
        op_cost = [0.0] * len(ops)

        def fire(j: int, at: float) -> None:
            c = at + cost[j]
            for a in adds[j]:
                if c < dist[a]:
                    dist[a] = c
                    heapq.heappush(heap, (c, a))

        for j in no_pre:
            fire(j, 0.0)
        remaining = set(goal)
        while heap and remaining:
            d, a = heapq.heappop(heap)
            if d > dist[a]:
                continue
            remaining.discard(a)
            for j in by_pre[a]:
                waiting[j] -= 1
                if d > op_cost[j]:
                    op_cost[j] = d
                if waiting[j] == 0:
                    fire(j, op_cost[j])
        return max((dist[a] for a in goal), default=0.0)

    return h
