"""One online environment step, against an environment built on an external validator.

planaudit's environment keeps the state and asks `formal/` about one action: a
step is tool dispatch, parsing the action, the applicability check, applying it
and rendering the observation. An environment built on an external validator
instead re-validates the whole executed prefix at every step; here that is
unified-planning's `SequentialPlanValidator` on the prefix (the problem parsed
once, outside the timing). Both execute the optimal plan of every solvable task
of one prepared task per domain (the largest), `act` by `act`.

    .venv/bin/python benchmarks/env_step.py [--suite results/suite]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
from planaudit.formal.load import load_task  # noqa: E402
from planaudit.online.environment import Environment  # noqa: E402
from planaudit.suite.brief import Renderer, load_templates  # noqa: E402


def pick(suite: Path) -> list[Path]:
    """Per domain, the solvable prepared task with the longest optimal plan."""
    out = []
    for d in sorted(p for p in suite.iterdir() if p.is_dir()):
        best = max((t for t in d.glob("*/truth.json") if json.loads(t.read_text())["solvable"]),
                   key=lambda t: json.loads(t.read_text())["optimal_length"], default=None)
        if best is not None:
            out.append(best.parent)
    return out


def ours(folder: Path, plan: list[str], repeats: int) -> tuple[float, float]:
    """Seconds per `act` step over `repeats` fresh episodes, and per full `query_state`."""
    brief = json.loads((folder / "brief.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    renderer = Renderer(load_templates(brief["source"]))
    total = 0.0
    for _ in range(repeats):
        env = Environment(task, brief, renderer, budget=10_000)
        start = time.perf_counter()
        for step in plan:
            obs = env.call("act", {"action": step})
            assert obs.text.startswith("Applied"), obs.text
        total += time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(repeats):
        env.call("query_state", {})
    return total / (repeats * len(plan)), (time.perf_counter() - start) / repeats


def unified_planning(folder: Path, plan: list[str]) -> float:
    """Seconds per step when every step re-validates the executed prefix."""
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    reader = PDDLReader()
    problem = reader.parse_problem(str(folder / "domain.pddl"), str(folder / "problem.pddl"))
    plans = [reader.parse_plan_string(problem, "\n".join(plan[:k])) for k in range(1, len(plan) + 1)]
    with PlanValidator(name="sequential_plan_validator") as validator:
        start = time.perf_counter()
        for p in plans:
            validator.validate(problem, p)
        return (time.perf_counter() - start) / len(plan)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default=str(ROOT / "results" / "suite"))
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    folders = pick(Path(args.suite))
    if not folders:
        sys.exit(f"{args.suite}: no prepared tasks; run `make suite` first")
    worst = 0.0
    ratios, rows = [], []
    for folder in folders:
        plan = json.loads((folder / "truth.json").read_text())["plan"]
        t_ours, t_query = ours(folder, plan, args.repeats)
        t_up = unified_planning(folder, plan)
        worst = max(worst, t_ours, t_query)
        ratios.append(t_up / t_ours)
        print(f"{folder.parent.name}/{folder.name} ({len(plan)} steps): ours {t_ours * 1e6:,.1f} µs "
              f"a step, unified-planning prefix re-validation {t_up * 1e3:,.2f} ms a step, "
              f"ratio {t_up / t_ours:,.0f}x; a full query_state {t_query * 1e6:,.0f} µs")
        rows.append((f"{folder.parent.name}/{folder.name}", len(plan), t_ours * 1e6, t_up * 1e3,
                     t_up / t_ours, t_query * 1e6))
    print(f"slowest environment step (act or full query_state): {worst * 1e6:,.1f} µs "
          "(goal: well under 1 ms)")
    print(f"ratio against re-validating the prefix with unified-planning: "
          f"{min(ratios):,.0f}x to {max(ratios):,.0f}x")
    record.write("env_step", {
        "slowest_step": record.figure(worst * 1e6, "µs",
                                      "slowest environment step (act or full query_state)"),
        "ratio_min": record.figure(min(ratios), "×", "unified-planning over ours, smallest"),
        "ratio_max": record.figure(max(ratios), "×", "unified-planning over ours, largest"),
    }, anchor={"name": "unified-planning's SequentialPlanValidator re-validating the prefix",
               "ratio": round(min(ratios), 1),
               "about": "its seconds a step over ours, on the task where ours gains least"},
        tables={"tasks": record.table(
            ["task", "steps", "ours µs a step", "unified-planning ms a step", "ratio",
             "query_state µs"], rows, "Per domain, its prepared task with the longest plan")})


if __name__ == "__main__":
    main()
