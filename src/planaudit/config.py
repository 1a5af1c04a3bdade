"""The experiment config, read the one way every entry point reads it.

Snakemake loads `config/config.yaml` (the Snakefile's `configfile:`), lays each
`--configfile` over it and validates the result against
`workflow/schemas/config.schema.yaml` (what is common) and each regime's section
against the regime's own schema (`Regime.schema`). The CLI must see exactly the same config,
or a typo that Snakemake refuses (`api_bsae:`) would pass silently through
`planaudit episode` and send a request to a provider's public endpoint. So every
command reads configs here: same base, same layering, same schema, and an
unknown key is an error that names the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

BASE_CONFIG = Path("config/config.yaml")  # the Snakefile's configfile, relative to the run folder


class ConfigError(ValueError):
    """A config that cannot be used: the message names the file, line and field."""


def schema_path() -> Path:
    """The config schema installed with the package (its workflow's schemas/)."""
    from planaudit.paths import CONFIG_SCHEMA

    return CONFIG_SCHEMA


def merge(base: dict, over: Mapping) -> dict:
    """Lay `over` on `base` as Snakemake's `update_config` does: mappings merge key by
    key, anything else (lists included) is replaced whole."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_yaml(path: Path, kind: str = "config") -> tuple[object, yaml.Node | None]:
    """A YAML file's data and its composed nodes (for the lines of errors); ConfigError
    names the file for a missing one, a folder, or text that is not YAML."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {kind} file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: a folder, not a {kind} file") from None
    try:
        return yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not YAML: {e}") from None


def _read(path: Path) -> tuple[dict, yaml.Node | None]:
    data, node = read_yaml(path)
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a config is a mapping of sections (suite, models, ...)")
    return data, node


def _line(node: yaml.Node | None, where: Sequence, key: str | None = None) -> int | None:
    """The line (1-based) of the value at `where` in a composed YAML file, or of `key`
    inside it; None when the path is not in that file (it came from another layer)."""
    for step in where:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == step), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            return None
    if node is None:
        return None
    if key is not None and isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if k.value == key:
                return k.start_mark.line + 1
    return node.start_mark.line + 1


def field_name(where: Sequence) -> str:
    """`arms[1].feedback`: a field's path as an error names it."""
    text = ""
    for step in where:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "(top level)"


def with_regimes(schema: dict) -> dict:
    """The config schema with the section of every registered regime laid in (each
    regime brings its own: planaudit's in their packages' `schema.yaml`)."""
    from planaudit.regime import regimes

    extra = {r.key: r.schema for r in regimes().values() if r.schema is not None}
    return {**schema, "properties": {**schema["properties"], **extra}}


def read_layer(path: Path) -> tuple[dict, yaml.Node | None]:
    """One config file's mapping and its composed YAML (for the lines of errors)."""
    return _read(path)


def validate(config: dict, layers: list[tuple[Path, yaml.Node | None]], schema: Path | None = None,
             regimes: bool = True) -> None:
    """Check the layered config against the schema; the first error names the file
    (the last layer that holds the field), the line and the field. `regimes`: lay the
    registered regimes' sections in (an experiment config's schema, not a study's)."""
    import jsonschema

    schema = schema or schema_path()
    if not schema.is_file():
        raise ConfigError(f"{schema}: the config schema is missing (is planaudit installed "
                          "from its repository?)")
    loaded = yaml.safe_load(schema.read_text())
    validator = jsonschema.Draft202012Validator(with_regimes(loaded) if regimes else loaded)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    e = errors[0]
    where = list(e.absolute_path)
    key = None
    message = e.message
    if e.validator == "additionalProperties":
        extra = sorted(set(e.instance) - set(e.schema.get("properties", {})))
        key = extra[0] if extra else None
        known = ", ".join(sorted(e.schema.get("properties", {})))
        message = f"unknown key '{key}' (known: {known})"
        where_text = field_name([*where, key] if key else where)
    else:
        where_text = field_name(where)
    origin = ""
    for path, node in reversed(layers):
        line = _line(node, where, key)
        if line is not None:
            origin = f"{path}:{line}: "
            break
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    raise ConfigError(f"{origin}{where_text}: {message}{more}")


def locate(paths: Sequence[str | Path], where: Sequence, config: Mapping) -> str:
    """`file:line: ` of the field at `where` in the last of `paths` whose value there is
    the one `config` (the layered result) holds, or "" when none does (it came from
    `--config KEY=VALUE`). For checks the schema cannot make (a value that must name
    something that exists), so that their errors name the line as schema errors do."""
    # a list is replaced whole by a later layer: the layer that counts holds all of it
    scope = list(where[:-1]) if isinstance(_at(config, where[:-1]), list) else list(where)
    wanted = _at(config, scope)
    for path in reversed([Path(p) for p in paths]):
        try:
            data, node = _read(path)
        except ConfigError:
            continue
        if wanted is not _MISSING and _at(data, scope) == wanted:
            line = _line(node, where)
            if line is not None:
                return f"{path}:{line}: "
    return ""


_MISSING = object()


def _at(data, where: Sequence):
    for step in where:
        if isinstance(data, Mapping) and step in data:
            data = data[step]
        elif isinstance(data, list) and isinstance(step, int) and step < len(data):
            data = data[step]
        else:
            return _MISSING
    return data


def load_config(*paths: str | Path | None, base: Path | None = BASE_CONFIG,
                check: bool = True) -> dict:
    """The config Snakemake would run: `base` (if it exists) with each of `paths` laid
    over it in order, validated against the schema."""
    files = [Path(p) for p in paths if p is not None]
    layers: list[tuple[Path, yaml.Node | None]] = []
    config: dict = {}
    base_used = base is not None and base.is_file()
    if base_used and not any(_same(base, f) for f in files):
        data, node = _read(base)
        config, layers = data, [(base, node)]
    elif not files:
        raise ConfigError(f"{base}: no such config file (run from the project folder, or pass "
                          "--config FILE)")
    for f in files:
        data, node = _read(f)
        config = merge(config, data)
        layers.append((f, node))
    if check:
        validate(config, layers)
    return config


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def load_named(*paths: str | Path | None, base: Path | None = BASE_CONFIG,
               check: bool = True) -> tuple[dict, dict]:
    """The config Snakemake would run (`load_config`) and what the user's own files name:
    `paths` merged without the base (Snakemake's `config_settings.overwrite_config`). With
    no file of the user's, the base is what they run and it names everything."""
    config = load_config(*paths, base=base, check=check)
    named: dict = {}
    for p in paths:
        if p is not None:
            named = merge(named, _read(Path(p))[0])
    return config, (named if any(p is not None for p in paths) else config)


# the regimes a classical planner runs, each under its method `planner`
PLANNED = ("offline", "online")


def planner_view(config: Mapping) -> dict:
    """The config a classical planner (`planner/lama`, `planner/astar`) runs: the method
    `planner` of the offline regime (it plans on the hidden model) and of the online one
    (plan-then-execute, under the plan setting `none`: it reads no prompt), and no other
    regime's jobs (its row beside the strategies and architectures is the question a
    reviewer asks). Where a regime runs nothing (no section, no method), neither do the
    planners there."""
    from planaudit.regime import regimes

    out = {k: v for k, v in config.items()
           if k not in {r.key for r in regimes().values() if r.name not in PLANNED}}
    for name in PLANNED:
        if isinstance(out.get(name), Mapping):
            runs = bool(out[name].get("methods"))
            out[name] = {**out[name], "methods": ["planner"] if runs else [],
                         **({"plan_settings": ["none"]} if name == "online" else {})}
    return out


def restrict(config: Mapping, named: Mapping) -> dict:
    """The config a model that is not a reference model runs: what the user's files
    (`named`: the --configfile files and --config values, without config/config.yaml)
    name, and nothing the default only inherits. A regime section they do not name is
    left out; in one they name, each key that lists what runs (`Regime.choices`: offline
    `methods`, online `methods` and `plan_settings`, curriculum `tests`, ACPBench
    `types`) is left out unless they name it (absent, a list means nothing, and online's
    plan settings mean `none`, no workflow). The rest (budgets, max_tokens, params) is
    inherited: it says how a named job runs, not whether it runs."""
    from planaudit.regime import regimes

    out = dict(config)
    for regime in regimes().values():
        name = regime.key
        if name not in out:
            continue
        mine = named.get(name)
        if not isinstance(mine, Mapping):
            del out[name]
            continue
        out[name] = {k: v for k, v in out[name].items()
                     if k not in regime.choices or k in mine}
    return out
