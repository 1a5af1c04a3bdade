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


if __name__ == "__main__":
    main()
