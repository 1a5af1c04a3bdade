"""One prepared suite domain told as a state in sentences: its prepared tasks, their
proven plans, and the states, goals and sentences built from them. Shared material below
the regimes: the curriculum's test cases and ACPBench's questions are both built from it
(`planaudit.curriculum.world` re-exports it), and neither regime imports the other.

It reads what the suite stage wrote (`results/suite/<domain>/<task>/`: the hidden model,
obfuscated where the config says so, `truth.json` with a plan proven optimal by two
methods, `brief.json` naming its `nl.yaml`), so the prompts show only the names a planner
may see. Every state, applicability and optimality fact comes from `formal/`: simulation
by the ground operators, search for plans from states the suite never proved (after a
prefix and an unexpected event).

Facts are shown and read as the sentences of the domain's `nl.yaml`
(`"block a is on block b"`; a numeric value as `"the load of server s1 is 2"`).
`prepared_domain` prepares and proves a domain's tasks where the suite rules have not
(the `show` commands on a fresh clone).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from planaudit.formal import number
from planaudit.formal.ground import COST_FUNCTION, Task
from planaudit.formal.load import domain_at, load_task
from planaudit.formal.plan import parse_plan
from planaudit.formal.search import astar, breadth_first
from planaudit.formal.syntax import Problem
from planaudit.formal.task import State, atom_indices
from planaudit.suite.brief import Renderer, Templates, load_templates


class WorldError(ValueError):
    """A domain or instance the generators cannot use; the message names it."""


def _num(v) -> str:
    return number.render(v)  # exact: 0.3, or 1/3 where no decimal is


@dataclass
class Instance:
    """One prepared, solvable task: the hidden model and its proven optimal plan."""

    domain: str
    id: str
    folder: Path
    truth: dict

    @cached_property
    def task(self) -> Task:
        return load_task(self.folder / "domain.pddl", self.folder / "problem.pddl")

    @property
    def plan(self) -> list[str]:
        return list(self.truth["plan"])

    @property
    def steps(self):
        return parse_plan("\n".join(self.plan))


class World:
    """The sentences and states of one domain (shared by all its instances)."""

    def __init__(self, domain_file: Path, templates: Templates):
        self.domain_file = Path(domain_file)
        self.domain = domain_at(domain_file)
        self.templates = templates
        self.renderer = Renderer(templates)
        self.dynamic_predicates = self._changed_predicates()
        self.dynamic_functions = self._changed_functions()

    def _walk_effects(self, effs, found_atoms: set, found_fns: set) -> None:
        for e in effs:
            if e[0] in ("add", "del"):
                found_atoms.add(e[1])
            elif e[0] == "assign":
                found_fns.add(e[2][0])
            elif e[0] == "when":
                self._walk_effects(e[2], found_atoms, found_fns)
            elif e[0] == "forall":
                self._walk_effects(e[2], found_atoms, found_fns)

    def _changed_predicates(self) -> set[str]:
        atoms: set[str] = set()
        for act in self.domain.actions.values():
            self._walk_effects(act.effects, atoms, set())
        return atoms

    def _changed_functions(self) -> set[str]:
        fns: set[str] = set()
        for act in self.domain.actions.values():
            self._walk_effects(act.effects, set(), fns)
        fns.discard(COST_FUNCTION)
        return fns

    # -- sentences -------------------------------------------------------------------

    def atom_sentence(self, pred: str, args: tuple[str, ...]) -> str:
        return self.renderer.atom(pred, args)

    def value_sentence(self, fn: str, args: tuple[str, ...], v: float) -> str:
        return f"{self.renderer.function(fn, args)} is {_num(v)}"

    def state_sentences(self, task: Task, state: State, dynamic_only: bool = True) -> list[str]:
        """Every fact of `state` as a sentence (dynamic facts only by default), sorted."""
        out = []
        for i in atom_indices(state[0]):
            pred, args = task.atoms[i]
            if not dynamic_only or pred in self.dynamic_predicates:
                out.append(self.atom_sentence(pred, args))
        for i, v in enumerate(state[1]):
            if v is None:
                continue
            fn, args = task.fluents[i]
            if fn == COST_FUNCTION:
                continue
            if not dynamic_only or fn in self.dynamic_functions:
                out.append(self.value_sentence(fn, args, v))
        return sorted(out)

    def state_kinds(self) -> list[str]:
        """The kinds of fact a state answer lists: one pattern per dynamic predicate and
        numeric function, with X, Y, Z for its arguments."""
        letters = "XYZUVW"
        out = []
        for pred in sorted(self.dynamic_predicates):
            n = len(self.domain.predicates[pred])
            out.append(self.atom_sentence(pred, tuple(letters[:n])))
        for fn in sorted(self.dynamic_functions):
            n = len(self.domain.functions[fn])
            out.append(self.value_sentence(fn, tuple(letters[:n]), 0).removesuffix(" 0") + " N")
        return out

    # -- states and problems ---------------------------------------------------------

    def state_problem(self, task: Task, state: State, goal: tuple | None = None) -> Problem:
        """The task's problem with `state` as its initial state (and `goal`, if given)."""
        atoms = [task.atoms[i] for i in atom_indices(state[0])]
        values = {k: v for k, v in task.problem.init_values.items() if k[0] == COST_FUNCTION}
        for i, v in enumerate(state[1]):
            if v is not None and task.fluents[i][0] != COST_FUNCTION:
                values[task.fluents[i]] = v
        return replace(task.problem, init_atoms=atoms, init_values=values,
                       goal=task.problem.goal if goal is None else goal)

    def state_goal(self, task: Task, state: State) -> tuple:
        """A goal that says `state` holds: its dynamic atoms, and its dynamic numeric values."""
        parts = []
        for i in atom_indices(state[0]):
            pred, args = task.atoms[i]
            if pred in self.dynamic_predicates:
                parts.append(("atom", pred, args))
        for i, v in enumerate(state[1]):
            if v is not None and task.fluents[i][0] in self.dynamic_functions:
                fn, args = task.fluents[i]
                parts.append(("cmp", "=", ("fn", fn, args), ("num", v)))  # exact: a float would miss 1/3
        return ("and", tuple(parts))


def run(task: Task, steps, state: State | None = None) -> State:
    """The state after `steps` (each must apply: the generators only run proven plans)."""
    state = task.init if state is None else state
    for step in steps:
        op = task.operator(*step)
        if not op.applicable(state):
            raise WorldError(f"{op.name} does not apply where the generator ran it")
        state = op.apply(state)
    return state


def optimal_plan(task: Task, max_states: int = 300_000, seconds: float = 60.0) -> list[str] | None:
    """An optimal plan of `task` by the project's own search (breadth-first, then A* with
    LM-cut past the state limit, as `formal.truth` does); None when there is none."""
    from planaudit.formal.heuristics import lmcut
    from planaudit.formal.search import unit_cost

    if unit_cost(task, task.all_operators()):
        res = breadth_first(task, max_states)
        if res.status == "limit":
            res = astar(task, lmcut(task), "astar-lmcut", max_seconds=seconds)
    else:
        res = astar(task, lmcut(task), "astar-lmcut", max_seconds=seconds)
    if res.status == "limit":
        raise WorldError(f"{task.problem.name}: no optimal plan within the search limits")
    return None if res.plan is None else [op.name for op in res.plan]


def load_instances(suite_dir: Path, domain: str) -> list[Instance]:
    """The solvable prepared tasks of one domain, in id order."""
    base = Path(suite_dir) / domain
    folders = sorted(p.parent for p in base.glob("*/truth.json") if "@" not in p.parent.name)
    if not folders:
        raise WorldError(f"{base}: no prepared tasks (run the suite rules)")
    out = []
    for folder in folders:
        truth = json.loads((folder / "truth.json").read_text())
        if truth.get("solvable") and truth.get("plan"):
            out.append(Instance(domain, folder.name, folder, truth))
    if not out:
        raise WorldError(f"{base}: no solvable task to build test cases from")
    return out


def load_world(instance: Instance) -> World:
    brief = json.loads((instance.folder / "brief.json").read_text())
    source = brief.get("source", "")
    if not source.endswith("nl.yaml") or not Path(source).is_file():
        raise WorldError(f"{instance.folder}: its brief names no nl.yaml ({source!r}): "
                              "curriculum prompts are rendered from a domain's templates")
    return World(instance.folder / "domain.pddl", load_templates(source))


def prepared_domain(config: dict, domain: str, results: Path) -> Path:
    """The prepared suite folder, every task of `domain` prepared and proven (as the suite
    rules would) where it is not yet: examples come from the domain's other tasks."""
    import sys

    from planaudit.suite.catalog import load_suite
    from planaudit.suite.prepare import prepare_task

    suite = config["suite"]
    for entry in load_suite(dict(suite, domains=[domain])):
        if not (results / "suite" / domain / entry.id / "truth.json").is_file():
            print(f"preparing and proving {domain}/{entry.id} ...", file=sys.stderr)
            prepare_task(config, domain, entry.id, results)
    return results / "suite"
