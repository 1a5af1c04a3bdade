"""Randomised assignment (`study/allocation.py`): 1,000 entries through the store's own
enrolment on the real database engine, balanced within every block and not predictable
from the order of entry; the sequence a function of the seed, written out by the export.
The counts assignment reads (`allocation_counts`, migration 0004) always equal the
participants' own, after concurrent entries (enrolled in batches) and after an existing
database is upgraded."""

from __future__ import annotations

import itertools
import os
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import func, inspect, select

from planaudit.study import allocation
from planaudit.study.allocation import STUDY, Assignment
from planaudit.study.store import EnrolmentClosed, Store, allocation_counts, participants
from tests.study_server import postgres_url

MIGRATIONS = Path(allocation.__file__).with_name("migrations")

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


def walked(rule: Assignment, stratum: str, arms: list[str], n: int) -> list[tuple[int, str]]:
    """The first n places as the sequence was first defined: every block drawn from the
    start, its size first, then its shuffle (what `place` must still give, found directly)."""
    out: list[tuple[int, str]] = []
    for block in itertools.count():
        rng = random.Random(f"{rule.seed}:{stratum}:{block}")
        times = rng.choice(rule.blocks)
        members = [a for a in arms for _ in range(times)]
        rng.shuffle(members)
        out += [(block, arm) for arm in members]
        if len(out) >= n:
            return out[:n]
    raise AssertionError("unreachable")


@pytest.mark.parametrize("rule", [Assignment(), Assignment(seed=11, blocks=(1, 2)),
                                  Assignment(strata="instance", seed=3, blocks=(3, 1, 2))])
def test_place_finds_the_block_directly_and_gives_the_same_sequence(rule):
    for stratum, arms in ((STUDY, ARMS), ("blocksworld/p02", ARMS[:2])):
        want = walked(rule, stratum, arms, 600)
        assert [rule.place(stratum, arms, n) for n in range(600)] == want
        assert rule.sequence(stratum, arms, 600)[:600] == want
        # asked out of order (strata interleave; a server restarts on a grown study)
        order = list(range(600))
        random.Random(7).shuffle(order)
        assert all(rule.place(stratum, arms, n) == want[n] for n in order)
    with pytest.raises(ValueError):
        rule.place(STUDY, ARMS, -1)


def counted(store: Store, study: str) -> tuple[Counter, Counter]:
    """(allocation_counts' rows, the participants counted) per (arm, instance)."""
    with store.read() as conn:
        kept = Counter({(a, i): n for a, i, n in conn.execute(
            select(allocation_counts.c.arm, allocation_counts.c.instance, allocation_counts.c.n)
            .where(allocation_counts.c.study == study))})
        real = Counter({(a, i): n for a, i, n in conn.execute(
            select(participants.c.arm, participants.c.instance, func.count())
            .where(participants.c.study == study)
            .group_by(participants.c.arm, participants.c.instance))})
    return kept, real


def test_concurrent_entries_keep_the_counts_equal_to_the_participants(store):
    """300 entries from 40 threads at once (150 people, each entering twice as a double
    click does; a cap of 120): enrolled in batches, each person once, the places 0..119
    taken in the sequence's order, and allocation_counts equal to the participants."""
    store.migrate()
    store.open_study("alloc")
    rule = Assignment(seed=11, blocks=(1, 2))

    def enter(i: int):
        who = i % 150
        try:
            return who, store.enrol("alloc", f"pseudo{who:04d}", {"participant": f"P{who}"}, ARMS,
                                    INSTANCES, rule, "consent", cap=120)
        except EnrolmentClosed as e:
            return who, e

    with ThreadPoolExecutor(40) as ex:
        outcomes = list(ex.map(enter, range(300)))
    by: dict[int, list] = {}
    for who, got in outcomes:
        by.setdefault(who, []).append(got)
    admitted = {who for who, got in by.items() if not isinstance(got[0], EnrolmentClosed)}
    assert len(admitted) == 120
    for who, (a, b) in by.items():  # both entries of a person agree, and one is the new one
        if who in admitted:
            assert a[0] == b[0] and sorted([a[1], b[1]]) == [False, True]
        else:
            assert isinstance(a, EnrolmentClosed) and a.full and isinstance(b, EnrolmentClosed)
    records = sorted(store.records("alloc"), key=lambda r: r["allocation"])
    assert [r["allocation"] for r in records] == list(range(120))
    assert [r["arm"] for r in records] == [arm for _, arm in walked(rule, STUDY, ARMS, 120)]
    kept, real = counted(store, "alloc")
    assert kept == real and sum(kept.values()) == 120


def test_an_existing_database_gets_its_counts_when_migrated_to_0004(store):
    """A database a server of the previous schema (0003) filled: its participants were
    counted as they were (no allocation_counts), and migration 0004 fills the counts from
    them, so the sequence goes on from where it was."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0003")
    store.open_study("alloc")
    store.open_study("other")
    rule = Assignment(seed=5, blocks=(1, 2))
    for i in range(17):
        store.enrol("alloc" if i % 4 else "other", f"old{i}", {"participant": f"O{i}"}, ARMS,
                    INSTANCES, rule, "consent")
    with store.read() as conn:
        assert not inspect(conn).has_table("allocation_counts")
    store.migrate()
    for study in ("alloc", "other"):
        kept, real = counted(store, study)
        assert kept == real and kept
    assert sum(counted(store, "alloc")[0].values()) == 12
    for i in range(9):  # newcomers continue the study's sequence
        store.enrol("alloc", f"new{i}", {"participant": f"N{i}"}, ARMS, INSTANCES, rule, "consent")
    records = sorted(store.records("alloc"), key=lambda r: r["allocation"])
    assert [r["allocation"] for r in records] == list(range(21))
    assert [r["arm"] for r in records] == [arm for _, arm in walked(rule, STUDY, ARMS, 21)]
    kept, real = counted(store, "alloc")
    assert kept == real and sum(kept.values()) == 21
