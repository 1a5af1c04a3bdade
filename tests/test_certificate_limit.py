"""Unsolvable tasks past the breadth-first certificate limit (`truth.bfs_states`).

The fixture is a vault with four lamps and two doors, one key: a plan needs both
doors open, but opening one spends the key. Deletes ignored, both doors open from
the start, so relaxed reachability proves nothing at the initial state; once a door
is open, the other is a relaxed dead end. 48 states are reachable: 16 with the key
(every lamp pattern), 32 dead ends. Under `bfs_states: 20` breadth-first search
gives up, A* with LM-cut expands the 16 and prunes the 32, and its closed list with
the certified dead ends is the certificate. Under `bfs_states: 10` even that is past
the limit: no certificate, but A* and Fast Downward both prove the task unsolvable.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from planaudit.cli import main
from planaudit.formal.certificate import CertificateError, check
from planaudit.formal.load import load_task
from planaudit.formal.search import breadth_first
from planaudit.formal.truth import Limits, solve
from planaudit.suite.catalog import load_suite
from planaudit.suite.prepare import prepare
from planaudit.suite.records import LabelError, make_truth
from tests.conftest import ROOT

EXPANDED = "expanded-states"
BIN = Path(sys.executable).parent

DOMAIN = """(define (domain vault)
  (:requirements :strips :typing)
  (:types lamp)
  (:predicates (lit ?l - lamp) (dark ?l - lamp) (key) (left-open) (right-open))
  (:action light :parameters (?l - lamp) :precondition (dark ?l)
    :effect (and (lit ?l) (not (dark ?l))))
  (:action douse :parameters (?l - lamp) :precondition (lit ?l)
    :effect (and (dark ?l) (not (lit ?l))))
  (:action open-left :parameters () :precondition (key)
    :effect (and (left-open) (not (key))))
  (:action open-right :parameters () :precondition (key)
    :effect (and (right-open) (not (key)))))
"""
LAMPS = "(dark l1) (dark l2) (dark l3) (dark l4)"
UNSOLVABLE = f"""(define (problem vault-1) (:domain vault)
  (:objects l1 l2 l3 l4 - lamp)
  (:init (key) {LAMPS})
  (:goal (and (left-open) (right-open))))
"""
SOLVABLE = f"""(define (problem vault-2) (:domain vault)
  (:objects l1 l2 l3 l4 - lamp)
  (:init (key) {LAMPS})
  (:goal (and (left-open) (lit l2))))
"""


def vault_suite(tmp: Path) -> Path:
    """The vault in the published layout: problem1 unsolvable (-1), problem2 optimum 2."""
    d = tmp / "ext" / "vault"
    (d / "problems_pddl").mkdir(parents=True)
    (d / "domain.pddl").write_text(DOMAIN)
    (d / "problems_pddl" / "problem1.pddl").write_text(UNSOLVABLE)
    (d / "problems_pddl" / "problem2.pddl").write_text(SOLVABLE)
    prompts = {
        "domain_prompt": "A vault with lamps and two doors; one key opens one door.",
        "actions": {"light": "(light lamp)", "douse": "(douse lamp)",
                    "open-left": "(open-left)", "open-right": "(open-right)"},
        "problems": [
            {"id": "p01", "prompt": "Open both doors.", "optimal_cost": -1,
             "difficulty": "easy"},
            {"id": "p02", "prompt": "Open the left door with lamp l2 lit.", "optimal_cost": 2,
             "difficulty": "easy"},
        ],
    }
    (d / "prompts.json").write_text(json.dumps(prompts))
    return tmp / "ext"


@pytest.fixture
def vault(tmp_path):
    root = vault_suite(tmp_path)
    d = root / "vault"
    return d / "domain.pddl", d / "problems_pddl" / "problem1.pddl"


def _certificate(vault, bfs_states=20):
    dom, prob = vault
    rec = solve(str(dom), str(prob), Limits(bfs_states=bfs_states, astar_seconds=10,
                                            external_seconds=120, external=False))
    return rec, rec["certificate_data"]


def test_astar_certificate_past_the_breadth_first_limit_is_made_and_checked(vault):
    dom, prob = vault
    task = load_task(dom, prob)
    assert breadth_first(task, 20).status == "limit"  # the old certificate's limit
    rec, cert = _certificate(vault)
    assert rec["solvable"] is False and rec["methods"]["own"]["method"] == "astar-lmcut"
    assert rec["certificate"] == EXPANDED
    assert (len(cert["states"]), len(cert["dead_ends"])) == (16, 32)
    assert len(cert["proofs"]) == 2  # one per open door, shared by every lamp pattern
    check(task, dom, prob, cert)  # raises if it does not prove it
    # the file form reads back and checks through the command line
    from planaudit.formal.certificate import dumps
    path = prob.with_name("cert.json")
    path.write_text(dumps(cert))
    assert json.loads(path.read_text()) == cert
    assert main(["certify-check", str(dom), str(prob), str(path)]) == 0


def _drop_expanded_state(cert, task):
    """Drop an expanded state other than the initial one: some successor is then missing."""
    initial = set(task.facts(task.init))
    rows = [r for r in cert["states"] if {cert["atoms"][i] for i in r[0]} != initial]
    return dict(cert, states=[r for r in cert["states"] if r is not rows[0]])


def _drop_dead_end(cert, task):
    return dict(cert, dead_ends=cert["dead_ends"][1:])


def _claim_a_live_state_dead(cert, task):
    """An expanded state (the key still in hand) moved to the dead ends under proof 0."""
    key = cert["atoms"].index("(key)")
    live = next(r for r in cert["states"] if key in r[0])
    return dict(cert, states=[r for r in cert["states"] if r is not live],
                dead_ends=[*cert["dead_ends"], [*live, 0]])


def _proof_with_the_goal(cert, task):
    """Proof 0 widened to every atom: closed, but the goal may hold within it."""
    return dict(cert, proofs=[list(range(len(cert["atoms"]))), *cert["proofs"][1:]])


def _proof_not_closed(cert, task):
    """Proof 0 without `(lit l1)`, kept for the dead ends where that lamp is dark (those
    where it is lit move to a copy of the whole proof): `light l1` leads out of it."""
    lit = cert["atoms"].index("(lit l1)")
    moved = len(cert["proofs"])
    dead = [[*r[:2], moved] if r[2] == 0 and lit in r[0] else r for r in cert["dead_ends"]]
    return dict(cert, dead_ends=dead, proofs=[[a for a in cert["proofs"][0] if a != lit],
                                              *cert["proofs"][1:], cert["proofs"][0]])


def _dead_end_without_proof(cert, task):
    return dict(cert, dead_ends=[[*r[:2], 7] for r in cert["dead_ends"]])


@pytest.mark.parametrize("forge, message", [
    (_drop_expanded_state, "not closed: .* neither expanded nor a certified dead end"),
    (_drop_dead_end, "not closed: .* neither expanded nor a certified dead end"),
    (_claim_a_live_state_dead, "dead end .*missing from proof 0"),
    (_proof_with_the_goal, "proof 0: the goal may hold"),
    (_proof_not_closed, r"proof 0: not closed: \(light l1\) adds \(lit l1\)"),
    (_dead_end_without_proof, "names no proof"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_a_planted_wrong_astar_certificate_is_refused(vault, forge, message):
    dom, prob = vault
    task = load_task(dom, prob)
    _, cert = _certificate(vault)
    check(task, dom, prob, cert)
    with pytest.raises(CertificateError, match=message):
        check(task, dom, prob, forge(cert, task))


def test_past_the_certificate_limit_the_record_says_why(vault):
    rec, cert = _certificate(vault, bfs_states=10)
    assert rec["solvable"] is False and cert is None and rec["certificate"] is None
    assert rec["certificate_missing"] == ("astar-lmcut expanded 16 states, more than a "
                                          "certificate holds (truth.bfs_states = 10)")


def _build(root: Path, out: Path, bfs_states: int, audit: str) -> int:
    return main(["suite", "build", "--source", "external", "--root", str(root),
                 "--domain", "vault", "--suite-dir", str(out), "--bfs-states", str(bfs_states),
                 "--astar-seconds", "10", "--external-seconds", "120", "--audit", audit])


def test_warn_keeps_a_task_two_methods_prove_unsolvable_past_the_certificate_limit(
        tmp_path, capsys):
    root, out = vault_suite(tmp_path), tmp_path / "suite"
    assert _build(root, out, 10, "warn") == 0  # the suite job runs to the end
    log = capsys.readouterr().err
    missing = ("vault/p01: unsolvable, proven by fast-downward-opt and own, but no certificate "
               "could be made (astar-lmcut expanded 16 states, more than a certificate holds "
               "(truth.bfs_states = 10))")
    assert f"audit: {missing}" in log
    assert "vault/p01: solvable=False optimal_length=None proven_by=['fast-downward-opt', " \
           "'own'] certificate=none" in log
    truth = json.loads((out / "vault" / "p01" / "truth.json").read_text())
    assert truth["certificate"] is None and truth["audit"] == [
        {"kind": "no-certificate", "message": missing}]
    assert not (out / "vault" / "p01" / "certificate.json").exists()
    truths = [str(out / "vault" / t / "truth.json") for t in ("p01", "p02")]
    summary = tmp_path / "results" / "suite" / "summary.csv"  # where the workflow puts it
    summary.parent.mkdir(parents=True)
    assert main(["suite", "summary", *truths, "--out", str(summary),
                 "--audit-out", str(tmp_path / "audit.csv")]) == 0
    assert "unsolvable without a certificate: vault/p01" in capsys.readouterr().err
    rows = list(csv.DictReader(summary.open()))
    assert [(r["task"], r["solvable"], r["certificate"], r["methods_agreeing"]) for r in rows] \
        == [("p01", "False", "missing", "fast-downward-opt+own"),
            ("p02", "True", "", "fast-downward-opt+own")]
    audit = list(csv.DictReader((tmp_path / "audit.csv").open()))
    assert [(a["task"], a["kind"], a["message"]) for a in audit] == [
        ("p01", "no-certificate", missing)]
    import polars as pl

    from planaudit.analysis.report import design_html
    config = {"results": str(tmp_path / "results"),
              "suite": {"source": "external", "root": str(root), "audit": "warn"}}
    text = design_html(pl.DataFrame(), config, set())  # the report's design section
    assert "<p>Unsolvable tasks: 1; certificates checked: none. <b>Without a certificate</b>" \
           in text
    assert "vault/p01 (proven by fast-downward-opt+own)" in text


def test_strict_fails_on_the_same_task_naming_it(tmp_path, capsys):
    root, out = vault_suite(tmp_path), tmp_path / "suite"
    assert _build(root, out, 10, "strict") == 2
    assert "vault/p01: unsolvable, proven by fast-downward-opt and own, but no certificate" \
        in capsys.readouterr().err


def test_one_proof_without_a_certificate_fails_even_under_warn(tmp_path):
    """Without the external planner only our search proves it: no second word, no keep."""
    root = vault_suite(tmp_path)
    e = load_suite({"source": "external", "root": str(root)})[0]
    prepare(e, tmp_path / "p01", obfuscate=False, seed=0)
    limits = Limits(bfs_states=10, astar_seconds=10, external_seconds=120, external=False)
    with pytest.raises(LabelError, match="vault/p01: unsolvable but no certificate could be "
                                         r"made \(astar-lmcut expanded 16"):
        make_truth(e, tmp_path / "p01", limits, "warn")


def test_our_own_suite_still_requires_a_certificate(tmp_path):
    """A built-in domain under `audit: warn` fails where the external suite is kept."""
    d = tmp_path / "domains" / "vault"
    (d / "problems").mkdir(parents=True)
    (d / "domain.pddl").write_text(DOMAIN)
    (d / "problems" / "p01.pddl").write_text(UNSOLVABLE)
    (d / "tasks.yaml").write_text(yaml.safe_dump({"domain": "vault", "tasks": [
        {"id": "p01", "problem": "problems/p01.pddl", "label": "unsolvable",
         "optimal_length": None, "tests": "one key, two doors"}]}))
    e = load_suite({"source": "builtin", "root": str(tmp_path / "domains"),
                    "domains": ["vault"]})[0]
    prepare(e, tmp_path / "p01", obfuscate=False, seed=0, description="generic")
    limits = Limits(bfs_states=10, astar_seconds=10, external_seconds=120)
    with pytest.raises(LabelError, match="vault/p01: unsolvable, proven by fast-downward-opt "
                                         "and own, but no certificate"):
        make_truth(e, tmp_path / "p01", limits, "warn")


def test_the_suite_job_past_the_limit_carries_the_checked_astar_certificate(tmp_path):
    """`snakemake suite` on the external vault, `bfs_states: 20`, strict: the A*
    certificate is made, checked, written, and shown in the summary."""
    root = vault_suite(tmp_path)
    cfg = {"results": str(tmp_path / "results"),
           "suite": {"source": "external", "root": str(root), "audit": "strict"},
           "truth": {"bfs_states": 20, "astar_seconds": 10, "external_seconds": 120,
                     "external": True}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([str(BIN / "snakemake"), "suite", "--cores", "1", "--nolock",
                           "--configfile", str(path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = tmp_path / "results" / "suite"
    rows = list(csv.DictReader((res / "summary.csv").open()))
    assert [(r["task"], r["certificate"]) for r in rows] == [("p01", EXPANDED), ("p02", "")]
    truth = json.loads((res / "vault" / "p01" / "truth.json").read_text())
    assert truth["certificate_checked"] is True and truth["audit"] == []
    folder = res / "vault" / "p01"
    assert main(["certify-check", str(folder / "domain.pddl"), str(folder / "problem.pddl"),
                 str(folder / "certificate.json")]) == 0
    import polars as pl

    from planaudit.analysis.report import design_html
    text = design_html(pl.DataFrame(), cfg, set())
    assert "<p>Unsolvable tasks: 1; certificates checked: 1 expanded-states.</p>" in text


# A numeric twin, as LoadBalancing is numeric: the tank fills by 0.5 up to 2 and the
# goal also asks for a level of at least 1. 5 live states (every level with the key),
# 10 dead ends; the levels 1/2 and 3/2 must survive the certificate exactly.
TANK_DOMAIN = """(define (domain tank)
  (:requirements :strips :numeric-fluents)
  (:predicates (key) (left-open) (right-open))
  (:functions (level))
  (:action fill :parameters () :precondition (< (level) 2)
    :effect (increase (level) 0.5))
  (:action open-left :parameters () :precondition (key)
    :effect (and (left-open) (not (key))))
  (:action open-right :parameters () :precondition (key)
    :effect (and (right-open) (not (key)))))
"""
TANK_PROBLEM = """(define (problem tank-1) (:domain tank)
  (:init (key) (= (level) 0))
  (:goal (and (left-open) (right-open) (>= (level) 1))))
"""


def tank_suite(tmp: Path) -> Path:
    d = tmp / "ext" / "tank"
    (d / "problems_pddl").mkdir(parents=True)
    (d / "domain.pddl").write_text(TANK_DOMAIN)
    (d / "problems_pddl" / "problem1.pddl").write_text(TANK_PROBLEM)
    (d / "prompts.json").write_text(json.dumps({
        "domain_prompt": "A tank that fills by halves, and two doors one key opens.",
        "actions": {"fill": "(fill)", "open-left": "(open-left)", "open-right": "(open-right)"},
        "problems": [{"id": "p01", "prompt": "Open both doors with the tank at least 1.",
                      "optimal_cost": -1, "difficulty": "easy"}]}))
    return tmp / "ext"


@pytest.mark.parametrize("bfs_states, kind, rows", [(100, "reachable-states", 15),
                                                    (8, EXPANDED, 5)])
def test_numeric_certificates_hold_exact_fractions_and_check(tmp_path, bfs_states, kind, rows):
    from planaudit.formal.certificate import dumps
    d = tank_suite(tmp_path) / "tank"
    dom, prob = d / "domain.pddl", d / "problems_pddl" / "problem1.pddl"
    rec = solve(str(dom), str(prob), Limits(bfs_states=bfs_states, external=False))
    cert = json.loads(dumps(rec["certificate_data"]))  # as written to certificate.json
    assert rec["certificate"] == kind and len(cert["states"]) == rows
    assert [[0], ["1/2"]] in cert["states"] and [[0], ["3/2"]] in cert["states"]
    task = load_task(dom, prob)
    check(task, dom, prob, cert)
    # a level the tank never holds in place of 3/2: 1's successor is then missing
    forged = dict(cert, states=[[r[0], ["4/3"]] if r == [[0], ["3/2"]] else r
                                for r in cert["states"]])
    with pytest.raises(CertificateError, match="not closed"):
        check(task, dom, prob, forged)


def test_numeric_task_past_the_limit_is_kept_under_warn_on_enhsp_and_own(tmp_path):
    """The LoadBalancing case in small: numeric, past the limit, proven by ENHSP and A*."""
    root = tank_suite(tmp_path)
    e = load_suite({"source": "external", "root": str(root)})[0]
    prepare(e, tmp_path / "p01", obfuscate=False, seed=0)
    limits = Limits(bfs_states=4, astar_seconds=10, external_seconds=120)
    rec = make_truth(e, tmp_path / "p01", limits, "warn")
    assert rec["certificate"] is None and rec["proven_by"] == ["enhsp-opt", "own"]
    assert rec["audit"] == [{"kind": "no-certificate", "message": (
        "tank/p01: unsolvable, proven by enhsp-opt and own, but no certificate could be made "
        "(astar-lmcut expanded 5 states, more than a certificate holds (truth.bfs_states = 4))")}]
    with pytest.raises(LabelError, match="tank/p01: unsolvable, proven by enhsp-opt and own"):
        make_truth(e, tmp_path / "p01", limits, "strict")
