"""Ground truth for one task, proven by two independent methods where both finish.

The project's own search (breadth-first up to a state limit, then A* with
LM-cut) and an external optimal planner (Fast Downward, or ENHSP for numeric
tasks) each decide solvability and the optimal figure. Every plan either finds
is judged by two validators, ours and unified-planning's, so a semantic
mismatch between the methods cannot hide: each one is a disagreement in the
record, saying which side the third voice finds wrong, and a task with any
disagreement has `agree: false` (the suite's truth rule fails on it).

An unsolvability claim is never taken on our word alone when the external
planner runs: it stands only if the planner also reports unsolvable or finds
nothing in its time; a plan it finds that unified-planning accepts makes the
task solvable, whatever our search and certificate said.

An unsolvable task gets a certificate (`certificate.py`) from our search's
exhausted state set: breadth-first search's, or past its limit A*'s expanded
states with the dead ends LM-cut pruned. One holds at most `bfs_states` states;
where none can be made, `certificate_missing` in the record says why, and the
label audit decides whether the task may stand on its two proofs alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from planaudit.formal import number
from planaudit.formal.certificate import make as make_certificate
from planaudit.formal.external import (
    ExternalResult,
    UpVerdict,
    read_problem,
    solve_external,
    validate_up,
)
from planaudit.formal.ground import COST_FUNCTION, Task
from planaudit.formal.heuristics import lmcut
from planaudit.formal.load import load_task
from planaudit.formal.plan import parse_plan
from planaudit.formal.search import (
    Progress,
    SearchResult,
    astar,
    breadth_first,
    quiet,
    unit_cost,
)
from planaudit.formal.validate import validate

OURS, UP = "planaudit", "unified-planning"
FINISHED = ("solved", "unsolvable")


@dataclass
class Limits:
    bfs_states: int = 2_000_000
    astar_seconds: float = 300.0  # CPU time (`search.astar`)
    external_seconds: float = 600.0  # the planner's wall-clock timeout
    external: bool = True


def external_engine(task) -> str:
    numeric = [f for f in task.domain.functions if f != COST_FUNCTION]
    return "enhsp-opt" if numeric else "fast-downward-opt"


def _own(task, limits: Limits, unit: bool, progress: Progress) -> SearchResult:
    """Breadth-first on unit-cost tasks (A* past the limit); A* on cost otherwise."""
    if not unit:
        return astar(task, lmcut(task), "astar-lmcut", max_seconds=limits.astar_seconds,
                     progress=progress)
    res = breadth_first(task, limits.bfs_states, progress)
    if res.status != "limit":
        return res
    progress(f"breadth-first stopped at {res.generated} states; A* with LM-cut takes over")
    more = astar(task, lmcut(task), "astar-lmcut", max_seconds=limits.astar_seconds,
                 progress=progress)
    more.expanded += res.expanded
    more.seconds += res.seconds  # the method's time is both searches'
    return more


def _summary(status: str, length, cost, states, seconds, method: str, detail: str = "") -> dict:
    d = {"method": method, "status": status, "length": length, "cost": cost,
         "states": states, "seconds": round(seconds, 3)}
    if detail:
        d["detail"] = detail
    return d


def _check(task: Task, problem, plan: list[str]) -> dict:
    """Both validators' verdicts on one plan (unified-planning's only if it read the task)."""
    ours = validate(task, parse_plan("\n".join(plan)))
    check = {OURS: {"valid": ours.valid, "cost": ours.cost}}
    if not ours.valid:
        check[OURS]["failure"] = ours.failure.detail if ours.failure else ""
    up = validate_up(problem, plan) if problem is not None else UpVerdict(
        None, detail="unified-planning could not read the task")
    check[UP] = {"valid": up.valid, "cost": up.cost}
    if up.detail:
        check[UP]["detail"] = up.detail
    return check


def _proves_a_plan(check: dict | None) -> bool:
    """A plan proves the task solvable when unified-planning accepts it, or, where it
    could not judge, when ours does."""
    if check is None:
        return False
    up = check.get(UP, {"valid": None})["valid"]
    return up if up is not None else check[OURS]["valid"]


def _plan_disagreements(name: str, check: dict, own: bool) -> list[dict]:
    """What the validators' verdicts on `name`'s plan say against the method or each other."""
    ours, up = check[OURS], check.get(UP, {"valid": None, "cost": None})
    out = []
    if up["valid"] is None:
        if not ours["valid"]:  # no third voice: the planner against our validator
            out.append({"kind": "plan-rejected", "at_fault": "unknown",
                        "message": f"{name}'s plan is rejected by planaudit ({ours.get('failure')}); "
                                   f"unified-planning could not judge it ({up.get('detail', '')})"})
        return out
    if ours["valid"] and not up["valid"]:
        # our search and validator share the semantics: for our own plan the two sides are
        # planaudit and unified-planning; a planner's plan has the planner on our side
        fault = "unknown" if own else UP
        out.append({"kind": "plan-rejected", "at_fault": fault,
                    "message": f"{name}'s plan is valid for planaudit but unified-planning rejects "
                               f"it ({up.get('detail', '')})"})
    elif not ours["valid"] and up["valid"]:
        out.append({"kind": "plan-rejected", "at_fault": OURS,
                    "message": f"{name}'s plan is rejected by planaudit ({ours.get('failure')}) "
                               f"but unified-planning accepts it"})
    elif not ours["valid"] and not up["valid"]:
        out.append({"kind": "plan-rejected", "at_fault": name,
                    "message": f"{name}'s plan is invalid for planaudit ({ours.get('failure')}) "
                               f"and for unified-planning ({up.get('detail', '')})"})
    elif (ours["cost"] is not None and up["cost"] is not None
          and number.exact(ours["cost"]) != number.exact(up["cost"])):  # both exact
        out.append({"kind": "plan-cost", "at_fault": "unknown",
                    "message": f"{name}'s plan costs {number.render(ours['cost'])} for "
                               f"planaudit and {number.render(up['cost'])} for "
                               "unified-planning"})
    return out


def _verdict_disagreements(methods: dict, checks: dict, figure: str) -> list[dict]:
    """Methods that finished with different answers: solvability, then the optimum."""
    finished = {k: m for k, m in methods.items() if m["status"] in FINISHED}
    out = []
    solved = [k for k, m in finished.items() if m["status"] == "solved"]
    refuted = [k for k, m in finished.items() if m["status"] == "unsolvable"]
    for claim in refuted:
        for k in solved:
            proven = _proves_a_plan(checks.get(k))
            out.append({
                "kind": "solvability", "at_fault": claim if proven else "unknown",
                "message": f"{claim} claims unsolvable, {k} finds a plan"
                           + (" that unified-planning accepts: the task is solvable" if proven
                              else " that is not proven valid")})
    figures = {k: methods[k][figure] for k in solved if _proves_a_plan(checks.get(k))}
    if len(set(figures.values())) > 1:
        best = min(figures.values())
        worse = [k for k, v in figures.items() if v != best]
        out.append({"kind": "optimum", "at_fault": "+".join(worse),
                    "message": f"optimal {figure} differs: "
                               + ", ".join(f"{k} {number.render(v)}" for k, v in figures.items())})
    return out


def _witness(engine: str, domain_path: str, problem_path: str, limits: Limits,
             progress: Progress) -> tuple[ExternalResult, object | None]:
    """The external planner's result, and the task as unified-planning read it (None
    if it could not: then neither the planner nor its validator can speak)."""
    try:
        problem = read_problem(domain_path, problem_path)
    except Exception as e:  # unified-planning raises many kinds on input it rejects
        return ExternalResult(engine, "error", detail=f"unified-planning could not read: {e}"), None
    progress(f"{engine}: running")
    return solve_external(domain_path, problem_path, engine, limits.external_seconds,
                          problem=problem), problem


def _solvable(plans: dict, checks: dict, finished: dict) -> bool | None:
    """Solvable when a plan is proven (`_proves_a_plan`); unsolvable when some method
    says so and none claims a plan; otherwise undecided."""
    if any(_proves_a_plan(checks.get(k)) for k in plans):
        return True
    if any(m["status"] == "solved" for m in finished.values()):
        return None  # a plan is claimed but neither validator confirms it
    return False if finished else None


def solve(domain_path: str, problem_path: str, limits: Limits | None = None,
          progress: Progress = quiet) -> dict:
    """The truth record of one task (see `planaudit solve --json`)."""
    limits = limits or Limits()
    task = load_task(domain_path, problem_path)
    unit = unit_cost(task, task.all_operators())
    figure = "length" if unit else "cost"
    own = _own(task, limits, unit, progress)
    progress(f"own search: {own.method} {own.status} in {own.seconds:.1f} s")
    own_plan = None if own.plan is None else [op.name for op in own.plan]
    methods = {"own": _summary(own.status, own.length, own.cost, own.generated, own.seconds,
                               own.method)}
    plans: dict[str, list[str]] = {} if own_plan is None else {"own": own_plan}
    checks: dict[str, dict] = {}
    disagreements: list[dict] = []
    if limits.external:
        engine = external_engine(task)
        ext, problem = _witness(engine, domain_path, problem_path, limits, progress)
        progress(f"{engine}: {ext.status} in {ext.seconds:.1f} s")
        methods[engine] = _summary(ext.status, ext.length, None, ext.expanded, ext.seconds,
                                   engine, ext.detail)
        if ext.plan is not None:
            plans[engine] = ext.plan
        for name, plan in plans.items():
            checks[name] = _check(task, problem, plan)
            methods[name]["plan_check"] = checks[name]
            disagreements += _plan_disagreements(name, checks[name], own=name == "own")
        if ext.plan is not None:
            ours_cost, up_cost = checks[engine][OURS]["cost"], checks[engine][UP]["cost"]
            methods[engine]["cost"] = ours_cost if ours_cost is not None else up_cost
    else:
        for name in plans:  # ours alone: our search's plans hold by our semantics
            checks[name] = {OURS: {"valid": True, "cost": own.cost}}
    disagreements += _verdict_disagreements(methods, checks, figure)

    finished = {k: m for k, m in methods.items() if m["status"] in FINISHED}
    solvable = _solvable(plans, checks, finished)
    agree = not disagreements

    record: dict = {
        "solvable": solvable,
        "optimal_length": None,
        "optimal_cost": None,
        "plan": None,
        "states": own.generated,
        "unit_cost": unit,
        "methods": methods,
        "proven_by": sorted(finished) if agree else [],
        "agree": agree,
        "disagreements": disagreements,
        "certificate": None,
    }
    if solvable:  # the best proven plan; ours on a tie
        proven = [k for k in plans if _proves_a_plan(checks.get(k))]
        best = min(proven, key=lambda k: (methods[k][figure] is None, methods[k][figure] or 0,
                                          k != "own"))
        record["plan"] = plans[best]
        record["optimal_cost"] = methods[best]["cost"]
        if unit:
            record["optimal_length"] = methods[best]["length"]
        else:  # costs differ from 1: the shortest plan needs a search of its own
            shortest = breadth_first(task, limits.bfs_states)
            if shortest.status == "solved":
                record["optimal_length"] = shortest.length
    if solvable is False:
        record["certificate_data"] = make_certificate(task, domain_path, problem_path,
                                                      own.closed, own.dead_ends,
                                                      limits.bfs_states)
        if record["certificate_data"] is not None:
            record["certificate"] = record["certificate_data"]["kind"]
        else:
            record["certificate_missing"] = _why_no_certificate(own, limits)
    # the exact costs as JSON numbers, where exactness ends (the certificate, which can
    # hold millions of states, is written exactly already: no need to walk it)
    record["methods"] = _json_numbers(record["methods"])
    record["optimal_cost"] = number.to_json(record["optimal_cost"])
    return record


def _json_numbers(x):
    """`x` with every rational as a JSON number (`number.to_json`)."""
    if isinstance(x, dict):
        return {k: _json_numbers(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_numbers(v) for v in x]
    if isinstance(x, number.Q | Fraction):
        return number.to_json(x)
    return x


def _why_no_certificate(own: SearchResult, limits: Limits) -> str:
    """Why an unsolvable task has no certificate, in the words of the limit that stopped it."""
    if own.closed is None:
        return (f"own search ({own.method}) did not exhaust the state space "
                f"({own.status} after {own.generated} states)")
    if len(own.closed) > limits.bfs_states:
        return (f"{own.method} expanded {len(own.closed)} states, more than a certificate "
                f"holds (truth.bfs_states = {limits.bfs_states})")
    return (f"a dead end that {own.method} pruned has no relaxed-reachability proof "
            f"({len(own.dead_ends or ())} dead ends)")
