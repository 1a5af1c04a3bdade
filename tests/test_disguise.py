"""Descriptions from PDDL alone, and disguises: the same task under other names has the
same truth, the oracle solves it exactly as often, and no transcript names the original."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from planaudit.formal import write
from planaudit.formal.syntax import load_domain, load_problem, parse_domain
from planaudit.suite import disguise as dg
from planaudit.suite import generic
from planaudit.suite.leaks import hidden_names, leaks
from planaudit.suite.prepare import prepare
from planaudit.suite.records import check_disguise
from tests.conftest import DOMAINS, SUITE_DOMAINS, suite_entries

OBFUSCATE = ("blocksworld", "gripper", "logistics")  # as config/config.yaml


@pytest.mark.parametrize("name", SUITE_DOMAINS)
def test_written_domains_parse_back_to_the_same_model(name):
    dom = load_domain(DOMAINS / name / "domain.pddl")
    again = parse_domain(write.domain(dom))
    assert (again.actions, again.predicates, again.functions, again.types, again.constants) == (
        dom.actions, dom.predicates, dom.functions, dom.types, dom.constants)


def test_every_task_has_a_generic_description_passing_the_coverage_audit():
    for e in suite_entries():
        dom = load_domain(e.domain_file)
        brief = generic.render(dom, load_problem(e.problem_file, dom))
        assert brief["facts_covered"] > 0 and brief["source"] == "generic"
        for act in dom.actions.values():  # every action, its parameters and preconditions
            assert f"({' '.join((act.name, *(p for p, _ in act.params)))})" in brief["domain"]
            assert f"To perform the {act.name} action" in brief["domain"] or (
                f"The {act.name} action can always" in brief["domain"])
    dom = load_domain(DOMAINS / "loadbalancing" / "domain.pddl")  # numeric, in words
    text = generic.domain_brief(dom, generic.templates(dom))
    assert "the quantity load of ?s is less than the quantity capacity of ?s" in text
    assert "the quantity load of ?s increases by 1" in text and "It costs 1." in text
    assert "it is not the case that ?s is powered" in text  # a negative precondition


def test_a_domain_without_nl_yaml_is_described_from_its_pddl(tmp_path):
    root = tmp_path / "domains"
    shutil.copytree(DOMAINS / "gripper", root / "gripper", ignore=shutil.ignore_patterns("nl.yaml"))
    from planaudit.suite.catalog import load_suite

    entry = load_suite({"root": str(root)})[0]
    brief = prepare(entry, tmp_path / "out", obfuscate=False, seed=0)
    assert brief["source"] == "generic" and "To perform the pick action" in brief["domain"]
    # with nl.yaml the templates stay, unless the config asks for the generic description
    e2 = load_suite({"root": str(DOMAINS), "domains": ["gripper"]})[0]
    assert prepare(e2, tmp_path / "t", False, 0)["source"].endswith("nl.yaml")
    assert prepare(e2, tmp_path / "g", False, 0, description="generic")["source"] == "generic"


@pytest.mark.parametrize("disguise", ["deceptive", "randomized"])
def test_a_disguise_is_a_seeded_bijection_avoiding_every_original_name(disguise):
    for name in SUITE_DOMAINS:
        dom = load_domain(DOMAINS / name / "domain.pddl")
        m = dg.name_map(dom, disguise, 0)
        assert m == dg.name_map(dom, disguise, 0) and m != dg.name_map(dom, disguise, 1)
        new = [v for kind in dg.KINDS for v in m[kind].values()]
        old = {o for kind in dg.KINDS for o in m[kind]}
        assert len(set(new)) == len(new) and not set(new) & old
        if disguise == "deceptive":
            assert set(new) <= set(dg.words())
    assert len(dg.words()) >= 250


def test_the_leak_scan_finds_a_planted_original_name(tmp_path):
    entry = next(e for e in suite_entries() if e.domain == "gripper")
    brief = prepare(entry, tmp_path, obfuscate=True, seed=0, disguise="deceptive")
    names = json.loads((tmp_path / "names.json").read_text())
    text = json.dumps(brief)
    assert leaks(text, names) == []
    assert {"pick", "carry", "at-robby", "ball", "room"} <= hidden_names(names)
    planted = text.replace(names["predicates"]["carry"], "carry", 1)
    assert leaks(planted, names) == ["carry"]
    obj = next(iter(names["objects"]))
    assert leaks(text + f" {obj.upper()}", names) == [obj]
    assert leaks(text + " (:action x", names) == ["(:action"]
    # the preamble's fixed wording ("a single fenced code block") is no leak of blocksworld's
    # type, but the same word anywhere else is
    bw = next(e for e in suite_entries() if e.domain == "blocksworld")
    brief = prepare(bw, tmp_path / "bw", obfuscate=True, seed=0, disguise="randomized")
    names = json.loads((tmp_path / "bw" / "names.json").read_text())
    text = json.dumps(brief)
    assert "block" in hidden_names(names) and "code block" in text and leaks(text, names) == []
    assert leaks(text.replace("Object types:", "Object types: block"), names) == ["block"]


# -- every task under every disguise: truth, the oracle, the leak scan ----------------------


# The three tasks breadth-first search cannot finish within config/config.yaml's 300,000
# states: our search (breadth-first to that limit, then A* with LM-cut) takes 14-31 s of
# CPU apiece on them, 70 of the 115 s a disguise of the 50 tasks took. Under a disguise Fast
# Downward proves them instead, on the disguised PDDL as unified-planning reads it (not
# through our parser and grounding); our own search proves them undisguised in
# test_truth.py, and disguised wherever a config lists `suite.disguise`.
BEYOND_BFS = {("logistics", "p06"), ("logistics", "p07"), ("logistics", "p08")}


def _prove_disguised(entry, folder: Path, disguise: str) -> None:
    """Prepare one task under a disguise and prove it (make_truth raises on a label or
    optimum other than claimed); a job of `suite`'s process pool."""
    from planaudit.formal.truth import Limits
    from planaudit.suite.records import make_truth

    prepare(entry, folder, entry.domain in OBFUSCATE, 0, disguise=disguise)
    if (entry.domain, entry.id) in BEYOND_BFS:  # own search stops at once: the planner proves
        limits = Limits(bfs_states=1, astar_seconds=0, external_seconds=600, external=True)
    else:
        limits = Limits(bfs_states=300_000, astar_seconds=60, external_seconds=600,
                        external=False)
    make_truth(entry, folder, limits)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """All 50 tasks, undisguised and under both disguises, prepared as the suite rules do.
    Each disguised task is proven on its own hidden model (by the project's own search, by
    Fast Downward for `BEYOND_BFS`) and audited against the task's claims (the undisguised
    truth the suite proves: label and optimal length). To stay lean the undisguised task
    is not searched again: its truth record is the deceptive one with the plan translated
    back to the original names, so the oracle's undisguised episodes check that plan on
    the original model. The 100 proofs are independent: a process per CPU proves them,
    the highest task numbers (the largest tasks) first, so the CPU another test leaves
    idle (a run waiting on a server) is used."""
    base = tmp_path_factory.mktemp("suite")
    entries = suite_entries()
    jobs = sorted(((e, d) for e in entries for d in ("deceptive", "randomized")),
                  key=lambda job: job[0].id, reverse=True)
    # spawn, not fork: the test process runs threads (xdist's, a fake server's)
    with ProcessPoolExecutor(len(os.sched_getaffinity(0)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        done = [pool.submit(_prove_disguised, e, base / e.domain / f"{e.id}@{d}", d)
                for e, d in jobs]
        for future in done:
            future.result()  # a LabelError of any task fails the fixture, naming it
    for e in entries:
        folder = base / e.domain / e.id
        prepare(e, folder, e.domain in OBFUSCATE, 0)
        disguised = base / e.domain / f"{e.id}@deceptive"
        rec = json.loads((disguised / "truth.json").read_text())
        names = json.loads((disguised / "names.json").read_text())
        shown = json.loads((folder / "names.json").read_text())
        actions = {v: k for k, v in names["actions"].items()}
        objects = {v: shown[k] for k, v in names["objects"].items()}
        if rec["plan"] is not None:
            rec["plan"] = ["(" + " ".join([actions[w[0]], *(objects[o] for o in w[1:])]) + ")"
                           for w in (step.strip("()").split() for step in rec["plan"])]
        (folder / "truth.json").write_text(json.dumps(rec))
    return base


def test_disguised_and_undisguised_truths_agree_on_every_task(suite):
    n = 0
    for e in suite_entries():
        claimed = {"solvable": e.label == "solvable", "optimal_length": e.optimal_length}
        assert e.optimal_length is not None or e.label == "unsolvable"
        for d in ("deceptive", "randomized"):
            folder = suite / e.domain / f"{e.id}@{d}"
            rec = json.loads((folder / "truth.json").read_text())
            assert rec["audit"] == [] and rec["agree"], (e.domain, e.id, d)
            prover = ("fast-downward-opt" if (e.domain, e.id) in BEYOND_BFS else "own")
            assert rec["proven_by"] == [prover], (e.domain, e.id, d, rec["methods"])
            assert {k: rec[k] for k in claimed} == claimed, (e.domain, e.id, d)
            # it is a model of its own: none of the original names is in its PDDL
            names = json.loads((folder / "names.json").read_text())
            pddl = (folder / "domain.pddl").read_text() + (folder / "problem.pddl").read_text()
            assert leaks(dg.PDDL_KEYWORDS.sub("", pddl), names) == []
            n += 1
        a, b = (json.loads((suite / e.domain / f"{e.id}@{d}" / "truth.json").read_text())
                for d in ("deceptive", "randomized"))
        assert check_disguise(a, b, e.id) == [] and a["states"] == b["states"]
    assert n == 100
    # a difference is named, never let through
    assert check_disguise({"solvable": True, "optimal_length": 5, "optimal_cost": None},
                          {"solvable": True, "optimal_length": 4, "optimal_cost": None},
                          "x/p01@deceptive") == ["x/p01@deceptive: optimal_length is 5 "
                                                 "disguised but 4 undisguised"]


@pytest.mark.parametrize(("regime", "method"), [("offline", "direct"), ("online", "react")])
def test_the_oracle_succeeds_as_often_under_every_disguise(suite, tmp_path, regime, method):
    import polars as pl

    from planaudit.analysis.tables import disguise_table
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard

    config = {"models": [{"name": "oracle", "model": "reference/oracle", "max_concurrency": 16}],
              regime: {"methods": [method], "params": {}}, "cache": str(tmp_path / "cache")}
    exp = Experiment.from_dict(config)
    frames = run_shard(exp, exp.model("oracle"), exp.method(regime, method), list(SUITE_DOMAINS),
                       suite,
                       tmp_path / "{domain}.parquet", tmp_path / "tr" / "{domain}",
                       progress_every=1e9, disguises=dg.DISGUISES)
    rows = [r for f in frames.values() for r in f.to_dicts()]
    assert len(rows) == 150
    ok = {}
    for r in rows:
        ok.setdefault(r["disguise"], {})[(r["domain"], r["task"])] = r["outcome"] in (
            "success", "detected")
    assert len(ok["none"]) == 50 and all(ok["none"].values())
    assert ok["deceptive"] == ok["none"] == ok["randomized"]
    # no transcript of a disguised task names an original action, predicate or type
    scanned = 0
    for d in SUITE_DOMAINS:
        for path in (tmp_path / "tr" / d).glob("*@*.jsonl"):
            names = json.loads((suite / d / path.stem / "names.json").read_text())
            steps = [json.loads(ln) for ln in path.read_text().splitlines()]
            text = json.dumps([s for s in steps if "row" not in s])
            assert leaks(text, names) == [], path
            scanned += 1
    assert scanned == 100
    table = disguise_table(pl.DataFrame(rows, infer_schema_length=None))
    assert table.height == 2 and table["b"].to_list() == [0, 0] == table["c"].to_list()
    assert table["p"].to_list() == [1.0, 1.0]
