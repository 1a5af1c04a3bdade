"""A fifth regime is one file and a config section: a toy regime, kept outside planaudit
(PLANAUDIT_REGIMES names its module), is picked up through the registry by the workflow
(its jobs, its rows collected, its table), the command line (`planaudit toy shard`), the
estimate, the config check and the Inspect export and import (its rows back, the same),
with nothing of planaudit edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.test_workflow import make_suite

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]

# The toy: each job answers one question about every prepared task from its truth record
# (no model call), a row per task with one column of its own, and a table of its own.
TOY = '''
import json
from pathlib import Path

import polars as pl

from planaudit import atomic
from planaudit.regime import Estimated, Jobs, Regime, register


def jobs(view):
    section = view.config.get("toy") or {}
    results = view.results
    return Jobs(
        keys=list(section.get("questions", [])),
        inputs=list(view.ready.values()),
        outputs=[f"{results}/episodes/toy/{{model}}/{{job}}.parquet"],
        spec=lambda entry, q: view.spec(entry, "toy", {"questions": [q]}),
        args=lambda model, q: ["--question", q, "--suite", f"{results}/suite",
                               "--out", f"{results}/episodes/toy/{model}/{q}.parquet"])


def shard(args):
    config = json.loads(args.spec)
    rows = []
    for truth in sorted(Path(args.suite).glob("*/*/truth.json")):
        solvable = json.loads(truth.read_text())["solvable"]
        rows.append({
            "regime": "toy", "model": args.model, "model_tier": "reference",
            "reference": True, "method": args.question, "domain": truth.parent.parent.name,
            "task": truth.parent.name, "solvable": solvable, "optimal_length": None,
            "outcome": "success", "success": True, "executable": None, "detected": False,
            "plan_length": None, "efficiency": None, "first_failure_step": None,
            "first_failure_kind": None, "first_failure_action": None,
            "first_failure_detail": None, "error": None, "contract_breach": None,
            "truncated": False, "n_calls": 0, "input_tokens": 0, "output_tokens": 0,
            "cost_usd": 0.0, "latency_s": 0.0, "cache_hits": 0,
            "config_hash": str(len(config)), "code_version": "toy",
            "toy_answer": "yes" if solvable else "no"})
    atomic.write_parquet(pl.DataFrame(rows), Path(args.out))
    return 0


def add_parser(sub, config_arg):
    sh = sub.add_parser("toy", help="a toy regime").add_subparsers(required=True).add_parser(
        "shard")
    config_arg(sh)
    for flag in ("--spec", "--model", "--question", "--suite", "--out"):
        sh.add_argument(flag, required=True)
    sh.set_defaults(func=shard)


def estimate(experiment, entry, suite_dir, out_tokens, counter):
    tasks = len(list(Path(suite_dir).glob("*/*/truth.json")))
    questions = experiment.section("toy").written.get("questions", [])
    return [Estimated(q, tasks, 0, 0, 0) for q in questions]


def answers(rows, cell):
    return rows.group_by("model", "method").agg(
        pl.col("toy_answer").eq("yes").sum().alias("yes")).sort("model", "method")


register(Regime(
    name="toy", help="a toy regime", jobs=jobs, add_parser=add_parser, estimate=estimate,
    size=(10, 1000),
    schema={"type": "object", "additionalProperties": False,
            "properties": {"questions": {"type": "array", "items": {"type": "string"}}}},
    columns={"toy_answer": {"enum": ["yes", "no", None]}},
    tables={"toy": answers}))
'''


def test_a_toy_regime_is_one_file_and_a_config_section(tmp_path):
    import polars as pl

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "toy_regime.py").write_text(TOY)
    root = make_suite(tmp_path, {"p01": "solvable", "p09": "unsolvable"})
    cfg = {
        "results": str(tmp_path / "results"), "cache": str(tmp_path / "cache"),
        "suite": {"source": "builtin", "root": str(root), "domains": ["blocksworld"],
                  "seed": 3},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": True},
        "models": [{"name": "oracle", "model": "reference/oracle", "tier": "reference"}],
        "offline": {"methods": []}, "online": {"methods": []},
        "curriculum": {"tests": []}, "acpbench": {"types": []}, "formalize": {"methods": []},
        "toy": {"questions": ["solvable", "again"]},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(tmp_path / "plugins"), PLANAUDIT_REGIMES="toy_regime")

    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(command), cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)

    proc = run(str(BIN / "snakemake"), "--cores", "2", "--nolock", "--configfile", str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "toy_oracle" in proc.stdout + proc.stderr
    rows = pl.read_parquet(tmp_path / "results" / "episodes.parquet").sort("method", "task")
    assert rows["regime"].unique().to_list() == ["toy"]
    assert rows.select("method", "task", "toy_answer").rows() == [
        ("again", "p01", "yes"), ("again", "p09", "no"),
        ("solvable", "p01", "yes"), ("solvable", "p09", "no")]
    table = pl.read_csv(tmp_path / "results" / "report" / "toy.csv")
    assert table.rows() == [("oracle (reference, not an LLM)", "again", 1),
                            ("oracle (reference, not an LLM)", "solvable", 1)]
    # its shards export as Inspect logs by its layout (the default: <model>/<job>.parquet)
    # and import back as the same rows
    exported = run(str(BIN / "planaudit"), "export", "inspect", "--results",
                   str(tmp_path / "results"), "--out", str(tmp_path / "logs"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "logs").glob("*.eval")) == [
        "planaudit_toy_oracle_again.eval", "planaudit_toy_oracle_solvable.eval"]
    imported = run(str(BIN / "planaudit"), "import", "inspect", str(tmp_path / "logs"),
                   "--out", str(tmp_path / "imported"))
    assert imported.returncode == 0, imported.stderr[-2000:]
    back = pl.concat([pl.read_parquet(p) for p in sorted((tmp_path / "imported").glob(
        "toy/*.parquet"))], how="diagonal_relaxed").sort("method", "task")
    shards = pl.concat([pl.read_parquet(p) for p in sorted(
        (tmp_path / "results" / "episodes" / "toy").rglob("*.parquet"))]).sort("method", "task")
    assert back.columns == shards.columns and back.rows() == shards.rows()
    # the command line and the estimate know it; its section is checked by its schema
    assert run(str(BIN / "planaudit"), "toy", "shard", "--help").returncode == 0
    est = run(str(BIN / "planaudit"), "estimate", "--config", str(path), "--json")
    assert est.returncode == 0, est.stderr
    assert [(r["regime"], r["method"], r["tasks"]) for r in json.loads(est.stdout)] == [
        ("toy", "solvable", 2), ("toy", "again", 2)]
    cfg["toy"]["questions"] = "solvable"
    path.write_text(yaml.safe_dump(cfg))
    bad = run(str(BIN / "planaudit"), "estimate", "--config", str(path))
    assert bad.returncode == 2 and "toy.questions" in bad.stderr, bad.stderr


def test_each_builtin_regime_brings_its_section_schema(tmp_path):
    """Each built-in regime's config section is checked against the schema beside its
    `regime.py`; the workflow's common schema file holds none of them, and a bad field in
    a section is still named by file, line and field (through the regime's schema)."""
    from planaudit.config import ConfigError, load_config, schema_path
    from planaudit.regime import regimes

    common = yaml.safe_load(schema_path().read_text())["properties"]
    required = {"offline": ["methods"], "online": ["methods"], "curriculum": ["tests"],
                "acpbench": ["types"]}
    found = regimes()
    for name, keys in required.items():
        schema = found[name].schema
        assert schema == yaml.safe_load((ROOT / "src" / "planaudit" / name / "schema.yaml")
                                        .read_text())
        assert schema["type"] == "object" and schema["required"] == keys
        assert name not in common
    bad = tmp_path / "bad.yaml"
    bad.write_text("offline:\n  methods: [direct]\n  max_tokens: -3\n")
    try:
        load_config(bad)
    except ConfigError as e:
        assert str(e).startswith(f"{bad}:3: offline.max_tokens: "), str(e)
        assert "-3 is less than the minimum of 1" in str(e)
    else:
        raise AssertionError("a negative max_tokens in the offline section passed")


def test_each_section_schema_names_exactly_what_its_regime_registers():
    """The enums a section schema writes out (so a config's wrong name fails before any
    call, naming the line) are the registries the regimes run: a strategy, architecture,
    test case or question type added to one and not the other fails here."""
    from planaudit.acpbench.questions import FORMS, TYPES
    from planaudit.offline.strategies import STRATEGIES
    from planaudit.online.architectures import ARCHITECTURES
    from planaudit.planbench.cases import TESTS
    from planaudit.regime import regimes

    found = regimes()

    def enum(regime: str, key: str) -> list[str]:
        schema = found[regime].schema["properties"][key]
        return (schema["items"] if "items" in schema else schema)["enum"]

    assert sorted(enum("offline", "methods")) == sorted(STRATEGIES)
    assert sorted(enum("online", "methods")) == sorted(ARCHITECTURES)
    assert enum("curriculum", "tests") == list(TESTS)
    assert enum("acpbench", "types") == list(TYPES) and enum("acpbench", "forms") == list(FORMS)


def test_builtin_regimes_declare_their_columns_epochs_tools_and_layout():
    """The built-in regimes register like any other: each brings its own row columns
    (`row.yaml` beside its `regime.py`), so the row schema's regime-specific columns come
    from the registry; whether its episodes repeat and act through tools, and where its
    shards lie, are attributes of the regime, not names the shard or the export test."""
    from planaudit.analysis.collect import default_schema, load_schema
    from planaudit.regime import regimes

    found = regimes()
    builtin = ("offline", "online", "curriculum", "acpbench")
    common = set(yaml.safe_load(default_schema().read_text())["properties"])
    for name, column in zip(builtin, ("val_valid", "n_epistemic", "score_type", "form"),
                            strict=True):
        assert column in found[name].columns and not set(found[name].columns) & common, name
    laid = set(load_schema(default_schema())["properties"])
    assert laid == common | {c for r in found.values() for c in r.columns}
    assert [n for n in builtin if found[n].epochs] == list(builtin)  # every one repeats
    assert [n for n in builtin if found[n].tools] == ["online"]
    # the curriculum's table comes with its regime, as a toy regime's would
    from planaudit.analysis.outputs import TABLES, table_names

    assert list(found["curriculum"].tables) == ["curriculum"] and "curriculum" not in TABLES
    assert "curriculum" in table_names()
    assert {n: found[n].layout for n in builtin} == {
        "offline": ("model", "method", "domain"),
        "online": ("model", "method", "setting", "domain"),
        "curriculum": ("model", "method", "domain"), "acpbench": ("model", "method")}
    assert found["online"].shard_fields(["m", "react", "none", "gripper"]) == {
        "model": "m", "method": "react", "setting": "none", "domain": "gripper"}
    assert found["offline"].shard_fields(["m", "direct"]) is None


def test_people_are_a_regime_like_any_other():
    """People's rows (regime `human`) come through the registry: their section (`study`,
    a key other than the name), columns, tables, figure and report section, their rows
    beside the models' in the main table; no other module names the regime."""
    import re

    from planaudit.analysis.collect import default_schema, load_schema
    from planaudit.analysis.outputs import regime_figures, table_names
    from planaudit.regime import regimes

    human = regimes()["human"]
    assert human.key == "study" and human.name == "human" and human.beside
    assert {"participant", "suggestion_verbatim", "tlx_raw", "text_agrees"} <= set(human.columns)
    assert set(load_schema(default_schema())["properties"]) >= set(human.columns)
    assert {"human", "human_tests"} <= set(table_names())
    assert regime_figures(["human"]) == ["human"] and human.report is not None
    src = ROOT / "src" / "planaudit"
    for path in src.rglob("*.py"):
        if path.is_relative_to(src / "human"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.search(r"""regime["')\]]*\s*==\s*["']human["']""", line), \
                f"{path}:{n} branches on the human regime: {line.strip()}"


def test_the_workflow_rules_name_no_regime():
    """The rules iterate the registry: no rule file branches on a built-in regime's name
    (a comment may name one), and a regime's own figures come from `Regime.figures`."""
    import re

    from planaudit.analysis.outputs import regime_figures

    names = ("offline", "online", "curriculum", "acpbench", "human")
    for path in [*sorted((ROOT / "workflow" / "rules").glob("*.smk")), ROOT / "Snakefile"]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            hits = [x for x in names if re.search(rf"\b{x}\b", code)]
            assert not hits, f"{path.name}:{n} names {hits}: {line.strip()}"
    assert regime_figures(["acpbench", "offline"]) == ["acpbench"]
    assert regime_figures(["offline", "online", "curriculum"]) == []


def test_no_row_column_is_declared_twice():
    """A row.yaml (or the common row schema) naming a column twice would let the second
    silently replace the first (YAML keeps the last); two regimes' rows may share a column
    only as the same column. Found once: `recovered` (gated) and the disruption's."""
    from planaudit.paths import ROW_SCHEMA

    def keys(node) -> list[str]:
        return [k.value for k, _ in node.value]

    files = sorted((ROOT / "src" / "planaudit").glob("*/row.yaml"))
    assert files
    for path in files:
        found = keys(yaml.compose(path.read_text()))
        assert len(found) == len(set(found)), (path, sorted(k for k in found if found.count(k) > 1))
    schema = yaml.compose(ROW_SCHEMA.read_text())
    props = next(v for k, v in schema.value if k.value == "properties")
    found = keys(props)
    assert len(found) == len(set(found)), sorted(k for k in found if found.count(k) > 1)
