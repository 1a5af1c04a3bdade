"""Tests that cannot mislead: no test bounds a duration (a loaded machine makes it flaky,
an idle one makes it pass whatever the code does; timings are printed by benchmarks/),
a test that needs an optional dependency fails under CI instead of skipping silently, and
ACPBench's `show` test runs the project's own suite preparation, not a stand-in."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CLOCKS = {"monotonic", "perf_counter", "time", "process_time"}
DURATION_WORDS = ("second", "elapsed", "wall", "duration")


def _timed(node: ast.AST) -> bool:
    """Whether an expression reads a clock or a value named as a duration."""
    for n in ast.walk(node):
        if _is_clock(n):
            return True
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if any(w in name.lower() for w in DURATION_WORDS):
            return True
    return False


def _is_clock(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCKS and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "time")


def _is_deadline(node: ast.Compare) -> bool:
    """A wait's deadline (`time.monotonic() < end`): the clock itself, not a difference of
    two readings, against a point in time; it bounds a loop that waits for an event and
    fails only when the event never comes, so it asserts no duration."""
    return _is_clock(node.left) or any(isinstance(n, ast.Name) and "deadline" in n.id
                                       for n in ast.walk(node))


def duration_bounds(source: str) -> list[tuple[int, str]]:
    """(line, text) of every assertion that a duration stays under a bound."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        for c in ast.walk(node.test):
            if not isinstance(c, ast.Compare):
                continue
            sides = [c.left, *c.comparators]
            for op, left, right in zip(c.ops, sides, sides[1:], strict=False):
                upper = ((isinstance(op, (ast.Lt, ast.LtE)) and _timed(left))
                         or (isinstance(op, (ast.Gt, ast.GtE)) and _timed(right)))
                if upper and not _is_deadline(c):
                    found.append((node.lineno, ast.unparse(c)))
    return found


def test_the_duration_check_finds_what_it_looks_for():
    assert duration_bounds("assert r.seconds < 4") == [(1, "r.seconds < 4")]
    assert duration_bounds("assert time.monotonic() - start < 10")
    assert duration_bounds("assert bound > wall")
    assert not duration_bounds("assert time.monotonic() < deadline, 'no batch'")
    assert not duration_bounds("assert time.monotonic() < end, 'never reached'")
    assert not duration_bounds("assert server.start_seconds > 0 and n < 4")


def test_no_test_asserts_that_a_duration_stays_under_a_bound():
    found = [f"{p.name}:{line}: {text}" for p in sorted(TESTS.glob("test_*.py"))
             for line, text in duration_bounds(p.read_text())]
    assert not found, "timed assertions (move the timing to benchmarks/):\n" + "\n".join(found)


def _collect(files: list[str], hidden: Path, ci: bool) -> subprocess.CompletedProcess:
    """Collect `files` in a fresh pytest where the interop packages cannot be imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PLANAUDIT_CI_TESTS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hidden), env.get("PYTHONPATH")]))
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-p", "no:randomly", *files],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_a_missing_interop_dependency_fails_under_ci_and_skips_elsewhere(tmp_path):
    """CI installs the interop extra; a test that skipped there when it was missing would
    report green while checking nothing (tests/test_cluster.py and others do the same)."""
    for package in ("every_eval_ever", "inspect_ai"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            f"raise ModuleNotFoundError('{package} hidden by test_honest_tests', name='{package}')\n")
    files = ["tests/test_eee.py", "tests/test_inspect_log.py", "tests/test_harness.py"]
    here = _collect(files, tmp_path, ci=False)
    assert here.returncode == 5, here.stdout[-2000:]  # nothing collected: all skipped
    assert here.stdout.count("SKIPPED") == len(files), here.stdout[-2000:]
    ci = _collect(files, tmp_path, ci=True)
    assert ci.returncode != 0 and "SKIPPED" not in ci.stdout, ci.stdout[-2000:]
    for name in files:
        assert f"ERROR {name}" in ci.stdout, ci.stdout[-2000:]


def test_no_test_replaces_the_suite_preparation():
    """`acpbench show` and `planbench show` prepare the domain they are asked about; a
    test that swaps that function for a fixture never runs it."""
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "setattr" and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)):
                assert not any(name in str(node.args[1].value)
                               for name in ("suite_domain", "prepared_domain")), \
                    f"{path.name}:{node.lineno}: replaces {node.args[1].value}"
