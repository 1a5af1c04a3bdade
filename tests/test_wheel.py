"""The wheel and the sdist hold every file the package needs outside the repository: the
workflow (Snakefile, rules, schemas, report captions, profiles, envs, scripts, the default
config), the built-in domains, the regimes' schemas and row columns, the study's templates,
texts and migrations. Built as a release is built, `python -m build` (the sdist, then the
wheel from the sdist, so a file the sdist lacks is missing from the wheel too), from a copy
of the repository's files in a temporary folder: the checkout gets no build/, dist/ or
*.egg-info. `.ci/wheel.sh` installs such a wheel and runs it; this test only reads it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from planaudit import __version__
from tests.conftest import ROOT, SUITE_DOMAINS

PACKAGE = "src/planaudit/"


def repository_files() -> list[str]:
    """The checkout's files as git would commit them: tracked, and new ones not ignored
    (so that a data file not yet added is checked too); deleted ones left out."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout of the repository")
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted(f for f in set(out.split("\0"))
                  if f and ((ROOT / f).exists() or (ROOT / f).is_symlink()))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, object]:
    files = repository_files()
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    before = sorted(p.name for p in ROOT.iterdir()), sorted(p.name for p in (ROOT / "src").iterdir())
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f, follow_symlinks=False)  # workflow/, domains/: links
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(base / "dist"), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    after = sorted(p.name for p in ROOT.iterdir()), sorted(p.name for p in (ROOT / "src").iterdir())
    assert after == before  # nothing built in the checkout
    (wheel,) = (base / "dist").glob("*.whl")
    (sdist,) = (base / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        top = f"planaudit-{__version__}/"
        sdist_names = {n.removeprefix(top) for n in t.getnames()}
    return {"files": files, "wheel": wheel, "names": set(zipfile.ZipFile(wheel).namelist()),
            "sdist": sdist_names}


def test_every_file_of_the_package_is_in_the_sdist_and_the_wheel(built):
    """Not only .py: every data file under src/planaudit, so a new one cannot be forgotten."""
    package = [f for f in built["files"] if f.startswith(PACKAGE)]
    data = [f for f in package if not f.endswith(".py")]
    assert len(data) > 100, data  # the workflow's, the domains', the study's ...
    assert not [f for f in package if f not in built["sdist"]]
    assert not [f for f in package if f"planaudit/{f.removeprefix(PACKAGE)}" not in built["names"]]
    # and nothing of a build or a run: no bytecode
    assert not [n for n in built["names"] | built["sdist"] if "__pycache__" in n or n.endswith(".pyc")]


def test_the_wheel_holds_the_workflow_the_domains_the_config_and_the_study(built):
    names = built["names"]
    workflow = ROOT / PACKAGE / "workflow"

    def has(folder: Path, pattern: str) -> list[str]:
        found = sorted(f"planaudit/{p.relative_to(ROOT / PACKAGE)}" for p in folder.glob(pattern)
                       if p.is_file() and "__pycache__" not in p.parts)
        assert found, (folder, pattern)
        assert not [n for n in found if n not in names], found
        return found

    assert "planaudit/workflow/Snakefile" in names
    assert len(has(workflow / "rules", "*.smk")) >= 8
    assert has(workflow / "schemas", "*.yaml") == ["planaudit/workflow/schemas/config.schema.yaml",
                                                   "planaudit/workflow/schemas/row.schema.yaml"]
    assert len(has(workflow / "report", "*.rst")) >= 20
    assert {"planaudit/workflow/profiles/default/config.yaml",
            "planaudit/workflow/profiles/slurm/config.yaml", "planaudit/workflow/envs/planaudit.yaml",
            "planaudit/workflow/scripts/shard_list.py", "planaudit/workflow/config/config.yaml",
            "planaudit/workflow/config/plan_settings.yaml", "planaudit/suite/words.txt"} <= names
    for domain in SUITE_DOMAINS:
        found = has(ROOT / PACKAGE / "domains" / domain, "**/*")
        assert {f"planaudit/domains/{domain}/{f}" for f in ("domain.pddl", "tasks.yaml")} <= set(found)
        assert len([n for n in found if "/problems/" in n]) >= 10
    study = ROOT / PACKAGE / "study"
    has(study, "templates/*.html")
    has(study, "texts/*")
    has(study, "migrations/**/*")
    assert len(has(ROOT / "src" / "planaudit", "*/schema.yaml")) >= 5
    assert len(has(ROOT / "src" / "planaudit", "*/row.yaml")) >= 4


def test_the_wheel_declares_the_command_and_the_inspect_entry_point(built):
    with zipfile.ZipFile(built["wheel"]) as z:
        entry = z.read(f"planaudit-{__version__}.dist-info/entry_points.txt").decode()
    assert "planaudit = planaudit.cli:main" in entry
    assert "[inspect_ai]" in entry and "planaudit = planaudit.harness.registry" in entry


def test_the_conda_environment_installs_this_version():
    """envs/planaudit.yaml (for --use-conda) names the package's own version."""
    env = yaml.safe_load((ROOT / PACKAGE / "workflow" / "envs" / "planaudit.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert pip == [f"planaudit=={__version__}"] and project["version"] == __version__
