"""Numeric fluents are exact rationals: parsing, effects, comparisons, search, costs, text."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from planaudit.formal import parse_plan, validate, write
from planaudit.formal.ground import Task
from planaudit.formal.heuristics import hmax, lmcut
from planaudit.formal.search import astar, breadth_first
from planaudit.formal.syntax import parse_domain, parse_problem
from planaudit.formal.witness import available

try:
    from planaudit.formal import number
except ImportError:  # before exact numbers: the tests that use it fail, the others still run
    number = None

TENTHS = """(define (domain tenths) (:requirements :numeric-fluents :action-costs)
  (:functions (f) (total-cost) - number)
  (:action inc :parameters () :precondition (< (f) 1)
    :effect (and (increase (f) 0.1) (increase (total-cost) 0.1)))
  (:action third :parameters () :effect (and (assign (f) (/ 1 3)) (increase (total-cost) 1)))
  (:action triple :parameters () :effect (and (scale-up (f) 3) (increase (total-cost) 1))))"""
INC_ONLY = TENTHS.split("  (:action third")[0] + ")"


def _task(goal: str, init: str = "(= (f) 0)", metric: str = "", domain: str = TENTHS) -> Task:
    d = parse_domain(domain)
    return Task(d, parse_problem(f"(define (problem p) (:domain tenths) (:init {init})"
                                 f" (:goal {goal}) {metric})", d))


def _run(task: Task, plan: str):
    state = task.init
    for step in parse_plan(plan):
        state = task.operator(*step).apply(state)
    return state


def test_three_tenths_reach_three_tenths_in_validation():
    task = _task("(= (f) 0.3)")
    assert validate(task, parse_plan("(inc)(inc)(inc)")).valid
    short = validate(task, parse_plan("(inc)(inc)"))
    assert not short.valid and short.failure.kind == "goal"
    assert short.failure.unsatisfied == ["(= (f) 0.3)"]


def test_search_finds_the_three_step_plan_and_the_state_renders_0_3():
    task = _task("(= (f) 0.3)", domain=INC_ONLY)
    for result in (breadth_first(task), astar(task, hmax(task), "astar-hmax")):
        assert result.status == "solved"
        assert [op.name for op in result.plan] == ["(inc)"] * 3
    state = _run(task, "(inc)(inc)(inc)")
    assert state[1][task.fluent_index[("f", ())]] == Fraction(3, 10)
    assert task.facts(state) == ["(= (f) 0.3)"]
    assert number.render(state[1][0]) == "0.3"


def test_a_third_times_three_is_one():
    task = _task("(= (f) 1)")
    assert validate(task, parse_plan("(third)(triple)")).valid
    state = _run(task, "(third)")
    assert state[1][0] == Fraction(1, 3) and number.render(state[1][0]) == "1/3"
    assert task.facts(state) == ["(= (f) (/ 1 3))"]  # PDDL text that parses back
    after = _run(task, "(third)(triple)")
    assert after[1][0] == 1 and type(after[1][0]) is int  # integral again: an int
    assert validate(_task("(= (* (/ 1 3) 3) 1)"), []).valid  # a constant expression too
    assert validate(_task("(= (/ 2 4) 0.5)"), []).valid


@pytest.mark.parametrize("goal, holds", [
    ("(< (f) 0.3)", False), ("(<= (f) 0.3)", True), ("(= (f) 0.3)", True),
    ("(>= (f) 0.3)", True), ("(> (f) 0.3)", False),
    ("(< (f) 0.30000000000000001)", True), ("(> (f) 0.29999999999999999)", True),
])
def test_comparisons_at_the_exact_boundary(goal, holds):
    # (f) is 0.1 + 0.1 + 0.1 = 3/10 exactly; the neighbours differ from it by 1e-17,
    # which binary doubles cannot tell from 0.3
    assert validate(_task(goal), parse_plan("(inc)(inc)(inc)")).valid is holds


def test_large_and_small_constants_are_exact():
    big = "100000000000000000001"  # past 2^53: a double rounds it to 1e20
    assert not validate(_task(f"(= (f) {big})", init="(= (f) 100000000000000000000)"), []).valid
    assert validate(_task("(> (f) 100000000000000000000)", init=f"(= (f) {big})"), []).valid
    assert validate(_task("(> (f) 0)", init="(= (f) 0.000000000000000000000001)"), []).valid
    assert validate(_task("(= (- (f) 0.000000000000000000000001) 1)",
                          init="(= (f) 1.000000000000000000000001)"), []).valid


def test_a_fractional_cost_is_exact_in_validation_search_and_json():
    task = _task("(>= (f) 0.3)", metric="(:metric minimize (total-cost))", domain=INC_ONLY)
    v = validate(task, parse_plan("(inc)(inc)(inc)"))
    assert v.valid and v.cost == Fraction(3, 10)
    assert json.loads(json.dumps(v.to_json()))["cost"] == 0.3  # float only at the boundary
    res = astar(task, lmcut(task), "astar-lmcut")
    assert res.status == "solved" and res.cost == Fraction(3, 10) and len(res.plan) == 3


def test_written_pddl_parses_back_to_the_same_exact_values():
    d = parse_domain(TENTHS)
    p = parse_problem("(define (problem p) (:domain tenths) (:init (= (f) 0.1) (= (total-cost) 0))"
                      " (:goal (< (f) 0.35)))", d)
    p.init_values[("total-cost", ())] = Fraction(1, 4)
    text = write.problem(p)
    assert "(= (f) 0.1)" in text and "(= (total-cost) 0.25)" in text and "0.35" in text
    back = parse_problem(text, d)
    assert back.init_values == {("f", ()): Fraction(1, 10), ("total-cost", ()): Fraction(1, 4)}
    p.goal = ("cmp", "=", ("fn", "f", ()), ("num", Fraction(1, 3)))
    assert "(:goal (= (f) (/ 1 3)))" in write.problem(p)  # an expression may divide
    assert parse_problem(write.problem(p), d).goal == ("cmp", "=", ("fn", "f", ()),
                                                         ("op", "/", ("num", 1), ("num", 3)))
    p.init_values[("total-cost", ())] = Fraction(1, 3)  # no finite decimal: no :init literal
    with pytest.raises(ValueError, match=r"\(= \(total-cost\) 1/3\) cannot be written in :init"):
        write.problem(p)


def test_a_float_handed_in_by_other_code_is_read_as_its_decimal():
    d = parse_domain(TENTHS)
    p = parse_problem("(define (problem p) (:domain tenths) (:init (= (f) 0)) (:goal (= (f) 0.3)))", d)
    p.init_values[("f", ())] = 0.2  # float: as 1/5
    task = Task(d, p)
    assert validate(task, parse_plan("(inc)")).valid


@pytest.mark.parametrize("tok, want", [
    ("3", 3), ("-3", -3), ("3.0", 3), ("0.1", Fraction(1, 10)), (".5", Fraction(1, 2)),
    ("2.", 2), ("-0.25", Fraction(-1, 4)), ("007.50", Fraction(15, 2)),
])
def test_parse_is_exact(tok, want):
    got = number.parse(tok)  # an int when integral, else the project's exact rational
    assert got == want and type(got) is (int if type(want) is int else number.Q)


@pytest.mark.parametrize("v, text", [
    (3, "3"), (Fraction(3, 10), "0.3"), (Fraction(-5, 4), "-1.25"), (Fraction(1, 3), "1/3"),
    (Fraction(-2, 3), "-2/3"), (Fraction(1, 1000000), "0.000001"), (Fraction(6, 2), "3"),
    (0.1, "0.1"), (10**20 + 1, "100000000000000000001"), (float("inf"), "inf"),
])
def test_render_is_the_shortest_exact_decimal_else_a_fraction(v, text):
    assert number.render(v) == text


def test_numbers_from_other_libraries_become_exact():
    import numpy as np

    assert number.exact(np.int64(7)) == 7 and type(number.exact(np.int64(7))) is int
    assert number.exact(np.float64(0.1)) == Fraction(1, 10)
    assert number.exact(True) == 1 and type(number.exact(True)) is int


def test_bad_number_text_is_refused_by_name():
    with pytest.raises(ValueError, match="'1e3'"):
        number.parse("1e3")
    with pytest.raises(ValueError, match="finite"):
        number.exact(float("nan"))


def test_division_by_zero_is_undefined():
    assert number.divide(1, 0) is None
    assert number.divide(6, 3) == 2 and type(number.divide(6, 3)) is int
    assert number.divide(Fraction(1, 2), Fraction(1, 4)) == 2


@pytest.mark.parametrize("goal", ["(= (f) 0.3)", "(and (>= (f) 1) (<= (f) 1))", "(> (f) 0.7)"])
def test_every_short_plan_agrees_with_unified_planning_exactly(goal):
    """unified-planning computes with Fractions: verdict and cost agree, to the last digit,
    on every plan of up to four steps (its reader takes (scale-up) written as an assign)."""
    from itertools import product

    from unified_planning.engines import ValidationResultStatus
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    problem = (f"(define (problem p) (:domain tenths) (:init (= (f) 0) (= (total-cost) 0))"
               f" (:goal {goal}) (:metric minimize (total-cost)))")
    task = _task(goal, init="(= (f) 0) (= (total-cost) 0)", metric="(:metric minimize (total-cost))")
    reader = PDDLReader()
    up = reader.parse_problem_string(TENTHS.replace("(scale-up (f) 3)", "(assign (f) (* (f) 3))"),
                                     problem)
    plans = [p for n in range(5) for p in product(("inc", "third", "triple"), repeat=n)]
    valid = 0
    with PlanValidator(name="sequential_plan_validator") as checker:
        for plan in plans:
            text = "\n".join(f"({a})" for a in plan)
            ours = validate(task, parse_plan(text))
            res = checker.validate(up, reader.parse_plan_string(up, text))
            assert ours.valid == (res.status == ValidationResultStatus.VALID), text
            if ours.valid:
                valid += 1
                (cost,) = res.metric_evaluations.values()
                assert ours.cost == cost, text
    assert valid > 0  # the goal is reached by some plan: the costs were compared


@pytest.mark.skipif(not available(), reason="VAL is not installed")
def test_val_agrees_where_exact_and_differs_by_its_tolerance_only(tmp_path):
    """VAL computes in doubles with a 0.0001 tolerance: it accepts three tenths as 0.3, as
    planaudit now does exactly; at a strict boundary it still departs, as documented."""
    from planaudit.formal.departures import compare

    (tmp_path / "d.pddl").write_text(INC_ONLY)
    plan = "(inc)\n(inc)\n(inc)\n"
    for goal, ours_valid, departure in [("(= (f) 0.3)", True, None), ("(<= (f) 0.3)", True, None),
                                        ("(< (f) 0.3)", False, "tolerance")]:
        (tmp_path / "p.pddl").write_text(
            f"(define (problem p) (:domain tenths) (:init (= (f) 0) (= (total-cost) 0))"
            f" (:goal {goal}) (:metric minimize (total-cost)))")
        task = _task(goal, init="(= (f) 0) (= (total-cost) 0)",
                     metric="(:metric minimize (total-cost))", domain=INC_ONLY)
        c = compare(task, tmp_path / "d.pddl", tmp_path / "p.pddl", plan)
        assert (c.ours_valid, c.val.valid, c.departure) == (ours_valid, True, departure), goal
        if ours_valid:
            assert c.val.value == pytest.approx(0.3)


# -- where values become text outside the formal core: briefs, observations, curriculum ------

THIRDS = """(define (domain thirds) (:requirements :numeric-fluents :action-costs)
  (:functions (f) (total-cost) - number)
  (:action inc :parameters () :effect (and (increase (f) 0.1) (increase (total-cost) 0.1)))
  (:action third :parameters () :effect (and (assign (f) (/ 1 3)) (increase (total-cost) (/ 1 3)))))"""


def _templates():
    from planaudit.suite.brief import Templates

    return Templates(source="<test>", world="A level.", types={}, predicates={},
                     functions={"f": "the level", "total-cost": "the total cost"},
                     actions={"inc": "Raise the level.", "third": "Set the level to a third."})


def test_a_brief_says_the_literal_exactly():
    from planaudit.suite.brief import instance_parts

    d = parse_domain(TENTHS)
    p = parse_problem("(define (problem p) (:domain tenths)"
                      " (:init (= (f) 0.30000000000000001) (= (total-cost) 100000000000000000001))"
                      " (:goal (< (f) 0.30000000000000002)))", d)
    _, goal, values = instance_parts(d, p, _templates())
    assert [s for _, s in values] == ["the level is 0.30000000000000001"]  # a double says 0.3
    assert [s for _, s in goal] == ["the level is less than 0.30000000000000002"]


def test_an_observation_says_a_third_and_a_large_value_exactly():
    from planaudit.online.environment import Environment
    from planaudit.suite.brief import Renderer

    task = _task("(= (f) 1)", domain=THIRDS.replace("thirds", "tenths"))
    env = Environment(task, {}, None, budget=10)
    env.state = _run(task, "(third)")
    assert "f() = 1/3" in env.query_state().text
    env.state = (env.state[0], (10**20 + 1,))
    assert "f() = 100000000000000000001" in env.query_state().text  # not 1e+20
    worded = Environment(task, {}, Renderer(_templates()), budget=10)
    worded.state = _run(task, "(third)")
    assert "the level is 1/3" in worded.query_state().text


def test_the_curriculum_says_and_writes_a_state_exactly(tmp_path):
    from planaudit.curriculum.world import World

    (tmp_path / "domain.pddl").write_text(INC_ONLY)
    world = World(tmp_path / "domain.pddl", _templates())
    task = _task("(= (f) 0.3)", domain=INC_ONLY)
    state = _run(task, "(inc)(inc)(inc)")
    assert write.formula(world.state_goal(task, state)) == "(and (= (f) 0.3))"
    assert world.state_sentences(task, state) == ["the level is 0.3"]


def test_curriculum_truth_and_scoring_keep_a_fractional_cost(tmp_path):
    from planaudit.curriculum.generate import Builder
    from planaudit.curriculum.score import score_plan
    from planaudit.curriculum.world import World
    from planaudit.planbench.cases import Case

    (tmp_path / "domain.pddl").write_text(THIRDS)
    world = World(tmp_path / "domain.pddl", _templates())
    d = parse_domain(THIRDS)
    problem = parse_problem("(define (problem p) (:domain thirds) (:init (= (f) 0)"
                            " (= (total-cost) 0)) (:goal (>= (f) 0.3))"
                            " (:metric minimize (total-cost)))", d)
    truth = Builder(world, [], "thirds").plan_truth(problem, ["(inc)"] * 3, optimal=True)
    truth = json.loads(json.dumps(truth))  # as a case file holds it
    assert truth["optimal_cost"] == 0.3  # 0.30000000000000004 in binary doubles
    verdict = score_plan(Case("t2", "suite", "thirds", "p", "", truth), "```\n(third)\n(inc)\n```")
    assert verdict.outcome == "wrong-answer"
    assert "cost 13/30 where the optimum is 0.3" in verdict.detail


TANKS = (Path(__file__).parent / "data" / "tanks-domain.pddl").read_text()


@pytest.mark.parametrize("seed", range(6))
def test_random_decimal_plans_agree_with_unified_planning(seed):
    """Seeded random tank problems (tenths, quarters, thirds, halving) and plans, mostly
    applicable: verdict, failing step and exact cost as unified-planning's Fractions."""
    import random

    from unified_planning.engines import ValidationResultStatus
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    rng = random.Random(seed)
    tanks = [f"t{i}" for i in range(rng.randint(2, 3))]
    init = " ".join(f"(= (level {t}) {rng.choice(('0', '0.5', '1.2'))})"
                    f" (= (cap {t}) {rng.choice(('1', '1.5', '2.3'))})" for t in tanks)
    goal = " ".join(f"({rng.choice(('>=', '=', '<='))} (level {t}) {rng.choice(('0.3', '0.6', '0.15'))})"
                    for t in tanks[:2])
    text = (f"(define (problem p) (:domain tanks) (:objects {' '.join(tanks)} - tank)"
            f" (:init {init} (= (total-cost) 0)) (:goal (and {goal})) (:metric minimize (total-cost)))")
    domain = parse_domain(TANKS)
    task = Task(domain, parse_problem(text, domain))
    reader = PDDLReader()
    up = reader.parse_problem_string(TANKS, text)
    steps = [("fill", (t,)) for t in tanks] + [("halve", (t,)) for t in tanks] + [
        ("pour", (a, b)) for a in tanks for b in tanks if a != b]
    fractional = valid = failed = 0
    with PlanValidator(name="sequential_plan_validator") as checker:
        for _ in range(15):
            state, plan = task.init, []
            for _ in range(rng.randint(3, 25)):
                ops = [task.operator(*s) for s in steps]
                ok = [op for op in ops if op.applicable(state)]
                op = rng.choice(ok) if ok and rng.random() < 0.9 else rng.choice(ops)
                plan.append(op.name)
                if not op.applicable(state):
                    break
                state = op.apply(state)
            fractional += any(v is not None and v != int(v) for v in state[1])
            plan_text = "\n".join(plan)
            ours = validate(task, parse_plan(plan_text))
            up_plan = reader.parse_plan_string(up, plan_text)
            res = checker.validate(up, up_plan)
            assert ours.valid == (res.status == ValidationResultStatus.VALID), plan_text
            if ours.valid:
                valid += 1
                (cost,) = res.metric_evaluations.values()
                assert ours.cost == cost, plan_text
            elif res.inapplicable_action is not None:
                failed += 1
                at = next(i for i, a in enumerate(up_plan.actions, 1)
                          if a is res.inapplicable_action)
                assert ours.failure.step == at, plan_text
    assert fractional > 0 and failed > 0  # non-integral values reached, failing steps compared


def test_the_truth_record_of_a_fractional_cost_task_is_json_and_agrees_with_up(tmp_path):
    """Both validators' exact costs are compared exactly; the record is written as JSON."""
    from planaudit.formal.truth import Limits, solve

    (tmp_path / "d.pddl").write_text(INC_ONLY)
    (tmp_path / "p.pddl").write_text("(define (problem p) (:domain tenths) (:init (= (f) 0) "
                                     "(= (total-cost) 0)) (:goal (>= (f) 0.3)) "
                                     "(:metric minimize (total-cost)))")
    record = solve(str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl"),
                   Limits(external=True, external_seconds=60))
    text = json.dumps(record)  # a Fraction here would not serialise
    assert record["solvable"] and record["agree"], record["disagreements"]
    assert record["optimal_cost"] == 0.3 and record["optimal_length"] == 3
    assert "0.30000000000000004" not in text


def test_a_certificate_reads_a_value_written_as_a_fraction():
    from planaudit.formal.certificate import CertificateError, _parse_fact

    task = _task("(= (f) 1)")
    nums: list = []
    _parse_fact(task, "(= (f) (/ 1 3))", 0, nums)
    assert nums == [Fraction(1, 3)]
    _parse_fact(task, "(= (f) 0.1)", 0, nums)
    assert nums == [Fraction(1, 10)]
    for bad in ("(= (f) (/ 1 0))", "(= (f) (+ 1 2))", "(= (f) x)"):
        with pytest.raises(CertificateError, match="bad value"):
            _parse_fact(task, bad, 0, [])
