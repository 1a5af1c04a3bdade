"""Difficulty sweeps (`suite.sweep`): generated tasks of growing size, laid into the suite as
a domain of their own, so they are prepared, proven and run like any suite task.

Each sweep `{domain, sizes, per_size, seed, name}` writes a domain folder `<name>` (default
`<domain>-sweep`) under the run's `results/sweep/`: the suite domain's own domain file and
brief templates, one problem per size and index (`s<size>-<index>`, the generator of
`suite/generators.py`, or the domain's instance family for a domain without one), and a
`tasks.yaml` that claims each task solvable with no optimal length (the suite proves both).
The suite then reads a root of links beside them (`results/sweep/root/`: every domain of
the configured root, and each sweep folder), so nothing else knows a sweep from a domain.
The files are written when the workflow starts (their tasks must be known to build the
DAG) and only when their text changes, so a rerun reruns nothing.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from planaudit import atomic
from planaudit.suite.generators import GENERATORS, UNITS, rng_for

# (domain name, domain folder, size, seed) -> problem PDDL: a domain's instance family
Family = Callable[[str, Path, int, int], str]
# the instance families live with the curriculum (t5), above the suite: named, loaded on use
FAMILIES = "planaudit.curriculum.families:sweep_problem"


def families() -> Family:
    module, _, function = FAMILIES.partition(":")
    return getattr(importlib.import_module(module), function)


class SweepError(ValueError):
    """A sweep that cannot be generated; the message names the field."""


def _write(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text)


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.is_symlink() or link.exists():
        link.unlink() if link.is_symlink() or link.is_file() else shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=True)


def generate(sweep: Mapping[str, Any], root: Path, out: Path, where: str,
             family: Family | None) -> str:
    """Write one sweep's domain folder under `out`; its name."""
    domain = sweep["domain"]
    source = root / domain
    if not (source / "domain.pddl").is_file():
        raise SweepError(f"{where}.domain: no domain '{domain}' in the suite at {root}")
    name = sweep.get("name") or f"{domain}-sweep"
    folder = out / name
    seed, per_size = int(sweep.get("seed", 0)), int(sweep.get("per_size", 1))
    _write(folder / "domain.pddl", (source / "domain.pddl").read_text())
    for extra in ("nl.yaml", "family.yaml"):
        if (source / extra).is_file():
            _write(folder / extra, (source / extra).read_text())
    tasks = []
    for size in sweep["sizes"]:
        for index in range(1, per_size + 1):
            if domain in GENERATORS:
                text = GENERATORS[domain](int(size), rng_for(seed, domain, size, index))
            elif family is not None:
                text = family(domain, source, int(size), seed + index - 1)
            else:
                raise SweepError(f"{where}.domain: no generator for '{domain}' (built in: "
                                 f"{', '.join(GENERATORS)}; or declare a family.yaml)")
            task = f"s{int(size):02d}-{index}"
            _write(folder / "problems" / f"{task}.pddl", text)
            tasks.append({"id": task, "problem": f"problems/{task}.pddl", "label": "solvable",
                          "optimal_length": None, "size": int(size),
                          "tests": f"sweep: {size} {UNITS.get(domain, 'size')}, #{index}"})
    _write(folder / "tasks.yaml", yaml.safe_dump({"domain": name, "sweep": domain,
                                                  "tasks": tasks}, sort_keys=False))
    return name


def with_sweeps(suite: Mapping[str, Any], out: str | Path,
                family: Family | str | None = "families") -> dict[str, Any]:
    """The suite config with its sweeps laid in: the root a folder of links to every domain
    of the configured root and to each sweep's folder (written under `out`), the sweep
    domains added to `domains` and `obfuscate` where their source domain is listed there."""
    sweeps = suite.get("sweep") or []
    if not sweeps:
        return dict(suite)
    root, out = Path(suite["root"]).resolve(), Path(out).resolve()
    if family == "families":  # the default: the curriculum's families (None: none)
        family = families()
    names = [generate(s, root, out, f"suite.sweep[{i}]", family) for i, s in enumerate(sweeps)]
    merged = out / "root"
    merged.mkdir(parents=True, exist_ok=True)
    for folder in sorted(p for p in root.iterdir() if (p / "domain.pddl").is_file()):
        _link(merged / folder.name, folder)
    for name in names:
        _link(merged / name, out / name)
    laid = {**suite, "root": str(merged)}
    for key in ("domains", "obfuscate"):
        if suite.get(key) is not None:
            laid[key] = [*suite[key], *(n for s, n in zip(sweeps, names, strict=True)
                                        if key == "domains" or s["domain"] in suite[key])]
    return laid


def sizes(root: Path, domain: str) -> dict[str, int]:
    """A sweep domain's task ids and their sizes (empty for a domain that is not a sweep)."""
    path = root / domain / "tasks.yaml"
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    if not isinstance(data, dict) or "sweep" not in data:
        return {}
    return {str(t["id"]): int(t["size"]) for t in data["tasks"]}
