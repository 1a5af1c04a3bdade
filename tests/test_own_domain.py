"""The tutorial's own-domain page (docs/tutorial/own-domain.md), its claims checked: its
files are read out of the page, `planaudit suite new` writes the skeleton, the suite refuses
to run while a TODO is left, and with the page's filled files the suite proves the three
tasks as the page shows them and an episode runs. (tests/test_docs_snippets.py runs the
page's commands; this test checks what they print.) A folder missing a file is an error
naming it."""

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
PAGE = ROOT / "docs" / "tutorial" / "own-domain.md"
FILE_BLOCK = re.compile(r"```\{code-block\} \w+\n:caption: myrun/([\w./-]+)\n\n(.*?)```", re.S)


def page_files() -> dict[str, str]:
    """Each file the page has the reader write, as first written (the page later widens
    config/lights.yaml)."""
    files: dict[str, str] = {}
    for name, text in FILE_BLOCK.findall(PAGE.read_text()):
        files.setdefault(name, text)
    return files


def test_the_tutorial_own_domain_page_says_what_happens(tmp_path, capsys):
    files = page_files()
    assert {"domains/lights/domain.pddl", "domains/lights/problems/p01.pddl",
            "domains/lights/problems/p02.pddl", "domains/lights/problems/p03.pddl",
            "domains/lights/tasks.yaml", "domains/lights/nl.yaml", "config/lights.yaml"} <= set(files)
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
    assert [t["problem"] for t in tasks] == [f"problems/p0{i}.pddl" for i in (1, 2, 3)]
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
    # the page's filled files, its config, its commands
    (folder / "nl.yaml").write_text(files["domains/lights/nl.yaml"])
    cfg = merge(yaml.safe_load(files["config/lights.yaml"]),
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
        ("p01", "True", "2"), ("p02", "False", ""), ("p03", "True", "2")]
    # the results folder comes from the config
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
