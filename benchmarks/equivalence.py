"""Equivalence checks (`planaudit formalize judge`) in state pairs per second, against the
own breadth-first search's states per second on the same task, and how far the bound
reaches: Blocksworld and Gripper tasks of 4 to 30 objects, then every task of the suite.

Each task is compared with itself (the worst case: nothing differs, so the whole reachable
product is walked, up to the bound) and with itself less one initial fact (a difference to
find). The anchor is breadth-first search over the task alone, stopped at as many states as
the bound has pairs: the product walks two systems in step, so its rate is expected to be
about half the anchor's.

    .venv/bin/python benchmarks/equivalence.py [--max-pairs 200000] [--max-seconds 60] [--record]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
from planaudit.formal.equivalence import MAX_PAIRS, MAX_SECONDS, compare  # noqa: E402
from planaudit.formal.ground import Task  # noqa: E402
from planaudit.formal.load import domain_at, load_task  # noqa: E402
from planaudit.formal.search import breadth_first  # noqa: E402
from planaudit.formal.syntax import parse_problem  # noqa: E402

DOMAINS = ROOT / "domains"


def blocksworld(n: int, seed: int = 0) -> str:
    """n blocks in random towers, the goal one tower in name order."""
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(n)]
    order = names[:]
    rng.shuffle(order)
    facts, below = ["(handempty)"], None
    for b in order:
        if below is None or rng.random() < 0.4:
            facts.append(f"(ontable {b})")
        else:
            facts.append(f"(on {b} {below})")
        below = b
    under = {f.split()[2].rstrip(")") for f in facts if f.startswith("(on ")}
    facts += [f"(clear {b})" for b in names if b not in under]
    goal = " ".join(f"(on {a} {b})" for a, b in pairwise(names))
    return (f"(define (problem bw{n}) (:domain blocksworld) (:objects {' '.join(names)} - block)"
            f" (:init {' '.join(facts)}) (:goal (and {goal})))")


def gripper(n: int) -> str:
    """n objects: two rooms, two grippers and n - 4 balls, all to be carried across."""
    balls = [f"ball{i}" for i in range(1, n - 3)]
    init = " ".join(f"(at {b} rooma)" for b in balls)
    goal = " ".join(f"(at {b} roomb)" for b in balls)
    return ("(define (problem gr) (:domain gripper) (:objects rooma roomb - room "
            f"{' '.join(balls)} - ball left right - gripper) (:init (at-robby rooma) (free left) "
            f"(free right) {init} (= (total-cost) 0)) (:goal (and {goal})) "
            "(:metric minimize (total-cost)))")


def task_of(domain: str, text: str) -> Task:
    d = domain_at(DOMAINS / domain / "domain.pddl")
    return Task(d, parse_problem(text, d))


def less_one_fact(task: Task) -> Task:
    """The same task without its last initial fact (by the problem's order)."""
    return Task(task.domain, replace(task.problem, init_atoms=task.problem.init_atoms[:-1]))


def measure(name: str, objects: int, hidden: Task, model_of, args) -> list:
    """One row: the anchor's rate, the self-comparison's and the difference's."""
    bfs = breadth_first(model_of(), max_states=args.max_pairs)
    anchor = bfs.generated / bfs.seconds if bfs.seconds else float("nan")
    same = compare(hidden, model_of(), max_pairs=args.max_pairs, max_seconds=args.max_seconds)
    rate = same.pairs / same.seconds if same.seconds else float("nan")
    diff = compare(hidden, less_one_fact(model_of()), max_pairs=args.max_pairs,
                   max_seconds=args.max_seconds)
    found = (f"{len(diff.difference.sequence)} steps" if diff.difference else diff.verdict)
    row = [name, objects, same.verdict, same.pairs, round(same.seconds, 2), round(rate),
           round(anchor), round(rate / anchor, 2) if anchor else None, found,
           round(diff.seconds, 3)]
    print(f"  {name:<26}{objects:>4}  {same.verdict:<11}{same.pairs:>9,}{same.seconds:>8.2f} s"
          f"{rate:>10,.0f}/s  anchor {anchor:>9,.0f}/s  ratio {row[7]}  difference: {found} "
          f"in {diff.seconds:.3f} s", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-pairs", type=int, default=MAX_PAIRS)
    ap.add_argument("--max-seconds", type=float, default=MAX_SECONDS)
    ap.add_argument("--sizes", default="4,5,6,7,8,10,15,20,30", help="objects per task")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"bound: {args.max_pairs:,} state pairs or {args.max_seconds:g} CPU s")
    columns = ["task", "objects", "self", "pairs", "CPU s", "pairs/s", "anchor states/s",
               "ratio", "one fact less", "CPU s to find"]
    rows = []
    for n in sizes:
        text = blocksworld(n)
        rows.append(measure(f"blocksworld {n} blocks", n, task_of("blocksworld", text),
                            lambda text=text: task_of("blocksworld", text), args))
    for n in sizes:
        if n < 5:
            continue
        text = gripper(n)
        rows.append(measure(f"gripper {n - 4} balls", n, task_of("gripper", text),
                            lambda text=text: task_of("gripper", text), args))
    print("the suite's tasks, each against itself:")
    suite = []
    for problem in sorted(DOMAINS.glob("*/problems/*.pddl")):
        domain = problem.parent.parent / "domain.pddl"
        name = f"{problem.parent.parent.name}/{problem.stem}"
        objects = len(load_task(domain, problem).objects)
        suite.append(measure(name, objects, load_task(domain, problem),
                             lambda d=domain, p=problem: load_task(d, p), args))
    decided = [r for r in suite if r[2] == "equivalent"]
    ratios = [r[7] for r in rows + suite if r[7] is not None and r[3] > 1000]
    median = sorted(ratios)[len(ratios) // 2] if ratios else float("nan")
    print(f"the bound decides {len(decided)} of the suite's {len(suite)} tasks against "
          f"themselves; median ratio of pair rate to breadth-first's state rate (tasks of "
          f"over 1,000 pairs): {median}")
    record.write("equivalence", {
        "decided": record.figure(len(decided), "tasks",
                                 f"of the suite's {len(suite)} decided within the bound"),
        "largest_decided": record.figure(max((r[3] for r in decided), default=0), "pairs",
                                         "the largest suite task decided"),
        "median_ratio": record.figure(median, "×", "pairs/s over breadth-first's states/s"),
        "bound_pairs": record.figure(args.max_pairs, "pairs"),
        "bound_seconds": record.figure(args.max_seconds, "CPU s"),
    }, anchor={"name": "own breadth-first search on the task alone", "ratio": median,
               "about": "equivalence pairs/s over breadth-first states/s (median, tasks "
                        "over 1,000 pairs)"},
        tables={"sizes": record.table(columns, rows, "Blocksworld and Gripper by objects"),
                "suite": record.table(columns, suite, "The suite's tasks")})


if __name__ == "__main__":
    main()
