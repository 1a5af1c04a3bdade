"""A benchmark run's record: what a script measured, where, when and by which command.

The documentation's benchmark pages are rendered from these records (docs/_ext/
benchmark_records.py), so the figures there are the figures a script wrote, never copied by
hand. Every script in benchmarks/ calls `write(...)` once at its end; it writes only when
asked, so a plain run prints as before and leaves no file:

    .venv/bin/python benchmarks/step.py --record            # docs/benchmarks/records/step.json
    PLANAUDIT_RECORD=1 .venv/bin/python benchmarks/step.py  # the same
    PLANAUDIT_RECORD=/tmp/r .venv/bin/python benchmarks/step.py   # into /tmp/r instead

`--record` is taken off the command line when this module is imported, before the script
parses its own arguments, and PLANAUDIT_RECORD is taken out of the environment, so a child
process a script starts (a shard, a server, itself with other flags) never writes a record
of its own. PLANAUDIT_RECORD_NOTES adds a note to the record (say, that other work shared
the machine). The load average at import and at the end is recorded beside the figures:
on a shared machine read CPU seconds before wall seconds.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "benchmarks" / "records"
ENV = "PLANAUDIT_RECORD"
NOTES_ENV = "PLANAUDIT_RECORD_NOTES"
FLAG = "--record"
SCHEMA = 1
REQUIRED = ("schema", "name", "script", "command", "measured", "machine", "figures")


def _requested(argv: list[str], environ: Mapping[str, str]) -> Path | None:
    """The folder to write into, from `--record[=DIR]` or PLANAUDIT_RECORD (1 or DIR)."""
    target = None
    for arg in argv[1:]:
        if arg == FLAG:
            target = FOLDER
        elif arg.startswith(FLAG + "="):
            target = Path(arg.split("=", 1)[1])
    value = environ.get(ENV, "")
    if target is None and value and value != "0":
        target = FOLDER if value in ("1", "yes", "true") else Path(value)
    return target


def _take_request() -> Path | None:
    """Read the request and remove it, so the script's parser and its children never see it."""
    target = _requested(sys.argv, os.environ)
    sys.argv[1:] = [a for a in sys.argv[1:] if a != FLAG and not a.startswith(FLAG + "=")]
    os.environ.pop(ENV, None)
    return target


_STARTED = datetime.now(UTC)
_CLOCK = time.perf_counter()
_LOAD_START = os.getloadavg()
_TARGET = _take_request()
_NOTES = os.environ.pop(NOTES_ENV, "")


def requested() -> bool:
    """Whether this run writes a record (a script may skip work only a record needs)."""
    return _TARGET is not None


def figure(value: Any, unit: str = "", label: str | None = None) -> dict:
    """One named value: a number (or a short text such as "none"), its unit, and what it is."""
    if isinstance(value, float):
        value = round(value, 6)
    out = {"value": value, "unit": unit}
    if label:
        out["label"] = label
    return out


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str = "") -> dict:
    """A table of figures (per task, per domain, per size), as columns and rows of values."""
    body = [[round(v, 6) if isinstance(v, float) else v for v in row] for row in rows]
    return {"title": title, "columns": list(columns), "rows": body}


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> dict:
    """The CPU model, cores, memory, OS and Python of this machine (Linux's /proc where present)."""
    cpu = next((line.split(":", 1)[1].strip() for line in _read("/proc/cpuinfo").splitlines()
                if line.startswith("model name")), platform.processor() or platform.machine())
    mem_kb = next((int(line.split()[1]) for line in _read("/proc/meminfo").splitlines()
                   if line.startswith("MemTotal:")), None)
    release = dict(line.split("=", 1) for line in _read("/etc/os-release").splitlines() if "=" in line)
    name = release.get("PRETTY_NAME", "").strip('"') or platform.system()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable,
            "memory_gb": round(mem_kb / 1024 ** 2, 1) if mem_kb else None,
            "os": f"{name}, {platform.system()} {platform.release()}",
            "python": platform.python_version()}


def commit() -> dict | None:
    """planaudit's git commit when run from a checkout, and whether src/ or benchmarks/
    held uncommitted changes (the figures then measure the working tree, not the commit)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        head = git("rev-parse", "HEAD")
        changed = bool(git("status", "--porcelain", "--", "src", "benchmarks"))
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": head, "uncommitted_changes": changed}


def command(argv: Sequence[str] | None = None) -> str:
    """The command line that reproduces this run, from the repository's root."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve() if argv else Path("?")
    try:
        shown = str(script.relative_to(ROOT))
    except ValueError:
        shown = str(argv[0])
    return shlex.join([".venv/bin/python", shown, *argv[1:]])


def _cpu() -> dict:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"self": round(me.ru_utime + me.ru_stime, 2),
            "children": round(kids.ru_utime + kids.ru_stime, 2)}


def build(script: str, figures: Mapping[str, dict], *, variant: str | None = None,
          anchor: Mapping[str, Any] | None = None, tables: Mapping[str, dict] | None = None,
          notes: Iterable[str] = (), argv: Sequence[str] | None = None) -> dict:
    """The record of this run. `anchor` is {"name": what the script measures against,
    "ratio": the figure against it, "about": how to read the ratio}; `tables` maps a name to
    `table(...)`; `notes` are the script's own remarks."""
    now = datetime.now(UTC)
    notes = [*notes, *([_NOTES] if _NOTES else [])]
    return {
        "schema": SCHEMA,
        "name": script if not variant else f"{script}-{variant}",
        "script": f"benchmarks/{script}.py",
        "variant": variant,
        "command": command(argv),
        "measured": {"start": _STARTED.isoformat(timespec="seconds"),
                     "end": now.isoformat(timespec="seconds"),
                     "wall_seconds": round(time.perf_counter() - _CLOCK, 1),
                     "cpu_seconds": _cpu()},
        "machine": machine(),
        "load_average": {"start": [round(x, 2) for x in _LOAD_START],
                         "end": [round(x, 2) for x in os.getloadavg()]},
        "planaudit": commit(),
        "figures": dict(figures),
        "anchor": dict(anchor) if anchor else None,
        "tables": dict(tables or {}),
        "notes": notes,
    }


def write(script: str, figures: Mapping[str, dict], **kwargs: Any) -> Path | None:
    """Write this run's record when one was asked for (see the module's docstring); returns
    its path, or None when none was asked for."""
    if _TARGET is None:
        return None
    record = build(script, figures, **kwargs)
    _TARGET.mkdir(parents=True, exist_ok=True)
    path = _TARGET / f"{record['name']}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"record: {path}", file=sys.stderr)
    return path


def problems(record: Any) -> list[str]:
    """What is missing or malformed in a record (empty: it can be rendered)."""
    if not isinstance(record, dict):
        return ["not a JSON object"]
    out = [f"no {key}" for key in REQUIRED if not record.get(key)]
    if record.get("schema") not in (None, SCHEMA):
        out.append(f"schema {record.get('schema')}, expected {SCHEMA}")
    measured = record.get("measured") or {}
    if measured and not measured.get("start"):
        out.append("no start date")
    for key in ("cpu", "cores", "os", "python"):
        if record.get("machine") and not record["machine"].get(key):
            out.append(f"machine without {key}")
    for name, f in (record.get("figures") or {}).items():
        if not isinstance(f, dict) or "value" not in f or "unit" not in f:
            out.append(f"figure {name}: not {{value, unit}}")
    for name, t in (record.get("tables") or {}).items():
        width = len(t.get("columns", [])) if isinstance(t, dict) else 0
        if not width or any(len(r) != width for r in t.get("rows", [])):
            out.append(f"table {name}: rows do not match its columns")
    anchor = record.get("anchor")
    if anchor is not None and not (isinstance(anchor, dict) and anchor.get("name")):
        out.append("anchor without a name")
    return out
