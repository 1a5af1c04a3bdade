"""A built-in domain cut to a few tasks, as a suite of its own: the tests of `show`
commands run the real preparation path (parse, prove, write) on it, not a stand-in."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import ROOT


def cut_suite_config(tmp_path: Path, domain: str, ids: tuple[str, ...]) -> Path:
    """A config whose suite is `domain` with only the tasks `ids` (our own search proves
    them: no external planner), its results under `tmp_path`."""
    source = ROOT / "domains" / domain
    root = tmp_path / "domains" / domain
    (root / "problems").mkdir(parents=True)
    for name in ("domain.pddl", "nl.yaml", *(f"problems/{i}.pddl" for i in ids)):
        (root / name).write_text((source / name).read_text())
    tasks = yaml.safe_load((source / "tasks.yaml").read_text())
    tasks["tasks"] = [t for t in tasks["tasks"] if t["id"] in ids]
    (root / "tasks.yaml").write_text(yaml.safe_dump(tasks))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"results": str(tmp_path / "results"),
                                      "suite": {"root": str(tmp_path / "domains")},
                                      "truth": {"external": False}}))
    return config
