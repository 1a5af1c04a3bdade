"""The map in ARCHITECTURE.md holds: every import of src/planaudit, read with ast, goes down
(or sideways between regimes) and never closes a cycle.

An import inside a function counts as much as one at the top: a lazy import keeps start-up
fast, it does not make an arrow go the other way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# ARCHITECTURE.md's layers, from the bottom: a part imports only parts of its own layer or
# below (and, in its own layer, never closes a cycle). A part of src/planaudit missing here
# fails the test: a new package is placed on the map when it is made.
LAYERS = {
    # the semantics and what imports nothing of the project's upper parts
    "planaudit": 0, "atomic": 0, "contract": 0, "config": 0, "commandline": 0, "episode": 0,
    "protocol": 0, "regime": 0,
    "paths": 0,  # where the package's data lies (the workflow, the built-in domains)
    "formal": 0,
    "suite": 1, "llm": 1, "compliance": 1,
    "reference": 2, "experiment": 2, "shard": 2,
    # the regimes (and PlanBench's material, which the curriculum is built on); no regime
    # imports another (test_no_regime_imports_another_regime)
    "offline": 3, "online": 3, "planbench": 3, "curriculum": 3, "acpbench": 3, "human": 3,
    "formalize": 3,  # models that write the PDDL, judged by formal/ (a regime to be)
    "run": 4, "estimate": 4, "analysis": 4, "transcript": 4, "interop": 4, "harness": 4, "study": 4,
    "project": 4,  # `planaudit init`: a run folder using the packaged workflow
    "cli": 5,
    "simulated": 5,  # simulated participants: a client of the study server, over HTTP
    # the workflow's own scripts (workflow/scripts/, run by Snakemake's `script:`)
    "workflow": 5,
}


def modules() -> dict[str, Path]:
    found = {}
    for p in (SRC / "planaudit").rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = p
    return found


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (a name imported from a package is the
    package, unless it is a module of it)."""

    def resolve(name: str) -> str:
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, set[str]] = {}
    for m, path in mods.items():
        package = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("planaudit")}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*head, *([node.module] if node.module else [])])
                if base.startswith("planaudit"):
                    found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                              for a in node.names}
        edges[m] = {resolve(t) for t in found} - {m}
    return edges


def part(module: str) -> str:
    """The map's unit: a package of src/planaudit, or a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "planaudit"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return imports(modules())


def test_every_part_is_on_the_map(graph):
    assert {part(m) for m in graph} <= set(LAYERS), sorted({part(m) for m in graph} - set(LAYERS))


def test_no_import_goes_up_a_layer(graph):
    up = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                if LAYERS[part(t)] > LAYERS[part(m)])
    assert not up, up


def test_no_part_imports_the_command_line(graph):
    assert not sorted(m for m, ts in graph.items() if "planaudit.cli" in ts and m != "planaudit.cli")


def test_planbench_material_knows_nothing_of_the_curriculum(graph):
    assert not sorted(f"{m} -> {t}" for m, ts in graph.items() if part(m) == "planbench"
                      for t in ts if part(t) == "curriculum")


def test_no_regime_imports_another_regime(graph):
    """A regime is a package with a `regime.py` (what the registry finds); material two
    regimes share (a state told in sentences: `suite/world.py`) lives below both.
    `planbench/` is PlanBench's material, not a regime: the curriculum is built on it."""
    regimes = {p.parent.name for p in (SRC / "planaudit").glob("*/regime.py")}
    assert {"offline", "online", "curriculum", "acpbench"} <= regimes
    assert "planbench" not in regimes
    assert not sorted(f"{m} -> {t}" for m, ts in graph.items() if part(m) in regimes
                      for t in ts if part(t) in regimes and part(t) != part(m))


def test_reference_models_reach_the_tool_protocol_not_the_online_regime(graph):
    assert not sorted(f"{m} -> {t}" for m, ts in graph.items() if part(m) == "reference"
                      for t in ts if part(t) == "online")


def test_no_import_cycle_between_modules_or_parts(graph):
    modules_graph = nx.DiGraph([(m, t) for m, ts in graph.items() for t in ts])
    parts_graph = nx.DiGraph([(part(m), part(t)) for m, ts in graph.items() for t in ts
                              if part(m) != part(t)])
    assert list(nx.simple_cycles(modules_graph)) == []
    assert list(nx.simple_cycles(parts_graph)) == []


def test_the_walk_sees_what_it_must(tmp_path):
    """The walk itself: relative, lazy and from-package imports all count, so the tests above
    cannot pass by missing an arrow."""
    pkg = tmp_path / "planaudit"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from ..cli import main\n")
    (pkg / "low" / "b.py").write_text("from . import a\n")
    (pkg / "cli.py").write_text("from planaudit.low import b\n")
    mods = {}
    for p in pkg.rglob("*.py"):
        parts = list(p.relative_to(tmp_path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = p
    edges = imports(mods)
    assert edges["planaudit.low.a"] == {"planaudit.cli"}
    assert edges["planaudit.low.b"] == {"planaudit.low.a"}
    assert edges["planaudit.cli"] == {"planaudit.low.b"}
