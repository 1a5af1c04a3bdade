"""The judge's positive control: every fault the seeder places in a formalizer's files, on
the built-in suite's small tasks, is found by the judge (the files written out as PDDL and
read back, as a model's would be), and found no later than the seeder's own witness, which
it established with the validator and the semantics, not with the equivalence check."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from planaudit.formal import write
from planaudit.formal.equivalence import compare
from planaudit.formal.load import load_task
from planaudit.formal.search import breadth_first
from planaudit.formal.sexpr import PDDLError
from planaudit.formalize.judge import _task
from planaudit.reference.formalizer import DOMAIN_KINDS, KINDS, PROBLEM_KINDS, seed
from tests.conftest import DOMAINS

TASKS = [f"blocksworld/p0{i}" for i in (1, 2, 3, 4, 5)] + \
        [f"gripper/p0{i}" for i in (1, 2, 3, 4, 9)] + \
        [f"logistics/p0{i}" for i in (1, 2, 3, 4, 9)] + [f"hospital/p0{i}" for i in (1, 2, 3, 4)]


@pytest.fixture(scope="module")
def seeded():
    """Every kind on every task: (task, kind, hidden task, plan, the seeded files or None)."""
    out = []
    for name in TASKS:
        domain_name, task_id = name.split("/")
        hidden = load_task(DOMAINS / domain_name / "domain.pddl",
                           DOMAINS / domain_name / "problems" / f"{task_id}.pddl")
        found = breadth_first(hidden)
        plan = None if found.plan is None else [op.name for op in found.plan]
        for kind in KINDS:
            faulty = seed(kind, hidden.domain, hidden.problem, plan, random.Random(f"{name}/{kind}"))
            out.append((name, kind, hidden, plan, faulty))
    return out


def test_every_seeded_fault_is_found_no_later_than_its_witness(seeded):
    expected, found = Counter(), Counter()
    for name, kind, hidden, plan, faulty in seeded:
        if faulty is None:
            continue
        domain, problem, fault = faulty
        assert fault.kind == kind
        expected[kind] += 1
        texts = [(write.domain(domain), f"{name}/domain.pddl"),
                 (write.problem(problem), f"{name}/problem.pddl")]
        if kind in PROBLEM_KINDS:
            assert domain is hidden.domain  # a problem fault leaves the domain as it was
        else:
            assert problem is hidden.problem
        try:
            model = _task(texts)
        except PDDLError as e:
            assert fault.witness == "malformed", f"{name} {fault.change}: {e}"
            found[kind] += 1
            continue
        assert fault.witness != "malformed", f"{name} {fault.change} was read as well formed"
        eq = compare(hidden, model)
        assert eq.verdict == "different", f"{name} {fault.change}: {eq.words()}"
        found[kind] += 1
        length = len(eq.difference.sequence)
        if fault.kind == "init-dropped":
            assert length <= 1, f"{name} {fault.change}: {eq.words()}"
        elif fault.witness == "plan":
            assert length <= len(plan), f"{name} {fault.change}: {eq.words()}"
        else:  # precondition-dropped: found by the state along the plan it names, or earlier
            at = int(fault.change.split("after ")[1].split(" steps")[0])
            assert length <= at + 1, f"{name} {fault.change}: {eq.words()}"
    assert found == expected
    # every kind has places on these tasks, and most tasks take most kinds
    assert set(expected) == set(KINDS) and sum(expected.values()) >= 0.75 * len(seeded), expected


def test_a_kind_without_a_place_is_not_seeded(seeded):
    """No plan, no plan witness: on an unsolvable task the goal and effect faults are not
    seeded; with one type only, no object can be declared of another."""
    by = {(name, kind): faulty for name, kind, _, _, faulty in seeded}
    for name in ("gripper/p09", "logistics/p09"):
        assert by[(name, "goal-wrong")] is None and by[(name, "effect-swapped")] is None
    assert all(by[(f"blocksworld/p0{i}", "type-wrong")] is None for i in (1, 2, 3, 4, 5))
    assert set(DOMAIN_KINDS) | set(PROBLEM_KINDS) == set(KINDS)


def test_the_seed_decides_the_fault():
    hidden = load_task(DOMAINS / "gripper" / "domain.pddl", DOMAINS / "gripper" / "problems" / "p04.pddl")
    plan = [op.name for op in breadth_first(hidden).plan]
    for kind in KINDS:
        a = seed(kind, hidden.domain, hidden.problem, plan, random.Random(7))
        b = seed(kind, hidden.domain, hidden.problem, plan, random.Random(7))
        assert a[2] == b[2] and write.domain(a[0]) == write.domain(b[0])
        assert write.problem(a[1]) == write.problem(b[1])
