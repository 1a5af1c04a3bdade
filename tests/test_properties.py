"""Property tests: on random action sequences, our validator and unified-planning's
SequentialPlanValidator agree on validity and on the first failing step."""

from __future__ import annotations

import random
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planaudit.formal import load_task
from planaudit.formal.certificate import every_operator
from planaudit.formal.plan import parse_plan
from planaudit.formal.validate import validate
from tests.conftest import CONFORMANCE, DATA, suite_entries


def _pairs() -> list[tuple[str, str]]:
    pairs = [(str(e.domain_file), str(e.problem_file)) for e in suite_entries()]
    pairs.append((str(DATA / "mixed-domain.pddl"), str(DATA / "mixed-problem.pddl")))
    for d, n in (("blocksworld", 7), ("logistics", 3), ("sokoban", 1),
                 ("mystery_blocksworld", 12)):
        p = CONFORMANCE / d / "problems" / f"instance-{n}.pddl"
        if p.exists():
            pairs.append((str(CONFORMANCE / d / "domain.pddl"), str(p)))
    return pairs


PAIRS = _pairs()


@cache
def _up(domain: str, problem: str):
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    get_environment().credits_stream = None
    prob = PDDLReader().parse_problem(domain, problem)
    actions = {a.name.lower(): a for a in prob.actions}
    objects = {o.name.lower(): o for o in prob.all_objects}
    return prob, actions, objects


@cache
def _ops(domain: str, problem: str):
    task = load_task(domain, problem)
    return list(task.all_operators()), list(every_operator(task))


def _up_verdict(domain: str, problem: str, steps) -> tuple[bool, int | None, str]:
    from unified_planning.engines.results import FailedValidationReason, ValidationResultStatus
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import PlanValidator

    prob, actions, objects = _up(domain, problem)
    plan = SequentialPlan([ActionInstance(actions[a], tuple(objects[x] for x in args))
                           for a, args in steps])
    with PlanValidator(name="sequential_plan_validator") as v:
        res = v.validate(prob, plan)
    if res.status == ValidationResultStatus.VALID:
        return True, None, "valid"
    if res.reason == FailedValidationReason.INAPPLICABLE_ACTION:
        step = next(i for i, a in enumerate(plan.actions, 1) if a is res.inapplicable_action)
        return False, step, "precondition"
    return False, None, "goal"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PAIRS), st.integers(0, 2**32 - 1), st.integers(0, 25),
       st.floats(0.0, 0.4))
def test_random_sequences_agree_with_unified_planning(pair, seed, length, p_random):
    domain, problem = pair
    task = load_task(domain, problem)
    reachable, every = _ops(domain, problem)
    rng = random.Random(seed)
    state, steps = task.init, []
    for _ in range(length):
        applicable = [op for op in reachable if op.applicable(state)]
        if applicable and rng.random() >= p_random:
            op = rng.choice(applicable)
        else:
            op = rng.choice(every)
        steps.append((op.action, op.args))
        if op.applicable(state):
            state = op.apply(state)
    text = "\n".join("(" + " ".join((a, *args)) + ")" for a, args in steps)
    ours = validate(task, parse_plan(text))
    up_valid, up_step, up_kind = _up_verdict(domain, problem, steps)
    assert ours.valid == up_valid, text
    if not ours.valid:
        assert ours.failure.kind == up_kind, text
        assert ours.failure.step == up_step, text
