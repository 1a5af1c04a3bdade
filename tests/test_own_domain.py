"""The README's bring-your-own-domain walkthrough, run as it stands: its files are read
out of README.md, `planaudit suite new` writes the skeleton, the suite refuses to run
while a TODO is left, and with the README's filled files the suite proves both tasks
and an episode runs. A folder missing a file is an error naming it."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from planaudit.cli import main
from planaudit.config import merge
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
FILE_BLOCK = re.compile(r"`([\w./-]+\.(?:pddl|yaml))`[^`]*?:\n\n```\w*\n(.*?)```", re.S)


def readme_files() -> dict[str, str]:
    section = (ROOT / "README.md").read_text().split("### Bring your own domain", 1)[1]
    section = section.split("\n### ", 1)[0]
    return dict(FILE_BLOCK.findall(section))


def test_the_readme_walkthrough_runs(tmp_path, capsys):
    files = readme_files()
    assert {"domains/lights/domain.pddl", "domains/lights/problems/p01.pddl",
            "domains/lights/problems/p02.pddl", "domains/lights/tasks.yaml",
            "domains/lights/nl.yaml", "lights.yaml"} <= set(files)
    for name, text in files.items():
        if name.endswith(".pddl"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
    folder = tmp_path / "domains" / "lights"
    # step 2: the skeleton, with every value to fill marked
    assert main(["suite", "new", str(folder)]) == 0
    nl = yaml.safe_load((folder / "nl.yaml").read_text())
    assert set(nl["predicates"]) == {"on", "off"} and set(nl["actions"]) == {"switch-on"}
    assert all(v.startswith("TODO") for v in nl["predicates"].values())
    tasks = yaml.safe_load((folder / "tasks.yaml").read_text())["tasks"]
    assert [t["problem"] for t in tasks] == ["problems/p01.pddl", "problems/p02.pddl"]
    assert main(["suite", "new", str(folder)]) == 2  # never overwrites
    # the suite refuses to run on placeholders, naming them
    assert main(["suite", "prepare", "--root", str(tmp_path / "domains"), "--domain", "lights",
                 "--task", "p01", "--outdir", str(tmp_path / "x")]) == 2
    assert "tasks[0].label: 'TODO'" in capsys.readouterr().err
    (folder / "tasks.yaml").write_text(files["domains/lights/tasks.yaml"])
    assert main(["suite", "prepare", "--root", str(tmp_path / "domains"), "--domain", "lights",
                 "--task", "p01", "--outdir", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "still a placeholder" in err and "predicates.on" in err and "actions.switch-on" in err
    # step 3 and 4: the README's files, its config, its commands
    (folder / "nl.yaml").write_text(files["domains/lights/nl.yaml"])
    cfg = merge(yaml.safe_load(files["lights.yaml"]),
                {"results": str(tmp_path / "results"), "suite": {"root": str(tmp_path / "domains")},
                 "cache": str(tmp_path / "cache")})
    cfg_path = tmp_path / "lights.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", "2", "suite", "--nolock",
                           "--configfile", str(cfg_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "label audit: 0 disagreement(s)" in proc.stderr
    rows = list(csv.DictReader((tmp_path / "results" / "suite" / "summary.csv").open()))
    assert [(r["task"], r["solvable"], r["optimal_length"]) for r in rows] == [
        ("p01", "True", "2"), ("p02", "False", "")]
    # the README's command: the results folder comes from the config
    assert main(["episode", "--config", str(cfg_path),
                 "--model", "oracle", "--method", "react", "--task", "lights/p01"]) == 0
    out = capsys.readouterr().out
    assert "lamp hall is off" in out and "=== outcome: success" in out


@pytest.mark.parametrize("missing", ["tasks.yaml", "domain.pddl"])
def test_a_domain_folder_missing_a_file_is_named(missing, tmp_path, capsys):
    root = tmp_path / "domains"
    folder = root / "gripper"
    folder.mkdir(parents=True)
    for name in ("domain.pddl", "tasks.yaml", "nl.yaml"):
        if name != missing:
            (folder / name).write_text((ROOT / "domains" / "gripper" / name).read_text())
    from planaudit.suite.catalog import CatalogError, load_suite

    with pytest.raises(CatalogError, match=rf"gripper: missing {re.escape(missing)} \("):
        load_suite({"root": str(root)})
