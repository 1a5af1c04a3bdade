"""Ground truth for one task, proven by two independent methods where both finish.

The project's own search (breadth-first up to a state limit, then A* with
LM-cut) and an external optimal planner (Fast Downward, or ENHSP for numeric
tasks) each decide solvability and the optimal figure; the record says which
finished and whether they agree. An external plan is re-validated by our
validator, so a semantic mismatch between the two shows up as disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass

from planaudit.formal.certificate import make as make_certificate
from planaudit.formal.external import ExternalResult, solve_external
from planaudit.formal.ground import COST_FUNCTION
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


@dataclass
class Limits:
    bfs_states: int = 2_000_000
    astar_seconds: float = 300.0
    external_seconds: float = 600.0
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
    return more


def _summary(status: str, length, cost, states, seconds, method: str, detail: str = "") -> dict:
    d = {"method": method, "status": status, "length": length, "cost": cost,
         "states": states, "seconds": round(seconds, 3)}
    if detail:
        d["detail"] = detail
    return d


def solve(domain_path: str, problem_path: str, limits: Limits | None = None,
          progress: Progress = quiet) -> dict:
    """The truth record of one task (see `planaudit solve --json`)."""
    limits = limits or Limits()
    task = load_task(domain_path, problem_path)
    unit = unit_cost(task, task.all_operators())
    own = _own(task, limits, unit, progress)
    progress(f"own search: {own.method} {own.status} in {own.seconds:.1f} s")
    methods = {"own": _summary(own.status, own.length, own.cost, own.generated, own.seconds,
                               own.method)}
    ext: ExternalResult | None = None
    if limits.external:
        engine = external_engine(task)
        progress(f"{engine}: running")
        ext = solve_external(domain_path, problem_path, engine, limits.external_seconds)
        progress(f"{engine}: {ext.status} in {ext.seconds:.1f} s")
        ext_cost = None
        detail = ext.detail
        if ext.plan is not None:
            verdict = validate(load_task(domain_path, problem_path),
                               parse_plan("\n".join(ext.plan)))
            ext_cost = verdict.cost
            if not verdict.valid:
                ext = ExternalResult(ext.engine, "error", ext.plan, ext.expanded, ext.seconds,
                                     f"its plan is invalid here: {verdict.failure}")
                detail = ext.detail
        methods[engine] = _summary(ext.status, ext.length, ext_cost, ext.expanded,
                                   ext.seconds, engine, detail)

    finished = {k: m for k, m in methods.items() if m["status"] in ("solved", "unsolvable")}
    verdicts = {m["status"] for m in finished.values()}
    figure = "length" if unit else "cost"
    figures = {m[figure] for m in finished.values() if m["status"] == "solved"}
    agree = len(verdicts) <= 1 and len(figures) <= 1
    solvable = None if not finished or len(verdicts) > 1 else verdicts == {"solved"}

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
        "certificate": None,
    }
    if solvable:
        if own.status == "solved":
            plan = [op.name for op in own.plan]
        else:
            plan = ext.plan if ext is not None else None
        record["plan"] = plan
        costs = [m["cost"] for m in finished.values()]
        lengths = [m["length"] for m in finished.values()]
        record["optimal_cost"] = min(costs) if costs else None
        if unit:
            record["optimal_length"] = min(lengths) if lengths else None
        else:  # costs differ from 1: the shortest plan needs a search of its own
            shortest = breadth_first(task, limits.bfs_states)
            if shortest.status == "solved":
                record["optimal_length"] = shortest.length
    if solvable is False:
        record["certificate_data"] = make_certificate(task, domain_path, problem_path,
                                                      own.closed)
        if record["certificate_data"] is not None:
            record["certificate"] = record["certificate_data"]["kind"]
    return record
