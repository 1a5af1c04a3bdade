"""Suite preparation: obfuscation, briefs and their coverage audit, external suites."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from planaudit.formal import load_task, parse_plan, validate
from planaudit.formal.ground import Task
from planaudit.formal.syntax import load_domain, load_problem
from planaudit.formal.task import conjuncts
from planaudit.formal.truth import Limits
from planaudit.suite.brief import BriefError, Templates, load_templates, render
from planaudit.suite.catalog import load_suite
from planaudit.suite.obfuscate import name_map, rename
from planaudit.suite.prepare import prepare
from planaudit.suite.records import LabelError, make_truth, write_summary
from tests.conftest import DOMAINS, suite_entries

OBFUSCATED = ("blocksworld", "gripper", "logistics")


def _load(entry):
    domain = load_domain(entry.domain_file)
    return domain, load_problem(entry.problem_file, domain)


@pytest.mark.parametrize("entry", [e for e in suite_entries() if e.domain in OBFUSCATED],
                         ids=lambda e: f"{e.domain}/{e.id}")
def test_obfuscation_is_a_deterministic_bijection_and_hides_every_name(entry, tmp_path):
    domain, problem = _load(entry)
    names = name_map(problem, 0, f"{entry.domain}/{entry.id}")
    assert sorted(names) == sorted(problem.objects)
    assert len(set(names.values())) == len(names)  # injective, hence a bijection onto its image
    assert names == name_map(problem, 0, f"{entry.domain}/{entry.id}")
    assert names != name_map(problem, 1, f"{entry.domain}/{entry.id}")
    for orig, new in names.items():
        assert re.fullmatch(r"[a-z0-9]{1,3}_[0-9a-f]{6,}", new), new
        assert new.split("_")[0] == problem.objects[orig][0][:3]

    brief = prepare(entry, tmp_path, obfuscate=True, seed=0)
    words = set(re.findall(r"[\w-]+", brief["instance"]))
    assert not words & set(problem.objects), words & set(problem.objects)
    # the domain brief does not depend on objects at all
    plain = render(domain, problem, load_templates(entry.domain_file.parent / "nl.yaml"))
    assert brief["domain"] == plain["domain"]
    # the obfuscated hidden model is the same task: truth carries over through the map
    hidden = load_task(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    stored = json.loads((tmp_path / "names.json").read_text())
    assert stored == names and set(hidden.problem.objects) == set(names.values())
    original = load_task(entry.domain_file, entry.problem_file)
    assert len(original.init_atom_set) == len(hidden.init_atom_set)
    assert {(p, tuple(names[a] for a in args)) for p, args in original.init_atom_set} == \
        hidden.init_atom_set


def test_an_obfuscated_plan_validates_as_the_original_does():
    entry = next(e for e in suite_entries() if (e.domain, e.id) == ("logistics", "p03"))
    domain, problem = _load(entry)
    names = name_map(problem, 5, "logistics/p03")
    plan = """(drive-truck t1 ap1 l1a city1) (load-truck p1 t1 l1a)"""
    hidden = load_task(entry.domain_file, entry.problem_file)
    renamed = rename(problem, names)
    task2 = Task(domain, renamed)
    plan2 = re.sub(r"[\w-]+", lambda m: names.get(m.group(0), m.group(0)), plan)
    v1, v2 = validate(hidden, parse_plan(plan)), validate(task2, parse_plan(plan2))
    assert v1.executable == v2.executable and v1.length == v2.length == 2


@pytest.mark.parametrize("entry", suite_entries(), ids=lambda e: f"{e.domain}/{e.id}")
def test_every_fact_is_covered_by_the_brief(entry):
    domain, problem = _load(entry)
    brief = render(domain, problem, load_templates(entry.domain_file.parent / "nl.yaml"))
    n_goal = len(conjuncts(problem.goal))
    assert brief["facts_covered"] >= len(problem.init_atoms) + n_goal
    assert "UNSOLVABLE" in brief["preamble"]


def test_coverage_audit_catches_a_template_that_drops_an_argument():
    entry = next(e for e in suite_entries() if e.domain == "gripper" and e.id == "p02")
    domain, problem = _load(entry)
    t = load_templates(entry.domain_file.parent / "nl.yaml")
    broken = Templates(t.source, t.world, t.types, {**t.predicates, "carry": "a gripper holds {0}",
                                                    "at": "ball {0} is somewhere"},
                       t.functions, t.actions)
    with pytest.raises(BriefError, match=r"template of 'at' drops '.*': \(at ball1 rooma\)"):
        render(domain, problem, broken)


def test_missing_template_is_named():
    entry = next(e for e in suite_entries() if e.domain == "blocksworld")
    domain, problem = _load(entry)
    t = load_templates(entry.domain_file.parent / "nl.yaml")
    preds = {k: v for k, v in t.predicates.items() if k != "clear"}
    with pytest.raises(BriefError, match="no template for predicate 'clear'"):
        render(domain, problem, Templates(t.source, t.world, t.types, preds, t.functions,
                                          t.actions))


def _external_suite(tmp_path):
    """A published-layout suite: gripper p01 (optimum 3), p09 (unsolvable) claimed as 5."""
    root = tmp_path / "ext"
    d = root / "grip"
    (d / "problems_pddl").mkdir(parents=True)
    shutil.copy(DOMAINS / "gripper" / "domain.pddl", d / "domain.pddl")
    shutil.copy(DOMAINS / "gripper" / "problems" / "p01.pddl", d / "problems_pddl" / "problem1.pddl")
    shutil.copy(DOMAINS / "gripper" / "problems" / "p09.pddl", d / "problems_pddl" / "problem2.pddl")
    prompts = {
        "domain_prompt": "A robot carries balls between rooms with two grippers.",
        "actions": {"move": "(move from to)", "pick": "(pick ball room gripper)",
                    "drop": "(drop ball room gripper)"},
        "problems": [
            {"id": "p01", "prompt": "Ball ball1 is in rooma. Bring it to roomb.",
             "optimal_cost": 3, "difficulty": "easy"},
            {"id": "p02", "prompt": "Bring the balls to roomb.", "optimal_cost": 5,
             "difficulty": "medium"},
        ],
    }
    (d / "prompts.json").write_text(json.dumps(prompts))
    return root


def test_external_suite_is_loaded_and_its_mislabelled_task_reported(tmp_path):
    root = _external_suite(tmp_path)
    entries = load_suite({"source": "external", "root": str(root)})
    assert [(e.domain, e.id, e.label, e.optimal_cost) for e in entries] == [
        ("grip", "p01", "solvable", 3.0), ("grip", "p02", "solvable", 5.0)]
    limits = Limits(bfs_states=100_000, astar_seconds=10, external_seconds=120)
    truths = []
    for e in entries:
        out = tmp_path / "res" / e.domain / e.id
        brief = prepare(e, out, obfuscate=False, seed=0)
        assert brief["instance"] == e.instance_prompt and "move" in brief["domain"]
        if e.id == "p02":
            with pytest.raises(LabelError, match="grip/p02: labelled solvable but proven unsolvable"):
                make_truth(e, out, limits, "strict")
            make_truth(e, out, limits, "warn")  # reported, not fatal
        else:
            make_truth(e, out, limits, "strict")
        truths.append(out / "truth.json")
    write_summary(truths, tmp_path / "summary.csv", tmp_path / "audit.csv")
    audit = (tmp_path / "audit.csv").read_text().splitlines()
    assert len(audit) == 2 and audit[1].startswith("grip,p02,solvability,solvable,5.0,False")


def test_external_prompts_are_obfuscated_with_the_model(tmp_path):
    root = _external_suite(tmp_path)
    e = load_suite({"source": "external", "root": str(root)})[0]
    brief = prepare(e, tmp_path / "o", obfuscate=True, seed=0)
    names = json.loads((tmp_path / "o" / "names.json").read_text())
    assert names["ball1"] in brief["instance"] and "ball1" not in brief["instance"]
