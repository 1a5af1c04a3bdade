"""The reference formalizers: `oracle` writes the hidden model's own files; `flawed` writes
them with seeded faults of known kinds, each at the rate the call's metadata gives (the
judge's positive control, `reply`).

Each fault is placed only where the formal semantics shows, apart from the equivalence
check, that it changes the task, and says how it shows (`witness`):

- `init-dropped`: an initial fact that an action applicable in the initial state needs
  (`allowed`: the hidden model allows that action at once, the faulty one does not);
- `goal-wrong`: a goal literal replaced by one of the same predicate that is false where
  the hidden model's optimal plan ends (`plan`: that plan is a plan of one model only);
- `type-wrong`: an object declared of another type, one its facts do not take
  (`malformed`: the files are not well formed);
- `precondition-dropped`: a precondition literal of an action dropped where, in the
  initial state or a state along the hidden plan, it is the only one that fails
  (`allowed`: the faulty model allows the action there, the hidden one does not);
- `effect-swapped`: an action's add effect made a delete, or a delete an add, where the
  hidden plan then fails on the faulty model (`plan`).

A kind that cannot be placed so on a task (no plan to witness it, one type only) is not
seeded: `seed` returns None, and the expected counts count what was seeded.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path

from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import parse_plan
from planaudit.formal.syntax import Domain, Problem
from planaudit.formal.task import atom_indices
from planaudit.formal.validate import validate
from planaudit.reference.draws import draw_key

PROBLEM_KINDS = ("init-dropped", "goal-wrong", "type-wrong")
DOMAIN_KINDS = ("precondition-dropped", "effect-swapped")
KINDS = PROBLEM_KINDS + DOMAIN_KINDS


@dataclass(frozen=True)
class Fault:
    kind: str
    change: str  # what was changed, in PDDL's words
    witness: str  # allowed, plan or malformed (see the module's docstring)


Seeded = tuple[Domain, Problem, Fault]


def _conjuncts(f: tuple) -> list[tuple]:
    return list(f[1]) if f[0] == "and" else [f]


def _words(atom: tuple[str, tuple[str, ...]]) -> str:
    return "(" + " ".join((atom[0], *atom[1])) + ")"


def _step(task: Task, state, name: str):
    action, *args = name.strip("()").split()
    return task.operator(action, tuple(args)).apply(state)


def _states(task: Task, plan: list[str] | None) -> list:
    """The initial state and the states along `plan` (only the initial state without one)."""
    states = [task.init]
    for name in plan or []:
        states.append(_step(task, states[-1], name))
    return states


def init_dropped(domain: Domain, problem: Problem, plan, rng: random.Random) -> Seeded | None:
    task = Task(domain, problem)
    needed = set()
    for op in task.all_operators():
        if op.applicable(task.init):
            needed |= {task.atoms[i] for i in atom_indices(op.pre_pos)}
    facts = sorted(needed & set(problem.init_atoms))
    if not facts:
        return None
    fact = rng.choice(facts)
    cut = replace(problem, init_atoms=[a for a in problem.init_atoms if a != fact])
    return domain, cut, Fault("init-dropped", f"{_words(fact)} left out of :init", "allowed")


def goal_wrong(domain: Domain, problem: Problem, plan, rng: random.Random) -> Seeded | None:
    if not plan:
        return None
    task = Task(domain, problem)
    end = _states(task, plan)[-1][0]
    goal = _conjuncts(problem.goal)
    places = []
    for i, lit in enumerate(goal):
        if lit[0] != "atom":
            continue
        pred, args = lit[1], lit[2]
        pools = [task.objects_of(types) for _, types in domain.predicates[pred]]
        for other in product(*pools):
            if other != args and not end >> task.atom(pred, other) & 1:
                places.append((i, pred, args, other))
    if not places:
        return None
    i, pred, args, other = rng.choice(sorted(places))
    new = [*goal[:i], ("atom", pred, other), *goal[i + 1:]]
    wrong = replace(problem, goal=("and", tuple(new)))
    return domain, wrong, Fault("goal-wrong", f"goal {_words((pred, args))} written as "
                                              f"{_words((pred, other))}", "plan")


def type_wrong(domain: Domain, problem: Problem, plan, rng: random.Random) -> Seeded | None:
    places = []
    for pred, args in problem.init_atoms:
        for arg, (_, want) in zip(args, domain.predicates[pred], strict=True):
            if arg not in problem.objects:
                continue  # a constant of the domain
            for t in sorted(domain.types):
                if not domain.fits((t,), want) and (t,) != problem.objects[arg]:
                    places.append((arg, t))
    if not places:
        return None
    obj, t = rng.choice(sorted(set(places)))
    objects = {**problem.objects, obj: (t,)}
    return domain, replace(problem, objects=objects), Fault(
        "type-wrong", f"{obj} declared a {t}", "malformed")


def _with_action(domain: Domain, name: str, **changes) -> Domain:
    actions = {**domain.actions, name: replace(domain.actions[name], **changes)}
    return replace(domain, actions=actions)


def _allowed(task: Task, state, name: str) -> bool:
    action, *args = name.strip("()").split()
    try:
        return task.operator(action, tuple(args)).applicable(state)
    except (GroundingError, KeyError):
        return False


def precondition_dropped(domain: Domain, problem: Problem, plan,
                         rng: random.Random) -> Seeded | None:
    hidden = Task(domain, problem)
    states = _states(hidden, plan)
    places = []
    for name, action in sorted(domain.actions.items()):
        pre = _conjuncts(action.precondition)
        for j, lit in enumerate(pre):
            if lit[0] != "atom":
                continue
            weaker = _with_action(domain, name, precondition=("and", tuple(pre[:j] + pre[j + 1:])))
            model = Task(weaker, problem)
            model_states = _states(model, plan)
            ops = [op for op in model.all_operators() if op.action == name]
            for at, (hs, ms) in enumerate(zip(states, model_states, strict=True)):
                shown = [op.name for op in ops if op.applicable(ms) and not _allowed(hidden, hs, op.name)]
                if shown:
                    places.append((name, j, lit, at, shown[0]))
                    break
    if not places:
        return None
    name, j, lit, at, shown = rng.choice(places)
    pre = _conjuncts(domain.actions[name].precondition)
    weaker = _with_action(domain, name, precondition=("and", tuple(pre[:j] + pre[j + 1:])))
    return weaker, problem, Fault("precondition-dropped",
                                  f"{_words((lit[1], lit[2]))} dropped from {name}'s precondition "
                                  f"(after {at} steps of the plan, {shown} is then allowed)",
                                  "allowed")


def effect_swapped(domain: Domain, problem: Problem, plan, rng: random.Random) -> Seeded | None:
    if not plan:
        return None
    steps = parse_plan("\n".join(plan))
    places = []
    for name, action in sorted(domain.actions.items()):
        effects = list(action.effects)
        for j, e in enumerate(effects):
            if e[0] not in ("add", "del"):
                continue
            flipped = ("del" if e[0] == "add" else "add", e[1], e[2])
            changed = _with_action(domain, name, effects=(*effects[:j], flipped, *effects[j + 1:]))
            if not validate(Task(changed, problem), steps).valid:
                places.append((name, j, e, changed))
    if not places:
        return None
    name, j, e, changed = rng.choice(places)
    was, now = ("an add", "a delete") if e[0] == "add" else ("a delete", "an add")
    return changed, problem, Fault("effect-swapped", f"{_words((e[1], e[2]))} of {name}, {was} "
                                                     f"effect, written as {now}", "plan")


SEEDERS = {"init-dropped": init_dropped, "goal-wrong": goal_wrong, "type-wrong": type_wrong,
           "precondition-dropped": precondition_dropped, "effect-swapped": effect_swapped}


def seed(kind: str, domain: Domain, problem: Problem, plan: list[str] | None,
         rng: random.Random) -> Seeded | None:
    """The files with one fault of `kind` placed (see the module's docstring), or None
    where the task offers no such place. `plan` is the hidden task's optimal plan (None on
    an unsolvable task)."""
    return SEEDERS[kind](domain, problem, plan, rng)


def _fenced(*texts: str) -> str:
    return "\n".join(f"```pddl\n{t.strip()}\n```" for t in texts)


def rate_key(kind: str) -> str:
    """A kind's key among a model entry's `faults` (`init-dropped` -> `init_dropped`)."""
    return kind.replace("-", "_")


def written(meta: dict) -> tuple[dict[str, str], Fault | None]:
    """The files a flawed or responsive formalizer writes first (`meta["method"]`: the
    problem, or the domain and the problem; kind -> text) and the fault placed in them.

    Kinds are drawn in the order of KINDS, each at its rate in `meta["faults"]`, seeded by
    the task and the sample; the first drawn that the task offers a place for is placed
    and the draw stops: at most one fault an episode, so a fault the judge finds is found
    for its own kind, and two faults never cancel out. Domain kinds only where the model
    writes the domain. This is the expected count's source, computed from the hidden
    files alone, apart from the judge (`formalize.run` records it in `fault_seeded`)."""
    from planaudit.formal import write
    from planaudit.formal.load import load_task

    folder = Path(meta["task_dir"])
    kinds = ("domain", "problem") if meta.get("method") == "domain-and-problem" else ("problem",)
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    truth = json.loads((folder / "truth.json").read_text())
    rng = random.Random(draw_key(meta))
    rates = meta.get("faults") or {}
    fault = None
    for kind in KINDS:
        if kind in DOMAIN_KINDS and "domain" not in kinds:
            continue
        if rng.random() < float(rates.get(rate_key(kind), 0.0)):
            placed = seed(kind, task.domain, task.problem, truth.get("plan"), rng)
            if placed is not None:
                domain, problem, fault = placed
                files = {"domain": write.domain(domain), "problem": write.problem(problem)}
                return {k: files[k] for k in kinds}, fault
    return {k: (folder / f"{k}.pddl").read_text() for k in kinds}, fault


def repaired(meta: dict) -> bool:
    """Whether the responsive formalizer writes its files again without the fault in this
    round (`meta["round"]` >= 1: it was told what the user's tools said), at its
    `responses.repair` rate, one seeded draw per round."""
    rate = float((meta.get("responses") or {}).get("repair", 0.0))
    rng = random.Random(f"{draw_key(meta)}:repair:{meta.get('round', 0)}")
    return rng.random() < rate


def reply(variant: str, meta: dict) -> str:
    """A reference formalizer's answer to a `formalize` call: the files its method asks
    for in fenced blocks. The oracle writes the hidden files; the flawed formalizer the
    files of `written`, in every round alike; the responsive one the same, except that
    in a round after feedback it repairs them (the hidden files) at its `repair` rate,
    and once repaired stays so."""
    folder = Path(meta["task_dir"])
    kinds = ("domain", "problem") if meta.get("method") == "domain-and-problem" else ("problem",)
    hidden = {k: (folder / f"{k}.pddl").read_text() for k in kinds}
    if variant == "oracle":
        return _fenced(*hidden.values())
    if variant not in ("flawed", "responsive"):
        raise ValueError(f"no reference formalizer named {variant!r} (oracle, flawed, responsive)")
    if variant == "responsive" and any(repaired({**meta, "round": r})
                                       for r in range(1, int(meta.get("round", 0)) + 1)):
        return _fenced(*hidden.values())
    files, _ = written(meta)
    return _fenced(*files.values())
