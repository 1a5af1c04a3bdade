"""The semantics on hand-made cases: each PDDL feature, and the cost of a plan."""

from __future__ import annotations

from planaudit.formal import load_task, parse_plan, validate
from planaudit.formal.ground import Task
from planaudit.formal.syntax import parse_domain, parse_problem
from planaudit.formal.task import Operator
from tests.conftest import DATA

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
