"""A regime is one kind of part: offline, online, curriculum and ACPBench each give the
same few things through `Regime`, registered by name (as strategies and architectures
are), and the shard command, the estimate, the workflow and the report iterate the
registry instead of naming regimes one by one.

A regime's package holds a module `regime.py` that calls `register`; `regimes()` finds
every such module of planaudit's packages, and the modules named in the environment
variable PLANAUDIT_REGIMES (a regime kept outside planaudit: a plugin, a test's toy), by
name with importlib, as entry points are found: this module imports nothing of
planaudit, so every layer may read the registry.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLUGINS = "PLANAUDIT_REGIMES"  # module names, separated by os.pathsep


@dataclass(frozen=True)
class Workflow:
    """What the workflow knows when it lists a regime's jobs (workflow/rules/common.smk)."""

    config: dict
    results: str
    domains: list[str]  # the suite's domains with a selected task
    # domain -> the one file that stands for its prepared tasks (their truths proven); a
    # job's input, so that a job has a file per domain, not one per task
    ready: Mapping[str, str]
    disguised_ready: list[str]  # the same per domain under each disguise but none
    disguises: list[str]  # suite.disguise (default [none])
    selected: list[Any]  # the selected suite entries (suite.catalog.Entry)
    selected_tasks: list[str] | None  # their ids, None when the selection leaves none out
    locate: Callable[[Sequence], str]  # a config field -> "file:line: " (or "")

    def spec(self, entry: dict, section: str, part: dict) -> dict:
        """A job's config slice: its model, its section's part, the cache and selection."""
        sliced = {"models": [entry], section: part,
                  "cache": self.config.get("cache", ".cache/planaudit")}
        if self.selected_tasks is not None:  # suite.tasks: the job runs these tasks only
            sliced["suite"] = {"tasks": self.selected_tasks}
        return sliced


@dataclass(frozen=True)
class Jobs:
    """A regime's jobs for every model: one per key (`cot`, `react/standard`, `t1`, `app`).
    `outputs` are paths holding `{model}` and `{job}`; `spec(entry, job)` is the config
    slice the job depends on (a changed slice reruns that job only); `args(model, job)`
    the shard command's arguments besides `--spec` and `--model`."""

    keys: list[str]
    inputs: list[str]
    outputs: list[str]
    spec: Callable[[dict, str], dict]
    args: Callable[[str, str], list[str]]
    # whom the jobs run for where they are not the config's models (the people of a
    # study): each subject gets a rule of its own, with no model check, no estimate and no
    # model resource (no call is made), `spec(None, job)` and `args(subject, job)`
    subjects: tuple[str, ...] | None = None

    def files(self, model: str) -> list[str]:
        return [o.replace("{model}", model).replace("{job}", k)
                for k in self.keys for o in self.outputs]


@dataclass(frozen=True)
class Estimated:
    """One method's expected bill on one model, before it is priced."""

    method: str
    tasks: int
    calls: int
    input_tokens: int
    output_tokens: int
    # the sequential calls of its longest episode: in batch mode, one provider batch each
    waves: int = 1


@dataclass(frozen=True)
class Regime:
    """One kind of part. `name` is also its config section, whose JSON schema is `schema`
    (planaudit's own regimes read theirs from `schema.yaml` beside their `regime.py`,
    `section_schema`; workflow/schemas/config.schema.yaml holds only what is common);
    `columns` its row columns beyond the common ones (JSON schema each, for collect);
    `jobs` its job list; `add_parser(sub, config_arg)` its subcommands, among them the
    shard runner `planaudit <name> shard --spec --model ...` that its jobs run (`Jobs.args`
    gives the rest); `estimate(experiment, entry, suite_dir, out_tokens, counter)` its calls
    before spending (the typed config and one model of it: `planaudit.experiment`'s
    `Experiment`, `ModelEntry`); `tables` its report tables
    (name -> function of the collected rows and a cell formatter, `cell(hits) -> text`
    with the report's seeded bootstrap interval); `episode(entry)`, for a regime of
    episodes, the `run_episode` of `planaudit episode` for that `ModelEntry`; `size` a
    job's (minutes, MB); `batch` whether its jobs run in batch waves (llm/batch.py) for a
    `batch: true` model; `epochs`, `tools` and `layout` what a regime of episodes runs
    and where its shards lie (below). Planaudit's own regimes declare their row columns
    in `row.yaml` beside their `regime.py` (`row_columns`)."""

    name: str
    help: str
    jobs: Callable[[Workflow], Jobs]
    add_parser: Callable[[Any, Callable[[argparse.ArgumentParser], None]], None]
    estimate: Callable[..., list[Estimated]]
    size: tuple[int, int] = (720, 4000)
    schema: dict | None = None
    columns: Mapping[str, dict] = field(default_factory=dict)
    tables: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    episode: Callable[[Any], Callable[..., Any]] | None = None
    rank: int = 100  # where it comes among regimes (jobs, estimate rows, help)
    # its episodes run its section's `epochs` times each, every row naming its epoch
    epochs: bool = False
    # its episodes act through tools: the shard's dead-tools alarm watches them
    tools: bool = False
    # one shard's path under results/episodes/<name>/, by what each folder and the file's
    # stem name ("model", "method", "setting", "domain"): ("model", "method", "domain") is
    # <model>/<method>/<domain>.parquet. `planaudit export inspect` reads a run by it
    layout: tuple[str, ...] = ("model", "method")
    # figures drawn from its rows alone (planaudit.analysis.figures draws them): outputs of
    # the report exactly when a config runs the regime, so the other figures never change
    figures: tuple[str, ...] = ()

    def shard_fields(self, parts: Sequence[str]) -> dict[str, str] | None:
        """What a shard's path below episodes/<name>/ (its folders, then its file's stem)
        names, by `layout`; None where the path is not laid out so."""
        return dict(zip(self.layout, parts, strict=True)) if len(parts) == len(self.layout) \
            else None
    # its calls may go in provider batches (a model's `batch: true`): each is asked again
    # after the batch, so a call waits for a batch only where no call waits on it
    batch: bool = False
    # the keys of its section that each list what runs (offline `methods`, online `methods`
    # and `plan_settings`): a model that is not a reference model runs only what the
    # user's own config files name (planaudit.config.restrict)
    choices: tuple[str, ...] = ()
    # waves(section, method): the sequential calls of one episode of `method` (batch mode
    # waits up to a day for each); None: one call an episode
    waves: Callable[[Mapping[str, Any], str], int] | None = None
    # its rows stand in the main table beside the offline and online rows (people on the
    # same tasks), and in `same_tasks`, the main table on the tasks its rows hold
    beside: bool = False
    # figures it draws itself (name -> Drawing), outputs exactly when a config runs it
    drawings: Mapping[str, Drawing] = field(default_factory=dict)
    # its section of the report: (rows, config, tables dir, figures dir, page) -> HTML
    report: Callable[..., str] | None = None
    # its config section's key, where it differs from its name (people's rows, regime
    # `human`, are named by the `study` section)
    section: str = ""
    # the regime its rows answer the same tasks as (formalize: offline): its rows stand in
    # the main table, and the tables stage pairs them per model with that regime's on the
    # same tasks (`<name>_vs_<versus>`: exact McNemar, Holm)
    versus: str = ""

    @property
    def key(self) -> str:
        """The config section this regime reads."""
        return self.section or self.name


@dataclass(frozen=True)
class Drawing:
    """A figure a regime draws itself: `draw(rows, seed, bootstrap, alpha)` takes every
    collected row (people's figure sets the models' rows on the same tasks beside them)
    and returns a matplotlib figure, or raises ValueError saying why the rows cannot
    support it (a placeholder then states the reason)."""

    caption: str
    draw: Callable[..., Any]


REGIMES: dict[str, Regime] = {}


def section_schema(module_file: str) -> dict:
    """The schema of a regime's config section, `schema.yaml` beside its module: the
    section travels with the regime's package, not in the workflow's common schema. Read
    at every `planaudit` start (the CLI lists the regimes), so with libyaml where PyYAML
    has it: 2.8 ms for the four built-in sections against 10.8 ms in pure Python."""
    import yaml

    path = Path(module_file).with_name("schema.yaml")
    try:
        return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileNotFoundError:
        raise ValueError(f"{path}: the regime's config schema is missing") from None


def row_columns(module_file: str) -> dict:
    """A regime's own row columns (name -> JSON schema), `row.yaml` beside its module:
    collect lays them into the row schema (workflow/schemas/row.schema.yaml holds only the
    columns every regime's rows share)."""
    import yaml

    path = Path(module_file).with_name("row.yaml")
    try:
        found = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileNotFoundError:
        raise ValueError(f"{path}: the regime's row columns are missing") from None
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise ValueError(f"{path}: needs a mapping of column name -> JSON schema")
    return found


def register(regime: Regime) -> Regime:
    REGIMES[regime.name] = regime
    ordered = sorted(REGIMES.values(), key=lambda r: r.rank)  # stable: then as registered
    REGIMES.clear()
    REGIMES.update((r.name, r) for r in ordered)
    return regime


def regimes() -> dict[str, Regime]:
    """Every regime: planaudit's packages' `regime.py`, then PLANAUDIT_REGIMES' modules."""
    root = Path(__file__).parent
    names = [f"planaudit.{p.name}.regime" for p in pkgutil.iter_modules([str(root)])
             if p.ispkg and (root / p.name / "regime.py").is_file()]
    names += [n for n in os.environ.get(PLUGINS, "").split(os.pathsep) if n]
    for name in names:
        if importlib.util.find_spec(name) is None:
            raise ValueError(f"{PLUGINS}: no module '{name}' to import")
        importlib.import_module(name)
    return REGIMES


def get(name: str) -> Regime:
    found = regimes()
    if name not in found:
        raise ValueError(f"no regime named {name!r} ({', '.join(found)})")
    return found[name]
