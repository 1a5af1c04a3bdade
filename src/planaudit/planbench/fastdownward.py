"""Optimal plans from Fast Downward, the planner PlanBench computed its plans with.

PlanBench runs Fast Downward's A* with the LM-cut heuristic (`--search
"astar(lmcut())"`) on a config's domain file and each instance file, and shows the
plan it returns. Several optimal plans often exist; which one A* returns depends
on its tie-breaking, so a prompt reproduces PlanBench's example only with the same
search. Checked on the material: for all 501 instances of `instances/blocksworld/
generated_basic`, this search (Fast Downward 26.6, as bundled with
`up-fast-downward`) returns exactly the plan `llm_planning_analysis/instances/
blocksworld/info.json` records, and in 498 the same expanded/evaluated/generated
counts ("until last jump") it records.

The planner is the optional `up-fast-downward` package: its bundled translator
(Python) and search binary are run directly, all instances of a batch translated
in one subprocess. `available()` says whether it is installed; plans are cached
per (domain, instance, search) for the process.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

SEARCH = "astar(lmcut())"
Step = tuple[str, tuple[str, ...]]

_TRANSLATE = """
import contextlib, io, sys
sys.path.insert(0, sys.argv[1])
from fast_downward.translate import options
from fast_downward.translate.main import main
jobs = sys.argv[2:]
for k in range(0, len(jobs), 3):
    options.set_options([jobs[k], jobs[k + 1], "--sas-file", jobs[k + 2]])
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
        except (SystemExit, Exception):
            pass
"""

_cache: dict[tuple[str, str, str], list[Step] | None] = {}


class FastDownwardError(Exception):
    """Fast Downward is not installed or failed."""


@lru_cache(maxsize=1)
def _bin() -> Path | None:
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        return None
    b = Path(next(iter(spec.submodule_search_locations))) / "downward" / "builds" / "release" / "bin"
    ok = (b / "downward").is_file() and (b / "fast_downward" / "translate").is_dir()
    return b if ok else None


def available() -> bool:
    """Whether up-fast-downward's translator and search binary are installed."""
    return _bin() is not None


def _read_plan(path: Path) -> list[Step] | None:
    if not path.is_file():
        return None
    steps: list[Step] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("("):
            words = line.strip("()").split()
            steps.append((words[0].lower(), tuple(w.lower() for w in words[1:])))
    return steps


def plans(domain: Path | str, problems: list[Path | str], search: str = SEARCH,
          workers: int = 2) -> dict[str, list[Step] | None]:
    """The plan Fast Downward's `search` finds for each problem (None: none found in 300 s
    or the translator failed on it), keyed by the problem path as given."""
    b = _bin()
    if b is None:
        raise FastDownwardError("Fast Downward is not installed (pip install up-fast-downward)")
    domain = str(Path(domain).resolve())
    keys = {str(p): (domain, str(Path(p).resolve()), search) for p in problems}
    todo = sorted({k for k in keys.values() if k not in _cache})
    if todo:
        with tempfile.TemporaryDirectory(prefix="planaudit-fd-") as tmp:
            args = [sys.executable, "-c", _TRANSLATE, str(b)]
            for n, (d, p, _) in enumerate(todo):
                args += [d, p, f"{tmp}/{n}.sas"]
            run = subprocess.run(args, capture_output=True, text=True, cwd=tmp)
            if run.returncode != 0:
                raise FastDownwardError(f"Fast Downward's translator failed: {run.stderr[-2000:]}")

            def solve(n: int) -> list[Step] | None:
                sas = Path(f"{tmp}/{n}.sas")
                if not sas.is_file():
                    return None
                out = Path(f"{tmp}/{n}.plan")
                with sas.open() as f:
                    try:
                        subprocess.run([str(b / "downward"), "--search", search, "--internal-plan-file",
                                        str(out)], stdin=f, capture_output=True, cwd=tmp, timeout=300)
                    except subprocess.TimeoutExpired:
                        return None
                return _read_plan(out)

            with ThreadPoolExecutor(max(1, workers)) as ex:
                for key, plan in zip(todo, ex.map(solve, range(len(todo))), strict=True):
                    _cache[key] = plan
    return {name: _cache[key] for name, key in keys.items()}


def plan(domain: Path | str, problem: Path | str, search: str = SEARCH) -> list[Step] | None:
    """Fast Downward's plan for one problem (cached)."""
    return plans(domain, [problem], search)[str(problem)]
