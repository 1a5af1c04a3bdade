"""The benchmark pages' records: every record can be rendered, every script is on a page
(with its record or with the command that would make one), and the recording helper writes
what it is given and nothing when not asked. No duration is asserted: the figures are the
scripts' to print, not the tests' to bound."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
PAGES = ROOT / "docs" / "benchmarks"
RECORDS = PAGES / "records"
DIRECTIVE = re.compile(r"^```\{benchmark-record\}\s+(\S+)\s*\n((?::\w+:.*\n)*)", re.M)


def _load(path: Path, name: str) -> ModuleType:
    """A module from its file, without putting its folder on sys.path (benchmarks/ holds
    names such as `imports` and `pipeline` that must not shadow anything)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def record() -> ModuleType:
    return _load(BENCHMARKS / "record.py", "benchmark_record_under_test")


def scripts() -> list[str]:
    return sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "record")


def shown() -> dict[str, dict[str, str]]:
    """Every `{benchmark-record} NAME` block of the pages: NAME -> its options."""
    out: dict[str, dict[str, str]] = {}
    for page in sorted(PAGES.glob("*.md")):
        for name, options in DIRECTIVE.findall(page.read_text()):
            assert name not in out, f"{page.name}: {name} is shown twice"
            out[name] = dict(re.findall(r"^:(\w+):\s*(.*)$", options, re.M))
    return out


def recorded() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(RECORDS.glob("*.json"))}


def script_of(name: str) -> str:
    """The script a record or block name belongs to: `validate_batch-numeric` is a variant
    of validate_batch.py."""
    return name.split("-", 1)[0]


@pytest.mark.parametrize("path", sorted(RECORDS.glob("*.json")), ids=lambda p: p.stem)
def test_every_record_parses_and_says_where_when_and_how(record, path):
    rec = json.loads(path.read_text())
    assert record.problems(rec) == [], path.name
    assert rec["name"] == path.stem
    assert (ROOT / rec["script"]).is_file(), rec["script"]
    assert rec["machine"]["cpu"] and rec["machine"]["cores"]
    assert rec["measured"]["start"].endswith("+00:00")  # UTC
    assert rec["command"].startswith(".venv/bin/python benchmarks/"), rec["command"]
    assert "--record" not in rec["command"]
    assert rec["figures"], "a record without figures"


def test_every_script_is_on_a_page_with_its_record_or_the_command_to_make_one():
    blocks = shown()
    records = recorded()
    names = set(scripts())
    for name, options in blocks.items():
        assert script_of(name) in names, f"a page shows {name}, but benchmarks/ has no such script"
        if name not in records:
            assert options.get("command"), (
                f"{name}: no record and no :command: (the page must say how to make one)")
            assert "--record" in options["command"], options["command"]
    on_pages = {script_of(n) for n in blocks}
    assert not names - on_pages, f"scripts on no benchmark page: {sorted(names - on_pages)}"
    assert not set(records) - set(blocks), f"records no page shows: {sorted(set(records) - set(blocks))}"


def test_every_script_records_its_figures():
    for name in scripts():
        source = (BENCHMARKS / f"{name}.py").read_text()
        assert "import record" in source and "record.write(" in source, name


def test_every_page_is_in_the_benchmarks_toctree():
    index = (PAGES / "index.md").read_text()
    toctree = index.split("```{toctree}", 1)[1].split("```", 1)[0]
    for page in sorted(PAGES.glob("*.md")):
        if page.stem != "index":
            assert re.search(rf"^{re.escape(page.stem)}$", toctree, re.M), page.name


def test_a_record_round_trips(record, tmp_path, monkeypatch):
    monkeypatch.setattr(record, "_TARGET", tmp_path)
    figures = {"rate": record.figure(1234.5678912, "plans/s", "a rate"),
               "task": record.figure("logistics/p05", "")}
    tables = {"t": record.table(["a", "b"], [("x", 1.25), ("y", 2)], "a table")}
    anchor = {"name": "a tool", "ratio": 12.5, "about": "ours over theirs"}
    path = record.write("fake", figures, variant="small", anchor=anchor, tables=tables,
                        notes=["a note"], argv=[str(BENCHMARKS / "fake.py"), "--n", "3"])
    assert path == tmp_path / "fake-small.json"
    back = json.loads(path.read_text())
    assert back["name"] == "fake-small" and back["variant"] == "small"
    assert back["script"] == "benchmarks/fake.py"
    assert back["command"] == ".venv/bin/python benchmarks/fake.py --n 3"
    assert back["figures"] == {"rate": {"value": 1234.567891, "unit": "plans/s", "label": "a rate"},
                               "task": {"value": "logistics/p05", "unit": ""}}
    assert back["tables"] == {"t": {"title": "a table", "columns": ["a", "b"],
                                    "rows": [["x", 1.25], ["y", 2]]}}
    assert back["anchor"] == anchor and back["notes"][0] == "a note"
    assert set(back["machine"]) >= {"cpu", "cores", "memory_gb", "os", "python"}
    assert len(back["load_average"]["start"]) == 3
    assert record.problems(back) == []


def test_nothing_is_written_unless_asked(record, tmp_path, monkeypatch):
    monkeypatch.setattr(record, "_TARGET", None)
    assert record.write("fake", {"x": record.figure(1, "s")}) is None
    assert record._requested(["x.py"], {}) is None
    assert record._requested(["x.py", "--n", "3"], {"PLANAUDIT_RECORD": "0"}) is None
    assert record._requested(["x.py", "--record"], {}) == record.FOLDER
    assert record._requested(["x.py", f"--record={tmp_path}"], {}) == tmp_path
    assert record._requested(["x.py"], {"PLANAUDIT_RECORD": "1"}) == record.FOLDER
    assert record._requested(["x.py"], {"PLANAUDIT_RECORD": str(tmp_path)}) == tmp_path


def test_a_broken_record_is_named(record):
    assert record.problems([]) == ["not a JSON object"]
    broken = {"schema": 1, "name": "x", "script": "benchmarks/x.py", "command": "c",
              "measured": {"start": "2026-01-01T00:00:00+00:00"},
              "machine": {"cpu": "c", "cores": 2, "os": "o", "python": "3"},
              "figures": {"a": {"value": 1}},
              "tables": {"t": {"columns": ["a", "b"], "rows": [[1]]}}}
    assert record.problems(broken) == ["figure a: not {value, unit}",
                                       "table t: rows do not match its columns"]


def test_the_pages_format_numbers_readably():
    ext = _load(ROOT / "docs" / "_ext" / "benchmark_records.py", "benchmark_records_under_test")
    assert [ext.number(v) for v in (None, True, 12345, 1234.5, 12.345, 1.2345, 0.012345, 0.0)] \
        == ["–", "yes", "12,345", "1,234", "12.3", "1.23", "0.0123", "0"]
