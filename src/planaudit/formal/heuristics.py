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
from planaudit.formal.task import State, atom_indices

INF = float("inf")


def hmax(task: Task) -> Callable[[State], float]:
    """A function state -> h_max(state) for this task's reachable operators."""
    ops = task.all_operators()
    unit = unit_cost(task, ops)
    n_atoms = len(task.atoms)
    pre = [atom_indices(op.pre_pos) for op in ops]
    adds = []
    for op in ops:
        mask = op.add
        for eff in op.conditional:
            mask |= eff.add
        adds.append(atom_indices(mask))
    cost = [1.0 if unit else op.cost_bound for op in ops]
    by_pre: list[list[int]] = [[] for _ in range(n_atoms)]
    for j, ps in enumerate(pre):
        for p in ps:
            by_pre[p].append(j)
    no_pre = [j for j, ps in enumerate(pre) if not ps]
    goal = atom_indices(task.goal_pos)
    n_pre = [len(ps) for ps in pre]

    def h(state: State) -> float:
        dist = [INF] * n_atoms
        heap: list[tuple[float, int]] = []
        for a in atom_indices(state[0]):
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


def lmcut(task: Task) -> Callable[[State], float]:
    """LM-cut (Helmert and Domshlak 2009): admissible, much tighter than h_max.

    Repeatedly: compute h_max, take the cut of operators that enter the goal
    zone (atoms from which the goal is reached at zero remaining cost along
    h_max supporters), add the cheapest cut cost to h, and subtract it from
    every cut operator. After the first round h_max is updated incrementally:
    costs only fall, so only atoms downstream of the cut can get cheaper.
    Like h_max it drops negative and numeric preconditions, so it stays
    admissible on every task this project grounds.
    """
    ops = task.all_operators()
    unit = unit_cost(task, ops)
    n = len(task.atoms)
    init_atom, goal_atom = n, n + 1
    pre: list[list[int]] = []
    adds: list[list[int]] = []
    base: list[float] = []
    for op in ops:
        mask = op.add
        for eff in op.conditional:
            mask |= eff.add
        pre.append(atom_indices(op.pre_pos) or [init_atom])
        adds.append(atom_indices(mask))
        base.append(1.0 if unit else op.cost_bound)
    pre.append(atom_indices(task.goal_pos) or [init_atom])  # the artificial goal operator
    adds.append([goal_atom])
    base.append(0.0)
    n_ops = len(pre)
    by_pre: list[list[int]] = [[] for _ in range(n + 2)]
    for j, ps in enumerate(pre):
        for p in ps:
            by_pre[p].append(j)
    achievers: list[list[int]] = [[] for _ in range(n + 2)]
    for j, ad in enumerate(adds):
        for a in ad:
            achievers[a].append(j)

    def h(state: State) -> float:
        cost = base[:]
        dist = [INF] * (n + 2)
        supp = [-1] * n_ops
        sval = [INF] * n_ops  # h_max value of each operator's supporter
        start = [*atom_indices(state[0]), init_atom]
        heap: list[tuple[float, int]] = []
        for a in start:
            dist[a] = 0.0
            heap.append((0.0, a))

        def propagate(heap: list[tuple[float, int]]) -> None:
            while heap:
                d, a = heapq.heappop(heap)
                if d > dist[a]:
                    continue
                for j in by_pre[a]:
                    # supporter: the precondition with the largest h_max value
                    best, val = -1, -1.0
                    for p in pre[j]:
                        if dist[p] > val:
                            best, val = p, dist[p]
                    if val == INF or (supp[j] == best and sval[j] == val):
                        continue
                    supp[j], sval[j] = best, val
                    c = val + cost[j]
                    for b in adds[j]:
                        if c < dist[b]:
                            dist[b] = c
                            heapq.heappush(heap, (c, b))

        propagate(heap)
        total = 0.0
        while True:
            if dist[goal_atom] == INF:
                return INF
            if dist[goal_atom] == 0.0:
                return total
            # the goal zone: atoms reaching the goal through zero-cost supporters
            zone = [False] * (n + 2)
            zone[goal_atom] = True
            stack = [goal_atom]
            while stack:
                a = stack.pop()
                for j in achievers[a]:
                    s = supp[j]
                    if s != -1 and cost[j] == 0.0 and not zone[s] and sval[j] < INF:
                        zone[s] = True
                        stack.append(s)
            # forward from the state along supporters, stopping at the zone: the cut
            seen = [False] * (n + 2)
            for a in start:
                seen[a] = True
            stack = start[:]
            cut: set[int] = set()
            while stack:
                a = stack.pop()
                for j in by_pre[a]:
                    if supp[j] != a or j in cut:
                        continue
                    for b in adds[j]:
                        if zone[b]:
                            cut.add(j)
                        elif not seen[b]:
                            seen[b] = True
                            stack.append(b)
            m = min(cost[j] for j in cut)
            total += m
            heap = []
            for j in cut:
                cost[j] -= m
                c = sval[j] + cost[j]
                for b in adds[j]:
                    if c < dist[b]:
                        dist[b] = c
                        heap.append((c, b))
            heapq.heapify(heap)
            propagate(heap)

    return h
