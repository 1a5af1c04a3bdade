"""The own search: heuristics are admissible and ordered, A* matches breadth-first."""

from __future__ import annotations

import random

import pytest

from planaudit.formal import load_task
from planaudit.formal.heuristics import hmax, lmcut
from planaudit.formal.search import astar, breadth_first
from tests.conftest import DATA, DOMAINS

SMALL = ["blocksworld/p04", "gripper/p05", "logistics/p03", "logistics/p04"]


def _task(name: str):
    d, p = name.split("/")
    return load_task(DOMAINS / d / "domain.pddl", DOMAINS / d / "problems" / f"{p}.pddl")


@pytest.mark.parametrize("name", SMALL)
def test_heuristics_are_admissible_and_lmcut_dominates_hmax(name):
    task = _task(name)
    h1, h2 = hmax(task), lmcut(task)
    rng = random.Random(1)
    state = task.init
    ops = task.all_operators()
    checked = 0
    for _ in range(12):
        app = [op for op in ops if op.applicable(state)]
        state = rng.choice(app).apply(state)
        task.init = state  # search from here: the true distance to the goal
        exact = breadth_first(task)
        d = exact.length if exact.status == "solved" else float("inf")
        assert h1(state) <= h2(state) <= d
        checked += 1
    assert checked == 12


@pytest.mark.parametrize("name", SMALL)
def test_astar_with_lmcut_finds_the_breadth_first_length(name):
    task = _task(name)
    bfs = breadth_first(task)
    star = astar(task, lmcut(task), "astar-lmcut")
    assert star.status == bfs.status == "solved"
    assert star.length == bfs.length
    assert star.expanded < bfs.expanded  # the heuristic actually guides the search


def test_astar_minimises_cost_not_length():
    task = load_task(DATA / "mixed-domain.pddl", DATA / "mixed-problem.pddl")
    star = astar(task, lmcut(task), "astar-lmcut")
    assert star.cost == 8 and star.length == 6


def test_state_limit_stops_breadth_first():
    res = breadth_first(_task("gripper/p06"), max_states=1000)
    assert res.status == "limit" and res.plan is None
