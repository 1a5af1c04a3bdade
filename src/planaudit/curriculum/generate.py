"""PlanBench's test cases on the built-in suite: prompts through `nl.yaml`, truth from
`formal/`.

`cases(suite_dir, domain, test, instances, seed, shots)` builds one `Case` per
instance (the first `instances` solvable tasks of the domain, in id order; t5 uses
members of the domain's family instead). A prompt is the domain brief, the test's
instructions, `shots` solved examples from other instances (t3: always three, one
valid plan, one that misses the goal, one that is not executable; t5: at least two
smaller family members) and the query. Everything random (examples, prefixes,
events, goal orders, which plan t3 shows) is drawn from `Random(seed:test:domain:
instance)`, so the same seed gives the same cases.

What each test asks (and its truth):

- t1 plan generation: a valid plan.
- t2 cost-optimal planning: a valid plan of the optimal cost (costs stated; unit-cost
  domains say every action costs 1).
- t3 plan verification: valid or invalid, the kind of error, and the explanation
  (unmet goal facts, or the first inapplicable step and its unmet preconditions).
- t4 plan reuse: a solved instance and its plan; then the same initial state with
  the state after a prefix of that plan as the goal.
- t5 generalisation: plans of smaller members of a family, then a larger member.
- t6 replanning: a prefix was executed, then something unexpected happened (an
  action of the domain applied by someone else); a plan from the new state, given.
- t7 plan execution reasoning: the state an action sequence leads to (set-equal).
- t8_1/2/3 goal reformulation: the goal's facts shuffled; examples with the full
  final state as goal, the query with the original goal; the reverse.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from planaudit.curriculum.families import member, unit_of
from planaudit.curriculum.world import (
    CurriculumError,
    Instance,
    World,
    load_instances,
    load_world,
    optimal_plan,
    run,
)
from planaudit.formal import number, write
from planaudit.formal.diagnosis import read_formula
from planaudit.formal.ground import COST_FUNCTION, Task
from planaudit.formal.plan import parse_plan
from planaudit.formal.search import unit_cost
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.syntax import Problem, parse_problem
from planaudit.formal.task import conjuncts
from planaudit.formal.validate import validate
from planaudit.planbench.cases import TESTS, Case
from planaudit.suite.brief import BriefError, domain_brief
from planaudit.suite.catalog import selects
from planaudit.suite.obfuscate import name_map, rename

PLAN_FORMAT = (
    "Answer with a plan: one grounded action per line, written as (action-name argument1 "
    "argument2 ...) with the arguments in the order the action lists them, all inside a "
    "single fenced code block.")
STATE_FORMAT = (
    "Answer with the resulting state: every fact of the kinds listed below that holds, one "
    "per line, written exactly as the facts of the initial state are written, all inside a "
    "single fenced code block. Facts that no action can change are left out. The kinds:\n{kinds}")
VERDICT_FORMAT = (
    "Answer with a fenced code block. Its first line is `verdict: valid` or `verdict: "
    "invalid`. For an invalid plan, the second line is `error: goal-not-reached` (every "
    "action can be applied, but the goal does not hold at the end) or `error: "
    "inapplicable-action` (some action cannot be applied where it comes); for "
    "inapplicable-action, a line `step: N` names the first action that cannot be applied "
    "(counting from 1); then a line `unmet:` and, one per line, the goal facts that do not "
    "hold at the end, or the preconditions of that action that do not hold, written as the "
    "task writes facts.")

# the actions an unexpected event (t6) may be, per domain: someone else acts
EVENTS = {
    "blocksworld": ("unstack", "put-down", "stack", "pick-up"),
    "gripper": ("move", "drop"),
    "logistics": ("drive-truck", "unload-truck", "fly-airplane", "unload-airplane"),
    "hospital": ("block", "transfer", "discharge"),
    "loadbalancing": ("unassign-bucket", "stop-service", "power-off"),
}
EVENT_WORDS = {
    "blocksworld": "someone else used the arm",
    "gripper": "the robot was operated by someone else",
    "logistics": "a vehicle was moved by another dispatcher",
    "hospital": "the ward staff acted on their own",
    "loadbalancing": "an operator changed the servers",
}


def _rng(seed: int, test: str, domain: str, instance: str) -> random.Random:
    return random.Random(f"{seed}:{test}:{domain}:{instance}")


def _block(lines: list[str]) -> str:
    return "```\n" + "\n".join(lines) + "\n```"


class Builder:
    """The prompts and truths of one domain's test cases."""

    def __init__(self, world: World, instances: list[Instance], domain: str,
                 folder: Path | None = None):
        self.world, self.instances, self.domain = world, instances, domain
        self.folder = folder  # the domain's own folder: a family declared there (t5)
        self.unit = all(unit_cost(i.task, i.task.all_operators()) for i in instances[:1])

    # -- text ------------------------------------------------------------------------

    def header(self, test: str) -> str:
        return domain_brief(self.world.domain, self.world.templates)

    def describe(self, problem: Problem, goal_order: list[int] | None = None) -> str:
        """Objects, initial state and goal of `problem` as sentences."""
        r = self.world.renderer
        by_type: dict[str, list[str]] = {}
        for name, types in {**self.world.domain.constants, **problem.objects}.items():
            by_type.setdefault(" or ".join(types), []).append(name)
        lines = ["Objects:"] + [f"- {ty}: {', '.join(sorted(ns))}"
                                for ty, ns in sorted(by_type.items())]
        lines += ["", "Initial state (every fact not listed here is false):"]
        lines += [f"- {r.atom(p, a)}" for p, a in problem.init_atoms]
        lines += [f"- {self.world.value_sentence(fn, a, v)}"
                  for (fn, a), v in problem.init_values.items() if fn != COST_FUNCTION]
        goal = [c for c in conjuncts(problem.goal) if c != ("and", ())]
        if goal_order is not None:
            goal = [goal[i] for i in goal_order]
        lines += ["", "Goal (all of these must hold at the end):"]
        lines += [f"- {r.sentence(c)}" for c in goal]
        return "\n".join(lines)

    def sentence(self, literal: str) -> str:
        """A literal as the failure diagnosis names it ("(clear b)") in words: a gold answer
        and a worked example say it as the brief would, never as PDDL."""
        try:
            return self.world.renderer.sentence(read_formula(literal))
        except (BriefError, PDDLError) as e:
            raise CurriculumError(f"the unmet condition {literal} cannot be put in "
                                  f"words: {e}") from e

    # -- problems --------------------------------------------------------------------

    def state_after(self, inst: Instance, k: int):
        return run(inst.task, inst.steps[:k])

    def full_goal_problem(self, inst: Instance) -> Problem:
        final = self.state_after(inst, len(inst.plan))
        return Problem(**{**inst.task.problem.__dict__,
                          "goal": self.world.state_goal(inst.task, final)})

    def plan_truth(self, problem: Problem, plan: list[str], optimal: bool = False,
                   task: Task | None = None) -> dict:
        task = task or Task(self.world.domain, problem)
        verdict = validate(task, parse_plan("\n".join(plan)))
        if not verdict.valid:
            raise CurriculumError(f"{self.domain}/{problem.name}: the oracle plan is not valid "
                                  f"({verdict.failure.detail if verdict.failure else ''})")
        return {"kind": "plan", "domain_file": str(self.world.domain_file),
                "problem": write.problem(problem), "plan": plan, "optimal": optimal,
                "optimal_cost": number.to_json(verdict.cost), "optimal_length": len(plan)}

    def examples(self, rng: random.Random, query: Instance, n: int) -> list[Instance]:
        others = sorted((i for i in self.instances if i.id != query.id),
                        key=lambda i: (len(i.plan), i.id))[:max(n + 2, 4)]
        if n and not others:
            raise CurriculumError(f"{self.domain}: an example needs a second solvable task")
        if n <= len(others):
            return rng.sample(others, n)
        return [others[j % len(others)] for j in range(n)]

    # -- the test cases --------------------------------------------------------------

    def case(self, test: str, inst: Instance, seed: int, shots: int) -> Case:
        rng = _rng(seed, test, self.domain, inst.id)
        make = getattr(self, "t" + test.removeprefix("t"))
        intro, parts, query, truth = make(inst, rng, shots)
        shown = [self.header(test), "", intro]
        for k, (q, a) in enumerate(parts, 1):
            shown += ["", f"[Example {k}]", q, "", "[Answer]", a]
        shown += ["", "[Your task]", query]
        return Case(test, "suite", self.domain, inst.id, "\n".join(shown), truth)

    def _plan_examples(self, inst, rng, shots, question):
        out = []
        for ex in self.examples(rng, inst, shots):
            out.append((self.describe(ex.task.problem) + "\n\n" + question, _block(ex.plan)))
        return out

    def t1(self, inst, rng, shots):
        q = "Write a plan that reaches the goal from the initial state."
        intro = "Task: plan generation. " + PLAN_FORMAT
        return (intro, self._plan_examples(inst, rng, shots, q),
                self.describe(inst.task.problem) + "\n\n" + q,
                self.plan_truth(inst.task.problem, inst.plan, task=inst.task))

    def t2(self, inst, rng, shots):
        if COST_FUNCTION in self.world.domain.functions:
            costs = ("Each action's cost is given with it; a plan's cost is the sum of its "
                     "actions' costs." + (" Here every action costs 1." if self.unit else ""))
        else:
            costs = "Every action costs 1: a plan's cost is its number of actions."
        q = "Write a plan of the lowest possible cost that reaches the goal."
        intro = f"Task: cost-optimal planning. {costs} {PLAN_FORMAT}"
        truth = self.plan_truth(inst.task.problem, inst.plan, optimal=True, task=inst.task)
        return (intro, self._plan_examples(inst, rng, shots, q),
                self.describe(inst.task.problem) + "\n\n" + q, truth)

    def _verify(self, inst: Instance, kind: str, rng: random.Random) -> tuple[list[str], dict]:
        """A plan of `kind` (valid, goal, inapplicable) for `inst` and its verdict truth."""
        plan = inst.plan
        if kind == "valid":
            shown = plan
        elif kind == "goal":
            shown = plan[:rng.randrange(1, len(plan))] if len(plan) > 1 else []
        else:
            shown = None
            for _ in range(50):
                cand = list(plan)
                i = rng.randrange(len(cand))
                if rng.random() < 0.5 and len(cand) > 1:
                    j = min(i + 1, len(cand) - 1) if i < len(cand) - 1 else i - 1
                    cand[i], cand[j] = cand[j], cand[i]
                else:
                    cand.pop(i)
                v = validate(inst.task, parse_plan("\n".join(cand)))
                if v.failure is not None and v.failure.kind == "precondition":
                    shown = cand
                    break
            if shown is None:  # the first action, twice, never applies twice in these domains
                shown = [plan[0], *plan]
        v = validate(inst.task, parse_plan("\n".join(shown)))
        f = v.failure
        truth = {"valid": v.valid, "error": None, "step": None, "unmet": []}
        if f is not None:
            if f.kind not in ("goal", "precondition"):
                raise CurriculumError(f"t3: a shown plan fails as {f.kind}")
            truth["error"] = "goal-not-reached" if f.kind == "goal" else "inapplicable-action"
            truth["step"] = f.step
            truth["unmet"] = sorted(self.sentence(u) for u in f.unsatisfied)
            truth["failure"] = f.detail
        if (kind == "valid") != v.valid:
            raise CurriculumError(f"t3: the {kind} plan of {inst.id} is judged {v.valid}")
        return shown, truth

    @staticmethod
    def verdict_text(truth: dict) -> str:
        if truth["valid"]:
            return _block(["verdict: valid"])
        lines = ["verdict: invalid", f"error: {truth['error']}"]
        if truth["step"] is not None:
            lines.append(f"step: {truth['step']}")
        return _block(lines + ["unmet:"] + [f"- {u}" for u in truth["unmet"]])

    def t3(self, inst, rng, shots):
        q = "Is the plan below valid for this task?"
        intro = "Task: plan verification. " + VERDICT_FORMAT
        parts = []
        for ex, kind in zip(self.examples(rng, inst, 3), ("valid", "goal", "inapplicable"),
                            strict=True):
            plan, truth = self._verify(ex, kind, rng)
            parts.append((f"{self.describe(ex.task.problem)}\n\n{q}\n{_block(plan)}",
                          self.verdict_text(truth)))
        kind = rng.choice(("valid", "goal", "inapplicable"))
        plan, truth = self._verify(inst, kind, rng)
        truth = {"kind": "verdict", "shown": kind, "plan": plan, **truth}
        return intro, parts, f"{self.describe(inst.task.problem)}\n\n{q}\n{_block(plan)}", truth

    def _reuse(self, inst: Instance, rng: random.Random) -> tuple[str, dict]:
        k = rng.randrange(1, len(inst.plan) + 1) if len(inst.plan) > 1 else 1
        state = self.state_after(inst, k)
        problem = self.world.state_problem(inst.task, inst.task.init,
                                           goal=self.world.state_goal(inst.task, state))
        text = (f"{self.describe(inst.task.problem)}\n\nA plan for this task:\n"
                f"{_block(inst.plan)}\n\nNow the goal changes. From the same initial state, "
                f"reach this goal instead (all of these must hold at the end):\n"
                + "\n".join(f"- {self.sentence_of(c)}" for c in conjuncts(problem.goal)))
        return text, self.plan_truth(problem, inst.plan[:k])

    def sentence_of(self, f: tuple) -> str:
        return self.world.renderer.sentence(f)

    def t4(self, inst, rng, shots):
        intro = "Task: plan reuse. " + PLAN_FORMAT
        parts = []
        for ex in self.examples(rng, inst, shots):
            text, truth = self._reuse(ex, rng)
            parts.append((text, _block(truth["plan"])))
        text, truth = self._reuse(inst, rng)
        return intro, parts, text, truth

    def t5(self, inst, rng, shots):
        n_ex = max(2, shots)
        size = n_ex + 1 + self.instances.index(inst)
        intro = ("Task: generalisation. The solved tasks below belong to one family; the "
                 "last task is a larger member of it. " + PLAN_FORMAT)
        seed = rng.randrange(2**31)
        parts = []
        for s in range(1, n_ex + 1):
            p, plan = self._member(s, seed)
            parts.append((self.describe(p) + "\n\nWrite a plan.", _block(plan)))
        p, plan = self._member(size, seed)
        truth = self.plan_truth(p, plan)
        truth["family"] = {"size": size, "unit": unit_of(self.domain, self.folder)}
        return intro, parts, self.describe(p) + "\n\nWrite a plan.", truth

    @cached_property
    def obfuscated(self) -> bool:
        """Whether the suite shows this domain's objects under random names."""
        names = json.loads((self.instances[0].folder / "names.json").read_text())
        return any(k != v for k, v in names.items())

    def _member(self, size: int, seed: int) -> tuple[Problem, list[str]]:
        """A family member's problem and pattern plan, its objects renamed as the suite
        renames an obfuscated domain's (so no prompt shows a name the suite hides)."""
        m = member(self.domain, self.world.domain, size, seed, self.folder)
        p = parse_problem(m.problem_pddl, self.world.domain)
        if not self.obfuscated:
            return p, m.plan
        names = name_map(p, seed, f"{self.domain}/family-{size}")
        plan = ["(" + " ".join([w[0], *(names.get(a, a) for a in w[1:])]) + ")"
                for w in (step.strip("()").split() for step in m.plan)]
        return rename(p, names), plan

    def _event(self, inst: Instance, rng: random.Random):
        """(prefix length, event op, state after prefix and event, plan from there)."""
        task = inst.task
        wanted = EVENTS.get(self.domain, ())
        ks = list(range(1, len(inst.plan))) or [0]
        rng.shuffle(ks)
        for k in ks[:4]:
            state = self.state_after(inst, k)
            nxt = inst.plan[k] if k < len(inst.plan) else None
            ops = [op for op in task.all_operators() if op.applicable(state) and op.name != nxt]
            preferred = [op for op in ops if op.action in wanted] or ops
            rng.shuffle(preferred)
            for op in preferred[:6]:
                after = op.apply(state)
                problem = self.world.state_problem(task, after)
                plan = optimal_plan(Task(self.world.domain, problem))
                if plan:
                    return k, op, after, problem, plan
        raise CurriculumError(f"t6: no unexpected event leaves {self.domain}/{inst.id} solvable")

    def _replan(self, inst: Instance, rng: random.Random) -> tuple[str, dict]:
        k, op, after, problem, plan = self._event(inst, rng)
        why = EVENT_WORDS.get(self.domain, "someone else acted")
        text = (f"{self.describe(inst.task.problem)}\n\nA plan for this task:\n"
                f"{_block(inst.plan)}\n\nThe first {k} action(s) of the plan were executed. "
                f"Then something unexpected happened ({why}), and the state is now (every "
                "fact not listed here is false):\n"
                + "\n".join(f"- {s}" for s in self.world.state_sentences(
                    inst.task, after, dynamic_only=False))
                + "\n\nWrite a plan from this state to the goal.")
        truth = self.plan_truth(problem, plan, optimal=False)
        truth["event"] = {"after_step": k, "action": op.name}
        return text, truth

    def t6(self, inst, rng, shots):
        intro = "Task: replanning. " + PLAN_FORMAT
        parts = []
        for ex in self.examples(rng, inst, shots):
            text, truth = self._replan(ex, rng)
            parts.append((text, _block(truth["plan"])))
        text, truth = self._replan(inst, rng)
        return intro, parts, text, truth

    def _execute(self, inst: Instance, rng: random.Random) -> tuple[str, dict]:
        k = rng.randrange(1, len(inst.plan) + 1)
        state = self.state_after(inst, k)
        facts = self.world.state_sentences(inst.task, state)
        text = (f"{self.describe(inst.task.problem)}\n\nStarting from the initial state, these "
                f"actions are executed in order:\n{_block(inst.plan[:k])}\n\nWhat is the "
                "resulting state?")
        return text, {"kind": "state", "facts": facts, "actions": inst.plan[:k]}

    def t7(self, inst, rng, shots):
        kinds = "\n".join(f"- {s}" for s in self.world.state_kinds())
        intro = "Task: plan execution reasoning. " + STATE_FORMAT.format(kinds=kinds)
        parts = []
        for ex in self.examples(rng, inst, shots):
            text, truth = self._execute(ex, rng)
            parts.append((text, _block(truth["facts"])))
        text, truth = self._execute(inst, rng)
        return intro, parts, text, truth

    def _goal_case(self, inst, rng, shots, example_full: bool, query_full: bool,
                   shuffle: bool):
        q = "Write a plan that reaches the goal from the initial state."
        intro = "Task: planning (goal reformulation). " + PLAN_FORMAT
        parts = []
        for ex in self.examples(rng, inst, shots):
            p = self.full_goal_problem(ex) if example_full else ex.task.problem
            parts.append((self.describe(p) + "\n\n" + q, _block(ex.plan)))
        p = self.full_goal_problem(inst) if query_full else inst.task.problem
        order = None
        if shuffle:
            goal = [c for c in conjuncts(p.goal) if c != ("and", ())]
            order = list(range(len(goal)))
            for _ in range(5):  # a different order where there is one
                rng.shuffle(order)
                if order != sorted(order) or len(order) < 2:
                    break
        truth = self.plan_truth(p, inst.plan)
        if order is not None:
            truth["goal_order"] = order
        return intro, parts, self.describe(p, order) + "\n\n" + q, truth

    def t8_1(self, inst, rng, shots):
        return self._goal_case(inst, rng, shots, False, False, True)

    def t8_2(self, inst, rng, shots):
        return self._goal_case(inst, rng, shots, True, False, False)

    def t8_3(self, inst, rng, shots):
        return self._goal_case(inst, rng, shots, False, True, False)


def builder(suite_dir, domain: str) -> Builder:
    instances = load_instances(suite_dir, domain)
    source = json.loads((instances[0].folder / "brief.json").read_text()).get("source", "")
    return Builder(load_world(instances[0]), instances, domain, Path(source).parent)


def cases(suite_dir, domain: str, test: str, instances: int, seed: int = 0,
          shots: int = 1, only: str | None = None,
          tasks: Sequence[str] | None = None) -> list[Case]:
    """The test's cases on the first `instances` solvable tasks of a prepared domain
    (`only`: just that task id) among those `tasks` selects (`suite.tasks` patterns; None:
    all). Examples and t5's family sizes still come from all of the domain's solvable
    tasks, so a selected task's case is the one a run without a selection poses."""
    if test not in TESTS:
        raise CurriculumError(f"no test case '{test}' (have: {', '.join(TESTS)})")
    b = builder(suite_dir, domain)
    def digits(name: str) -> str:
        return "".join(c for c in name if c.isdigit()).lstrip("0")

    pool = [i for i in b.instances if selects(tasks, domain, i.id)]
    if not pool:
        raise CurriculumError(f"{domain}: suite.tasks selects no solvable task of the domain "
                              f"(solvable: {', '.join(i.id for i in b.instances)})")
    chosen = pool[:instances] if only is None else (
        [i for i in b.instances if i.id == only]
        or [i for i in b.instances if digits(only) and digits(i.id) == digits(only)])
    if only is not None and not chosen:
        raise CurriculumError(f"{domain}: no solvable prepared task '{only}' (have: "
                              f"{', '.join(i.id for i in b.instances)})")
    return [b.case(test, inst, seed, shots) for inst in chosen]
