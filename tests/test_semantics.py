"""The semantics on hand-made cases: each PDDL feature, and the cost of a plan."""

from __future__ import annotations

import pytest

from planaudit.formal import PDDLError, load_task, parse_plan, validate
from planaudit.formal.ground import Task
from planaudit.formal.syntax import parse_domain, parse_problem
from planaudit.formal.task import Operator
from tests.conftest import DATA, SEMANTICS

DOMAIN, PROBLEM = DATA / "mixed-domain.pddl", DATA / "mixed-problem.pddl"
SOLUTION = """
(move r1 hall kitchen) (pick r1 box kitchen) (move r1 kitchen hall) (drop r1 box hall)
(switch r1 hall) (pick r1 cup hall)
"""


def run(plan: str):
    return validate(load_task(DOMAIN, PROBLEM), parse_plan(plan))


def test_solution_is_valid_and_costed_by_total_cost():
    v = run(SOLUTION)
    assert v.valid and v.length == 6
    assert v.cost == 2 + 1 + 2 + 1 + 1 + 1  # moves cost 2, the rest 1


def test_case_and_comments_do_not_matter():
    plan = "; a comment\n(MOVE R1 Hall KITCHEN) ; trailing\n1: (Pick r1 BOX kitchen)"
    v = run(plan)
    assert v.executable and v.length == 2


def test_numeric_precondition_fails_when_battery_is_spent():
    plan = "(move r1 hall kitchen)(move r1 kitchen hall)(move r1 hall kitchen)(move r1 kitchen hall)"
    v = run(plan)
    assert v.failure.step == 4 and v.failure.kind == "precondition"
    assert v.failure.unsatisfied == ["(>= (battery r1) 1)"]


def test_disjunctive_precondition_either_branch():
    # cup is in the hall; the hall is dark but nothing is carried yet: (< (carried r1) 1)
    assert run("(pick r1 cup hall)").executable
    # after picking, carried = 1, so a second pick needs light: the disjunction fails
    v = run("(pick r1 cup hall)(move r1 hall kitchen)(drop r1 cup kitchen)(pick r1 box kitchen)")
    assert v.failure.step == 4
    assert v.failure.unsatisfied == ["(or (lit kitchen) (< (carried r1) 1))"]


def test_equality_and_negative_preconditions():
    domain = parse_domain("""(define (domain d) (:requirements :strips :equality :negative-preconditions)
      (:predicates (p ?x) (q ?x))
      (:action a :parameters (?x ?y) :precondition (and (not (= ?x ?y)) (not (q ?x)))
                 :effect (and (q ?x) (not (p ?y)))))""")
    problem = parse_problem("(define (problem p) (:domain d) (:objects o1 o2) (:init (p o2))"
                            " (:goal (and (q o1) (not (p o2)))))", domain)
    task = Task(domain, problem)
    assert validate(task, parse_plan("(a o1 o2)")).valid
    v = validate(task, parse_plan("(a o1 o1)"))
    assert v.failure.kind == "precondition"
    v = validate(task, parse_plan("(a o1 o2)(a o1 o2)"))
    assert v.failure.step == 2 and v.failure.unsatisfied == ["(not (q o1))"]


def test_delete_then_add_when_both():
    domain = parse_domain("""(define (domain d) (:predicates (p))
      (:action flip :parameters () :precondition (p) :effect (and (not (p)) (p))))""")
    problem = parse_problem("(define (problem x) (:domain d) (:init (p)) (:goal (p)))", domain)
    v = validate(Task(domain, problem), parse_plan("(flip)(flip)"))
    assert v.valid  # PDDL: deletes first, then adds, so p still holds


def test_empty_sections_and_metric_are_accepted():
    domain = parse_domain("""(define (domain d) (:requirements :strips :typing :action-costs)
      (:types) (:constants) (:predicates (done)) (:functions (total-cost))
      (:action go :parameters () :effect (and (done) (increase (total-cost) 5))))""")
    problem = parse_problem("""(define (problem x) (:domain d) (:objects)
      (:init (= (total-cost) 0)) (:goal (done)) (:metric minimize (total-cost)))""", domain)
    v = validate(Task(domain, problem), parse_plan("(go)"))
    assert v.valid and v.cost == 5


def test_conditional_and_universal_effects():
    domain = parse_domain("""(define (domain d) (:requirements :adl)
      (:predicates (on ?x) (wet ?x))
      (:action rain :parameters () :effect (forall (?x) (when (on ?x) (wet ?x)))))""")
    problem = parse_problem("""(define (problem x) (:domain d) (:objects a b)
      (:init (on a)) (:goal (and (wet a) (not (wet b)))))""", domain)
    assert validate(Task(domain, problem), parse_plan("(rain)")).valid


def test_simulated_step_touches_only_the_operator():
    task = load_task(DOMAIN, PROBLEM)
    op: Operator = task.operator("move", ("r1", "hall", "kitchen"))
    nxt = op.apply(task.init)
    assert task.facts(nxt) == sorted(
        set(task.facts(task.init)) - {"(at r1 hall)", "(= (battery r1) 3)"}
        | {"(at r1 kitchen)", "(= (battery r1) 2)"})


def _task(domain: str, problem: str) -> Task:
    d = parse_domain(domain)
    return Task(d, parse_problem(problem, d))


COUNTER = """(define (domain c) (:requirements :adl :numeric-fluents :action-costs)
  (:types t) (:predicates (p ?x - t) (done)) (:functions (f) (g) (total-cost) - number)
  (:action guard :parameters (?x - t) :precondition (or (p ?x) (> (g) 0)) :effect (done))
  (:action bump :parameters () :effect (and (increase (f) 1) (increase (total-cost) 3)))
  (:action reset :parameters () :effect (and (assign (f) 0) (when (done) (increase (f) 1)))))"""


def test_an_undefined_value_is_unknown_not_false():
    # (g) has no value: (or (p o) (> (g) 0)) holds when (p o) does (Kleene), else fails
    task = _task(COUNTER, "(define (problem x) (:domain c) (:objects o q - t) (:init (p o) (= (f) 0))"
                 " (:goal (done)))")
    assert validate(task, parse_plan("(guard o)")).valid
    v = validate(task, parse_plan("(guard q)"))
    assert v.failure.kind == "precondition" and "undefined: (g)" in v.failure.detail


def test_a_conditional_update_conflicting_with_an_assignment_fails_only_where_it_fires():
    task = _task(COUNTER, "(define (problem x) (:domain c) (:objects o - t) (:init (p o) (= (f) 5))"
                 " (:goal (= (f) 0)))")
    assert validate(task, parse_plan("(reset)")).valid  # (done) false: no conflict
    v = validate(task, parse_plan("(guard o) (reset)"))
    assert (v.failure.step, v.failure.kind) == (2, "effect") and "(f) twice" in v.failure.detail
    assert not task.operator("reset", ()).applicable((task.init[0] | 1 << task.atom("done", ()),
                                                      task.init[1]))  # search sees it too


def test_plan_value_is_the_metric_or_the_length_as_val_reports():
    problem = ("(define (problem x) (:domain c) (:objects o - t) (:init (= (f) 0) (= (total-cost) 4))"
               " (:goal (>= (f) 2)) {metric})")
    with_metric = _task(COUNTER, problem.format(metric="(:metric minimize (total-cost))"))
    assert validate(with_metric, parse_plan("(bump)(bump)")).cost == 4 + 3 + 3  # final total-cost
    without = _task(COUNTER, problem.format(metric=""))
    assert validate(without, parse_plan("(bump)(bump)")).cost == 2  # no metric: the length
    expr = _task(COUNTER, problem.format(metric="(:metric minimize (+ (total-cost) (* 10 (f))))"))
    assert validate(expr, parse_plan("(bump)(bump)")).cost == 10 + 20


def test_search_refuses_a_metric_it_would_not_optimise():
    task = _task(COUNTER, "(define (problem x) (:domain c) (:objects o - t) (:init (= (f) 0))"
                 " (:goal (done)) (:metric maximize (total-cost)))")
    with pytest.raises(PDDLError, match="metric maximize"):
        task.all_operators()


def test_object_fluents_are_refused_by_name():
    with pytest.raises(PDDLError, match="function loc has type place"):
        parse_domain("(define (domain d) (:types place) (:functions (loc) - place)"
                     " (:action a :parameters () :effect (and)))")


def test_numbers_are_pddl_numbers_and_inf_is_a_name():
    task = _task("""(define (domain d) (:requirements :strips :equality) (:constants inf nan)
      (:predicates (q ?x)) (:action a :parameters (?x) :precondition (not (= ?x nan)) :effect (q ?x)))""",
                 "(define (problem x) (:domain d) (:init) (:goal (q inf)))")
    assert validate(task, parse_plan("(a inf)")).valid
    assert validate(task, parse_plan("(a nan)")).failure.unsatisfied == ["(not (= nan nan))"]


def test_a_step_cost_that_depends_on_the_state_has_a_zero_bound():
    task = load_task(SEMANTICS / "state-dependent-cost" / "domain.pddl",
                     SEMANTICS / "state-dependent-cost" / "problem.pddl") if SEMANTICS.exists() else None
    if task is None:
        pytest.skip("../shared/conformance/semantics not present")
    buy, haggle = task.operator("buy", ()), task.operator("haggle", ())
    assert buy.constant_cost is None and buy.cost_bound == 0 and buy.step_cost(task.init) == 100
    assert haggle.constant_cost == 1 and haggle.cost_bound == 1
