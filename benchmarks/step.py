"""One simulated step (applicability check and apply), in microseconds.

Random walks over every suite task; each step checks a ground operator's
precondition in the current state and applies it. The budget is 100 µs.

    .venv/bin/python benchmarks/step.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import DATA, suite_entries  # noqa: E402

import record  # noqa: E402
from planaudit.formal.load import load_task  # noqa: E402


def walk(task, steps: int, seed: int) -> tuple[float, int]:
    """Seconds spent in applicable+apply over `steps` random applicable operators."""
    rng = random.Random(seed)
    ops = task.all_operators()
    state = task.init
    chosen = []
    for _ in range(steps):  # choose the walk first, so timing covers only the step
        app = [op for op in ops if op.applicable(state)]
        if not app:
            break
        op = rng.choice(app)
        chosen.append(op)
        state = op.apply(state)
    state = task.init
    start = time.perf_counter()
    for op in chosen:
        if op.applicable(state):
            state = op.apply(state)
    return time.perf_counter() - start, len(chosen)


def main() -> None:
    pairs = [(e.domain_file, e.problem_file, f"{e.domain}/{e.id}") for e in suite_entries()]
    pairs.append((DATA / "mixed-domain.pddl", DATA / "mixed-problem.pddl", "numeric fixture"))
    worst = 0.0
    total_s, total_n = 0.0, 0
    per_task = []
    for d, p, name in pairs:
        task = load_task(d, p)
        s, n = walk(task, 2000, 0)
        if n:
            us = s / n * 1e6
            worst = max(worst, us)
            total_s, total_n = total_s + s, total_n + n
            per_task.append((name, us, n))
            print(f"  {name}: {us:.2f} µs/step over {n} steps", file=sys.stderr)
    mean = total_s / total_n * 1e6
    print(f"one simulated step: mean {mean:.2f} µs, worst task {worst:.2f} µs "
          f"over {total_n} steps; budget 100 µs = {100 / worst:.0f}x headroom on the worst task")
    record.write("step", {
        "mean": record.figure(mean, "µs", "one step (applicability check and apply), mean"),
        "worst_task": record.figure(worst, "µs", "mean step of the slowest task"),
        "steps": record.figure(total_n, "steps", "steps timed"),
    }, anchor={"name": "the budget of 100 µs a step", "ratio": round(100 / worst, 1),
               "about": "budget over the slowest task's mean step: the headroom"},
        tables={"tasks": record.table(["task", "µs a step", "steps"], per_task,
                                      "Mean step per task (random walks of up to 2,000 steps)")})


if __name__ == "__main__":
    main()
