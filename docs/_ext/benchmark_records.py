"""The benchmark pages' figures, rendered at build time from the records the scripts write.

    ```{benchmark-record} validate_batch
    :command: .venv/bin/python benchmarks/validate_batch.py --record
    ```

renders docs/benchmarks/records/validate_batch.json: when and on which machine it was
measured, the command that reproduces it, the anchor and the ratio against it, the figures,
the script's tables and its notes. Without a record the block says so and shows
`:command:`, the command that would produce one, so a figure is never typed into a page
by hand. `:tables:` names the tables to show (default: all; `none`: none).

A record that does not parse, or a missing record without `:command:`, is a warning (an
error under `make docs`, which runs with -W).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

RECORDS = Path(__file__).resolve().parents[1] / "benchmarks" / "records"
REQUIRED = ("name", "command", "measured", "machine", "figures")


def number(value: Any) -> str:
    """A value as a table shows it: thousands separated, about three significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        size = abs(value)
        if size >= 100 or value == 0:
            return f"{value:,.0f}"
        if size >= 10:
            return f"{value:.1f}"
        if size >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    return str(value)


def when(record: dict) -> str:
    """The record's start, as a date and a UTC time of day."""
    start = datetime.fromisoformat(record["measured"]["start"])
    return start.strftime("%Y-%m-%d %H:%M UTC")


def machine(record: dict) -> str:
    m = record["machine"]
    cores = f"{m.get('cores')} cores"
    if m.get("usable_cores") not in (None, m.get("cores")):
        cores += f" ({m['usable_cores']} usable)"
    memory = f", {m['memory_gb']:g} GB" if m.get("memory_gb") else ""
    return f"{m.get('cpu')}, {cores}{memory}; {m.get('os')}; Python {m.get('python')}"


def provenance(record: dict) -> str:
    """Measured when and where, under which load, how long it ran, and from which code."""
    parts = [f"Measured {when(record)} on {machine(record)}."]
    load = record.get("load_average") or {}
    if load.get("start") and load.get("end"):
        parts.append(f"Load average (1 min) {load['start'][0]:g} at the start, "
                     f"{load['end'][0]:g} at the end.")
    m = record["measured"]
    cpu = m.get("cpu_seconds") or {}
    if m.get("wall_seconds") is not None:
        parts.append(f"The run took {number(float(m['wall_seconds']))} s of wall time"
                     + (f" ({number(float(cpu.get('self', 0)))} s of CPU in the script, "
                        f"{number(float(cpu.get('children', 0)))} s in its child processes)."
                        if cpu else "."))
    code = record.get("planaudit")
    if code and code.get("commit"):
        parts.append(f"planaudit at commit {code['commit'][:10]}"
                     + (" with uncommitted changes in src/ or benchmarks/." if
                        code.get("uncommitted_changes") else "."))
    return " ".join(parts)


def paragraph(text: str) -> nodes.paragraph:
    return nodes.paragraph("", "", nodes.Text(text))


def grid(columns: list[str], rows: list[list[Any]], title: str = "",
         numeric: set[int] | None = None) -> nodes.table:
    """A docutils table; `numeric` columns are right-aligned."""
    table = nodes.table(classes=["benchmark-record"])
    if title:
        table += nodes.title("", title)
    group = nodes.tgroup(cols=len(columns))
    table += group
    for _ in columns:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for name in columns:
        row += nodes.entry("", paragraph(str(name)))
    head += row
    body = nodes.tbody()
    group += body
    for values in rows:
        row = nodes.row()
        for i, value in enumerate(values):
            classes = ["numeric"] if numeric and i in numeric else []
            row += nodes.entry("", paragraph(number(value)), classes=classes)
        body += row
    return table


def problems(record: Any) -> list[str]:
    if not isinstance(record, dict):
        return ["not a JSON object"]
    return [f"no {key}" for key in REQUIRED if not record.get(key)]



def read_record(path: Path) -> tuple[dict, str | None]:
    """The record at `path`, or the warning that says why it cannot be shown."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        return {}, f"benchmark record {path}: {e}"
    if wrong := problems(record):
        return record, f"benchmark record {path}: {', '.join(wrong)}"
    return record, None

class BenchmarkRecord(SphinxDirective):
    """`{benchmark-record} NAME`: the record docs/benchmarks/records/NAME.json, rendered."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict] = {"command": directives.unchanged, "tables": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        path = RECORDS / f"{name}.json"
        self.env.note_dependency(str(path))
        if not path.is_file():
            return self.missing(name)
        record, error = read_record(path)
        if error:
            return [self.state.document.reporter.warning(error, line=self.lineno)]
        return self.render(record)

    def missing(self, name: str) -> list[nodes.Node]:
        command = self.options.get("command")
        if not command:
            return [self.state.document.reporter.warning(
                f"no benchmark record {name} and no :command: to produce it", line=self.lineno)]
        note = nodes.admonition(classes=["note", "benchmark-missing"])
        note += nodes.title("", f"{name}: not measured on record yet")
        note += paragraph("No record of this benchmark has been written yet, so this page "
                          "shows no figure for it. This command, run from a checkout, "
                          "measures it and writes the record this page is built from:")
        note += nodes.literal_block(command, command, language="shell")
        return [note]

    def render(self, record: dict) -> list[nodes.Node]:
        box = nodes.container(classes=["benchmark-record"])
        box += paragraph(provenance(record))
        box += nodes.paragraph("", "", nodes.Text("Reproduce it from a checkout (add "),
                               nodes.literal("--record", "--record"),
                               nodes.Text(" to write the record):"))
        box += nodes.literal_block(record["command"], record["command"], language="shell")
        anchor = record.get("anchor")
        if anchor:
            ratio = anchor.get("ratio")
            text = f"Anchor: {anchor['name']}."
            if ratio is not None:
                text += f" Ratio {number(ratio)}×"
                text += f": {anchor['about']}." if anchor.get("about") else "."
            box += paragraph(text)
        figures = [[f.get("label") or key, f.get("value"), f.get("unit", "")]
                   for key, f in record["figures"].items()]
        box += grid(["figure", "value", "unit"], figures, f"{record['name']}: figures", {1})
        wanted = self.options.get("tables")
        names = list(record.get("tables") or {})
        if wanted is not None:
            names = [] if wanted.strip() == "none" else [n.strip() for n in wanted.split(",")]
        for key in names:
            table = (record.get("tables") or {}).get(key)
            if table is None:
                box += self.state.document.reporter.warning(
                    f"benchmark record {record['name']}: no table {key}", line=self.lineno)
                continue
            numeric = {i for i, _ in enumerate(table["columns"])
                       if any(isinstance(r[i], int | float) and not isinstance(r[i], bool)
                              for r in table["rows"])}
            box += grid(table["columns"], table["rows"], table.get("title") or key, numeric)
        if record.get("notes"):
            notes = nodes.bullet_list()
            for note in record["notes"]:
                notes += nodes.list_item("", paragraph(note))
            box += paragraph("Notes:")
            box += notes
        return [box]


class BenchmarkSummary(SphinxDirective):
    """`{benchmark-summary}`: one line per record in the folder (when, and the ratio
    against its anchor), so the index shows what is on record without a figure typed in."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(RECORDS))
        rows = []
        for path in sorted(RECORDS.glob("*.json")):
            self.env.note_dependency(str(path))
            record, error = read_record(path)
            if error:
                return [self.state.document.reporter.warning(error, line=self.lineno)]
            anchor = record.get("anchor") or {}
            ratio = anchor.get("ratio")
            load = (record.get("load_average") or {}).get("start") or [None]
            rows.append([record["name"], when(record).split()[0],
                         f"{record['machine'].get('cores')} cores", load[0],
                         f"{anchor['name']}: {number(ratio)}×" if anchor and ratio is not None
                         else "–"])
        if not rows:
            return [paragraph("No benchmark is on record yet.")]
        return [grid(["record", "measured", "machine", "load at start", "anchor: ratio"], rows,
                     "Records", {3})]


def setup(app: Sphinx) -> dict:
    app.add_directive("benchmark-record", BenchmarkRecord)
    app.add_directive("benchmark-summary", BenchmarkSummary)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
