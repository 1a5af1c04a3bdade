"""One grounded world per config: states as atom bitsets over every object the
config can name, so that every instance, every stated initial state and every
goal of a replay share one task and one operator cache (ground once).

The semantics come from `formal/` (its `Task` grounds and applies operators);
this module only interns PlanBench's atoms and runs step lists. Where a
diagnosis is wanted, `validate_steps` builds a task with the given initial state
and goal and asks `formal.validate`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from planaudit.formal import GroundingError, Task, validate
from planaudit.formal.validate import Verdict as FormalVerdict
from planaudit.planbench.material import Atom, Config, MaterialError

Step = tuple[str, tuple[str, ...]]


def goal_atoms(task: Task) -> list[Atom]:
    """The atoms of a conjunctive goal (PlanBench's goals are conjunctions of atoms)."""
    out: list[Atom] = []

    def walk(f: tuple) -> None:
        if f[0] == "and":
            for g in f[1]:
                walk(g)
        elif f[0] == "atom":
            out.append((f[1], tuple(f[2])))
        else:
            raise MaterialError(f"{task.problem.source}: goal is not a conjunction of atoms")

    walk(task.problem.goal)
    return out


@dataclass
class Run:
    """What happened to a step list: the state reached, the first failing step."""

    bits: int
    failed_at: int | None  # 1-based step that could not run, None if all ran
    kind: str = ""  # "precondition" or a grounding failure kind


class World:
    """A config's grounded world (see the module docstring)."""

    def __init__(self, cfg: Config, task: Task):
        self.cfg = cfg
        self.task = task
        self._plans: dict[tuple[frozenset, frozenset], list[Step] | None] = {}

    def bits(self, atoms) -> int:
        b = 0
        atom = self.task.atom
        for pred, args in atoms:
            b |= 1 << atom(pred, tuple(args))
        return b

    def atoms(self, bits: int) -> list[Atom]:
        out = []
        while bits:
            low = bits & -bits
            out.append(self.task.atoms[low.bit_length() - 1])
            bits ^= low
        return out

    def run(self, bits: int, steps: list[Step]) -> Run:
        op_of = self.task.operator
        for i, (action, args) in enumerate(steps, 1):
            try:
                op = op_of(action, tuple(args))
            except GroundingError as e:
                return Run(bits, i, e.kind)
            state = (bits, ())
            if not op.applicable(state):
                return Run(bits, i, "precondition")
            bits = op.apply(state)[0]
        return Run(bits, None)

    def reaches(self, bits: int, steps: list[Step], goal: int) -> bool:
        r = self.run(bits, steps)
        return r.failed_at is None and r.bits & goal == goal

    def task_for(self, init: list[Atom], goal: list[Atom]) -> Task:
        """A task over this world's objects with the given initial state and goal."""
        problem = replace(self.task.problem, init_atoms=list(init), init_values={},
                          goal=("and", tuple(("atom", p, tuple(a)) for p, a in goal)))
        return Task(self.task.domain, problem)

    def validate_steps(self, init: list[Atom], goal: list[Atom], steps: list[Step]) -> FormalVerdict:
        return validate(self.task_for(init, goal), list(steps))

    def optimal_length(self, init: list[Atom], goal: list[Atom]) -> int | None:
        plan = self.optimal_plan(init, goal)
        return None if plan is None else len(plan)

    def optimal_plan(self, init: list[Atom], goal: list[Atom]) -> list[Step] | None:
        """An optimal plan, searched once per (initial state, goal): breadth-first on
        small tasks (up to 6 objects in the initial state), A* with LM-cut on larger
        ones (the generalisation family's 10-block towers) or past 50,000 states."""
        key = (frozenset(init), frozenset(goal))
        if key not in self._plans:
            self._plans[key] = self._search(sorted(init), sorted(goal))
        plan = self._plans[key]
        return None if plan is None else list(plan)

    def _search(self, init: list[Atom], goal: list[Atom]) -> list[Step] | None:
        from planaudit.formal.heuristics import lmcut
        from planaudit.formal.search import astar, breadth_first

        task = self.task_for(init, goal)
        objects = {a for _, args in init for a in args}
        result = None
        if len(objects) <= 6:
            result = breadth_first(task, max_states=50_000)
        if result is None or result.status == "limit":
            result = astar(task, lmcut(task), "astar-lmcut")
        if result.plan is None:
            return None
        return [(op.action, op.args) for op in result.plan]


@lru_cache(maxsize=256)
def world_of(cfg: Config, instance: int | str | None = None, generalized: bool = False) -> World:
    """The config's world: every encoded object when the config names objects one by
    one (Blocksworld and its renamings), else the instance's own objects."""
    enc = cfg.objects
    ids = cfg.instance_ids(generalized) or cfg.instance_ids()
    if not ids:
        raise MaterialError(f"{cfg.path}: no instance files under {cfg.instances_dir}")
    if all("{}" not in v for v in enc.values()):
        base = cfg.task(ids[0])
        kind = next(iter(base.problem.objects.values()), ("object",))
        problem = replace(base.problem, objects={o: kind for o in enc}, init_atoms=[],
                          init_values={}, goal=("and", ()))
        return World(cfg, Task(base.domain, problem))
    if instance is None:
        raise MaterialError(f"{cfg.path}: field 'encoded_objects' names objects by template: "
                            "a world needs an instance's own objects")
    return World(cfg, cfg.task(instance, generalized))
