"""Every command and snippet of the tutorial and the how-to guides, run as a reader runs it.

The pages under docs/tutorial/ and docs/howto/ are read by sybil (its MyST parsers) and
played in order, one page one test, so that the docs cannot drift from the code. The
convention a page follows (docs/howto and docs/tutorial pages are written to it):

- ```` ```bash ```` blocks run, in page order, under `bash -e` in the page's own folder: a
  fresh empty temporary folder per page (or, for `% needs: checkout`, a fresh `git clone`
  of this repository with its .venv linked in), kept across the page's blocks; each block
  starts there (a `cd` does not carry over). PATH has the project's .venv/bin first; API
  keys and provider URLs are taken out of the environment.
- a ```` ```{code-block} LANG ```` with a `:caption:` naming a path (relative to the page
  folder) is a file the reader writes: the test writes it there when the page reaches it.
- ```` ```python ```` blocks run in one namespace per page, in the page folder.
- anything else (```` ```text ````, ```` ```yaml ```` without a caption, ...) is shown, not run.
- `% needs: slurm | local-server | chromium | checkout | planbench | acpbench` at the top
  of a page: without the service the page skips, unless CI is set (CI starts them all):
  then it fails. `planbench` and `acpbench` are the published material beside the checkout
  (../shared/), named to the page's commands by `$PLANBENCH` and `$ACPBENCH`.

Why one test per page, not sybil's own pytest collector: a page's blocks share a folder
and a namespace and only make sense in order, `make test` collects tests/ only, and one
item per page gives each page's run time in `--durations`. The pages are played by a few
small files (`GROUPS` below), so that xdist's `--dist loadfile` runs them on different
workers; this file holds the harness and its own tests.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sybil import Document, Example, Region, Sybil
from sybil.parsers.myst import CodeBlockParser, PythonCodeBlockParser
from sybil.parsers.myst.lexers import DirectiveLexer

from tests.conftest import ROOT, outside_ci_unless_asked

DOCS = ROOT / "docs"
FOLDERS = ("tutorial", "howto")
PAGES = sorted(p for folder in FOLDERS for p in (DOCS / folder).glob("*.md"))
VENV = Path(sys.executable).parent.parent  # the environment running the tests
NEEDS = re.compile(r"^%\s*needs:\s*(.+)$", re.M)
KNOWN_NEEDS = ("slurm", "local-server", "chromium", "checkout", "planbench", "acpbench")


def _planbench() -> Path:
    from tests.test_planbench import SHARED as folder

    return folder


def _acpbench() -> Path:
    from tests.test_acpbench import SHARED as folder

    return folder


# material published elsewhere, found where the tests that read it find it (beside the
# checkout, ../shared/), and named to the page by an environment variable of the need's name
SHARED: dict[str, Callable[[], Path]] = {"planbench": _planbench, "acpbench": _acpbench}
BLOCK_TIMEOUT = 1800  # seconds; the default experiment takes about five minutes
TAIL = 60  # lines of a failing block's output in the failure
# environment variables a page must not rely on (no keys, no provider URLs)
SECRET = re.compile(r"(_API_KEY|_API_BASE|_BASE_URL|_TOKEN|_SECRET)$")


@dataclass
class Page:
    """One page's run: its folder, environment, and the process groups its blocks started."""

    path: Path
    folder: Path
    env: dict[str, str]
    groups: list[int] = field(default_factory=list)

    def where(self, line: int) -> str:
        return f"{shown(self.path)}:{line}"


def _fenced(document: Document, region: Region) -> bool:
    """A block the reader sees (a fence), not one hidden in a `%` or HTML comment."""
    return document.text[region.start:region.end].lstrip(" \t>").startswith(("```", "~~~"))


def _captioned(region: Region) -> bool:
    return bool((region.lexemes.get("options") or {}).get("caption"))


class ShownBlocks(CodeBlockParser):
    """sybil's MyST code-block parser for one language, keeping only visible blocks that are
    not files (a captioned `{code-block}` is a file the reader writes, see `FileParser`)."""

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in super().__call__(document):
            if _fenced(document, region) and not _captioned(region):
                yield region


class PythonBlocks(PythonCodeBlockParser):
    """sybil's Python parser (code blocks and `>>>` doctests) over `ShownBlocks`; each block
    runs with the page folder as the working directory."""

    codeblock_parser_class = ShownBlocks

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in super().__call__(document):
            region.evaluator = in_page_folder(region.evaluator)
            yield region


def in_page_folder(evaluate: Callable[[Example], str | None]) -> Callable[[Example], str | None]:
    def run(example: Example) -> str | None:
        page: Page = example.namespace["page"]
        here, env = Path.cwd(), dict(os.environ)
        os.chdir(page.folder)
        os.environ.clear()
        os.environ.update(page.env)
        try:
            return evaluate(example)
        finally:
            os.chdir(here)
            os.environ.clear()
            os.environ.update(env)

    return run


class FileParser:
    """A `{code-block}` with a `:caption:` naming a path: the file the reader writes."""

    def __init__(self) -> None:
        self.lexer = DirectiveLexer(directive=r"(sourcecode|code-block|code)", arguments=".*")

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexer(document):
            if _fenced(document, region) and _captioned(region):
                region.parsed = region.lexemes["source"]
                region.evaluator = write_file
                yield region


def write_file(example: Example) -> None:
    page: Page = example.namespace["page"]
    name = example.region.lexemes["options"]["caption"].strip()
    target = (page.folder / name).resolve()
    if Path(name).is_absolute() or not target.is_relative_to(page.folder.resolve()):
        raise AssertionError(f"{page.where(example.line)}: caption {name!r} is not a path "
                             "inside the page folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(str(example.parsed))


# The ERR trap names the command bash -e stops at (the last one it fires for); BASH_ENV is
# read by a non-interactive bash before its script, and unset there so that no bash the
# block starts (a Makefile's, a script's) reads it again.
ERR_TRAP = """unset BASH_ENV
set -E
trap 'printf "%s\\n%s\\n" "$LINENO" "$BASH_COMMAND" > "$PLANAUDIT_DOCS_FAILED"' ERR
"""


def run_bash(example: Example) -> None:
    """Run one block; a failure names the page's line, the command, its exit code and the
    tail of its output, so a reader of the test log needs nothing else."""
    page: Page = example.namespace["page"]
    source = str(example.parsed)
    first = example.line + 1 + example.parsed.line_offset  # the page line of the block's line 1
    scratch = page.folder.parent / "blocks"
    scratch.mkdir(exist_ok=True)
    n = len(page.groups)
    log, failed, trap = (scratch / f"{n}.log", scratch / f"{n}.failed", scratch / "trap.sh")
    trap.write_text(ERR_TRAP)
    env = dict(page.env, BASH_ENV=str(trap), PLANAUDIT_DOCS_FAILED=str(failed))
    start = time.monotonic()
    # output to a file, not a pipe: a server the block leaves in the background would hold
    # a pipe open; a session of its own, so that what it leaves running is stopped with it
    with open(log, "wb") as out:
        proc = subprocess.Popen(["bash", "-e", "-c", source], cwd=page.folder, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        page.groups.append(proc.pid)
        try:
            code = proc.wait(BLOCK_TIMEOUT)
        except subprocess.TimeoutExpired:
            stop_group(proc.pid)
            code = None
    seconds = time.monotonic() - start
    lines = log.read_text(errors="replace").splitlines()
    print(f"--- {page.where(example.line)}: bash block, {seconds:.1f} s, exit {code}")
    print("\n".join(lines[-200:]))
    if code == 0:
        return
    where, command = first, source.strip().splitlines()[0]
    if failed.exists():
        lineno, _, command = failed.read_text().partition("\n")
        where = first + int(lineno) - 1 if lineno.strip().isdigit() else first
    why = f"timed out after {BLOCK_TIMEOUT} s" if code is None else f"exit code {code}"
    pytest.fail(f"{page.where(where)}: `{command.strip()}` failed ({why}, after "
                f"{seconds:.0f} s); last {min(TAIL, len(lines))} lines of the block's output:\n"
                + "\n".join(lines[-TAIL:]), pytrace=False)


def stop_group(pgid: int, grace: float = 10) -> None:
    """Stop what a block started and left running (a server in the background): its own
    process group, TERM then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + grace
        while time.monotonic() < end:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


SYBIL = Sybil(parsers=[ShownBlocks("bash", run_bash), PythonBlocks(), FileParser()],
              path=str(DOCS))


def executed(document: Document) -> list[Example]:
    """The examples a page runs (bash and Python; files are written, not run)."""
    return [e for e in document.examples() if e.region.evaluator is not write_file]


def needs(text: str) -> list[str]:
    """The services a page declares (`% needs: a, b` lines, anywhere before its text)."""
    return [n.strip() for line in NEEDS.findall(text) for n in line.split(",") if n.strip()]


def _unavailable(what: str, reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and {what} is not available here: {reason}")
    pytest.skip(f"needs {what}: {reason}")


def require(need: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """Skip (fail under CI) unless `need` is here, detected as the tests that use it do;
    the environment variables the page reads it by (`$PLANBENCH`, `$ACPBENCH`)."""
    if need in SHARED:
        folder = SHARED[need]()
        if not folder.is_dir():
            _unavailable(f"{need}'s material", f"{folder} is not here")
        return {need.upper(): str(folder)}
    if need == "checkout":
        if not (ROOT / ".git").exists() or not shutil.which("git"):
            _unavailable("a checkout", f"{ROOT} is not a git repository, or git is missing")
    elif need == "slurm":
        from tests.test_cluster import SCRIPT

        up = (shutil.which("sinfo") is not None
              and subprocess.run([str(SCRIPT), "status"], capture_output=True).returncode == 0)
        if not up:  # tests/test_cluster.py's own fixture brings it up (CI, or when asked)
            request.getfixturevalue("cluster")
    elif need == "local-server":
        from tests.test_live_model import SCRIPT

        built = subprocess.run([str(SCRIPT), "check"], capture_output=True,
                               timeout=300).returncode == 0
        if not built:  # as tests/test_live_model.py: build it in CI, or when asked
            outside_ci_unless_asked("a page that needs the local model server")
            proc = subprocess.run([str(SCRIPT), "install"], capture_output=True, text=True,
                                  timeout=1800)
            if proc.returncode != 0:
                _unavailable("the local model server", "local/server.sh install exited with "
                             f"{proc.returncode}: {(proc.stdout + proc.stderr)[-2000:]}")
    elif need == "chromium":
        from tests.study_server import CHROMIUM

        if not CHROMIUM:
            _unavailable("Chromium", "no `chromium` on PATH (PLANAUDIT_CHROMIUM names another)")
    else:
        pytest.fail(f"unknown need {need!r} (known: {', '.join(KNOWN_NEEDS)})")
    return {}


def page_folder(tmp: Path, checkout: bool) -> Path:
    """A fresh empty folder, or a fresh clone of this repository whose .venv (and local model
    server venv, when built) are the ones running the tests: nothing is installed again."""
    folder = tmp / "page"
    if not checkout:
        folder.mkdir(parents=True)
        return folder
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True,
                   capture_output=True, timeout=300)
    (folder / ".venv").symlink_to(VENV)
    if (ROOT / ".venv-server").exists():
        (folder / ".venv-server").symlink_to(ROOT / ".venv-server")
    # make's install rule (.venv/.installed: pyproject.toml) must not fire on the clone's
    # newer pyproject.toml: that would reinstall the shared environment from the clone
    stamp = VENV / ".installed"
    if stamp.exists():
        before = stamp.stat().st_mtime - 1
        os.utime(folder / "pyproject.toml", (before, before))
    return folder


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not SECRET.search(k)}
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)
    return env


@contextmanager
def played(page: Page) -> Iterator[Page]:
    try:
        yield page
    finally:
        for pgid in page.groups:
            stop_group(pgid)


def shown(path: Path) -> Path:
    """A page's path as a failure names it: from the repository's root."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def play(path: Path, tmp: Path, request: pytest.FixtureRequest) -> None:
    """A page's blocks in order; a page that is not an index must run at least one."""
    document = SYBIL.parse(path)
    text = document.text
    hidden = re.findall(r"^(?:%|<!--)\s*invisible-code", text, re.M)
    assert not hidden, f"{shown(path)}: invisible code blocks run what the reader cannot see"
    if path.name != "index.md":
        assert executed(document), (f"{shown(path)}: no ```bash or ```python block: a page of "
                                    "the tutorial or the how-to guides must run what it tells")
    wanted = needs(text)
    env = environment()
    for need in wanted:
        env.update(require(need, request))
    page = Page(path, page_folder(tmp, "checkout" in wanted), env)
    document.namespace["page"] = page
    with played(page):
        for example in document.examples():
            example.evaluate()


# Which test file plays which pages. A file is one unit of `make test`'s workers (xdist's
# `--dist loadfile`), so the pages are spread over a few files, each page on its own cost
# (tests/conftest.py's SLOW_FILES orders them): on one file they ran one after another on
# one worker while the other had finished. Every page is in exactly one group.
GROUPS: dict[str, tuple[str, ...]] = {
    "test_docs_first_run.py": ("tutorial/first-run.md",),
    "test_docs_tutorial.py": ("tutorial/index.md", "tutorial/own-domain.md",
                              "tutorial/own-model.md", "howto/exchange.md"),
    "test_docs_howto.py": ("howto/index.md", "howto/acpbench.md", "howto/batch.md",
                           "howto/pilot.md", "howto/planbench-replay.md", "howto/formalize.md"),
    "test_docs_services.py": ("howto/cluster.md", "howto/local-model.md", "howto/study.md",
                              "howto/compliance.md"),
}


def pages_test(module: str) -> Callable[..., None]:
    """The test a docs test file holds: its group's pages, one test a page, each played
    by `play` (`test_page = pages_test(__name__)` in the file)."""
    names = GROUPS[module.rsplit(".", 1)[-1] + ".py"]

    @pytest.mark.parametrize("path", [DOCS / n for n in names], ids=list(names))
    def test_page(path: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        play(path, tmp_path, request)

    return test_page


def test_every_page_is_found_and_played_by_one_file() -> None:
    """The pages the tests play exist (a moved folder would make them pass on nothing), and
    every page is in exactly one group, whose file plays it."""
    import importlib

    assert {p.parent.name for p in PAGES} == set(FOLDERS), PAGES
    grouped = [n for names in GROUPS.values() for n in names]
    assert sorted(grouped) == sorted(str(p.relative_to(DOCS)) for p in PAGES), (
        "a page in no group of GROUPS, or in two, or a group naming no page")
    for file, names in GROUPS.items():
        module = importlib.import_module(f"tests.{file.removesuffix('.py')}")
        marks = module.test_page.pytestmark
        assert [m.args[1] for m in marks if m.name == "parametrize"] == [
            [DOCS / n for n in names]], file


SELF_TEST = """# A page

```{code-block} text
:caption: sub/note.txt

written by the test
```

```bash
cat sub/note.txt
```

```python
from pathlib import Path
seen = Path("sub/note.txt").read_text()
```

```python
assert seen == "written by the test\\n"
```

```bash
echo a line of output
false
echo never
```
"""


def test_a_failing_command_names_its_page_line_command_and_code(tmp_path, request) -> None:
    """The harness itself: files written, Python in one namespace in the page folder, and a
    failing command reported with the page's line, the command, its exit code and output."""
    page = tmp_path / "page.md"
    page.write_text(SELF_TEST)
    with pytest.raises(pytest.fail.Exception) as failed:
        play(page, tmp_path / "run", request)
    message = str(failed.value)
    assert f"{page}:24: `false` failed (exit code 1" in message, message
    assert message.rstrip().endswith("a line of output"), message


def test_a_page_that_runs_nothing_fails(tmp_path, request) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```sh\necho shown, never run\n```\n")
    with pytest.raises(AssertionError, match="no ```bash or ```python block"):
        play(page, tmp_path / "run", request)
