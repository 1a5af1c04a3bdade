"""Ground truth: own search and Fast Downward agree wherever both finish; labels hold;
certificates check, and tampered ones are rejected."""

from __future__ import annotations

import json
from functools import cache

import pytest

from planaudit.cli import main
from planaudit.formal import load_task
from planaudit.formal.certificate import RELAXED, STATES, CertificateError, check
from planaudit.formal.task import conjuncts
from planaudit.formal.truth import Limits, solve
from planaudit.suite.audit import label_problems
from tests.conftest import suite_entries

ENTRIES = {f"{e.domain}/{e.id}": e for e in suite_entries()}
LIMITS = Limits(bfs_states=1_000_000, astar_seconds=30, external_seconds=300)


@cache
def truth(name: str) -> dict:
    e = ENTRIES[name]
    return solve(str(e.domain_file), str(e.problem_file), LIMITS)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_methods_agree_and_label_holds(name):
    rec = truth(name)
    assert rec["agree"], rec["methods"]
    finished = [m for m in rec["methods"].values() if m["status"] in ("solved", "unsolvable")]
    assert finished, f"{name}: no method finished"
    engine = "enhsp-opt" if ENTRIES[name].domain == "loadbalancing" else "fast-downward-opt"
    assert engine in rec["proven_by"], rec["methods"]
    if ENTRIES[name].domain in ("loadbalancing", "hospital"):
        assert rec["proven_by"] == sorted([engine, "own"])  # both new domains: two witnesses
    if len(finished) == 2:
        own, fd = rec["methods"]["own"], rec["methods"][engine]
        assert own["status"] == fd["status"]
        assert own["length"] == fd["length"]
    assert label_problems(ENTRIES[name], rec) == []
    if rec["solvable"]:
        assert len(rec["plan"]) == rec["optimal_length"]


@pytest.mark.parametrize("name", [n for n, e in sorted(ENTRIES.items())
                                  if e.label == "unsolvable"])
def test_unsolvable_certificate_checks_and_tampering_is_caught(name):
    e = ENTRIES[name]
    rec = truth(name)
    cert = rec["certificate_data"]
    task = load_task(e.domain_file, e.problem_file)
    check(task, e.domain_file, e.problem_file, cert)  # raises if it does not prove it
    if cert["kind"] == RELAXED:
        tampered = dict(cert, atoms=cert["atoms"][1:])  # drop an atom: no longer closed
    else:
        assert cert["kind"] == STATES
        tampered = dict(cert, states=cert["states"][:-1])
    with pytest.raises(CertificateError):
        check(load_task(e.domain_file, e.problem_file), e.domain_file, e.problem_file, tampered)


def test_certificate_for_another_problem_is_rejected():
    other = ENTRIES["blocksworld/p01"]
    cert = truth("blocksworld/p09")["certificate_data"]
    with pytest.raises(CertificateError, match="problem_sha256"):
        check(load_task(other.domain_file, other.problem_file), other.domain_file,
              other.problem_file, cert)


def test_state_certificate_without_the_initial_state_is_rejected():
    e = ENTRIES["blocksworld/p09"]
    task = load_task(e.domain_file, e.problem_file)
    cert = truth("blocksworld/p09")["certificate_data"]
    assert cert["kind"] == STATES
    initial = set(task.facts(task.init))
    forged = dict(cert, states=[row for row in cert["states"]
                                if {cert["atoms"][i] for i in row[0]} != initial])
    assert len(forged["states"]) == len(cert["states"]) - 1
    with pytest.raises(CertificateError, match="initial state"):
        check(task, e.domain_file, e.problem_file, forged)


def test_state_certificate_with_a_goal_state_is_rejected():
    e = ENTRIES["blocksworld/p09"]
    task = load_task(e.domain_file, e.problem_file)
    cert = dict(truth("blocksworld/p09")["certificate_data"])
    atoms = list(cert["atoms"])
    for g in (task.describe(c) for c in conjuncts(task.goal) if c[0] == "atom"):
        if g not in atoms:
            atoms.append(g)
    goal_row = [[atoms.index(task.describe(c)) for c in conjuncts(task.goal) if c[0] == "atom"], []]
    forged = dict(cert, atoms=atoms, states=[*cert["states"], goal_row])
    with pytest.raises(CertificateError, match="satisfies the goal"):
        check(task, e.domain_file, e.problem_file, forged)


def test_solve_and_certify_check_cli(tmp_path, capsys):
    e = ENTRIES["gripper/p09"]
    cert = tmp_path / "cert.json"
    code = main(["solve", str(e.domain_file), str(e.problem_file), "--json",
                 "--certificate", str(cert), "--no-external"])
    rec = json.loads(capsys.readouterr().out)
    assert code == 0 and rec["solvable"] is False and rec["certificate"] == RELAXED
    assert main(["certify-check", str(e.domain_file), str(e.problem_file), str(cert)]) == 0
    assert "proves the task unsolvable" in capsys.readouterr().out
    data = json.loads(cert.read_text())
    data["atoms"] = data["atoms"][:2]
    cert.write_text(json.dumps(data))
    assert main(["certify-check", str(e.domain_file), str(e.problem_file), str(cert)]) == 1
    assert "rejected" in capsys.readouterr().out


def test_numeric_task_own_search_agrees_with_enhsp():
    from tests.conftest import DATA

    rec = solve(str(DATA / "mixed-domain.pddl"), str(DATA / "mixed-problem.pddl"), LIMITS)
    assert rec["agree"] and rec["solvable"]
    assert rec["proven_by"] == ["enhsp-opt", "own"]
    assert rec["optimal_cost"] == 8 and rec["optimal_length"] == 6


def test_fast_downward_runs_in_a_folder_of_its_own(tmp_path, monkeypatch):
    """Fast Downward's driver writes output.sas into its working directory; two truth
    jobs sharing one would overwrite each other's. Here that file name is taken by a
    folder in our working directory: the call must not care."""
    from planaudit.formal.external import solve_external

    entry = next(e for e in suite_entries() if (e.domain, e.id) == ("blocksworld", "p01"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "output.sas").mkdir()
    result = solve_external(str(entry.domain_file), str(entry.problem_file), "fast-downward-opt",
                            timeout=120)
    assert result.status == "solved" and result.length == 2, result.detail
    assert sorted(p.name for p in tmp_path.iterdir()) == ["output.sas"]
