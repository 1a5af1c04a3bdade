"""Own breadth-first search against Fast Downward's `astar(blind())`, in states per second.

The anchor task is the largest suite task (most states expanded) that blind
search finishes within a minute. Both searches are uninformed and expand the
same layers, so expanded states per second compares like with like. Fast
Downward's rate is given against its own reported search time (translation and
preprocessing excluded, which favours it) and against the whole call.

    .venv/bin/python benchmarks/search_rate.py [--task logistics/p05]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import suite_entries  # noqa: E402

import record  # noqa: E402
from planaudit.formal.external import solve_external  # noqa: E402
from planaudit.formal.load import load_task  # noqa: E402
from planaudit.formal.search import breadth_first  # noqa: E402


def blind(entry, timeout: float):
    return solve_external(str(entry.domain_file), str(entry.problem_file), "fast-downward",
                          timeout=timeout, search="astar(blind())")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", help="DOMAIN/TASK to use instead of searching for the anchor")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    entries = suite_entries()
    if args.task:
        entries = [e for e in entries if f"{e.domain}/{e.id}" == args.task]
    best = None
    for e in entries:
        r = blind(e, args.timeout)
        done = r.status in ("solved", "unsolvable")
        print(f"  FD blind {e.domain}/{e.id}: {r.status}, expanded {r.expanded}, "
              f"{r.seconds:.1f} s", file=sys.stderr)
        if done and r.expanded and (best is None or r.expanded > best[1].expanded):
            best = (e, r)
    if best is None:
        sys.exit("no task finished under blind search")
    entry, fd = best
    task = load_task(entry.domain_file, entry.problem_file)
    ours = breadth_first(task, max_states=50_000_000)
    ours_rate = ours.expanded / ours.seconds
    fd_search_rate = fd.expanded / fd.search_seconds if fd.search_seconds else float("nan")
    fd_total_rate = fd.expanded / fd.seconds
    print(f"anchor task: {entry.domain}/{entry.id} (largest that FD blind search finishes "
          f"within {args.timeout:.0f} s)")
    print(f"own breadth-first: {ours.status}, length {ours.length}, expanded {ours.expanded:,} "
          f"in {ours.seconds:.2f} s = {ours_rate:,.0f} states/s (grounding included)")
    print(f"FD astar(blind()): {fd.status}, length {fd.length}, expanded {fd.expanded:,}; "
          f"search time {fd.search_seconds} s = {fd_search_rate:,.0f} states/s; "
          f"whole call {fd.seconds:.2f} s = {fd_total_rate:,.0f} states/s")
    print(f"ratio FD/own: {fd_search_rate / ours_rate:.1f}x against FD's search time, "
          f"{fd_total_rate / ours_rate:.1f}x against its whole call (aim: within 10x)")
    record.write("search_rate", {
        "task": record.figure(f"{entry.domain}/{entry.id}", "", "anchor task (largest that FD "
                              f"blind search finishes within {args.timeout:.0f} s)"),
        "expanded": record.figure(ours.expanded, "states", "states expanded by own breadth-first"),
        "own_rate": record.figure(ours_rate, "states/s", "own breadth-first (grounding included)"),
        "fd_search_rate": record.figure(fd_search_rate, "states/s",
                                        "FD astar(blind()), its reported search time"),
        "fd_call_rate": record.figure(fd_total_rate, "states/s", "FD astar(blind()), whole call"),
        "ratio_call": record.figure(fd_total_rate / ours_rate, "×",
                                    "FD's rate over own, against FD's whole call"),
    }, anchor={"name": "Fast Downward astar(blind()), its search time",
               "ratio": round(fd_search_rate / ours_rate, 2),
               "about": "FD's states/s over own breadth-first's (aim: within 10×)"})


if __name__ == "__main__":
    main()
