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
in one subprocess. `available()` says whether it is installed; plans, proofs of no
plan and translator failures are cached per (domain, instance, search) for the
process (a search that crashed or ran out of time is tried again).

Three outcomes are kept apart, never folded into "no plan": a plan; no plan, which
only a search that proves the task unsolvable (exit code 11) reports; and a failure:
the translator rejecting or crashing on the input (`TranslatorError`, with its
reason), or the search crashing or running out of time (`SearchError`). One
problem's failure does not stop a batch: the others are planned, and the batch
raises at its end naming every failure, with the plans it did find attached.
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
TIMEOUT = 300.0
SEARCH_UNSOLVABLE = 11  # Fast Downward's exit code for a task proven to have no plan
Step = tuple[str, tuple[str, ...]]

# One job after another; a job that raises or exits non-zero writes `<sas>.err` with its
# reason (the exception, or the exit code and the translator's last output lines).
_TRANSLATE = """
import contextlib, io, sys, traceback
sys.path.insert(0, sys.argv[1])
from fast_downward.translate import options
from fast_downward.translate.main import main
jobs = sys.argv[2:]
for k in range(0, len(jobs), 3):
    out = io.StringIO()
    reason = None
    try:
        options.set_options([jobs[k], jobs[k + 1], "--sas-file", jobs[k + 2]])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main()
    except SystemExit as e:
        if e.code not in (None, 0):
            reason = "exit code %s" % (e.code,)
    except BaseException as e:
        text = "".join(traceback.format_exception_only(type(e), e))
        reason = " / ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    if reason is not None:
        tail = [ln for ln in out.getvalue().splitlines() if ln.strip()][-3:]
        with open(jobs[k + 2] + ".err", "w") as f:
            f.write(reason + ("; output ends: " + " | ".join(tail) if tail else ""))
"""

_cache: dict[tuple[str, str, str], list[Step] | FastDownwardError | None] = {}


class FastDownwardError(Exception):
    """Fast Downward is not installed or failed."""


class _Failures(FastDownwardError):
    """Some problems of a batch failed: `failures` maps each to its reason, `plans`
    holds the outcome of every other problem (a plan, or None: proven unsolvable)."""

    what = "failed"

    def __init__(self, failures: dict[str, str], plans: dict[str, list[Step] | None] | None = None):
        self.failures = dict(failures)
        self.plans = dict(plans or {})
        shown = "; ".join(f"{k}: {v}" for k, v in list(self.failures.items())[:5])
        more = f" (and {len(self.failures) - 5} more)" if len(self.failures) > 5 else ""
        super().__init__(f"Fast Downward's {self.what} on {len(self.failures)} problem(s): {shown}{more}")


class TranslatorError(_Failures):
    """The translator rejected or crashed on a problem (a parse error, an undefined
    object, ...): not a proof that no plan exists."""

    what = "translator failed"


class SearchError(_Failures):
    """The search crashed or ran out of time: not a proof that no plan exists."""

    what = "search failed"


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


def _read_plan(path: Path) -> list[Step]:
    steps: list[Step] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("("):
            words = line.strip("()").split()
            steps.append((words[0].lower(), tuple(w.lower() for w in words[1:])))
    return steps


def _search(b: Path, tmp: str, n: int, problem: str, search: str,
            timeout: float) -> list[Step] | FastDownwardError | None:
    sas = Path(f"{tmp}/{n}.sas")
    err = Path(f"{tmp}/{n}.sas.err")
    if err.is_file():
        return TranslatorError({problem: err.read_text()})
    if not sas.is_file():
        return TranslatorError({problem: "wrote no task file"})
    out = Path(f"{tmp}/{n}.plan")
    with sas.open() as f:
        try:
            run = subprocess.run([str(b / "downward"), "--search", search, "--internal-plan-file",
                                  str(out)], stdin=f, capture_output=True, text=True, cwd=tmp,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            return SearchError({problem: f"no answer within {timeout:g} s"})
    if run.returncode == 0 and out.is_file():
        return _read_plan(out)
    if run.returncode == SEARCH_UNSOLVABLE:
        return None
    tail = " | ".join([ln for ln in (run.stdout + run.stderr).splitlines() if ln.strip()][-3:])
    return SearchError({problem: f"exit code {run.returncode}; output ends: {tail}"})


def plans(domain: Path | str, problems: list[Path | str], search: str = SEARCH,
          workers: int = 2, timeout: float = TIMEOUT) -> dict[str, list[Step] | None]:
    """The plan Fast Downward's `search` finds for each problem, keyed by the problem
    path as given; None only where the search proved that no plan exists. Raises
    `TranslatorError` (or `SearchError`, if no translation failed) after the whole
    batch when any problem failed; the exception holds the others' outcomes."""
    b = _bin()
    if b is None:
        raise FastDownwardError("Fast Downward is not installed (pip install up-fast-downward)")
    domain = str(Path(domain).resolve())
    keys = {str(p): (domain, str(Path(p).resolve()), search) for p in problems}
    todo = sorted({k for k in keys.values() if k not in _cache})
    fresh: dict[tuple[str, str, str], list[Step] | FastDownwardError | None] = {}
    if todo:
        with tempfile.TemporaryDirectory(prefix="planaudit-fd-") as tmp:
            args = [sys.executable, "-c", _TRANSLATE, str(b)]
            for n, (d, p, _) in enumerate(todo):
                args += [d, p, f"{tmp}/{n}.sas"]
            run = subprocess.run(args, capture_output=True, text=True, cwd=tmp)
            if run.returncode != 0:
                raise FastDownwardError(f"Fast Downward's translator process failed: {run.stderr[-2000:]}")
            with ThreadPoolExecutor(max(1, workers)) as ex:
                outcomes = ex.map(lambda n: _search(b, tmp, n, todo[n][1], search, timeout),
                                  range(len(todo)))
                for key, outcome in zip(todo, outcomes, strict=True):
                    fresh[key] = outcome
                    if not isinstance(outcome, SearchError):  # a crash or timeout may not recur
                        _cache[key] = outcome
    found: dict[str, list[Step] | None] = {}
    failed: dict[str, FastDownwardError] = {}
    for name, key in keys.items():
        outcome = fresh[key] if key in fresh else _cache[key]
        if isinstance(outcome, FastDownwardError):
            failed[name] = outcome
        else:
            found[name] = outcome
    if failed:
        reasons = {name: next(iter(e.failures.values())) for name, e in failed.items()}
        kind = TranslatorError if any(isinstance(e, TranslatorError) for e in failed.values()) \
            else SearchError
        raise kind(reasons, found)
    return found


def plan(domain: Path | str, problem: Path | str, search: str = SEARCH) -> list[Step] | None:
    """Fast Downward's plan for one problem (cached); None: proven unsolvable."""
    return plans(domain, [problem], search)[str(problem)]
