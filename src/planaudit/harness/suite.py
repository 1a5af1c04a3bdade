"""The prepared suite an Inspect task reads: built once with planaudit's own code, cached.

`inspect eval` runs from any folder, so the task cannot rely on a results folder beside
it: the built-in domains and the default config are the installed package's data
(`planaudit.paths`: the same files in a wheel and in a checkout, where the repository's
`domains/` and `config/config.yaml` link to them), and each task is prepared (obfuscated
as the default config says) and proven exactly as the suite rules do it, into a user
cache folder (`PLANAUDIT_INSPECT_CACHE`, else `$XDG_CACHE_HOME/planaudit/inspect`), keyed
by the suite's root, its layout, its obfuscation and seed, so a changed suite never reads
a stale folder. `suite=DIR` names a folder of prepared tasks (`<domain>/<task>/`, such as a
pipeline run's `results/suite`) to read and fill instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from planaudit import __version__
from planaudit.paths import DEFAULT_CONFIG as CONFIG
from planaudit.paths import DOMAINS


class SuiteError(ValueError):
    """A domain, task or suite folder an Inspect task cannot use; the message names it."""


def cache_root() -> Path:
    if os.environ.get("PLANAUDIT_INSPECT_CACHE"):
        return Path(os.environ["PLANAUDIT_INSPECT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "planaudit" / "inspect"


def base_config() -> dict:
    """The default experiment's config (suite and truth sections, the models' entries)."""
    from planaudit.config import load_config

    return load_config(base=CONFIG)


def split(value: str | Sequence[str] | None) -> list[str] | None:
    """`-T tasks=p01,p02` (a string) or a YAML list."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def suite_section(root: str | Path | None, domain: str) -> dict:
    """The config's suite section for `domain` under `root` (the built-in domains by
    default); a root whose domain folder holds no `tasks.yaml` is an external suite."""
    suite = dict(base_config()["suite"])
    folder = Path(root).resolve() if root else DOMAINS
    external = root is not None and not (folder / domain / "tasks.yaml").is_file()
    suite.update(root=str(folder), domains=[domain])
    if external:
        suite["source"] = "external"
    if not (folder / domain).is_dir():
        have = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        raise SuiteError(f"{folder}: no domain '{domain}' (have: {', '.join(have) or 'none'})")
    return suite


def prepared(domain: str, tasks: str | Sequence[str] | None = None, root: str | None = None,
             suite: str | None = None) -> tuple[Path, list[str]]:
    """(the folder holding `<domain>/<task>/`, the task ids), every task prepared and
    proven (`tasks`: only those ids; default every task of the domain)."""
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import load_suite, obfuscated
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth

    section = suite_section(root, domain)
    truth = base_config()["truth"]
    entries = load_suite(section)
    wanted = split(tasks)
    if wanted:
        known = {e.id for e in entries}
        if missing := [t for t in wanted if t not in known]:
            raise SuiteError(f"{domain}: no task {', '.join(missing)} "
                             f"(have: {', '.join(sorted(known))})")
        entries = [e for e in entries if e.id in wanted]
    seed, hide = int(section.get("seed", 0)), obfuscated(section, domain)
    if suite:
        base = Path(suite).resolve()
    else:
        key = json.dumps({"root": section["root"], "source": section.get("source", "builtin"),
                          "seed": seed, "obfuscate": hide, "version": __version__},
                         sort_keys=True)
        base = cache_root() / hashlib.sha256(key.encode()).hexdigest()[:16]
    limits = Limits(truth["bfs_states"], truth["astar_seconds"], truth["external_seconds"],
                    truth["external"])
    for entry in entries:
        folder = base / domain / entry.id
        if not (folder / "brief.json").is_file():
            prepare(entry, folder, hide, seed, section.get("description", "templates"))
        if not (folder / "truth.json").is_file():
            make_truth(entry, folder, limits, section.get("audit", "strict"))
    return base, [e.id for e in entries]


def reference_entry(variant: str) -> dict:
    """The default config's entry for a reference model (its faults and seed)."""
    for m in base_config().get("models", []):
        if m["model"] == f"reference/{variant}":
            return m
    return {"name": variant, "model": f"reference/{variant}"}
