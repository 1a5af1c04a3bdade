"""Own A* with LM-cut against Fast Downward's `astar(lmcut())` on the tasks breadth-first
search cannot finish (Logistics p06-p08 by default), and Fast Downward's plain search
against the pruned one the truth rule runs (`OPTIMAL_SEARCH`, strong stubborn sets).

Both expand about the same states (the heuristic is the same, up to tie-breaking in
h_max supporters), so the expansions say whether our LM-cut is as informed as FD's, and
the times what pure Python costs. The own search runs A* alone (the suite runs
breadth-first search first, up to `truth.bfs_states`), timed in CPU seconds as its limit
counts them.

    .venv/bin/python benchmarks/astar_lmcut.py [--task logistics/p07 ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import suite_entries  # noqa: E402

import record  # noqa: E402
from planaudit.formal.external import OPTIMAL_SEARCH, solve_external  # noqa: E402
from planaudit.formal.heuristics import lmcut  # noqa: E402
from planaudit.formal.load import load_task  # noqa: E402
from planaudit.formal.search import astar  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", action="append", help="DOMAIN/TASK (repeatable)")
    ap.add_argument("--seconds", type=float, default=300.0, help="CPU limit for own A*")
    args = ap.parse_args()
    wanted = args.task or ["logistics/p06", "logistics/p07", "logistics/p08"]
    entries = {f"{e.domain}/{e.id}": e for e in suite_entries()}
    rows = []
    for name in wanted:
        e = entries[name]
        task = load_task(e.domain_file, e.problem_file)
        cpu = time.process_time()
        ours = astar(task, lmcut(task), "astar-lmcut", max_seconds=args.seconds)
        cpu = time.process_time() - cpu
        fd = solve_external(str(e.domain_file), str(e.problem_file), "fast-downward-opt",
                            timeout=args.seconds, search="astar(lmcut())")
        ss = solve_external(str(e.domain_file), str(e.problem_file), "fast-downward-opt",
                            timeout=args.seconds, search=OPTIMAL_SEARCH)
        print(f"{name}: own A* {ours.status}, length {ours.length}, expanded {ours.expanded:,} "
              f"in {cpu:.1f} s CPU ({ours.seconds:.1f} s clock); FD astar(lmcut()) {fd.status}, "
              f"length {fd.length}, expanded {fd.expanded:,}, search {fd.search_seconds} s "
              f"({fd.seconds:.1f} s whole call); own/FD search time "
              f"{cpu / fd.search_seconds if fd.search_seconds else float('nan'):.1f}x; "
              f"FD with stubborn sets {ss.status}, length {ss.length}, expanded "
              f"{ss.expanded:,}, {ss.seconds:.1f} s whole call: plain/pruned "
              f"{fd.seconds / ss.seconds:.1f}x")
        rows.append((name, ours.length, ours.expanded, cpu, fd.expanded, fd.search_seconds,
                     fd.seconds, ss.expanded, ss.seconds,
                     cpu / fd.search_seconds if fd.search_seconds else None,
                     fd.seconds / ss.seconds))
    total_own = sum(r[3] for r in rows)
    total_fd = sum(r[5] or 0 for r in rows)
    record.write("astar_lmcut", {
        "own_cpu": record.figure(total_own, "CPU s", "own A* with LM-cut, all tasks"),
        "fd_search": record.figure(total_fd, "s", "FD astar(lmcut()) search time, all tasks"),
        "fd_plain_call": record.figure(sum(r[6] for r in rows), "s",
                                       "FD astar(lmcut()) whole calls, all tasks"),
        "fd_pruned_call": record.figure(sum(r[8] for r in rows), "s",
                                        "FD with strong stubborn sets (the truth rule's), whole calls"),
    }, anchor={"name": "Fast Downward astar(lmcut()), its search time",
               "ratio": round(total_own / total_fd, 2) if total_fd else None,
               "about": "own A*'s CPU seconds over FD's search seconds, summed over the tasks"},
        tables={"tasks": record.table(
            ["task", "length", "own expanded", "own CPU s", "FD expanded", "FD search s",
             "FD call s", "FD pruned expanded", "FD pruned call s", "own/FD search",
             "plain/pruned"], rows, "Per task: own A* with LM-cut, FD plain and FD pruned")})


if __name__ == "__main__":
    main()
