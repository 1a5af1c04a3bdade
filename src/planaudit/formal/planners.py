"""Classical planners as subjects: the answer a planner gives to a task, under a budget.

A reviewer's first question of an LLM-planning result is whether a planner would have done
as well for nothing. The model strings `planner/lama` (Fast Downward's lama-first alias,
satisficing, through up-fast-downward) and `planner/astar` (planaudit's own A* with LM-cut,
optimal) name an in-process provider of `llm/` (`llm/local.py`), so that a planner's episode
takes the path a model's takes: the offline regime's prompt (which it ignores: it reads the
hidden model itself, the task folder in the call's metadata), the cache, the transcript,
and the same judge of its plan. Its reply is the contract's: a fenced plan, `UNSOLVABLE`,
or a sentence saying why it has neither (past its budget, an error), which the judge reads
as no answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

PLANNERS = ("lama", "astar")
DEFAULT_SECONDS = 120.0  # one LLM call's default time-out at a provider (llm/client.py)


@dataclass(frozen=True)
class Answer:
    status: str  # solved, unsolvable, limit, error
    plan: list[str] | None
    seconds: float
    detail: str = ""

    def text(self, planner: str, budget: float) -> str:
        if self.status == "solved":
            return "```\n" + "\n".join(self.plan or []) + "\n```"
        if self.status == "unsolvable":
            return "UNSOLVABLE"
        why = self.detail or self.status
        return f"No plan: planner/{planner} stopped after {self.seconds:.1f} s of its " \
               f"{budget:g} s budget ({why})."


def lama(domain: Path, problem: Path, seconds: float) -> Answer:
    """Fast Downward's lama-first (up-fast-downward's satisficing engine, whose default
    alias it is), through the witnesses' own call (`external.solve_external`: its scratch
    folder, its reading of the plan). A search that exhausts the space is its proof of
    unsolvability."""
    from planaudit.formal.external import solve_external

    found = solve_external(str(domain), str(problem), "fast-downward", timeout=seconds)
    return Answer(found.status, found.plan, found.seconds, found.detail)


def astar(domain: Path, problem: Path, seconds: float) -> Answer:
    """planaudit's own A* with LM-cut (optimal; exhausting the space proves unsolvability),
    `seconds` of CPU time as `formal.search.astar` counts it."""
    from planaudit.formal.heuristics import lmcut
    from planaudit.formal.load import load_task
    from planaudit.formal.search import astar as search

    start = time.perf_counter()
    try:
        task = load_task(domain, problem)
        found = search(task, lmcut(task), "astar-lmcut", max_seconds=seconds)
    except Exception as e:  # a task outside what the search takes (numeric effects, say)
        return Answer("error", None, time.perf_counter() - start,
                      f"{type(e).__name__}: {' '.join(str(e).split())[:200]}")
    spent = time.perf_counter() - start
    if found.status == "solved":
        return Answer("solved", [op.name for op in found.plan or []], spent)
    if found.status == "unsolvable":
        return Answer("unsolvable", None, spent)
    return Answer("limit", None, spent, f"{found.generated} states")


def plan(planner: str, folder: Path, seconds: float) -> Answer:
    if planner not in PLANNERS:
        raise ValueError(f"planner/{planner}: no such planner (have: "
                         + ", ".join(f"planner/{p}" for p in PLANNERS) + ")")
    run = lama if planner == "lama" else astar
    return run(folder / "domain.pddl", folder / "problem.pddl", seconds)


def reply(planner: str, messages: list[dict], meta: dict) -> tuple[str, list[dict], int, int]:
    """One planner call in the shape `llm/client.py` makes of a provider's reply: the answer
    on the task folder the call names, no tokens either way (a planner reads no prompt)."""
    if "task_dir" not in meta:
        raise ValueError(f"planner/{planner} plans on a task folder; this call names none "
                         f"(purpose {meta.get('purpose')!r})")
    budget = float(meta.get("seconds", DEFAULT_SECONDS))
    answer = plan(planner, Path(meta["task_dir"]), budget)
    return answer.text(planner, budget), [], 0, 0
