"""The reference (docs/reference/) shows what the code has: every command and option of
`planaudit` (its argument parsers), every config field (the experiment schema, each
regime's section, the study config) and every row column (the row schema and each
regime's own), each with its help, or its type, default and meaning, as a Sphinx build
renders the pages. A flag, field or column the code gains without a help text or a
description, or that the pages do not show, fails here; and the defaults the config
reference states are checked against the ones the code applies, where that is cheap.

The checks walk the parsers and schemas on their own (not through docs/_ext), so that a
field the extension skipped would be missed by the pages and caught here."""

from __future__ import annotations

import argparse
import copy
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TYPED = ("type", "enum", "const", "$ref", "oneOf", "anyOf", "allOf", "properties")
# the keywords a field may hold: a YAML slip (`{description: a, b}` in flow style) makes
# keys of the words after a comma, and cuts the description short without an error
KEYWORDS = {*TYPED, "items", "additionalProperties", "required", "description", "default",
            "x-default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
            "minItems", "maxItems", "uniqueItems", "pattern", "minLength", "maxLength",
            "propertyNames", "format", "examples", "title", "$defs", "$comment"}


# ---------------------------------------------------------------- the rendered pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """The three reference pages as Sphinx's text builder writes them (warnings as errors),
    built from a copy of docs/ that holds only them, so other pages cannot break this."""
    src = tmp_path_factory.mktemp("docs")
    shutil.copy(DOCS / "conf.py", src / "conf.py")
    for folder in ("_ext", "_static", "reference"):
        if (DOCS / folder).is_dir():
            shutil.copytree(DOCS / folder, src / folder)
    (src / "index.md").write_text("# planaudit\n\n```{toctree}\nreference/index\n```\n")
    out = src / "_build"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", "text", str(src), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {name: (out / "reference" / f"{name}.txt").read_text()
            for name in ("index", "cli", "config", "rows")}


def squash(text: str) -> str:
    """Text as compared with a page: no whitespace (the text builder wraps lines, even at
    a hyphen), no quotes, backticks or stars (how it shows code and bold)."""
    return re.sub(r"[\s\"`*]", "", text)


def titles(text: str) -> list[tuple[int, str]]:
    """(offset, title) of every section title of a text page (a line underlined)."""
    out, offset = [], 0
    lines = text.splitlines(keepends=True)
    for line, under in zip(lines, [*lines[1:], ""], strict=True):
        head, rule = line.rstrip("\n"), under.rstrip("\n")
        if head.strip() and rule and len(set(rule)) == 1 and rule[0] in "=-~\"^+*#'`:._" \
                and len(rule) == len(head):
            out.append((offset, head.strip().strip('"')))
        offset += len(line)
    return out


def section(text: str, title: str, until: set[str] | None = None) -> str:
    """The text from the section titled `title` to the next title (or the next one in
    `until`)."""
    found = titles(text)
    starts = [i for i, (_, t) in enumerate(found) if t == title]
    assert starts, f"no section {title!r}"
    i = starts[0]
    end = next((o for o, t in found[i + 1:] if until is None or t in until), len(text))
    return text[found[i][0]:end]


def entries(text: str) -> dict[str, list[str]]:
    """A definition list as the text builder writes it: a term (the field, as code) alone
    on a line, its definition indented below; term -> the definitions."""
    out: dict[str, list[str]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.fullmatch(r'"(.+)"', line)
        if not m or i + 1 >= len(lines) or not lines[i + 1].startswith(" "):
            continue
        body = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and not nxt.startswith(" "):
                break
            body.append(nxt)
        out.setdefault(m.group(1), []).append("\n".join(body))
    return out


# ---------------------------------------------------------------- the CLI


def walk_parser(parser: argparse.ArgumentParser, name: str = "planaudit",
                help: str | None = None) -> Iterator[tuple[str, str | None, argparse.ArgumentParser]]:
    """(whole command, its help, its parser) of the command and every subcommand."""
    yield name, help, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                yield from walk_parser(sub, f"{name} {sub_name}", helps.get(sub_name))


_DEFAULT = re.compile(r"\(default\b[^)]*\)|\bdefault:? *%\(default\)s|%\([a-z_]+\)s")


def meaning(text: str | None) -> list[str]:
    """The parts of a help text a reader learns from: without `%(default)s` and a
    parenthesised `(default ...)` (the reference shows defaults itself); [] for none."""
    if text is None or text == argparse.SUPPRESS:
        return []
    return [p.strip(" ;,.()") for p in _DEFAULT.split(text) if p.strip(" ;,.()")]


def command_blocks(page: str) -> dict[str, str]:
    """Whole command -> its part of the CLI page (to the next command's title)."""
    found = [(o, t) for o, t in titles(page) if t.startswith("planaudit ")]
    bounds = [*[o for o, _ in found[1:]], len(page)]
    blocks = {t: page[o:end] for (o, t), end in zip(found, bounds, strict=True)}
    blocks["planaudit"] = page[:found[0][0]] if found else page
    return blocks


def cli_problems(parser: argparse.ArgumentParser, page: str) -> list[str]:
    """Every command without a help, or not shown; every option or argument without a
    help, or not shown with its help."""
    problems = []
    blocks = command_blocks(page)
    for name, help, sub in walk_parser(parser):
        if name != "planaudit" and not meaning(help):
            problems.append(f"{name}: no help")
        if name not in blocks:
            problems.append(f"{name}: not in the CLI reference")
            continue
        block = blocks[name]
        lines = {line.strip() for line in block.splitlines()}
        flat = squash(block)
        if any(squash(part) not in flat for part in meaning(help)):
            problems.append(f"{name}: its help is not shown")
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            label = ", ".join(action.option_strings) or str(action.metavar or action.dest)
            if not meaning(action.help):
                problems.append(f"{name} {label}: no help")
            if label not in lines:
                problems.append(f"{name} {label}: not in the CLI reference")
            elif any(squash(part) not in flat for part in meaning(action.help)):
                problems.append(f"{name} {label}: its help is not shown")
    return problems


def test_every_command_and_option_has_a_help_and_is_shown(pages):
    from planaudit.cli import build_parser

    parser = build_parser()
    assert len(list(walk_parser(parser))) > 40  # the walk reaches the subcommands
    assert cli_problems(parser, pages["cli"]) == []


def test_the_cli_check_fails_on_an_undocumented_flag_and_command(pages):
    """The check itself can fail: a flag without a help, and a command the page does not
    show, are named."""
    from planaudit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices["validate"].add_argument("--undocumented-flag")
    sub.choices["collect"].add_argument("--new-flag", help="a flag the pages never saw")
    sub.add_parser("brand-new", help="a command the pages never saw")
    found = cli_problems(parser, pages["cli"])
    assert "planaudit validate --undocumented-flag: no help" in found
    assert "planaudit validate --undocumented-flag: not in the CLI reference" in found
    assert "planaudit collect --new-flag: not in the CLI reference" in found
    assert "planaudit brand-new: not in the CLI reference" in found


# ---------------------------------------------------------------- schemas


def deref(schema: Mapping, root: Mapping) -> Mapping:
    while "$ref" in schema:
        target: object = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]  # type: ignore[index]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}  # type: ignore[dict-item]
    return schema


def schema_fields(schema: Mapping, root: Mapping | None = None, path: str = ""
                  ) -> Iterator[tuple[str, Mapping, bool]]:
    """(dotted path, schema, required) of every named property, through properties, list
    items (`[]`), mapping values (`<name>`), alternatives and references."""
    root = schema if root is None else root
    schema = deref(schema, root)
    required = set(schema.get("required", ()))
    for name, sub in (schema.get("properties") or {}).items():
        here = f"{path}.{name}" if path else name
        yield here, deref(sub, root), name in required
        yield from schema_fields(sub, root, here)
    if isinstance(schema.get("items"), Mapping):
        yield from schema_fields(schema["items"], root, f"{path}[]")
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from schema_fields(schema["additionalProperties"], root, f"{path}.<name>")
    for key in ("oneOf", "anyOf", "allOf"):
        for alternative in schema.get(key, ()):
            yield from schema_fields(alternative, root, path)


def flow(value: object) -> str:
    """A value as YAML writes it in flow style (how the reference shows values)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip() \
        .removesuffix("...").strip()


def type_words(schema: Mapping, root: Mapping) -> list[str]:
    """What the reference must say of a field's type: its JSON types (object as mapping,
    array as list) or its allowed values."""
    schema = deref(schema, root)
    if "const" in schema:
        return [flow(schema["const"])]
    if "enum" in schema:
        return [flow(v) for v in schema["enum"]]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return [w for alt in schema[key] for w in type_words(alt, root)]
    kinds = schema.get("type", "object")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return [{"object": "mapping", "array": "list"}.get(k, k) for k in kinds]


def field_problems(schema: Mapping, shown: dict[str, list[str]], prefix: str = "",
                   required: Mapping[str, str] | None = None) -> list[str]:
    """Every field of `schema` (below `prefix`, a regime's key) without a type or a
    description, or not shown in `shown` (term -> definitions of the rendered page) with
    its type, default, whether it is required and its meaning."""
    fields: dict[str, tuple[Mapping, bool]] = {}
    if prefix:
        fields[prefix] = (schema, False)
    for path, sub, is_required in schema_fields(schema, schema, prefix):
        fields.setdefault(path, (sub, is_required))
    problems = []
    for path, (sub, is_required) in fields.items():
        if not any(k in sub for k in TYPED):
            problems.append(f"{path}: no type")
        if unknown := sorted(set(sub) - KEYWORDS):
            problems.append(f"{path}: unknown keywords {unknown}")
        description = " ".join(str(sub.get("description", "")).split())
        if not description:
            problems.append(f"{path}: no description")
        if path not in shown:
            problems.append(f"{path}: not in the reference")
            continue
        body = squash(" ".join(shown[path]))
        if description and squash(description) not in body:
            problems.append(f"{path}: its description is not shown")
        if any(squash(w) not in body for w in type_words(sub, schema)):
            problems.append(f"{path}: its type is not shown")
        for key in ("default", "x-default"):
            if key in sub and squash(f"Default: {flow(sub[key])}") not in body:
                problems.append(f"{path}: its default is not shown")
        if (is_required or path in (required or {})) and "Required" not in body:
            problems.append(f"{path}: required, and not shown so")
    return problems


def schema_at(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_every_config_field_has_a_type_and_a_description_and_is_shown(pages):
    from planaudit.paths import CONFIG_SCHEMA
    from planaudit.regime import regimes
    from planaudit.study.settings import SCHEMA as STUDY_SCHEMA

    page = pages["config"]
    experiment = entries(page[:page.index("The study config\n")])
    study = entries(page[page.index("The study config\n"):])
    problems = field_problems(schema_at(CONFIG_SCHEMA), experiment)
    sections = [r for r in regimes().values() if r.schema is not None]
    assert {"offline", "online", "curriculum", "acpbench", "study"} <= {r.key for r in sections}
    for regime in sections:
        problems += field_problems(regime.schema, experiment, prefix=regime.key)
    problems += field_problems(schema_at(STUDY_SCHEMA), study)
    assert problems == []


def test_every_row_column_has_a_type_and_a_description_and_is_shown(pages):
    from planaudit.paths import ROW_SCHEMA
    from planaudit.regime import regimes

    page = pages["rows"]
    common = schema_at(ROW_SCHEMA)
    then = (common.get("then") or {}).get("required", ())
    regime_titles = {r.name for r in regimes().values()}
    problems = field_problems(common, entries(section(page, "Common columns")),
                              required=dict.fromkeys(then, "online"))
    for regime in regimes().values():
        own = {"type": "object", "properties": dict(regime.columns)}
        shown = entries(section(page, regime.name, until=regime_titles))
        problems += field_problems(own, shown, required=dict.fromkeys(then, "online"))
    assert problems == []
    regime = entries(section(page, "Common columns"))["regime"][0]
    assert all(squash(f"`{name}`") in squash(regime) for name in regimes())  # collect's enum


def test_the_schema_check_fails_on_an_undocumented_field_and_column(pages):
    """The check itself can fail: a field without a description, one the page does not
    show, a column of a regime that the page does not show, are named."""
    from planaudit.paths import CONFIG_SCHEMA, ROW_SCHEMA

    page = pages["config"]
    experiment = entries(page[:page.index("The study config\n")])
    schema = copy.deepcopy(schema_at(CONFIG_SCHEMA))
    schema["properties"]["models"]["items"]["properties"]["undocumented"] = {"type": "string"}
    schema["properties"]["suite"]["properties"]["typeless"] = {"description": "no type"}
    schema["properties"]["truth"]["properties"]["bfs_states"] = yaml.safe_load(
        "{type: integer, description: states, then A*}")  # a slip: `then A*` became a key
    found = field_problems(schema, experiment)
    assert "models[].undocumented: no description" in found
    assert "models[].undocumented: not in the reference" in found
    assert "suite.typeless: no type" in found
    assert "truth.bfs_states: unknown keywords ['then A*']" in found
    rows = schema_at(ROW_SCHEMA)
    rows["properties"]["new_column"] = {"type": "integer", "description": "a new count"}
    assert field_problems(rows, entries(section(pages["rows"], "Common columns"))) == [
        "new_column: not in the reference"]


def test_the_index_names_the_three_pages(pages):
    for title in ("Command line", "Config", "Rows"):
        assert title in pages["index"]


# ---------------------------------------------------------------- defaults against the code


def declared(schema: Mapping, prefix: str = "") -> dict[str, object]:
    """path -> the default the schema states (`default`, or `x-default` where Snakemake
    would write a `default` into the config)."""
    out = {}
    for path, sub, _ in schema_fields(schema, schema, prefix):
        for key in ("default", "x-default"):
            if key in sub:
                out[path] = sub[key]
    return out


def test_the_stated_defaults_are_the_codes():
    """Where the code keeps a default in a constant or a dataclass, the schema states the
    same one (a value the code applies inline is checked by calling that code)."""
    from dataclasses import fields

    from planaudit.acpbench.bound import Bound
    from planaudit.acpbench.shard import settings as acpbench_settings
    from planaudit.analysis.calibrate import Design
    from planaudit.compliance.settings import DEFAULT_FILE
    from planaudit.curriculum.shard import settings as curriculum_settings
    from planaudit.estimate import DEFAULT_OUTPUT_TOKENS
    from planaudit.experiment import BATCH_MAX_WAVES, Section
    from planaudit.formal.repair import TIMEOUT
    from planaudit.llm.batch import Batching
    from planaudit.llm.client import ModelConfig
    from planaudit.online.run import DEFAULT_BUDGET
    from planaudit.paths import CONFIG_SCHEMA
    from planaudit.regime import regimes
    from planaudit.shard import DEAD_TOOLS_AFTER
    from planaudit.study.settings import SCHEMA as STUDY_SCHEMA
    from planaudit.study.settings import Arm, Pay

    stated = declared(schema_at(CONFIG_SCHEMA))
    for r in regimes().values():
        if r.schema is not None:
            stated.update(declared(r.schema, r.key))
    client = {f.name: f.default for f in fields(ModelConfig)}
    design = {f.name: f.default for f in fields(Design)}
    offline = Section.from_dict("offline", {"methods": ["direct"], "repair": {"enabled": True}})
    online = Section.from_dict("online", {"methods": ["react"]})
    code = {
        **{f"models[].{k}": client[k] for k in
           ("max_concurrency", "max_retries", "backoff_base", "backoff_cap", "tool_choice")},
        "models[].batch_rate": Batching.rate, "models[].batch_poll": Batching.poll,
        "models[].batch_max_waves": BATCH_MAX_WAVES,
        "estimate.output_tokens": DEFAULT_OUTPUT_TOKENS,
        **{f"calibration.{k}": design[k] for k in
           ("tasks", "comparisons", "experiments", "baseline", "correlation", "seed")},
        "calibration.differences": list(design["differences"]),
        "analysis.alpha": design["alpha"], "analysis.bootstrap": design["bootstrap"],
        "analysis.seed": design["bootstrap_seed"],
        "offline.max_tokens": offline.method("direct").max_tokens,
        "offline.repair.only_invalid": offline.method("direct").repair.only_invalid,
        "offline.repair.seed": offline.method("direct").repair.seed,
        "offline.repair.timeout": TIMEOUT,
        "online.max_tokens": online.method("react").max_tokens,
        "online.budget": DEFAULT_BUDGET, "online.dead_tools_after": DEAD_TOOLS_AFTER,
        "online.plan_settings": list(online.plan_settings), "online.epochs": online.epochs,
        "online.plan_settings_file": str(DEFAULT_FILE),
        **{f"curriculum.{k}": v for k, v in curriculum_settings({}, "t1").items()},
        **{f"acpbench.{k}": v for k, v in acpbench_settings({}).items()},
        "acpbench.gold_bound.memory_mb": Bound.memory_mb,
        "acpbench.gold_bound.seconds": Bound.seconds,
    }
    assert offline.method("direct").repair.timeout == TIMEOUT
    for path, value in code.items():
        assert path in stated, f"{path}: the code's default {value!r} is not stated"
        assert stated[path] == value, f"{path}: stated {stated[path]!r}, the code's {value!r}"

    study = declared(schema_at(STUDY_SCHEMA))
    pay = {f.name: f.default for f in fields(Pay)}
    arm = {f.name: f.default for f in fields(Arm)}
    for path, value in {**{f"pay.{k}": v for k, v in pay.items()},
                        "arms[].feedback": arm["feedback"],
                        "arms[].show_state": arm["show_state"]}.items():
        assert study[path] == value, f"study {path}: stated {study[path]!r}, the code's {value!r}"
