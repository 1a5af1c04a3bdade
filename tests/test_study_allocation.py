"""Randomised assignment (`study/allocation.py`): 1,000 entries through the store's own
enrolment on the real database engine, balanced within every block and not predictable
from the order of entry; the sequence a function of the seed, written out by the export."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from planaudit.study.allocation import STUDY, Assignment
from planaudit.study.store import Store
from tests.study_server import postgres_url

ARMS = ["unassisted", "suggested", "assistant"]
INSTANCES = ["blocksworld/p02", "blocksworld/p03"]


def entered(store: Store, rule: Assignment, n: int) -> list[dict]:
    store.migrate()
    store.open_study("alloc")
    for i in range(n):
        store.enrol("alloc", f"pseudo{i:04d}", {"participant": f"P{i}"}, ARMS, INSTANCES, rule,
                    "consent")
    return sorted(store.records("alloc"), key=lambda r: r["allocation"])


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    url = (f"sqlite:///{tmp_path}/alloc.sqlite" if request.param == "sqlite"
           else postgres_url(f"pa_alloc_{os.getpid()}"))
    s = Store(url)
    yield s
    s.close()


def test_a_thousand_entries_are_balanced_in_every_block_and_unforeseeable(store):
    rule = Assignment(seed=11, blocks=(1, 2))  # blocks of 3 or 6 places
    records = entered(store, rule, 1000)
    assert [r["allocation"] for r in records] == list(range(1000))
    sequence = rule.sequence(STUDY, ARMS, 1000)
    # each person got the arm of their place, and each finished block holds every arm alike
    assert [r["arm"] for r in records] == [arm for _, arm in sequence[:1000]]
    blocks: dict[int, Counter] = {}
    for block, arm in sequence:
        blocks.setdefault(block, Counter())[arm] += 1
    assert all(len(set(c.values())) == 1 and set(c) == set(ARMS) for c in blocks.values())
    assert {sum(c.values()) for c in blocks.values()} == {3, 6}  # both sizes drawn
    # the order of entry does not tell the arm: alternation, or the commonest arm at each
    # position modulo any period up to 12, guesses right about one time in three (as chance)
    arms = [r["arm"] for r in records]
    assert abs(sum(a == ARMS[i % 3] for i, a in enumerate(arms)) / 1000 - 1 / 3) < 0.06
    for period in range(2, 13):
        first, second = arms[:500], arms[500:]  # learned on the first half, tried on the second
        best = {k: Counter(first[k::period]).most_common(1)[0][0] for k in range(period)}
        hits = sum(a == best[(500 + i) % period] for i, a in enumerate(second))
        assert abs(hits / 500 - 1 / 3) < 0.09, (period, hits)
    # the cells of arm x instance stay balanced too (the arm's least-filled instance)
    cells = Counter((r["arm"], r["instance"]) for r in records)
    assert max(cells.values()) - min(cells.values()) <= 2, cells


def test_stratified_by_instance_each_instance_has_its_own_sequence(store):
    rule = Assignment(strata="instance", seed=3)
    records = entered(store, rule, 60)
    for instance in INSTANCES:
        mine = sorted((r for r in records if r["instance"] == instance),
                      key=lambda r: r["allocation"])
        assert len(mine) == 30 and [r["allocation"] for r in mine] == list(range(30))
        assert [r["arm"] for r in mine] == [a for _, a in rule.sequence(instance, ARMS, 30)]
    # another seed, another sequence; the same seed, the same one
    assert rule.sequence("x", ARMS, 30) == Assignment(strata="instance", seed=3).sequence(
        "x", ARMS, 30) != Assignment(strata="instance", seed=4).sequence("x", ARMS, 30)


def test_the_sequence_lists_whole_blocks_and_the_config_forms():
    rule = Assignment(seed=0, blocks=(2,))
    assert len(rule.sequence(STUDY, ARMS, 1)) == 6  # the rest of the first block
    assert rule.sequence(STUDY, ARMS, 0) == []
    assert Assignment.of("stratified").strata == "instance"
    assert Assignment.of("balanced") == Assignment()
    assert Assignment.of({"seed": 5, "blocks": [1, 3]}).to_json() == {
        "method": "permuted blocks", "strata": "study", "seed": 5, "blocks": [1, 3]}
