"""`planaudit study cohort`: cohort files scripted to given counts for the two-arm
Blocksworld study of tests/study_server.py. Every script's plan is judged on every
instance of the study by the study's own judge (`Material.check`, i.e. `formal/`), the
counts per arm and intent are those asked, and a small generated cohort played against a
real server stores plans with the intended verdicts."""

from __future__ import annotations

import argparse
import io
import re
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import yaml

from planaudit.commandline import InputError
from planaudit.config import ConfigError
from planaudit.contract import parse_action
from planaudit.formal.plan import format_step
from planaudit.simulated import cohort_arguments as add_arguments
from planaudit.simulated.cohort import load_cohort
from planaudit.simulated.cohorts import load_counts, main
from planaudit.simulated.simulate import simulate_sync
from planaudit.study.materials import resolve
from planaudit.study.settings import load_study
from planaudit.study.store import Store, keyed_hash
from tests.study_server import ADMIN_TOKEN, CHROMIUM, Server, needs_chromium, study_config

# the example counts
COUNTS = """\
seed: 0
arms:
  unassisted: {optimal: 35, suboptimal: 4, invalid_step: 8, goal_not_reached: 3}
  suggested: {optimal: 14, suboptimal: 4, invalid_step: 0, goal_not_reached: 0, verbatim: 4,
              called_correct: 4, unreadable_text: 2, abandon: 0}
"""
INTENT = re.compile(r"^(unassisted|suggested)-([a-z-]+)-\d+$")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cohorts")
    config = study_config(tmp)
    s = load_study(config)
    return config, s, resolve(s)


def generate(config: Path, counts_text: str, tmp: Path, capsys, name: str = "cohort.yaml"):
    counts = tmp / f"counts-{name}"
    counts.write_text(counts_text)
    out = tmp / name
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert main(p.parse_args(["--config", str(config), "--counts", str(counts),
                              "--out", str(out)])) == 0
    return out, capsys.readouterr().err


def intent_of(script_id: str) -> tuple[str, str]:
    m = INTENT.match(script_id)
    assert m, script_id
    return m.group(1), m.group(2).replace("-", "_")


def steps_of(text: str, names: frozenset[str]) -> list[str | None]:
    """Each line of a phase-1 text read by the project's action reader (None: no action)."""
    out = []
    for line in text.splitlines():
        step = parse_action(line, names)
        out.append(None if step is None else format_step(step))
    return out


def test_the_counts_give_their_verdicts_on_every_instance(study, tmp_path, capsys):
    config, s, materials = study
    path, err = generate(config, COUNTS, tmp_path, capsys)
    cohort = load_cohort(path)  # the written file reads back as a cohort
    assert cohort.instances == s.instances and cohort.params == s.params
    counts = yaml.safe_load(COUNTS)["arms"]
    # the ids say arm and intent, and the counts are the ones asked
    by = Counter(intent_of(sc.id) for sc in cohort.participants)
    for arm, c in counts.items():
        for intent in ("optimal", "suboptimal", "invalid_step", "goal_not_reached", "verbatim"):
            assert by[(arm, intent)] == c.get(intent, 0), (arm, intent)
    assert len(cohort.participants) == 50 + 22
    # the assignment's sequence gives 36 and 36 (blocks of two): the generator says so
    assert "the assignment's sequence gives unassisted 36, suggested 36 of 72" in err
    assert "unassisted 50, suggested 22" in err
    moves = Counter()
    for sc in cohort.participants:
        arm, intent = intent_of(sc.id)
        assert sc.arms == (arm,)
        for edits in sc.plan.values():
            moves.update(e.op for e in edits if e.op != "add")
        for key, m in materials.instances.items():
            plan = sc.plan_for(key)
            v = m.check(plan)
            if intent == "optimal":
                assert v.valid and v.optimal and plan == m.plan
            elif intent == "suboptimal":
                assert v.valid and v.optimal is False and len(plan) > m.optimal_length
            elif intent == "invalid_step":
                assert not v.valid and v.failure_kind == "precondition" and v.failure_step >= 2
            elif intent == "goal_not_reached":
                assert v.executable and not v.goal_reached and v.failure_kind == "goal"
                assert plan == m.plan[:-1]
            else:
                assert intent == "verbatim"
                assert plan == materials.suggestions[arm][key]["plan"]
    # some scripts reach their plan through an undo, a removal or a move
    assert moves["undo"] and moves["remove"] and (moves["up"] or moves["down"]), moves
    # the suggestion answers: 4 "correct" in the suggested arm, the verbatim ones first
    answers = {sc.id: sc.suggestion_correct for sc in cohort.participants}
    assert all(a is None for i, a in answers.items() if i.startswith("unassisted-"))
    sug = {i: a for i, a in answers.items() if i.startswith("suggested-")}
    assert sum(sug.values()) == 4
    assert all(a for i, a in sug.items() if "-verbatim-" in i)
    # texts: two unreadable ones in the suggested arm; the others the plan, one a line
    unreadable = []
    for sc in cohort.participants:
        for key, m in materials.instances.items():
            names = frozenset(op.action for op in m.task.all_operators())
            read = steps_of(sc.text_for(key), names)
            if all(r is None for r in read):
                unreadable.append((sc.id, key))
            else:
                assert read == sc.plan_for(key), (sc.id, key, sc.text_for(key))
    assert Counter(i for i, _ in unreadable) == Counter(
        {i: len(materials.instances) for i, _ in unreadable})  # prose on every instance
    assert len({i for i, _ in unreadable}) == 2
    assert all(i.startswith("suggested-") for i, _ in unreadable)
    # shuffled: the intents are not grouped in the file
    groups = [intent_of(sc.id) for sc in cohort.participants]
    runs = 1 + sum(a != b for a, b in pairwise(groups))
    assert runs > 3 * len(set(groups))
    # seeded: the same counts write the same file; another seed another
    def scripts_of(p: Path) -> str:
        return p.read_text().split("\nparticipants:\n")[1]

    again, _ = generate(config, COUNTS, tmp_path, capsys, "again.yaml")
    assert scripts_of(again) == scripts_of(path)
    other, _ = generate(config, COUNTS.replace("seed: 0", "seed: 1"), tmp_path, capsys,
                        "other.yaml")
    assert scripts_of(other) != scripts_of(path)


def test_abandoning_scripts_leave_at_phase_2(study, tmp_path, capsys):
    config, _s, _materials = study
    path, err = generate(config, """\
        seed: 3
        arms:
          unassisted: {optimal: 1, abandon: 2}
          suggested: {verbatim: 1, abandon: 1, called_correct: 1, unreadable_text: 2}
        """.replace("        ", ""), tmp_path, capsys)
    assert "balanced assignment" not in err
    cohort = load_cohort(path)
    for sc in cohort.participants:
        _arm, intent = intent_of(sc.id)
        if intent == "abandon":
            assert sc.abandons == "phase2" and not sc.plan and sc.tlx is None
            assert sc.suggestion_correct is None  # they never see the suggestion page
        else:
            assert sc.abandons is None and sc.tlx is not None
    assert [sc.suggestion_correct for sc in cohort.participants
            if sc.id.startswith("suggested-verbatim")] == [True]


BAD_COUNTS = [
    ("seed: 0\narms:\n  unassisted: {optimal: 1, perfect: 2}\n", 3, "arms.unassisted.perfect",
     "unknown key 'perfect'"),
    ("seed: 0\narms:\n  unassisted: {optimal: -1}\n", 3, "arms.unassisted.optimal",
     "a count (0 or more)"),
    ("seed: x\narms:\n  unassisted: {optimal: 1}\n", 1, "seed", "an integer"),
    ("seed: 0\narms:\n  suggested:\n    optimal: 1\n    called_correct: 2\n", 5,
     "arms.suggested.called_correct", "more than the arm's 1 script(s)"),
    ("seed: 0\nhands: 2\narms:\n  unassisted: {optimal: 1}\n", 2, "hands", "unknown key"),
]


@pytest.mark.parametrize("text,line,field,says", BAD_COUNTS, ids=[b[2] for b in BAD_COUNTS])
def test_a_bad_counts_file_names_file_line_and_field(tmp_path, text, line, field, says):
    path = tmp_path / "counts.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_counts(path)
    assert str(e.value).startswith(f"{path}:{line}: {field}: "), str(e.value)
    assert says in str(e.value)


@pytest.mark.parametrize("counts,says", [
    ("arms:\n  helped: {optimal: 1}\n", ":2: arms.helped: no such arm"),
    ("arms:\n  unassisted: {verbatim: 1}\n", ":2: arms.unassisted.verbatim: arm 'unassisted' "
                                             "shows no suggestion"),
    ("arms:\n  unassisted:\n    optimal: 1\n    called_correct: 1\n",
     ":4: arms.unassisted.called_correct: arm 'unassisted' shows no suggestion"),
])
def test_counts_the_study_cannot_meet_are_refused(study, tmp_path, counts, says):
    config = study[0]
    path = tmp_path / "counts.yaml"
    path.write_text(counts)
    p = argparse.ArgumentParser()
    add_arguments(p)
    with pytest.raises(InputError, match=re.escape(says)):
        main(p.parse_args(["--config", str(config), "--counts", str(path),
                           "--out", str(tmp_path / "c.yaml")]))
    assert not (tmp_path / "c.yaml").exists()


@needs_chromium
def test_a_generated_cohort_stores_plans_with_their_verdicts(study, tmp_path, capsys):
    """Generated, served, simulated: each stored phase-2 plan has its script's verdict on the
    instance the server gave, and the suggestion answers are the scripted ones."""
    config, s, materials = study
    path, _ = generate(config, """\
seed: 5
arms:
  unassisted: {optimal: 1, suboptimal: 1, invalid_step: 1, goal_not_reached: 1}
  suggested: {verbatim: 2, optimal: 1, abandon: 1, called_correct: 1, unreadable_text: 1}
""", tmp_path, capsys)
    cohort = load_cohort(path)
    srv = Server(config)
    try:
        summary = simulate_sync(cohort, srv.url, concurrency=4, chromium=CHROMIUM,
                                progress=io.StringIO(), admin_token=ADMIN_TOKEN)
    finally:
        srv.stop()
    assert summary.ok, summary.problems
    assert (summary.finished, summary.abandoned) == (7, 1)
    scripts = {sc.id: sc for sc in cohort.participants}
    store = Store(s.database_url())
    try:
        secret = store.open_study(s.name)  # the records name people by their pseudonym
        recs = {r["participant"]: r for r in store.records(s.name)}
    finally:
        store.close()
    assert len(recs) == 8
    for o in summary.participants:
        r = recs[keyed_hash(secret, o.platform_id)]
        assert (r["arm"], r["instance"]) == (o.arm, o.instance)
        assert r["answers"]["phase1"]["text"] == scripts[o.script].text_for(o.instance)
        arm, intent = intent_of(o.script)
        if intent == "abandon":
            assert r["step"] == "phase2" and r["finished_at"] is None
            continue
        m = materials.instances[r["instance"]]
        plan = r["answers"]["phase2"]["plan"]
        assert plan == scripts[o.script].plan_for(r["instance"])
        v = m.check(plan)
        got = ("optimal" if v.valid and v.optimal else "suboptimal" if v.valid
               else "invalid_step" if v.failure_kind == "precondition" and v.failure_step >= 2
               else "goal_not_reached" if v.failure_kind == "goal" else "other")
        if intent == "verbatim":
            assert plan == materials.suggestions[arm][r["instance"]]["plan"]
        else:
            assert got == intent, (o.script, plan, v)
        if arm == "suggested":
            assert r["answers"]["suggestion"] == {
                "correct": scripts[o.script].suggestion_correct}
    assert {o.script for o in summary.participants} == set(scripts)
