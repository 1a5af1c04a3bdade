"""Admissible heuristics for the project's own A*.

Both work on the delete relaxation: negative and numeric preconditions are
dropped and conditional adds count as unconditional, which only weakens the
estimate. Infinity means the goal is unreachable even so: a dead end. Costs and
estimates are exact numbers (`number.py`), so that LM-cut's subtractions of cost
shares lose nothing: in floats 0.1 + 0.2 exceeds 0.3, and an estimate a rounding
above the true cost is no longer admissible.

Costs are lower bounds that hold in every state (`cost_bound`): an action's
cost when it is a constant, else 0. An action whose cost depends on the state
may be cheaper later on the path than in the state at hand (buy after haggling),
so taking any one state's figure, the initial state's say, would make the
estimate inadmissible.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from planaudit.formal.ground import Task
from planaudit.formal.number import Number
from planaudit.formal.search import unit_cost
from planaudit.formal.task import Operator, State, atom_indices

INF = float("inf")  # the only float: a dead end; every finite cost is exact
Cost = Number | float

# A landmark found by LM-cut: (mask of its operator indices, those indices, its cost share).
Landmark = tuple[int, tuple[int, ...], Cost]


def cost_bound(op: Operator) -> Cost:
    """What `op` costs at least, in any state (see the module docstring); conditional
    and state-dependent parts count as 0 (`Operator.cost_bound`)."""
    return op.cost_bound


def _costs(task: Task, ops: list[Operator]) -> list[Cost]:
    return [1] * len(ops) if unit_cost(task, ops) else [cost_bound(op) for op in ops]


def _conditional_adds(op: Operator) -> int:
    mask = 0
    for eff in op.conditional:
        mask |= eff.add
    return mask


def _adds(op: Operator) -> list[int]:
    return atom_indices(op.add | _conditional_adds(op))


def hmax(task: Task) -> Callable[[State], Cost]:
    """h_max: the cost of the most expensive goal atom, where an atom costs its
    cheapest achiever's cost plus that achiever's most expensive precondition."""
    ops = task.all_operators()
    n_atoms = len(task.atoms)
    pre = [atom_indices(op.pre_pos) for op in ops]
    adds = [_adds(op) for op in ops]
    cost = _costs(task, ops)
    by_pre: list[list[int]] = [[] for _ in range(n_atoms)]
    for j, ps in enumerate(pre):
        for p in ps:
            by_pre[p].append(j)
    no_pre = [j for j, ps in enumerate(pre) if not ps]
    goal = atom_indices(task.goal_pos)
    n_pre = [len(ps) for ps in pre]

    def h(state: State) -> Cost:
        dist = [INF] * n_atoms
        heap: list[tuple[Cost, int]] = []
        for a in atom_indices(state[0]):
            if a < n_atoms:
                dist[a] = 0
                heap.append((0, a))
        waiting = n_pre[:]

        def fire(j: int, at: Cost) -> None:
            c = at + cost[j]
            for a in adds[j]:
                if c < dist[a]:
                    dist[a] = c
                    heapq.heappush(heap, (c, a))

        for j in no_pre:
            fire(j, 0)
        remaining = set(goal)
        while heap and remaining:
            d, a = heapq.heappop(heap)
            if d > dist[a]:
                continue
            remaining.discard(a)
            for j in by_pre[a]:
                waiting[j] -= 1
                if waiting[j] == 0:  # atoms leave the heap cheapest first: `a` is the dearest
                    fire(j, d)
        return max((dist[a] for a in goal), default=0)

    return h


class LandmarkCut:
    """LM-cut (Helmert and Domshlak 2009), with landmarks handed down the search.

    Repeatedly: compute h_max, take the cut of operators that enter the goal
    zone (atoms from which the goal is reached at zero remaining cost along
    h_max supporters), add the cheapest cut cost to h, and subtract it from
    every cut operator. Each cut is a disjunctive action landmark.

    A landmark of a state that does not contain the operator applied to it is
    still one of the successor (Pommerening and Helmert 2013): so A* hands a
    state's landmarks down, the successor starts from them with the rest of the
    costs, and only the cuts it lacks are computed anew. That is most of the
    speed on long plans; the sum stays admissible because the cost shares of
    all landmarks never exceed any operator's cost.
    """

    def __init__(self, task: Task):
        self.ops = ops = task.all_operators()
        n = self.n = len(task.atoms)
        self.init_atom, self.goal_atom = n, n + 1
        self.pre = [atom_indices(op.pre_pos) or [n] for op in ops]
        self.adds = [_adds(op) for op in ops]
        self.base = _costs(task, ops)
        self.pre.append(atom_indices(task.goal_pos) or [n])  # the artificial goal operator
        self.adds.append([self.goal_atom])
        self.base.append(0)
        self.by_pre: list[list[int]] = [[] for _ in range(n + 2)]
        self.achievers: list[list[int]] = [[] for _ in range(n + 2)]
        for j, ps in enumerate(self.pre):
            for p in ps:
                self.by_pre[p].append(j)
            for a in self.adds[j]:
                self.achievers[a].append(j)
        self.n_pre = [len(ps) for ps in self.pre]
        self.unit = unit_cost(task, ops)
        self.pre_mask = [op.pre_pos for op in ops]
        self.add_mask = [op.add | _conditional_adds(op) for op in ops]
        self.goal_mask = task.goal_pos

    def __call__(self, state: State) -> Cost:
        return self.estimate(state, None, -1)[0]

    def bound(self, memo: tuple[Landmark, ...], op: int, step: Cost, state: State) -> Cost:
        """A lower bound on h of `state`, reached by operator `op` from the state of `memo`.

        The landmarks handed down give their sum. With unit costs the operators of
        those landmarks cost 0 now and every other one 1: if the goal cannot be
        reached with the free ones alone (deletes ignored), LM-cut will find at least
        one more landmark, worth 1. A few bit operations per operator, where an
        estimate walks the whole relaxed task: A* then estimates mostly the states
        it will expand."""
        total = 0
        free: list[int] = []
        for mask, members, m in reversed(memo):  # the latest found lie nearest the state
            if not mask >> op & 1:
                total += m
                free.extend(members)
        if not self.unit:
            return total
        reached, goal = state[0], self.goal_mask
        pre, add = self.pre_mask, self.add_mask
        while reached & goal != goal:
            waiting = []
            for j in free:
                p = pre[j]
                if reached & p == p:
                    reached |= add[j]
                else:
                    waiting.append(j)
            if len(waiting) == len(free):
                return total + 1
            free = waiting
        return total

    def estimate(self, state: State, parent: tuple[Landmark, ...] | None,
                 op: int) -> tuple[Cost, tuple[Landmark, ...]]:
        """h(state) and its landmarks, starting from those of `parent` that avoid `op`."""
        cost = self.base[:]
        kept: list[Landmark] = []
        total = 0
        for lm in parent or ():
            mask, members, m = lm
            if mask >> op & 1:
                continue
            kept.append(lm)
            total += m
            for j in members:
                c = cost[j] - m
                cost[j] = c if c > 0 else 0
        start = [*atom_indices(state[0]), self.init_atom]
        dist, supp, sval = self._hmax(start, cost)
        found = self._cuts(start, cost, dist, supp, sval)
        if found is None:
            return INF, ()
        for lm in found:
            total += lm[2]
        return total, (*kept, *found)

    def _hmax(self, start: list[int], cost: list[Cost]):
        """h_max from `start`: atom distances, each operator's supporter and its value.

        Atoms leave the queue cheapest first, so the last precondition of an
        operator to leave it is the dearest: its supporter. Costs of 0 and 1
        only (unit-cost tasks) need no heap: a layer is a list that zero-cost
        effects extend while it is read."""
        if self.unit:
            return self._hmax01(start, cost)
        n_ops = len(self.pre)
        dist = [INF] * (self.n + 2)
        supp = [-1] * n_ops
        sval = [INF] * n_ops
        waiting = self.n_pre[:]
        by_pre, adds = self.by_pre, self.adds
        heap = []
        for a in start:
            dist[a] = 0
            heap.append((0, a))
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            d, a = pop(heap)
            if d > dist[a]:
                continue
            for j in by_pre[a]:
                w = waiting[j] - 1
                waiting[j] = w
                if w:
                    continue
                supp[j], sval[j] = a, d
                c = d + cost[j]
                for b in adds[j]:
                    if c < dist[b]:
                        dist[b] = c
                        push(heap, (c, b))
        return dist, supp, sval

    def _hmax01(self, start: list[int], cost: list[Cost]):
        """`_hmax` where every cost is 0 or 1: a list per layer instead of a heap."""
        n_ops = len(self.pre)
        dist = [INF] * (self.n + 2)
        supp = [-1] * n_ops
        sval = [INF] * n_ops
        waiting = self.n_pre[:]
        by_pre, adds = self.by_pre, self.adds
        layer = start[:]
        for a in layer:
            dist[a] = 0
        d = 0
        while layer:
            after = d + 1
            nxt = []
            for a in layer:  # grows while read
                if dist[a] != d:
                    continue  # reached more cheaply: seen in an earlier layer
                for j in by_pre[a]:
                    w = waiting[j] - 1
                    waiting[j] = w
                    if w:
                        continue
                    supp[j] = a
                    sval[j] = d
                    if cost[j]:
                        for b in adds[j]:
                            if dist[b] > after:
                                dist[b] = after
                                nxt.append(b)
                    else:
                        for b in adds[j]:
                            if dist[b] > d:
                                dist[b] = d
                                layer.append(b)
            layer = nxt
            d = after
        return dist, supp, sval

    def _update(self, heap: list[tuple[Cost, int]], cost: list[Cost], dist: list[Cost],
                supp: list[int], sval: list[Cost]) -> None:
        """h_max after costs fell: only atoms downstream of a cheaper operator change."""
        pre, by_pre, adds = self.pre, self.by_pre, self.adds
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            d, a = pop(heap)
            if d > dist[a]:
                continue
            for j in by_pre[a]:
                if supp[j] == -1:
                    continue  # still unreachable: its cost cannot fall
                best, val = -1, -1
                for p in pre[j]:
                    if dist[p] > val:
                        best, val = p, dist[p]
                if supp[j] == best and sval[j] == val:
                    continue
                supp[j], sval[j] = best, val
                c = val + cost[j]
                for b in adds[j]:
                    if c < dist[b]:
                        dist[b] = c
                        push(heap, (c, b))

    def _cuts(self, start: list[int], cost: list[Cost], dist: list[Cost], supp: list[int],
              sval: list[Cost]) -> list[Landmark] | None:
        """The landmarks that the rest of the costs still allow; None at a dead end."""
        goal_atom, achievers, by_pre, adds = self.goal_atom, self.achievers, self.by_pre, self.adds
        size = self.n + 2
        found: list[Landmark] = []
        while True:
            if dist[goal_atom] == INF:
                return None
            if dist[goal_atom] == 0:
                return found
            # the goal zone: atoms reaching the goal through zero-cost supporters
            zone = bytearray(size)
            zone[goal_atom] = 1
            stack = [goal_atom]
            for a in stack:  # grows while read
                for j in achievers[a]:
                    if cost[j] == 0:
                        s = supp[j]
                        if s >= 0 and not zone[s]:
                            zone[s] = 1
                            stack.append(s)
            # forward from the state along supporters up to the zone: the operators
            # entering it are the cut (their other effects lead nowhere new)
            seen = bytearray(size)
            for a in start:
                seen[a] = 1
            stack = start[:]
            cut: list[int] = []
            for a in stack:  # grows while read
                for j in by_pre[a]:
                    if supp[j] != a:
                        continue
                    effects = adds[j]
                    for b in effects:
                        if zone[b]:
                            cut.append(j)
                            break
                    else:
                        for b in effects:
                            if not seen[b]:
                                seen[b] = 1
                                stack.append(b)
            m = min(cost[j] for j in cut)
            members = tuple(cut)
            mask = 0
            heap = []
            for j in members:
                mask |= 1 << j
                c = cost[j] - m
                cost[j] = c
                c += sval[j]
                for b in adds[j]:
                    if c < dist[b]:
                        dist[b] = c
                        heap.append((c, b))
            found.append((mask, members, m))
            heapq.heapify(heap)
            self._update(heap, cost, dist, supp, sval)


def lmcut(task: Task) -> LandmarkCut:
    """LM-cut for this task's reachable operators (call it on a state for h)."""
    return LandmarkCut(task)
