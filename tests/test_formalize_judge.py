"""The formalizer judge on hand-written pairs (tests/data/formalize_pairs.yaml): each pair's
verdict, distinguishing sequence and outcome were worked out by hand, and every sequence the
judge gives is replayed step by step on both tasks, apart from the search that found it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from planaudit.cli import main
from planaudit.formal.equivalence import compare
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.load import load_task
from planaudit.formal.truth import Limits, solve
from planaudit.formalize.judge import judge

ROOT = Path(__file__).resolve().parents[1]
CASES = yaml.safe_load((ROOT / "tests" / "data" / "formalize_pairs.yaml").read_text())
OWN = Limits(external=False)  # planaudit's own search: the pairs are small
KINDS = {"reordered", "missing-fact", "extra-fact-unreachable", "goal-same-states",
         "goal-differs", "objects", "extra-predicate", "unsolvable-twin"}  # the issue's list


def _edit(text: str, edits: list, where: str) -> str:
    for old, new in edits:
        assert text.count(old) == 1, f"{where}: {old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


def _files(case: dict, tmp: Path) -> tuple[Path, Path, Path, Path]:
    """The hidden domain and problem, and the model's, as files in `tmp`."""
    if "hidden" in case:
        domain_name, task = case["hidden"].split("/")
        hidden_problem = (ROOT / "domains" / domain_name / "problems" / f"{task}.pddl").read_text()
    else:
        domain_name, hidden_problem = case["domain"], case["hidden_problem"]
    hidden_domain = (ROOT / "domains" / domain_name / "domain.pddl").read_text()
    model_problem = case.get("problem") or _edit(hidden_problem, case.get("problem_edits", []),
                                                  case["name"])
    model_domain = _edit(hidden_domain, case.get("domain_edits", []), case["name"])
    paths = [tmp / n for n in ("hidden-d.pddl", "hidden-p.pddl", "d.pddl", "p.pddl")]
    for path, text in zip(paths, (hidden_domain, hidden_problem, model_domain, model_problem),
                          strict=True):
        path.write_text(text)
    return paths[0], paths[1], paths[2], paths[3]


_TRUTHS: dict[str, dict] = {}


def _truth(case: dict, domain: Path, problem: Path) -> dict:
    """The hidden task's truth, proven once per hidden task of the set."""
    key = case.get("hidden") or case["hidden_problem"]
    if key not in _TRUTHS:
        _TRUTHS[key] = solve(str(domain), str(problem), OWN)
    return _TRUTHS[key]


def _step(task: Task, state, name: str):
    """The successor under the action `name`, or None where the task does not allow it."""
    action, *args = name.strip("()").split()
    try:
        op = task.operator(action, tuple(args))
    except (GroundingError, KeyError, ValueError):
        return None  # a name the task does not have
    return op.apply(state) if op.applicable(state) else None


def _replay(task: Task, names: tuple[str, ...]):
    state = task.init
    for name in names:
        state = _step(task, state, name)
        assert state is not None, f"{name} is not allowed after the prefix"
    return state


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_pair_is_judged_as_worked_out_by_hand(case, tmp_path):
    hd, hp, md, mp = _files(case, tmp_path)
    j = judge(hd, hp, md, mp, truth=_truth(case, hd, hp), limits=OWN)
    if case["expect"] == "malformed":
        assert j.outcome == "malformed" and not j.well_formed
        assert j.parses is case["parses"]
        assert case["error"] in j.error and str(mp) in j.error
        assert j.equivalence is None and j.plan is None
        return
    assert j.parses and j.well_formed and j.error is None
    eq = j.equivalence
    assert eq.verdict == case["expect"], eq.words()
    if "outcome" in case:
        assert j.outcome == case["outcome"], j.words()
    if eq.verdict == "equivalent":
        assert eq.difference is None and eq.pairs > 0
        return
    want, got = case["distinguish"], eq.difference
    assert (got.kind, got.hidden) == (want["kind"], want["hidden"]), got.words()
    if "prefix" in want:
        assert list(got.prefix) == want["prefix"], got.words()
        assert got.action == want.get("action"), got.words()
    else:
        assert len(got.sequence) == want["length"], got.words()
    # the sequence, replayed on both tasks, tells them apart as the judge says
    hidden, model = load_task(hd, hp), load_task(md, mp)
    hs, ms = _replay(hidden, got.prefix), _replay(model, got.prefix)
    if got.kind == "allowed":
        assert (_step(hidden, hs, got.action) is not None) is got.hidden
        assert (_step(model, ms, got.action) is not None) is (not got.hidden)
    else:
        assert hidden.goal_holds(hs) is got.hidden and model.goal_holds(ms) is (not got.hidden)
    assert got.words().count("(") >= len(got.sequence)  # every action is named in the words


def test_the_set_covers_every_kind_the_issue_asks_for():
    kinds = Counter(c["kind"] for c in CASES)
    assert len(CASES) >= 40 and len({c["name"] for c in CASES}) == len(CASES)
    assert KINDS <= set(kinds), KINDS - set(kinds)
    verdicts = Counter(c["expect"] for c in CASES)
    assert verdicts["equivalent"] >= 15 and verdicts["different"] >= 15, verdicts


def test_the_route_plans_on_the_model_files_and_is_validated_on_the_hidden_model(tmp_path):
    case = next(c for c in CASES if c["name"] == "bw-p02-goal-missing-literal")
    hd, hp, md, mp = _files(case, tmp_path)
    j = judge(hd, hp, md, mp, limits=OWN)
    assert j.plan == ["(unstack c a)", "(put-down c)", "(pick-up a)", "(stack a b)"]
    assert j.verdict["executable"] and not j.verdict["goal_reached"]
    assert j.verdict["failure"]["kind"] == "goal" and j.optimal_length == 6
    assert j.solvable is True and j.route_status == "solved"


def test_past_its_bound_the_comparison_is_undecided_and_names_the_bound():
    p03 = ROOT / "domains" / "blocksworld" / "problems" / "p03.pddl"
    d = ROOT / "domains" / "blocksworld" / "domain.pddl"
    full = compare(load_task(d, p03), load_task(d, p03))
    assert full.verdict == "equivalent" and full.pairs > 10
    cut = compare(load_task(d, p03), load_task(d, p03), max_pairs=10)
    assert cut.verdict == "undecided" and cut.bound == "10 state pairs" and cut.difference is None
    assert "undecided" in cut.words() and "10 state pairs" in cut.words()


def test_past_its_bound_a_known_sequence_that_tells_them_apart_is_a_witness(tmp_path):
    """A goal with a literal lost: the models part only where the hidden optimal plan's
    prefix reaches the smaller goal, deeper than ten pairs reach. Walked as a probe, that
    plan decides `different`, the bound still named (a witness, not proven shortest)."""
    d = ROOT / "domains" / "blocksworld" / "domain.pddl"
    p03 = ROOT / "domains" / "blocksworld" / "problems" / "p03.pddl"
    truth = solve(str(d), str(p03), OWN)
    text = p03.read_text()
    goal = text[text.index("(:goal"):]
    first = goal[goal.index("(on "):goal.index(")", goal.index("(on ")) + 1]
    (tmp_path / "p.pddl").write_text(text.replace(first, "", 1))
    hidden, model = load_task(d, p03), load_task(d, tmp_path / "p.pddl")
    full = compare(hidden, model)
    assert full.verdict == "different" and full.bound is None
    blind = compare(hidden, model, max_pairs=10)
    assert blind.verdict == "undecided"
    seen = compare(hidden, model, max_pairs=10, probes=[truth["plan"]])
    assert seen.verdict == "different" and seen.bound == "10 state pairs"
    assert seen.difference.kind == "plan" and seen.difference.hidden is False
    assert list(seen.difference.prefix) == truth["plan"][:len(seen.difference.prefix)]
    assert len(seen.difference.prefix) >= len(full.difference.sequence)  # BFS's is shortest
    assert "not proven the shortest" in seen.words()


def test_names_are_read_through_the_brief(tmp_path):
    """A formalizer that names the blocks red, blue and green is read through `rename`."""
    d = ROOT / "domains" / "blocksworld" / "domain.pddl"
    text = (ROOT / "domains" / "blocksworld" / "problems" / "p02.pddl").read_text()
    colours = {"a": "red", "b": "blue", "c": "green"}
    renamed = text.replace("(:objects a b c - block)", "(:objects red blue green - block)")
    for letter, colour in colours.items():
        renamed = renamed.replace(f" {letter})", f" {colour})").replace(f" {letter} ", f" {colour} ")
    (tmp_path / "p.pddl").write_text(renamed)
    back = {v: k for k, v in colours.items()}

    def rename(name: str) -> str:
        action, *args = name.strip("()").split()
        return "(" + " ".join([action, *(back.get(a, a) for a in args)]) + ")"

    hidden, model = load_task(d, ROOT / "domains/blocksworld/problems/p02.pddl"), \
        load_task(d, tmp_path / "p.pddl")
    assert compare(hidden, model).verdict == "different"  # unread, the names differ
    assert compare(hidden, model, rename).verdict == "equivalent"


def test_the_command_judges_files_with_the_exit_codes_of_validate(tmp_path, capsys):
    case = next(c for c in CASES if c["name"] == "bw-p02-missing-ontable-a")
    hd, hp, md, mp = _files(case, tmp_path)
    assert main(["formalize", "judge", str(hd), str(hp), str(hd), str(hp), "--no-external"]) == 0
    out = capsys.readouterr().out
    assert "outcome: success" in out and "equivalent" in out
    assert "the route's plan (6 steps) on the hidden model: valid; the optimum is 6 steps" in out
    assert main(["formalize", "judge", str(hd), str(hp), str(md), str(mp), "--no-external",
                 "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["equivalence"]["verdict"] == "different"
    assert got["equivalence"]["difference"]["words"] == (
        "after (unstack c a) (put-down c), the hidden model allows (pick-up a) and yours does not")
    assert main(["formalize", "judge", str(tmp_path / "none.pddl"), str(hp), str(md), str(mp),
                 "--no-external"]) == 2
    assert "none.pddl" in capsys.readouterr().err


def test_feedback_tells_what_a_users_tools_would_and_nothing_of_the_hidden_model(tmp_path):
    from planaudit.formalize.judge import feedback

    said = {}
    for name in ("gr-p01-unbalanced", "gr-p01-object-of-wrong-type", "gr-p01-unsolvable-locked-goal-room",
                 "bw-p02-goal-missing-literal", "bw-p02-init-reordered"):
        case = next(c for c in CASES if c["name"] == name)
        folder = tmp_path / name
        folder.mkdir()
        hd, hp, md, mp = _files(case, folder)
        j = judge(hd, hp, md, mp, truth=_truth(case, hd, hp), limits=OWN)
        said[name] = feedback(j)
        text = said[name] or ""
        # nothing of the hidden model: its files, its verdicts, its sequences
        assert "hidden" not in text and str(hd) not in text and str(hp) not in text
        for words in (j.equivalence.words() if j.equivalence else "", *(j.plan or [])):
            assert not words or words not in text
    assert said["gr-p01-unbalanced"].startswith("Your PDDL does not parse: ")
    assert "p.pddl:" in said["gr-p01-unbalanced"]
    assert said["gr-p01-object-of-wrong-type"].startswith("Your PDDL is not well formed: ")
    assert "ball1" in said["gr-p01-object-of-wrong-type"]
    assert said["gr-p01-unsolvable-locked-goal-room"].startswith("The planner proved your task unsolvable")
    # a plan found on the files: the user's tools see nothing wrong, whatever the hidden
    # model says of that plan (here it does not reach the hidden goal)
    assert said["bw-p02-goal-missing-literal"] is None and said["bw-p02-init-reordered"] is None


def test_the_hidden_files_themselves_are_judged_without_a_search(tmp_path):
    """Token for token the hidden files (here with their comments and layout changed): the
    truth's proof and plan are the route's, and no product is walked, so the task is judged
    at once under bounds a search could not work within."""
    d = ROOT / "domains" / "logistics" / "domain.pddl"
    p = ROOT / "domains" / "logistics" / "problems" / "p05.pddl"  # 238k states breadth first
    truth = solve(str(d), str(p), Limits(external=False))
    lines = [ln for ln in p.read_text().splitlines() if not ln.lstrip().startswith(";")]
    (tmp_path / "p.pddl").write_text("; my own\n" + " ".join(" ".join(lines).upper().split()))
    starved = Limits(external=False, bfs_states=10, astar_seconds=0.01)
    j = judge(d, p, d, tmp_path / "p.pddl", truth=truth, limits=starved, max_pairs=10)
    assert j.equivalence.identical and j.equivalence.verdict == "equivalent"
    assert j.equivalence.pairs == 0 and "token for token" in j.equivalence.words()
    assert j.outcome == "success" and j.plan == truth["plan"] and j.verdict["valid"]
    # one token changed: searched, and here the starved bounds decide nothing
    (tmp_path / "q.pddl").write_text(p.read_text().replace("(:goal (and", "(:goal (and (and)", 1))
    k = judge(d, p, d, tmp_path / "q.pddl", truth=truth, limits=starved, max_pairs=10)
    assert not k.equivalence.identical and k.equivalence.verdict == "undecided"
    assert k.outcome == "budget-exhausted"
