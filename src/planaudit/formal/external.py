"""Independent witnesses: Fast Downward and ENHSP through unified-planning, and
unified-planning's own plan validator.

Fast Downward's A* with LM-cut and strong stubborn sets (the `fast-downward-opt`
engine, `OPTIMAL_SEARCH`) proves optimal cost and unsolvability for classical
tasks; ENHSP's optimal search (`enhsp-opt`) does so for numeric ones.
unified-planning reads the PDDL itself, so a witness shares neither our parser
nor our grounding; its `SequentialPlanValidator` gives a second verdict on every
plan either side finds, so that when our validator and a planner disagree, a
third voice says which of them is wrong.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
from dataclasses import dataclass

from planaudit.formal import number

# up-fast-downward's optimal engine searches `astar(lmcut())`. Atom-centric strong stubborn
# sets (Röger, Wehrle, Helmert and others 2020) prune interleavings of independent actions
# and keep A*'s optimality and completeness, so an optimum and an unsolvability proof mean
# what they meant; on logistics p06-p08 a call takes 3.0/5.1/4.1 s instead of 3.6/9.7/17.6 s
# (benchmarks/astar_lmcut.py prints both). Like LM-cut they take neither conditional
# effects nor axioms: the tasks the engine takes are the same. No spaces: the engine
# splits the string on them.
OPTIMAL_SEARCH = "astar(lmcut(),pruning=atom_centric_stubborn_sets())"
_EXPANDED = re.compile(r"expanded\s+(\d+)\s+state|expanded nodes\s*:\s*(\d+)", re.I)
_SEARCH_TIME = re.compile(r"search time:\s*([\d.]+)s", re.I)


@dataclass
class ExternalResult:
    engine: str
    status: str  # "solved", "unsolvable", "limit" or "error"
    plan: list[str] | None = None  # "(action arg ...)", lower-cased
    expanded: int | None = None
    seconds: float = 0.0
    detail: str = ""
    search_seconds: float | None = None  # the planner's own search time, where it says

    @property
    def length(self) -> int | None:
        return None if self.plan is None else len(self.plan)


def _fd_optimal(search: str):
    """up-fast-downward's optimal engine (its artificial goal action, its guarantee that a
    plan is optimal and a proof unsolvable) with `search` for its `astar(lmcut())`."""
    from up_fast_downward import FastDownwardOptimalPDDLPlanner

    planner = FastDownwardOptimalPDDLPlanner()
    planner._fd_search_config = search  # the one setting its constructor fixes
    return planner


def _expanded(logs) -> int | None:
    found = None
    for msg in logs or []:
        for m in _EXPANDED.finditer(msg.message):
            found = int(m.group(1) or m.group(2))
    return found


def _search_seconds(logs) -> float | None:
    found = None
    for msg in logs or []:
        for m in _SEARCH_TIME.finditer(msg.message):
            found = float(m.group(1))
    return found


@dataclass
class UpVerdict:
    """unified-planning's verdict on one plan; `valid` is None where it could not judge."""

    valid: bool | None
    cost: float | None = None  # the metric's value, where the problem has a metric
    detail: str = ""


def read_problem(domain_path: str, problem_path: str):
    """The task as unified-planning reads it; raises whatever it raises on input it rejects."""
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    get_environment().credits_stream = None
    return PDDLReader().parse_problem(domain_path, problem_path)


def validate_up(problem, plan: list[str]) -> UpVerdict:
    """unified-planning's `SequentialPlanValidator` on plan lines "(action arg ...)"."""
    from unified_planning.engines import ValidationResultStatus as V
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator

    try:
        up_plan = PDDLReader().parse_plan_string(problem, "\n".join(plan))
    except Exception as e:  # an action or object it does not know: it cannot judge
        return UpVerdict(None, detail=f"unified-planning could not read the plan: {e}")
    try:
        with PlanValidator(name="sequential_plan_validator") as validator:
            result = validator.validate(problem, up_plan)
    except Exception as e:  # a feature its validator does not support
        return UpVerdict(None, detail=f"unified-planning could not validate: {type(e).__name__}: {e}")
    cost = None
    for v in (result.metric_evaluations or {}).values():
        cost = number.exact(v)  # unified-planning's metric is a rational: compared exactly
    if result.status == V.VALID:
        return UpVerdict(True, cost)
    if result.status == V.INVALID:
        where = f" at {result.inapplicable_action}" if result.inapplicable_action else ""
        reason = result.reason.name.lower().replace("_", " ") if result.reason else "invalid"
        return UpVerdict(False, cost, f"{reason}{where}")
    return UpVerdict(None, detail="unified-planning's validator answered unknown")


def solve_external(domain_path: str, problem_path: str, engine: str,
                   timeout: float = 600.0, search: str | None = None,
                   problem=None) -> ExternalResult:
    """Run one UP engine optimally; `search` overrides Fast Downward's optimal search
    string (`OPTIMAL_SEARCH`). `problem` is the task as `read_problem` gave it, if read
    already."""
    from unified_planning.engines import PlanGenerationResultStatus as S
    from unified_planning.shortcuts import OneshotPlanner

    start = time.perf_counter()
    if problem is None:
        try:
            problem = read_problem(domain_path, problem_path)
        except Exception as e:  # unified-planning raises many kinds on input it rejects
            return ExternalResult(engine, "error", detail=f"unified-planning could not read: {e}")
    try:
        # Fast Downward's driver writes its translation to output.sas in the working
        # directory: two truth jobs of one workflow would overwrite each other's (seen
        # here: a solvable task "proven" unsolvable). Each call gets a folder of its own.
        with tempfile.TemporaryDirectory(prefix="planaudit-") as scratch, \
                contextlib.chdir(scratch), (
                    _fd_optimal(search or OPTIMAL_SEARCH) if engine == "fast-downward-opt"
                    else OneshotPlanner(name=engine)) as planner:
            result = planner.solve(problem, timeout=timeout, output_stream=None)
    except Exception as e:
        return ExternalResult(engine, "error", seconds=time.perf_counter() - start,
                              detail=f"{type(e).__name__}: {e}")
    seconds = time.perf_counter() - start
    expanded = _expanded(result.log_messages)
    search_seconds = _search_seconds(result.log_messages)
    if result.status in (S.SOLVED_OPTIMALLY, S.SOLVED_SATISFICING) and result.plan is not None:
        plan = [
            "(" + " ".join([a.action.name, *(str(p) for p in a.actual_parameters)]).lower() + ")"
            for a in result.plan.actions
        ]
        return ExternalResult(engine, "solved", plan, expanded, seconds,
                              search_seconds=search_seconds)
    if result.status == S.UNSOLVABLE_PROVEN:
        return ExternalResult(engine, "unsolvable", None, expanded, seconds,
                              search_seconds=search_seconds)
    if result.status == S.TIMEOUT:
        return ExternalResult(engine, "limit", None, expanded, seconds, "timeout")
    if result.status == S.MEMOUT:
        return ExternalResult(engine, "limit", None, expanded, seconds, "out of memory")
    errors = [m.message.strip() for m in result.log_messages or []
              if m.level.name == "ERROR" and m.message.strip()]
    why = f": {errors[-1][-500:]}" if errors else ""
    return ExternalResult(engine, "error", None, expanded, seconds,
                          f"status {result.status.name}{why}")
