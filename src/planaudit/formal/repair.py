"""Plan repair with LPG (LPG-td 1.4's plan adaptation), seeded with a given plan.

LPG comes from the `up-lpg` wheel (a static Linux x86_64 binary `up_lpg/lpg`), or from
the file named by PLANAUDIT_LPG. The wheel's own unified-planning engine
(`lpg-repairer`) does not repair: it appends `-input_plan` to a list its command line
is never built from, and the seed file it writes names actions without their objects,
so LPG plans from scratch. This module calls the binary directly:

    lpg -o DOMAIN -f PROBLEM -n 1 -seed S -cputime T -input_plan SEED.sol -out PLAN.sol

`-input_plan` is LPG-adapt's option (Gerevini & Serina's plan adaptation): the seed
plan becomes LPG's first action graph and local search repairs its inconsistencies,
so a valid seed comes back unchanged ("Distance from input plan: 0") and an almost
valid one comes back close to it. The seed is written in LPG's own plan format
(`0: (ACTION ARG ...) [1]`).

LPG has quirks the caller never sees: a seed step naming an object the problem lacks
makes it exit 1 ("constant name X not found"); an empty seed file makes it crash
(SIGSEGV); a step of an unknown action or the wrong arity is read as something else.
So only steps that ground in the task (`formal/`: known action, right arity, known
objects of the right types) are handed over; the others are dropped and counted. A
seed left empty is no seed: LPG then plans from scratch (adapting the empty plan),
and the result says so. Whatever LPG writes is read as text and judged by the caller
with `formal/` (`validate`); nothing here trusts it.

LPG returns its plan ordered by earliest start time, so actions that do not interact
can come back in another order than the seed's. The result keeps LPG's plan as it
came (what PlanBench measures) and, beside it, the same actions in the seed's order
where that order stays valid (`resequence`, `RepairResult.reordered`); the second
distance is never the larger, and says how much of the first is scheduling.

A call ends as one of STATUSES: `repaired` (a plan came back), `no-plan` (LPG gave
up or proved the goals unreachable), `timeout` (the wall-clock limit; LPG's own
`-cputime` is set to the same limit), `crash` (a signal or a non-zero exit), `garbage`
(a plan file that does not read as a plan), and `skipped` (not run: see `unsupported`).
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from planaudit.formal.binary import wheel_binary
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import Step, format_step
from planaudit.formal.sexpr import clean, parse, read_file

ENV = "PLANAUDIT_LPG"
PACKAGE = "up-lpg==0.1.3"
STATUSES = ("repaired", "no-plan", "timeout", "crash", "garbage", "skipped")
TIMEOUT = 10.0

# Why LPG is not run on a task (`unsupported`): LPG-td crashes (SIGSEGV) adapting a plan
# under action costs, so `total-cost` is taken out of what LPG is handed (`lpg_files`);
# where the domain or goal reads it, it cannot be, and the task is skipped.
COSTS_READ = "LPG: total-cost is read by the domain or goal (LPG crashes adapting plans under action costs)"


class RepairUnavailable(RuntimeError):
    """LPG cannot be run here; the message says how to get it."""


@dataclass(frozen=True)
class RepairResult:
    """One repair. `steps` is LPG's plan as LPG returned it: the plan PlanBench's
    heuristic mode measures its distance on. `reordered` holds the same actions put
    back in the seed's order where that order stays valid (`resequence`): a second,
    never larger, distance that discounts LPG's scheduling, reported beside the first."""

    status: str  # one of STATUSES
    steps: list[Step] | None = None  # the plan LPG returned (lower-case), in LPG's order
    seconds: float = 0.0  # wall time of LPG's run
    detail: str = ""  # why there is no plan, in one line
    seed_length: int = 0  # steps handed to LPG
    dropped: list[Step] = field(default_factory=list)  # steps that do not ground: not handed over
    reordered: list[Step] | None = None  # LPG's actions in the seed's order where it stays valid

    @property
    def repaired(self) -> bool:
        return self.status == "repaired"


def lpg_binary() -> Path:
    """LPG: PLANAUDIT_LPG if set, else the binary the up-lpg wheel installed (found
    without importing up_lpg, whose module needs pkg_resources)."""
    return wheel_binary(ENV, "up_lpg", "", ("lpg", "winlpg.exe"), RepairUnavailable,
                        f"LPG is not installed: pip install '{PACKAGE}' (a wheel for Linux "
                        f"x86_64), or point {ENV} at an LPG-td binary")


def available() -> bool:
    try:
        lpg_binary()
    except RepairUnavailable:
        return False
    return True


def _text(expr) -> str:
    return "(" + " ".join(_text(e) for e in expr) + ")" if isinstance(expr, list) else str(expr)


def _reads_cost(expr) -> bool:
    """Whether `(total-cost)` appears anywhere but as the target of an increase."""
    if not isinstance(expr, list):
        return False
    if expr[:2] == ["increase", ["total-cost"]]:
        return _reads_cost(expr[2:])
    if expr == ["total-cost"]:
        return True
    return any(_reads_cost(e) for e in expr)


def _drop_costs(expr):
    """The s-expression without `total-cost`: its increases, its declaration, its initial
    value, the `:action-costs` requirement and a metric over it."""
    if not isinstance(expr, list):
        return expr
    out = []
    for e in expr:
        if isinstance(e, list) and e[:2] in (["increase", ["total-cost"]], ["=", ["total-cost"]]):
            continue
        if isinstance(e, list) and e[:1] == [":metric"]:
            continue
        if e == ":action-costs":
            continue
        if isinstance(e, list) and e[:1] == [":functions"]:
            rest = [x for x in e[1:] if x not in (["total-cost"], "-", "number")]
            if not rest:
                continue
        out.append(_drop_costs(e))
    return out


def unsupported(domain: str | Path, problem: str | Path) -> str | None:
    """Why LPG is not run on this domain and problem (None: it is)."""
    d_text, p_text = read_file(domain), read_file(problem)
    if "total-cost" in clean(d_text) and _costs_read(d_text, p_text, domain, problem):
        return COSTS_READ
    return None


def _costs_read(d_text: str, p_text: str, domain, problem) -> bool:
    d_expr, p_expr = parse(d_text, str(domain))[0], parse(p_text, str(problem))[0]
    body = [e for e in d_expr if not (isinstance(e, list) and e[:1] == [":functions"])]
    goal = [e for e in p_expr if isinstance(e, list) and e[:1] == [":goal"]]
    return _reads_cost(body) or _reads_cost(goal)


def lpg_files(domain: str | Path, problem: str | Path) -> tuple[str, str] | None:
    """The domain and problem as LPG is handed them: as they are, or, where `total-cost` is
    only ever increased (action costs), without it (LPG-td crashes, SIGSEGV, when it adapts
    a plan under action costs). Plans are judged against the original task, and a cost that
    nothing reads cannot make a plan valid or invalid. None: the files need no change."""
    d_text, p_text = read_file(domain), read_file(problem)
    if "total-cost" not in clean(d_text):
        return None
    if _costs_read(d_text, p_text, domain, problem):
        return None
    d_expr, p_expr = parse(d_text, str(domain))[0], parse(p_text, str(problem))[0]
    return _text(_drop_costs(d_expr)) + "\n", _text(_drop_costs(p_expr)) + "\n"


def groundable(task: Task, steps: Sequence[Step]) -> tuple[list[Step], list[Step]]:
    """The steps LPG can be handed (they ground in the task) and the ones dropped."""
    kept, dropped = [], []
    for step in steps:
        try:
            task.operator(*step)
        except GroundingError:
            dropped.append(step)
        else:
            kept.append(step)
    return kept, dropped


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Edit distance in whole steps (insert, delete, substitute one action)."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def seed_text(steps: Sequence[Step]) -> str:
    """A plan in LPG's own format, one step a line."""
    return "".join(f"{i}:   {format_step(s).upper()} [1]\n" for i, s in enumerate(steps))


_STEP = re.compile(r"^\s*\d+(?:\.\d*)?\s*:\s*\(\s*([^()\s]+)((?:\s+[^()\s]+)*)\s*\)\s*(?:\[[^\]]*\])?\s*$")
_NO_PLAN = ("unsolvable", "can not be reached", "search limit exceeded", "no solution",
            "goals are mutex")


def read_plan(text: str) -> list[Step] | None:
    """The steps of an LPG plan file, lower-cased; None if a line is not a step."""
    steps = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(";"):
            continue
        m = _STEP.match(line)
        if m is None:
            return None
        steps.append((m.group(1).lower(), tuple(m.group(2).lower().split())))
    return steps


def _line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:300]


def run_lpg(domain: str | Path, problem: str | Path, seed_steps: Sequence[Step], seed: int = 1,
            timeout: float = TIMEOUT, binary: Path | None = None) -> tuple[str, list[Step] | None,
                                                                          float, str]:
    """One run of LPG in a temporary folder: (status, steps, seconds, detail). With no
    seed steps LPG plans from scratch (it crashes on an empty seed file)."""
    binary = binary or lpg_binary()
    with tempfile.TemporaryDirectory(prefix="planaudit-lpg-") as scratch:
        if stripped := lpg_files(domain, problem):
            domain, problem = Path(scratch) / "domain.pddl", Path(scratch) / "problem.pddl"
            domain.write_text(stripped[0])
            problem.write_text(stripped[1])
        command = [str(binary), "-o", str(Path(domain).resolve()), "-f", str(Path(problem).resolve()),
                   "-n", "1", "-seed", str(int(seed)), "-cputime", str(max(1, int(timeout))),
                   "-out", "plan.sol"]
        if seed_steps:
            (Path(scratch) / "seed.sol").write_text(seed_text(seed_steps))
            command += ["-input_plan", "seed.sol"]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=scratch, capture_output=True, text=True,
                                  errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return "timeout", None, time.perf_counter() - start, f"no answer within {timeout:g} s"
        seconds = time.perf_counter() - start
        out = proc.stdout + "\n" + proc.stderr
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = f"signal {-proc.returncode}"
            return "crash", None, seconds, f"LPG crashed ({name})"
        plan_file = Path(scratch) / "plan.sol"
        if proc.returncode != 0 or not plan_file.is_file():
            tail = [ln for ln in out.strip().splitlines() if ln.strip()][-2:]
            lowered = out.lower()
            if any(k in lowered for k in _NO_PLAN):
                return "no-plan", None, seconds, _line(" / ".join(tail))
            if proc.returncode != 0:
                return "crash", None, seconds, f"exit {proc.returncode}: {_line(' / '.join(tail))}"
            return "no-plan", None, seconds, _line(" / ".join(tail)) or "no plan file"
        steps = read_plan(plan_file.read_text(errors="replace"))
        if steps is None:
            return "garbage", None, seconds, "the plan file does not read as a plan"
        return "repaired", steps, seconds, ""


def resequence(task: Task, seed_steps: Sequence[Step], plan: Sequence[Step]) -> list[Step]:
    """LPG's plan in the seed's order where that order stays valid.

    LPG schedules the plan it returns by earliest start time, so actions that do not
    interact come back in another order than the seed's (a valid 36-step logistics seed
    returned as the same 36 actions, 26 edits away). Each of LPG's actions gets a rank:
    its position in the seed where the seed has it, else just before the next action
    that has one (an inserted action is there to enable what follows it). Actions are
    then taken one at a time: the applicable one of lowest rank. If that order fails to
    reach the goal, or lies further from the seed, LPG's own order is kept. The actions
    are LPG's either way."""
    positions: dict[Step, list[int]] = {}
    for i, step in enumerate(seed_steps):
        positions.setdefault(step, []).append(i)
    rank: list[float | None] = [None] * len(plan)
    for k, step in enumerate(plan):
        if positions.get(step):
            rank[k] = positions[step].pop(0)
    following = float(len(seed_steps))
    for k in range(len(plan) - 1, -1, -1):
        if rank[k] is None:
            rank[k] = following - 0.5
        else:
            following = rank[k]
    remaining = sorted(range(len(plan)), key=lambda k: (rank[k], k))
    state, out = task.init, []
    try:
        while remaining:
            for k in remaining:
                op = task.operator(*plan[k])
                if op.applicable(state):
                    break
            else:
                return list(plan)
            remaining.remove(k)
            state = op.apply(state)
            out.append(plan[k])
    except GroundingError:
        return list(plan)
    if not task.goal_holds(state) or levenshtein(seed_steps, out) > levenshtein(seed_steps, plan):
        return list(plan)
    return out


def repair(task: Task, domain: str | Path, problem: str | Path, steps: Sequence[Step],
           seed: int = 1, timeout: float = TIMEOUT) -> RepairResult:
    """LPG's repair of `steps` for the task in `domain`/`problem` (the same files the
    task was loaded from). Steps that do not ground are dropped first; a domain LPG
    does not support is skipped. `steps` of the result is LPG's own plan; `reordered`
    the same actions in the seed's order where that order stays valid (`resequence`).
    Neither is judged here."""
    kept, dropped = groundable(task, steps)
    if why := unsupported(domain, problem):
        return RepairResult("skipped", detail=why, seed_length=len(kept), dropped=dropped)
    status, plan, seconds, detail = run_lpg(domain, problem, kept, seed, timeout)
    reordered = resequence(task, steps, plan) if plan is not None else None
    return RepairResult(status, plan, seconds, detail, len(kept), dropped, reordered)
