"""planaudit's reference pages, generated from the code at every build so they cannot go
stale: the config fields from the JSON schemas (the common one, each registered regime's
section, the study server's), the row columns from the row schema and each regime's own
columns, and the CLI through sphinx-argparse with its help texts made safe to parse as
reStructuredText.

Directives (MyST: ```` ```{planaudit-config} common ````):

- ``planaudit-config common|regimes|study``: one section per top-level field of the common
  experiment schema, per registered regime's section, or of the study config;
- ``planaudit-rows common|regimes``: the columns every row has, or each regime's own.

Each field or column is a cross-reference target: ``{cfg}`models[].timeout```,
``{studycfg}`arms[].feedback```, ``{column}`outcome```.

A field's default is its schema's ``default``; where that keyword cannot be used,
``x-default`` holds it (a documentation keyword of this project: Snakemake's ``validate``
writes a schema's ``default`` values into the config it checks, and so into every job's
config slice and shard hash, so workflow/schemas/config.schema.yaml documents its defaults
as ``x-default``)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

# ---------------------------------------------------------------- schemas and fields


@dataclass(frozen=True)
class Field:
    """One documented field: a config field or a row column."""

    path: str  # dotted, `[]` for a list's items, `<name>` for a mapping's keys
    type: str  # as the reference shows it
    default: str | None  # as YAML writes it, or None
    required: bool
    description: str
    top: str  # the top-level field it belongs to (its section in the page)


def load(path: Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


def resolve(schema: Mapping, root: Mapping) -> Mapping:
    """A local `$ref` (`#/$defs/x`) followed to what it names (the rest of the schema kept)."""
    seen = 0
    while isinstance(schema, Mapping) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            raise ValueError(f"{ref}: only local references are documented")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
        if seen > 20:
            raise ValueError(f"{ref}: a reference cycle")
    return schema


def yaml_value(value: Any) -> str:
    """A value as a config file writes it (flow style: `[none]`, `true`, `0.5`)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix(
        "\n...").removesuffix("...").strip()


def _number(value: Any) -> str:
    return json.dumps(value)


def _bounds(schema: Mapping) -> str:
    """`≥ 1`, `> 0`, or an interval where both ends are bounded (`[0, 1]`, `(0, 1)`)."""
    lo = next(((k, schema[k]) for k in ("minimum", "exclusiveMinimum") if k in schema), None)
    hi = next(((k, schema[k]) for k in ("maximum", "exclusiveMaximum") if k in schema), None)
    if lo and hi:
        return (f"in {'(' if lo[0].startswith('exclusive') else '['}{_number(lo[1])}, "
                f"{_number(hi[1])}{')' if hi[0].startswith('exclusive') else ']'}")
    if lo:
        return f"{'>' if lo[0].startswith('exclusive') else '≥'} {_number(lo[1])}"
    if hi:
        return f"{'<' if hi[0].startswith('exclusive') else '≤'} {_number(hi[1])}"
    return ""


def default_of(schema: Mapping) -> str | None:
    for key in ("default", "x-default"):
        if key in schema:
            return yaml_value(schema[key])
    return None


def type_text(schema: Mapping, root: Mapping) -> str:
    """What a value of `schema` may be, in words (`integer ≥ 1`, `list of one of: a, b`)."""
    schema = resolve(schema, root)
    if "const" in schema:
        return f"`{yaml_value(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{yaml_value(v)}`" for v in schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " or ".join(type_text(alt, root) for alt in schema[key])
    kinds = schema.get("type")
    if kinds is None:
        if "properties" in schema:
            kinds = "object"
        else:
            return "any value"
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    words = [_one_type(kind, schema, root) for kind in kinds if kind != "null"]
    if "null" in kinds:
        words.append("`null`")
    return " or ".join(words)


def _one_type(kind: str, schema: Mapping, root: Mapping) -> str:
    if kind in ("integer", "number"):
        bounds = _bounds(schema)
        return f"{kind} {bounds}" if bounds else kind
    if kind == "string":
        text = "string"
        if schema.get("minLength") == 1:
            text = "non-empty string"
        if "pattern" in schema:
            text += f" matching `{schema['pattern']}`"
        return text
    if kind == "array":
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        head = "list"
        if lo is not None and lo == hi:
            head = f"list of exactly {lo}"
        elif lo == 1:
            head = "non-empty list"
        elif lo:
            head = f"list of at least {lo}"
        items = schema.get("items")
        text = f"{head} of {type_text(items, root)}" if isinstance(items, Mapping) else head
        if schema.get("uniqueItems"):
            text += " (no repeats)"
        return text
    if kind == "object":
        extra = schema.get("additionalProperties")
        keys = schema.get("propertyNames", {})
        if isinstance(extra, Mapping) and not schema.get("properties"):
            key = "name"
            if isinstance(keys, Mapping) and "enum" in keys:
                key = "one of " + ", ".join(f"`{yaml_value(v)}`" for v in keys["enum"])
            return f"mapping of {key} to {type_text(extra, root)}"
        return "mapping"
    return kind


def _children(schema: Mapping, path: str, root: Mapping) -> Iterator[tuple[str, Mapping, bool]]:
    """(path, schema, required) of the named properties below `schema`: its own, its
    list items', its mapping values' and each alternative's (oneOf, anyOf, allOf)."""
    schema = resolve(schema, root)
    required = set(schema.get("required", ()))
    for name, sub in (schema.get("properties") or {}).items():
        yield (f"{path}.{name}" if path else name), sub, name in required
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _children(items, f"{path}[]", root)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _children(extra, f"{path}.<name>", root)
    for key in ("oneOf", "anyOf", "allOf"):
        for alt in schema.get(key, ()):
            yield from _children(alt, path, root)


def fields(schema: Mapping, prefix: str = "", root: Mapping | None = None) -> list[Field]:
    """Every named property below `schema`, depth first in the schema's order; a path
    reached twice (a property of two alternatives) is listed once."""
    root = schema if root is None else root
    out: list[Field] = []
    seen: set[str] = set()

    def walk(node: Mapping, path: str, top: str) -> None:
        for child, sub, required in _children(node, path, root):
            if child in seen:
                continue
            seen.add(child)
            sub = resolve(sub, root)
            first = top or child
            out.append(Field(child, type_text(sub, root), default_of(sub), required,
                             " ".join(str(sub.get("description", "")).split()), first))
            walk(sub, child, first)

    if prefix:  # the section itself (a regime's key) is the first field
        schema = resolve(schema, root)
        out.append(Field(prefix, type_text(schema, root), default_of(schema), False,
                         " ".join(str(schema.get("description", "")).split()), prefix))
        seen.add(prefix)
    walk(schema, prefix, prefix)
    return out


def config_schema() -> dict:
    """The common experiment schema (planaudit.paths.CONFIG_SCHEMA)."""
    from planaudit.paths import CONFIG_SCHEMA

    return load(CONFIG_SCHEMA)


def study_schema() -> dict:
    """The study server's config schema (planaudit study serve --config STUDY.yaml)."""
    from planaudit.study.settings import SCHEMA

    return load(SCHEMA)


def regime_sections() -> list[tuple[str, str, dict]]:
    """(config key, regime name, section schema) of every registered regime with one."""
    from planaudit.regime import regimes

    return [(r.key, r.name, r.schema) for r in regimes().values() if r.schema is not None]


def row_schema() -> dict:
    """The common row schema as collect checks it (the regime enum from the registry)."""
    from planaudit.paths import ROW_SCHEMA
    from planaudit.regime import regimes

    schema = load(ROW_SCHEMA)
    regime = schema["properties"]["regime"]
    regime["enum"] = list(dict.fromkeys([*regime["enum"], *regimes()]))
    return schema


def regime_columns() -> list[tuple[str, dict]]:
    """(regime name, its own columns as a schema) of every registered regime."""
    from planaudit.regime import regimes

    return [(r.name, {"type": "object", "properties": dict(r.columns)})
            for r in regimes().values()]


def row_required(schema: Mapping) -> dict[str, str]:
    """column -> which rows must have it: every row (`required`) or a regime's
    (the row schema's if/then on `regime`)."""
    out = {name: "every row" for name in schema.get("required", ())}
    cond, then = schema.get("if") or {}, schema.get("then") or {}
    regime = ((cond.get("properties") or {}).get("regime") or {}).get("const")
    for name in then.get("required", ()):
        out.setdefault(name, f"{regime} rows" if regime else "some rows")
    return out


# ---------------------------------------------------------------- rendering


def inline(text: str) -> list[nodes.Node]:
    """Plain text with `backticked` parts as code, and nothing else parsed (a schema's
    description is not markup: `domain/*` must not start emphasis)."""
    out: list[nodes.Node] = []
    for i, part in enumerate(re.split(r"`([^`]+)`", text)):
        if not part:
            continue
        out.append(nodes.literal(part, part) if i % 2 else nodes.Text(part))
    return out


def entry(item: Field, ids: list[str], required: str | None = None) -> nodes.definition_list_item:
    """A field as a definition: its path; then its type, default and whether it is
    required; then its meaning."""
    term = nodes.term("", "", nodes.literal(item.path, item.path), ids=ids)
    facts = nodes.paragraph()
    facts += nodes.strong("Type:", "Type:")
    facts += nodes.Text(" ")
    facts += inline(item.type)
    if item.default is not None:
        facts += nodes.Text(". ")
        facts += nodes.strong("Default:", "Default:")
        facts += nodes.Text(" ")
        facts += nodes.literal(item.default, item.default)
    if required:
        facts += nodes.Text(". ")
        facts += nodes.strong("Required", "Required")
        facts += nodes.Text(f" ({required})" if required != "yes" else "")
    facts += nodes.Text(".")
    meaning = nodes.paragraph("", "", *inline(item.description or "(no description)"))
    return nodes.definition_list_item("", term, nodes.definition("", facts, meaning))


def note_sources(env: Any) -> None:
    """Make a page that shows generated content depend on planaudit's code and schemas, so
    that an incremental build (`make docs` on an old docs/_build) reads it again when a
    help text, a field or a column changes, not only when the page itself does."""
    import planaudit

    env.note_dependency(__file__)
    package = Path(planaudit.__file__).resolve().parent
    for pattern in ("*.py", "*.yaml"):
        for path in package.rglob(pattern):
            if "domains" not in path.relative_to(package).parts:
                env.note_dependency(str(path))


def _slug(text: str) -> str:
    return nodes.make_id(text.replace("[]", "").replace("<name>", "name"))


class _Reference(SphinxDirective):
    required_arguments = 1
    has_content = False

    objtype = ""  # the std domain's object type of each entry (a cross-reference target)
    prefix = ""  # of every id

    def _ids(self, path: str) -> list[str]:
        base = _slug(f"{self.prefix} {path}")
        node_id, n = base, 1
        while node_id in self.state.document.ids:
            n += 1
            node_id = f"{base}-{n}"
        return [node_id]

    def _note(self, name: str, node_id: str, node: nodes.Node) -> None:
        std = self.env.domains.standard_domain
        if (self.objtype, name) not in std.objects:
            std.note_object(self.objtype, name, node_id, location=node)

    def _entries(self, items: list[Field], required: Mapping[str, str] | None = None
                 ) -> nodes.definition_list:
        listing = nodes.definition_list(classes=["planaudit-reference"])
        for item in items:
            ids = self._ids(item.path)
            want = (required or {}).get(item.path) or ("yes" if item.required else None)
            node = entry(item, ids, want)
            self.state.document.note_explicit_target(node[0])
            self._note(item.path, ids[0], node)
            listing += node
        return listing

    def _section(self, title: str, *body: nodes.Node, ids: list[str]) -> nodes.section:
        section = nodes.section(ids=ids)
        section += nodes.title(title, "", nodes.literal(title, title))
        for node in body:
            section += node
        self.state.document.note_implicit_target(section)
        return section


class ConfigDirective(_Reference):
    """``planaudit-config common|regimes|study``."""

    def run(self) -> list[nodes.Node]:
        which = self.arguments[0]
        note_sources(self.env)
        if which == "common":
            self.objtype, self.prefix = "cfg", "config"
            return self._by_top(fields(config_schema()))
        if which == "study":
            self.objtype, self.prefix = "studycfg", "study-config"
            return self._by_top(fields(study_schema()))
        if which == "regimes":
            self.objtype, self.prefix = "cfg", "config"
            out = []
            for key, name, schema in regime_sections():
                items = fields(schema, prefix=key)
                body = []
                if key != name:
                    body.append(nodes.paragraph("", "", nodes.Text("Read by the regime "),
                                                nodes.literal(name, name), nodes.Text(".")))
                body.append(self._entries(items))
                out.append(self._section(key, *body, ids=self._ids(f"section {key}")))
            return out
        raise self.error(f"planaudit-config: common, regimes or study, not {which!r}")

    def _by_top(self, items: list[Field]) -> list[nodes.Node]:
        """A section per top-level field: the field, then everything below it."""
        out = []
        for top in dict.fromkeys(i.top for i in items):
            mine = [i for i in items if i.top == top]
            out.append(self._section(top, self._entries(mine),
                                     ids=self._ids(f"section {top}")))
        return out


class RowsDirective(_Reference):
    """``planaudit-rows common|regimes``."""

    objtype, prefix = "column", "column"

    def run(self) -> list[nodes.Node]:
        which = self.arguments[0]
        note_sources(self.env)
        common = row_schema()
        required = row_required(common)
        if which == "common":
            return [self._entries(fields(common), required)]
        if which == "regimes":
            out = []
            for name, schema in regime_columns():
                items = fields(schema)
                body: list[nodes.Node] = []
                if items:
                    body.append(self._entries(items, required))
                else:
                    body.append(nodes.paragraph("", "No columns of its own."))
                out.append(self._section(name, *body, ids=self._ids(f"regime {name}")))
            return out
        raise self.error(f"planaudit-rows: common or regimes, not {which!r}")


# ---------------------------------------------------------------- the CLI (sphinx-argparse)

_SPECIAL = re.compile(r"([\\*`_|])")


def rst_text(text: str) -> str:
    """A help text as reStructuredText that shows it as written: `code` as code, and
    `*`, `_`, `|` and backslashes as themselves (`results/*/*.parquet` must not start
    emphasis, nor `val_valid_` a reference)."""
    out = []
    for i, part in enumerate(re.split(r"`([^`]+)`", text)):
        if i % 2:
            out.append(f"``{part}``" if "``" not in part else _SPECIAL.sub(r"\\\1", part))
        else:
            out.append(_SPECIAL.sub(r"\\\1", part))
    text = "".join(out)
    if re.match(r"[-+#>:]|\d+[.)]\s", text):  # a paragraph, not a list or a quote
        text = "\\" + text
    return text


def rst_epilog(text: str) -> str:
    """cli.py's epilog (`example:` then indented commands) as a literal block."""
    lines = text.splitlines()
    if lines and lines[0].rstrip().endswith(":") and len(lines) > 1:
        head = rst_text(lines[0].rstrip()[:-1].capitalize())
        body = "\n".join("   " + line.strip() for line in lines[1:] if line.strip())
        return f"{head}::\n\n{body}\n"
    return rst_text(text)


def rst_parser_data(data: dict) -> dict:
    """sphinx-argparse's parsed data with every text a user wrote made safe to parse: the
    help, description and epilog of each command and option (it parses them as
    reStructuredText); a help's trailing `(default: X)` dropped where sphinx-argparse
    shows the same default itself."""
    for key in ("help", "description"):
        if isinstance(data.get(key), str):
            data[key] = rst_text(data[key])
    if data.get("help") and data.get("description"):  # sphinx-argparse shows only the latter
        data["description"] = f"{data['help']}\n\n{data['description']}"
    if isinstance(data.get("epilog"), str):
        data["epilog"] = rst_epilog(data["epilog"])
        if data.get("children"):  # shown before its subcommands, not after the last one
            lead = data.get("description") or data.get("help") or ""
            data["description"] = f"{lead}\n\n{data.pop('epilog')}".strip()
    for group in data.get("action_groups", ()):
        if isinstance(group.get("description"), str):
            group["description"] = rst_text(group["description"])
        for option in group.get("options", ()):
            text = option.get("help") or ""
            default = option.get("default")
            if isinstance(default, str) and default != "==SUPPRESS==":
                # sphinx-argparse quotes a string default, then shows it as code: once is enough
                default = option["default"] = re.sub(r"^'(.*)'$", r"\1", default)
            if default not in (None, "==SUPPRESS=="):
                text = re.sub(rf"\s*\(default: '?{re.escape(str(default))}'?\)$", "", text)
            option["help"] = rst_text(text)
    for child in data.get("children", ()):
        rst_parser_data(child)
    return data


def _argparse_directive() -> type:
    """sphinx-argparse's directive, its parsed help texts passed through `rst_parser_data`."""
    import sphinxarg.ext as ext

    class ArgParse(ext.ArgParseDirective):
        def run(self) -> list[nodes.Node]:
            original = ext.parse_parser

            def parse(parser: Any, data: dict | None = None, **kwargs: Any) -> dict:
                return rst_parser_data(original(parser, data, **kwargs))

            note_sources(self.env)
            with _patched(ext, "parse_parser", parse):
                found = super().run()
            for node in found:  # usages as plain text, the examples as shell commands
                for block in node.findall(nodes.literal_block):
                    if not block.get("language"):
                        usage = "[-h]" in block.astext() or block.astext().startswith("usage:")
                        block["language"] = "text" if usage else "bash"
            return found

    return ArgParse


def _commands_domain() -> type:
    """sphinx-argparse's `commands` domain with the `resolve_any_xref` it lacks: MyST
    resolves every `[text](#target)` link through each domain's, and a domain without one
    is asked role by role, which warns (a build error) for every target that is not a
    command: a link to a heading anywhere in the site."""
    import sphinxarg.ext as ext
    from sphinx.util.nodes import make_refnode
    from sphinxarg.utils import target_to_anchor_id

    class Commands(ext.ArgParseDomain):
        def resolve_any_xref(self, env: Any, fromdocname: str, builder: Any, target: str,
                             node: Any, contnode: nodes.Element) -> list[tuple[str, Any]]:
            anchor_id = target_to_anchor_id(target)
            return [("commands:command",
                     make_refnode(builder, fromdocname, docname, anchor, contnode, anchor))
                    for _cmd, _sig, _type, docname, anchor, _prio in self.get_objects()
                    if anchor == anchor_id][:1]

    return Commands


@contextlib.contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinxarg.ext")
    app.add_directive("argparse", _argparse_directive(), override=True)
    app.add_domain(_commands_domain(), override=True)
    app.add_crossref_type("cfg", "cfg", objname="experiment config field")
    app.add_crossref_type("studycfg", "studycfg", objname="study config field")
    app.add_crossref_type("column", "column", objname="row column")
    app.add_directive("planaudit-config", ConfigDirective)
    app.add_directive("planaudit-rows", RowsDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
