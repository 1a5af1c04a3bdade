"""The durations the tests used to bound, printed instead of asserted.

A test that asserts `elapsed < N` fails on a loaded machine and passes on an idle one
whatever the code does; the tests now assert the behaviour (the server ignoring SIGTERM
is killed, LPG past its limit is killed and reported, A* stops at its CPU limit), and
this script prints how long each takes, several times:

- `local_server` stopping a server that ignores SIGTERM, grace 0.5 s (the fake server
  venv of tests/test_local_server.py): seconds from the block's end to the process gone;
- LPG's wall-clock limit, 0.5 s, on a fake LPG that sleeps (tests/test_repair.py):
  `RepairResult.seconds`;
- A* with LM-cut on logistics/p08 stopped at 0.3 s of CPU (tests/test_search.py): its
  CPU and wall seconds.

The fault run's wall time against its retry budget is printed by benchmarks/resilience.py.

    PYTHONPATH=src .venv/bin/python benchmarks/timings.py [--repeat 5]

Measured (2 shared cores, `--repeat 3`): the grace 0.50 s median and max; LPG's limit
0.50 s; A* 0.31 s wall at 0.30 CPU-s (690-746 states expanded). The tests' old bounds
were 10, 4 and 10 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_local_server import FAKE  # noqa: E402

import record  # noqa: E402


def server_grace(tmp: Path) -> float:
    """Seconds from the end of the block to the stubborn server being gone."""
    from planaudit.llm.server import local_server

    venv = tmp / "venv"
    python = venv / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(FAKE.format(python=sys.executable))
    python.chmod(0o755)
    os.environ["FAKE_SERVER"] = "stubborn"
    try:
        with local_server(tmp / "s.log", model=tmp / "m.gguf", venv=venv, grace=0.5):
            start = time.perf_counter()
        return time.perf_counter() - start
    finally:
        del os.environ["FAKE_SERVER"]


def lpg_timeout(tmp: Path) -> float:
    """`RepairResult.seconds` of an LPG that outlives its 0.5 s limit."""
    from planaudit.formal import load_task
    from planaudit.formal import repair as R

    lpg = tmp / "lpg"
    lpg.write_text("#!/bin/sh\nexec sleep 30\n")
    lpg.chmod(0o755)
    os.environ[R.ENV] = str(lpg)
    bw = ROOT / "domains" / "blocksworld"
    domain, problem = bw / "domain.pddl", bw / "problems" / "p03.pddl"
    task = load_task(domain, problem)
    try:
        r = R.repair(task, domain, problem, [("unstack", ("a", "b"))], seed=0, timeout=0.5)
    finally:
        del os.environ[R.ENV]
    assert r.status == "timeout", r
    return r.seconds


def astar_limit(_tmp: Path) -> float:
    """Wall seconds of A* stopped at 0.3 s of CPU (setting up LM-cut not counted)."""
    from planaudit.formal import load_task
    from planaudit.formal.heuristics import lmcut
    from planaudit.formal.search import astar

    lg = ROOT / "domains" / "logistics"
    task = load_task(lg / "domain.pddl", lg / "problems" / "p08.pddl")
    h = lmcut(task)
    cpu = time.process_time()
    star = astar(task, h, "astar-lmcut", max_seconds=0.3)
    assert star.status == "limit", star.status
    print(f"    A*: {time.process_time() - cpu:.2f} CPU-s, {star.expanded} expanded",
          file=sys.stderr)
    return star.seconds


MEASURES: dict[str, Callable[[Path], float]] = {
    "local_server grace 0.5 s, stubborn server (s to gone)": server_grace,
    "LPG wall-clock limit 0.5 s (RepairResult.seconds)": lpg_timeout,
    "A* CPU limit 0.3 s, logistics/p08 (wall s)": astar_limit,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for name, measure in MEASURES.items():
        seconds = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="planaudit-timings-") as tmp:
                seconds.append(measure(Path(tmp)))
        print(f"{name}: median {statistics.median(seconds):.2f}, max {max(seconds):.2f} "
              f"(n={len(seconds)})")
        rows.append((name, statistics.median(seconds), max(seconds), len(seconds)))
    record.write("timings", {
        key: record.figure(median, "s", f"{name}, median")
        for key, (name, median, _, _) in zip(("grace", "lpg_limit", "astar_limit"), rows,
                                              strict=False)},
        tables={"timings": record.table(["measure", "median s", "max s", "n"], rows,
                                        "Durations the tests no longer bound")})


if __name__ == "__main__":
    main()
