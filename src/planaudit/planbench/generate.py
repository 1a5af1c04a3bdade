"""PlanBench-format test cases on a PlanBench root, with ground truth from `formal/`.

`cases(root, config, test, instances)` renders each case's prompt as PlanBench
does (the config's `domain_intro`, or `domain_intro_cost` for t2, then one worked
example for one-shot prompts, then the case's `[STATEMENT]`), and puts in `truth`
what `score` needs: the initial state, the goal, an optimal plan (PlanBench's: Fast
Downward's A* with LM-cut, checked by formal/'s breadth-first search; see `PLANNERS`),
the plan to verify and formal/'s diagnosis of it (t3), the state an action sequence
reaches (t7). Facts and steps in `truth` are PDDL literals. `era` renders the older
prompt text of recorded runs made before the configs took their present text (`ERAS`).

Examples, as the recorded queries show: t1, t2, t5, t6, t7 take the instance
before the case's (t5 from the config's generalisation family); t3 shows three
instances (a valid plan, one ending short of the goal, one failing a
precondition); t4 and t8 show the case's own instance. Random choices (t3's
faulty plans, t4's and t7's prefix, t6's step, t8_1's goal order) come from
`seed` and the instance id, so a case is reproducible.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path

from planaudit.planbench import fastdownward
from planaudit.planbench.cases import TESTS, Case, Verdict
from planaudit.planbench.language import facts_text, plan_text, sort_key
from planaudit.planbench.material import Atom, Config, MaterialError, load_config
from planaudit.planbench.world import World, goal_atoms, world_of

Step = tuple[str, tuple[str, ...]]
ZERO_SHOT_ASK = "What is the plan to achieve my goal? Just give the actions in the plan."


def _lit(atom: Atom) -> str:
    return "(" + " ".join((atom[0], *atom[1])) + ")"


def _atom(text: str) -> Atom:
    words = text.strip("()").split()
    return (words[0], tuple(words[1:]))


def _step_lit(step: Step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"


class _Instance:
    """An instance's initial state, goal and optimal plan (searched once)."""

    def __init__(self, cfg: Config, world: World, iid: int, generalized: bool = False,
                 planner: str = "auto"):
        task = cfg.task(iid, generalized)
        self.planner = planner
        self.id = iid
        self.init: list[Atom] = sorted(task.problem.init_atoms, key=sort_key)
        self.goal: list[Atom] = goal_atoms(task)
        self.world = world
        self.cfg = cfg
        self.generalized = generalized
        self._plan: list[Step] | None = None

    @property
    def plan(self) -> list[Step]:
        """An optimal plan, the one PlanBench showed where it can be known (see `PLANNERS`).
        formal/ stays the judge: a recorded or Fast Downward plan is used only when
        formal/ finds it valid and as short as its own breadth-first plan."""
        if self._plan is None:
            plan = self.world.optimal_plan(self.init, self.goal)
            if plan is None:
                raise MaterialError(f"instance {self.id}: no plan")
            chosen = None
            if self.planner == "auto" and not self.generalized:
                chosen = _recorded_plan(self.cfg, self.id)
            if chosen is None and _uses_fd(self.planner):
                path = self.cfg.instance_path(self.id, self.generalized)
                try:
                    chosen = fastdownward.plan(self.cfg.domain_path, path)
                except fastdownward.FastDownwardError:
                    if self.planner == "fast-downward":
                        raise
                    chosen = None  # auto: formal/'s plan
                if self.planner == "fast-downward" and not self._optimal(chosen, len(plan)):
                    raise MaterialError(f"{path}: Fast Downward's plan is not optimal by formal/ "
                                        f"({chosen})")
            if chosen is not None and self._optimal(chosen, len(plan)):
                plan = chosen
            self._plan = plan
        return self._plan

    def _optimal(self, steps: list[Step] | None, length: int) -> bool:
        w = self.world
        return steps is not None and len(steps) == length and w.reaches(
            w.bits(self.init), steps, w.bits(self.goal))

    def state_after(self, steps: list[Step]) -> list[Atom]:
        w = self.world
        run = w.run(w.bits(self.init), steps)
        if run.failed_at is not None:
            raise MaterialError(f"instance {self.id}: step {run.failed_at} cannot run")
        return sorted(w.atoms(run.bits), key=sort_key)


PLANNERS = {
    "auto": "the root's recorded plan (`info.json`) where it has one, else Fast Downward's "
            "A* with LM-cut when up-fast-downward is installed, else formal/'s",
    "fast-downward": "Fast Downward's A* with LM-cut (PlanBench's planner) for every instance",
    "formal": "formal/'s breadth-first plan",
}


# Prompt variants for recorded runs made before the root's configs took their present
# text. "2023": GPT-4's t1 runs of 2023 (plan-bench/results/blocksworld*/gpt-4_chat/
# task_1_plan_generation.json, copied into llm_planning_analysis). Their Blocksworld
# intro lacks the last restriction line of today's `domain_intro`, LATER_LINE: the one
# that states what stacking does to the lower block, the only line addressed to "you",
# present in every later query (GPT-4's t2-t8 and all 2024-25 runs), so added to the
# config after those t1 runs; and their prompt ends in a newline. The configs hold only
# today's text; a config without the line (mystery) loses nothing.
LATER_LINE = "Once you stack a block on top of a second block, the second block is no longer clear.\n"
ERAS = {"2023": "GPT-4's 2023 t1 prompts: the intro without LATER_LINE, a trailing newline"}


def _intro(cfg: Config, test: str, era: str | None) -> str:
    if era is not None and era not in ERAS:
        raise ValueError(f"unknown era '{era}' (one of {', '.join(ERAS)})")
    if era is not None and test != "t1":  # the 2023 queries of t2-t8 show today's intro
        raise ValueError(f"era '{era}' is a t1 variant (PlanBench's other 2023 queries use the "
                         "config's intro)")
    intro = cfg.intro("domain_intro_cost" if test == "t2" else "domain_intro")
    return intro if era is None else intro.replace(LATER_LINE, "")


def _uses_fd(planner: str) -> bool:
    if planner not in PLANNERS:
        raise ValueError(f"unknown planner '{planner}' (one of {', '.join(PLANNERS)})")
    if planner == "fast-downward" and not fastdownward.available():
        raise MaterialError("planner 'fast-downward': up-fast-downward is not installed")
    return planner == "fast-downward" or (planner == "auto" and fastdownward.available())


@lru_cache(maxsize=16)
def _info(path: str) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _recorded_plan(cfg: Config, iid: int) -> list[Step] | None:
    """The plan a root records for an instance in `<instance_dir>/../info.json`."""
    folder = cfg.instance_path(iid).parent
    if folder.name != "generated_basic":
        return None
    entry = _info(str(folder.parent / "info.json")).get(cfg.instance_path(iid).name)
    if not isinstance(entry, dict) or not isinstance(entry.get("plan"), str):
        return None
    steps = []
    for line in entry["plan"].split("\n"):
        words = line.strip().strip("()").split()
        if words:
            steps.append((words[0], tuple(words[1:])))
    return steps


def statement_text(cfg: Config, init: list[Atom], goal_text: str) -> str:
    return (f"[STATEMENT]\nAs initial conditions I have that, {facts_text(cfg, init)}.\n"
            f"My goal is to have that {goal_text}.")


def goal_text_of(cfg: Config, goal: list[Atom], ordered: bool = False) -> str:
    return facts_text(cfg, goal, ordered=ordered)


def _block_t1(cfg: Config, inst: _Instance, plan: list[Step] | None, goal_text: str | None = None) -> str:
    goal_text = goal_text or goal_text_of(cfg, inst.goal)
    head = statement_text(cfg, inst.init, goal_text) + "\n\nMy plan is as follows:\n\n[PLAN]"
    if plan is None:
        return head
    return head + "\n" + plan_text(cfg, plan) + "[PLAN END]\n\n"


def _block_t2(cfg: Config, inst: _Instance, plan: list[Step] | None) -> str:
    head = (statement_text(cfg, inst.init, goal_text_of(cfg, inst.goal))
            + " I want to minimize the time taken to achieve my goal.\nMy plan is as follows:\n\n[PLAN]")
    if plan is None:
        return head + " "
    return head + "\n" + plan_text(cfg, plan) + \
        f"[PLAN END]\nThe total time to execute the plan is {len(plan)} minutes.\n\n"


def _event(inst: _Instance, plan: list[Step], rng: random.Random) -> tuple[int, list[Atom], list[Atom]]:
    """t6's unexpected event: right after a pick-up/unstack step, the block lands where
    the plan's next step would put it (PlanBench's event); returns (step, true, false)."""
    w = inst.world
    options = [k for k in range(len(plan) - 1) if plan[k][0] in ("pick-up", "unstack")
               and plan[k + 1][0] == "stack"] or [len(plan) - 2]
    k = rng.choice(options)
    before = w.bits(inst.state_after(plan[:k + 1]))
    after = w.run(before, [plan[k + 1]]).bits
    return k + 1, sorted(w.atoms(after & ~before), key=sort_key), sorted(w.atoms(before & ~after),
                                                                         key=sort_key)


def _example_id(cfg: Config, iid: int, generalized: bool = False) -> int:
    ids = cfg.instance_ids(generalized)
    before = [i for i in ids if i < iid]
    return before[-1] if before else ids[-1]


def _faulty(inst: _Instance, rng: random.Random, kind: str) -> list[Step]:
    """t3's plans: the optimal plan, cut short (an unmet goal), or with a step removed
    from the middle (usually an unmet precondition)."""
    plan = list(inst.plan)
    if kind == "valid" or len(plan) < 2:
        return plan
    if kind == "goal":
        return plan[:rng.randrange(1, len(plan))]
    k = rng.randrange(0, len(plan) - 1)
    return plan[:k] + plan[k + 1:]


def _verification(cfg: Config, world: World, init: list[Atom], goal: list[Atom], plan: list[Step]) -> dict:
    v = world.validate_steps(init, goal, plan)
    if v.valid:
        return {"valid": True}
    f = v.failure
    out = {"valid": False, "kind": f.kind, "step": f.step, "unsatisfied": list(f.unsatisfied)}
    if f.step is not None:
        out["action"] = _step_lit(plan[f.step - 1])
    return out


def verification_text(cfg: Config, truth: dict) -> str:
    """A verification verdict in PlanBench's words."""
    if truth["valid"]:
        return "The above plan is valid."
    facts = [_atom(s) for s in truth["unsatisfied"]]
    if truth["kind"] == "goal":
        many = len(facts) > 1
        return ("The above plan is invalid. " + ("These are the unmet goal conditions:\n" if many else
                                                "This is the unmet goal condition:\n")
                + facts_text(cfg, facts, ordered=True))
    step = _atom(truth["action"])
    many = len(facts) > 1
    return (f"The above plan is invalid. The following action at step {truth['step']} has "
            + ("unmet preconditions:\n" if many else "an unmet precondition:\n")
            + cfg.action_text(*step) + "\n"
            + ("The unmet preconditions are:\n" if many else "The unmet precondition is:\n")
            + facts_text(cfg, facts, ordered=True))


def _t3_block(cfg: Config, inst: _Instance, plan: list[Step], verdict: str | None) -> str:
    head = (f"[STATEMENT]\nAs initial conditions I have that, {facts_text(cfg, inst.init)}.\n"
            f"My goal is to have that {goal_text_of(cfg, inst.goal)}. \nMy plan is as follows:\n\n[PLAN]\n"
            + plan_text(cfg, plan) + "[PLAN END]\n\n[VERIFICATION]")
    return head if verdict is None else head + "\n" + verdict + ("\n\n" if verdict.endswith("valid.")
                                                                else "\n")


def _t7_block(cfg: Config, inst: _Instance, seq: list[Step], state: list[Atom] | None) -> str:
    head = (f"[STATEMENT]\nAs initial conditions I have that, {facts_text(cfg, inst.init)}.\n"
            " I have executed the following action sequence:\n\n[ACTION SEQUENCE]\n"
            + plan_text(cfg, seq) + "[ACTION SEQUENCE END]\n[RESULTING STATE]\n")
    return head if state is None else head + facts_text(cfg, state) + "\n\n"


def _t6_block(cfg: Config, inst: _Instance, rng: random.Random, answer: bool) -> tuple[str, dict]:
    plan = inst.plan
    step, true, false = _event(inst, plan, rng)
    w = inst.world
    bits = (w.bits(inst.state_after(plan[:step])) | w.bits(true)) & ~w.bits(false)
    new = sorted(w.atoms(bits), key=sort_key)
    replan = w.optimal_plan(new, inst.goal) or []
    text = (f"[STATEMENT]\nAs initial conditions I have that, {facts_text(cfg, inst.init)}.\n"
            f"My goal is to have that {goal_text_of(cfg, inst.goal)}.\nMy plan is as follows:\n\n[PLAN]\n"
            + plan_text(cfg, plan) + "[PLAN END]\n\nDuring execution, an unexpected event has occurred.\n"
            f'After executing the action "{cfg.action_text(*plan[step - 1])}" at step {step} in the plan, '
            f"the following facts unexpectedly became true: {facts_text(cfg, true)}\n"
            f"The following facts became unexpectedly false: {facts_text(cfg, false)}\n"
            "After re-planning from the new state, the plan is as follows:\n[PLAN]")
    if answer:
        text += "\n" + plan_text(cfg, replan) + "[PLAN END]\n\n"
    return text, {"init": [_lit(a) for a in new], "goal": [_lit(a) for a in inst.goal],
                  "optimal_plan": [_step_lit(s) for s in replan], "optimal_length": len(replan)}


def _plan_truth(inst: _Instance, goal: list[Atom] | None = None, init: list[Atom] | None = None) -> dict:
    init = init if init is not None else inst.init
    goal = goal if goal is not None else inst.goal
    plan = inst.plan if (init is inst.init and goal is inst.goal) else inst.world.optimal_plan(init, goal)
    return {"init": [_lit(a) for a in init], "goal": [_lit(a) for a in goal],
            "optimal_plan": [_step_lit(s) for s in plan or []], "optimal_length": len(plan or [])}


def _one(cfg: Config, world: World, test: str, iid: int, rng: random.Random, shots: int,
         planner: str, era: str | None) -> Case:
    intro = _intro(cfg, test, era)
    inst = _Instance(cfg, world, iid, generalized=test == "t5", planner=planner)
    parts: list[str] = []
    truth: dict
    if test in ("t1", "t2", "t5"):
        block = _block_t2 if test == "t2" else _block_t1
        if shots:
            ex = _Instance(cfg, world, _example_id(cfg, iid, test == "t5"), generalized=test == "t5",
                           planner=planner)
            parts.append(block(cfg, ex, ex.plan))
            parts.append(block(cfg, inst, None))
        elif test == "t2":
            parts.append(statement_text(cfg, inst.init, goal_text_of(cfg, inst.goal))
                         + " I want to minimize the time taken to achieve my goal.\n\n" + ZERO_SHOT_ASK)
        else:
            parts.append(statement_text(cfg, inst.init, goal_text_of(cfg, inst.goal))
                         + "\n\n" + ZERO_SHOT_ASK)
        truth = _plan_truth(inst)
    elif test == "t3":
        plan = _faulty(inst, rng, rng.choice(["valid", "goal", "precondition"]))
        verdict = _verification(cfg, world, inst.init, inst.goal, plan)
        if shots:
            others = [i for i in cfg.instance_ids() if i != iid]
            for kind in ("valid", "goal", "precondition"):
                for _ in range(20):
                    ex = _Instance(cfg, world, rng.choice(others), planner=planner)
                    ex_plan = _faulty(ex, rng, kind)
                    v = _verification(cfg, world, ex.init, ex.goal, ex_plan)
                    if (kind == "valid") == v["valid"] and (kind == "valid" or v["kind"] == kind):
                        break
                parts.append(_t3_block(cfg, ex, ex_plan, verification_text(cfg, v)))
        parts.append(_t3_block(cfg, inst, plan, None))
        truth = {"init": [_lit(a) for a in inst.init], "goal": [_lit(a) for a in inst.goal],
                 "plan": [_step_lit(s) for s in plan], "verification": verdict}
    elif test == "t4":
        k = rng.randrange(1, len(inst.plan) + 1)
        state = inst.state_after(inst.plan[:k])
        if shots:
            parts.append(statement_text(cfg, inst.init, goal_text_of(cfg, inst.goal))
                         + "\nMy plan is as follows:\n\n[PLAN]\n" + plan_text(cfg, inst.plan)
                         + "[PLAN END]\n \n")
        parts.append(statement_text(cfg, inst.init, facts_text(cfg, state))
                     + "\nMy plan is as follows:\n\n[PLAN]")
        truth = _plan_truth(inst, goal=state)
        truth["stated_goal"] = truth["goal"]
        truth["goal"] = [_lit(a) for a in state if a not in set(inst.init)]  # what became true
    elif test == "t6":
        if shots:
            ex = _Instance(cfg, world, _example_id(cfg, iid), planner=planner)
            parts.append(_t6_block(cfg, ex, rng, True)[0])
        text, truth = _t6_block(cfg, inst, rng, False)
        parts.append(text)
    elif test == "t7":
        if shots:
            ex = _Instance(cfg, world, _example_id(cfg, iid), planner=planner)
            seq = ex.plan[:rng.randrange(1, len(ex.plan) + 1)]
            parts.append(_t7_block(cfg, ex, seq, ex.state_after(seq)))
        seq = inst.plan[:rng.randrange(1, len(inst.plan) + 1)]
        state = inst.state_after(seq)
        parts.append(_t7_block(cfg, inst, seq, None))
        truth = {"init": [_lit(a) for a in inst.init], "sequence": [_step_lit(s) for s in seq],
                 "state": [_lit(a) for a in state]}
    elif test in ("t8_1", "t8_2", "t8_3"):
        full = inst.state_after(inst.plan)
        shuffled = list(inst.goal)
        rng.shuffle(shuffled)
        example_goal, query_goal = {
            "t8_1": (goal_text_of(cfg, inst.goal), goal_text_of(cfg, shuffled, ordered=True)),
            "t8_2": (facts_text(cfg, full), goal_text_of(cfg, inst.goal)),
            "t8_3": (goal_text_of(cfg, inst.goal), facts_text(cfg, full)),
        }[test]
        if shots:
            parts.append(_block_t1(cfg, inst, inst.plan, example_goal))
        parts.append(_block_t1(cfg, inst, None, query_goal))
        truth = _plan_truth(inst)  # PlanBench validates the instance's own goal
    else:
        raise ValueError(f"unknown test '{test}' (one of {', '.join(TESTS)})")
    prompt = intro + "\n" + "".join(parts) + ("\n" if era else "")
    truth["root"] = str(cfg.root)
    return Case(test, "planbench", cfg.name, str(iid), prompt, truth)


def cases(root: Path, config: str, test: str, instances: list[str] | int, seed: int = 0,
          shots: int = 1, planner: str = "auto", era: str | None = None) -> list[Case]:
    """PlanBench-format cases of one test on a root's config: `instances` is a list of
    ids or a count (the first that many of the config's instances, from its `start`).
    `planner` says which optimal plan an instance shows (examples, t3-t8's plans; see
    `PLANNERS`); the default reproduces PlanBench's where Fast Downward is installed.
    `era` names a variant of the prompt text for older recorded runs (see `ERAS`)."""
    if test not in TESTS:
        raise ValueError(f"unknown test '{test}' (one of {', '.join(TESTS)})")
    _intro(load_config(root, config), test, era)  # an unknown era fails before any search
    fd = _uses_fd(planner)
    cfg = load_config(root, config)
    world = world_of(cfg)
    if isinstance(instances, int):
        ids = cfg.instance_ids(test == "t5")
        start = int(cfg.data.get("start", 1))
        ids = [i for i in ids if i >= start][:instances]
    else:
        ids = [int(i) for i in instances]
    if fd:  # one batch for Fast Downward: every instance whose plan the cases may show
        gen = test == "t5"
        need = set(ids) | {_example_id(cfg, i, gen) for i in ids} if shots else set(ids)
        if test == "t3" and shots:
            need |= set(cfg.instance_ids())
        paths = [cfg.instance_path(i, gen) for i in sorted(need)]
        try:
            fastdownward.plans(cfg.domain_path, [p for p in paths if p.is_file()])
        except fastdownward.FastDownwardError:
            if planner == "fast-downward":
                raise
    out = []
    for iid in ids:
        rng = random.Random(f"{seed}:{test}:{iid}")
        out.append(_one(cfg, world, test, iid, rng, shots, planner, era))
    return out


# -- scoring and the oracle ------------------------------------------------------------


def _world(case: Case) -> tuple[Config, World]:
    root = case.truth.get("root")
    if not root:
        raise MaterialError(f"case {case.domain}/{case.instance}: its truth names no 'root'")
    cfg = load_config(root, case.domain)
    return cfg, world_of(cfg)


def score(case: Case, text: str, dialect: str = "strict") -> Verdict:
    """Judge a model's answer to a generated case (see `dialects` for the readings)."""
    from planaudit.planbench.dialects import READERS, Unreadable
    from planaudit.planbench.execution import read_state_2023, read_state_strict
    from planaudit.planbench.verification import compare, read_answer_2023, read_answer_strict

    cfg, world = _world(case)
    t = case.truth
    if case.test in ("t3",):
        truth = t["verification"]
        try:
            said = read_answer_strict(cfg, text) if dialect == "strict" else read_answer_2023(cfg, text)
        except (MaterialError, Unreadable) as e:
            return Verdict(False, "unreadable", str(e), dict.fromkeys(("binary", "w_type", "w_expl"), False))
        want = {"valid": truth["valid"]}
        if not truth["valid"]:
            facts = [_atom(s) for s in truth["unsatisfied"]]
            if truth["kind"] == "goal":
                want["unmet_goal"] = facts
            else:
                want["unmet_precondition"] = {"action": _atom(truth["action"]), "facts": facts}
        scores = compare(want, said)
        ok = scores["w_expl"] if dialect == "strict" else scores["binary"]
        return Verdict(ok, "right" if ok else "wrong", "" if ok else f"truth: {truth}", scores)
    if case.test == "t7":
        try:
            said = read_state_strict(cfg, text) if dialect == "strict" else read_state_2023(
                cfg, text, split_and=dialect == "published")
        except MaterialError as e:
            return Verdict(False, "unreadable", str(e))
        want = {_atom(s) for s in t["state"]}
        ok = set(said) == want and len(said) == len(want)
        missing = sorted(_lit(a) for a in want - set(said))
        extra = sorted(_lit(a) for a in set(said) - want)
        return Verdict(ok, "right-state" if ok else "wrong-state",
                       "" if ok else f"missed {' '.join(missing)}; wrong {' '.join(extra)}")
    try:
        steps = READERS[dialect](cfg, text)
    except Unreadable as e:
        return Verdict(False, "unreadable", str(e))
    init = [_atom(s) for s in t["init"]]
    goal = [_atom(s) for s in t["goal"]]
    v = world.validate_steps(init, goal, steps)
    if not v.valid:
        f = v.failure
        outcome = {"goal": "goal-not-reached", "precondition": "inapplicable-action"}.get(
            f.kind, "invalid")
        return Verdict(False, outcome, f.detail + (": " + " ".join(f.unsatisfied) if f.unsatisfied else ""))
    if case.test == "t2" and len(steps) != t["optimal_length"]:
        return Verdict(False, "not_optimal", f"{len(steps)} steps, optimal is {t['optimal_length']}")
    return Verdict(True, "valid", f"{len(steps)} steps")


def oracle_answer(case: Case) -> str:
    """The reference answer: an optimal plan in the config's phrases (plan tests), the
    true verdict in PlanBench's words (t3), the true state (t7)."""
    cfg, _ = _world(case)
    t = case.truth
    if case.test == "t3":
        return verification_text(cfg, t["verification"])
    if case.test == "t7":
        return facts_text(cfg, [_atom(s) for s in t["state"]])
    steps = [_atom(s) for s in t["optimal_plan"]]
    return plan_text(cfg, steps) + "[PLAN END]"


def wrong_verdict(case: Case) -> str:
    """A t3 answer with the verdict flipped (what a reference model's `flip_verdict` fault
    says): a valid plan called invalid for an unmet goal fact, an invalid one valid."""
    cfg, _ = _world(case)
    truth = case.truth["verification"]
    if not truth["valid"]:
        return verification_text(cfg, {"valid": True})
    goal = case.truth.get("goal") or []
    return verification_text(cfg, {"valid": False, "kind": "goal", "unsatisfied": goal[:1]})
