"""`planaudit study simulate`: cohort files played in headless Chromium against a real
`planaudit study serve` process (the two-arm Blocksworld study of tests/study_server.py),
each participant clicking through the real pages; what the database then holds is read
back through the study's own Store and compared with the scripts. Also: a cohort file's
mistakes named by file:line: field, before anything runs.

The tests share one server: each enters as many participants in one arm as in the other,
so the balanced assignment of the next test starts from equal arms."""

from __future__ import annotations

import argparse
import io
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from planaudit.config import ConfigError
from planaudit.simulated import simulate_arguments as add_arguments
from planaudit.simulated.cohort import TLX_PAIRS, instance_tag, load_cohort
from planaudit.simulated.simulate import main, simulate_sync
from planaudit.study.settings import ADMIN_ENV, SIMULATED_PREFIX, load_study
from planaudit.study.store import Store, ledger
from tests.study_server import ADMIN_TOKEN, CHROMIUM, Server, free_port, needs_chromium, study_config

P02, P03 = "blocksworld/p02", "blocksworld/p03"
TLX = ("mental", "physical", "temporal", "performance", "effort", "frustration")
CHECKS = [{"id": "read", "page": "instructions", "question": 'Please choose "Orange".',
           "options": ["Blue", "Orange"], "answer": "Orange"},
          {"id": "scale", "page": "tlx", "question": "Choose “Never” here.",
           "options": ["Often", "Never"], "answer": "Never"}]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, Store, str]]:
    tmp = tmp_path_factory.mktemp("simulate")
    config = study_config(tmp, attention={"checks": CHECKS})
    srv = Server(config)
    study = load_study(config)
    store = Store(study.database_url())
    yield srv, store, study.name
    store.close()
    srv.stop()


def cohort_file(tmp: Path, text: str) -> Path:
    path = tmp / "cohort.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def run(path: Path, url: str, concurrency: int = 2):
    progress = io.StringIO()
    summary = simulate_sync(load_cohort(path), url, concurrency=concurrency, chromium=CHROMIUM,
                            progress=progress, admin_token=ADMIN_TOKEN)
    return summary, progress.getvalue()


def records_of(store: Store, study: str, summary) -> dict[str, dict]:
    """Each finished or abandoned script's record, found by the script id its phase-1 text
    (or draft) starts with: the records carry no platform id."""
    out = {}
    for r in store.records(study):
        text = (r["answers"].get("phase1") or {}).get("text", "")
        sid = text.split(":", 1)[0]
        if any(o.script == sid for o in summary.participants):
            assert sid not in out, f"two records of script {sid}"
            out[sid] = r
    return out


def platform_ids(store: Store) -> set[str]:
    with store.read() as conn:
        return set(conn.execute(select(ledger.c.platform_id)).scalars())


def events(r: dict, page: str, kind: str | None = None) -> list[dict]:
    return [e for e in r["events"] if e["page"] == page and e["kind"] != "view"
            and (kind is None or e["kind"] == kind)]


SIX = """
    format: 1
    label: six of two arms
    instances: [blocksworld/p02, blocksworld/p03]
    participants:
      - id: six-u1
        arm: unassisted
        text: "six-u1: lift c off a, put it down, then build the tower"
        plan:
          blocksworld/p02: ["(unstack c a)", "(put-down c)", "(pick-up b)", "(stack b c)",
                            "(pick-up a)", "(stack a b)"]
          blocksworld/p03: ["(unstack a b)", "(put-down a)", "(unstack b c)", "(stack b a)"]
        tlx: [55, 10, 40, 30, 60, 20]
        attention: {read: Blue}
      - id: six-s1
        arm: suggested
        text: {blocksworld/p02: "six-s1: on p02", blocksworld/p03: "six-s1: on p03"}
        plan:
          - "(unstack c a)"
          - "(pick-up b)"
          - {undo: true}
          - "(put-down c)"
        suggestion_correct: true
        tlx: [0, 5, 100, 95, 50, 45]
        tlx_pairs: [physical, temporal, performance, effort, frustration, temporal,
                    performance, effort, frustration, performance, effort, frustration,
                    effort, frustration, frustration]
      - id: six-u2
        accepts: [unassisted]
        text: "six-u2: three steps\\nthen a fourth"
        plan:
          "*": ["(unstack c a)", "(put-down c)", "(pick-up b)", {up: 3}, {down: 1}, {remove: 2}]
        tlx: [5, 5, 5, 5, 5, 5]
        tlx_pairs: []
      - id: six-s2
        arm: suggested
        text: "six-s2: the suggestion looks wrong"
        plan:
          blocksworld/p02: ["(unstack c a)", "(put-down c)", "(pick-up b)", "(stack b c)",
                            "(pick-up a)", "(stack a b)"]
          "*": ["(unstack a b)", "(put-down a)"]
        suggestion_correct: false
        tlx: [100, 100, 100, 100, 100, 100]
      - id: six-any
        text: "six-any: any arm"
        plan: ["(unstack c a)"]
        suggestion_correct: false
        tlx: [20, 25, 30, 35, 40, 45]
      - id: six-any2
        text: "six-any2: any arm too"
        plan: ["(unstack a b)", "(unstack c a)", {remove: 1}]
        suggestion_correct: true
        tlx: [45, 40, 35, 30, 25, 20]
"""


@needs_chromium
def test_six_of_two_arms_run_to_completion(served, tmp_path):
    srv, store, study = served
    path = cohort_file(tmp_path, SIX)
    cohort = load_cohort(path)
    summary, progress = run(path, srv.url, concurrency=3)
    assert summary.ok, summary.problems
    assert (summary.entered, summary.finished, summary.abandoned, summary.errors) == (6, 6, 0, 0)
    assert {a: (c["entered"], c["finished"]) for a, c in summary.arms.items()} == \
        {"unassisted": (3, 3), "suggested": (3, 3)}
    assert summary.unused_scripts == []
    # one progress line per participant, with running counts
    lines = progress.strip().splitlines()
    assert len(lines) == 6 and lines[-1].endswith("(finished 6, abandoned 0, errors 0)")
    scripts = {s.id: s for s in cohort.participants}
    # the scripts for one arm went to that arm; the two for any arm made up the counts
    for o in summary.participants:
        assert o.status == "finished" and o.code == "TESTCODE"
        assert scripts[o.script].admits(o.arm)
        assert o.instance in (P02, P03) and o.instance_tag == instance_tag(o.instance)
        assert o.platform_id.startswith(SIMULATED_PREFIX)
    got = records_of(store, study, summary)
    assert set(got) == set(scripts)
    for o in summary.participants:
        s, r = scripts[o.script], got[o.script]
        assert (r["arm"], r["instance"]) == (o.arm, o.instance)
        assert r["step"] == "done" and r["finished_at"] is not None
        assert r["answers"]["phase1"]["text"] == s.text_for(o.instance)
        assert r["answers"]["phase2"] == {"plan": s.plan_for(o.instance), "submitted": True}
        assert [e["kind"] for e in events(r, "phase2")] == \
            [e.op for e in s.edits_for(o.instance)] + ["submit"]
        tlx = r["answers"]["tlx"]
        assert tlx["ratings"] == dict(zip(TLX, s.tlx, strict=True))
        pairs = s.tlx_pairs if s.tlx_pairs is not None else tuple(a for a, _ in TLX_PAIRS)
        assert tlx["pairs"] == {f"{a}/{b}": p for (a, b), p in zip(TLX_PAIRS, pairs, strict=False)}
        # attention checks: the script's choice, else what the question quotes
        assert r["answers"]["instructions"]["attention"] == {"read": s.attention.get("read",
                                                                                     "Orange")}
        assert tlx["attention"] == {"scale": "Never"}
        if o.arm == "suggested":
            assert r["answers"]["suggestion"] == {"correct": s.suggestion_correct}
        else:
            assert "suggestion" not in r["answers"]
    # the platform ids in the ledger are the simulated ones, marked by their prefix
    assert {o.platform_id for o in summary.participants} <= platform_ids(store)


FAULTS = """
    format: 1
    participants:
      - id: f-reload
        arm: unassisted
        text: "f-reload: reloads"
        plan: ["(unstack c a)", "(put-down c)", "(pick-up b)", {up: 3}]
        tlx: [50, 50, 50, 50, 50, 50]
        faults: [{reload: phase1}, {reload: phase2}, {reload: phase2, after: 2},
                 {reload: phase2, after: 4}, {reload: tlx}]
      - id: f-abandon
        arm: suggested
        text: "f-abandon: leaves at the TLX"
        plan: ["(unstack c a)", "(put-down c)"]
        suggestion_correct: true
        faults: [{abandon: tlx}]
      - id: f-twice
        arm: unassisted
        text: "f-twice: double clicks"
        plan: ["(unstack c a)", "(put-down c)", "(pick-up b)", {undo: true}, "(pick-up a)",
               {up: 3}, {down: 2}, {remove: 1}]
        tlx: [10, 20, 30, 40, 50, 60]
        faults: [{submit_twice: consent}, {submit_twice: instructions}, {submit_twice: phase1},
                 {submit_twice: phase2}, {submit_twice: tlx}]
      - id: f-twice2
        arm: suggested
        text: "f-twice2: double clicks the suggestion"
        plan: ["(unstack c a)"]
        suggestion_correct: false
        tlx: [0, 0, 0, 0, 0, 0]
        faults: [{submit_twice: example}, {submit_twice: suggestion}, {reload: suggestion}]
"""


@needs_chromium
def test_faults_reload_abandon_and_submit_twice(served, tmp_path):
    srv, store, study = served
    path = cohort_file(tmp_path, FAULTS)
    cohort = load_cohort(path)
    summary, _ = run(path, srv.url, concurrency=4)
    assert summary.ok, summary.problems  # a scripted abandon is as scripted
    assert (summary.finished, summary.abandoned, summary.errors) == (3, 1, 0)
    by = {o.script: o for o in summary.participants}
    scripts = {s.id: s for s in cohort.participants}
    got = records_of(store, study, summary)

    # a reload keeps the participant's step and the plan built so far (the simulator
    # checks the page after each reload); the records hold the scripted plan
    assert by["f-reload"].faults == ["reload:phase1", "reload:phase2", "reload:phase2@2",
                                     "reload:phase2@4", "reload:tlx"]
    r = got["f-reload"]
    assert r["step"] == "done"
    assert r["answers"]["phase2"]["plan"] == ["(unstack c a)", "(pick-up b)", "(put-down c)"]
    assert len(events(r, "phase2")) == 5  # four edits and the submit: a reload posts nothing

    # an abandon leaves the participant unfinished where they stopped
    o, r = by["f-abandon"], got["f-abandon"]
    assert (o.status, o.page, o.scripted) == ("abandoned", "tlx", True)
    assert r["step"] == "tlx" and r["finished_at"] is None
    assert r["answers"]["suggestion"] == {"correct": True} and "tlx" not in r["answers"]

    # a form sent twice (the same key) is stored once: one answer, one submit event
    for sid, pages in (("f-twice", ["consent", "instructions", "phase1", "phase2", "tlx"]),
                       ("f-twice2", ["example", "suggestion"])):
        o, r, s = by[sid], got[sid], scripts[sid]
        assert o.status == "finished"
        assert [f for f in o.faults if f.startswith("submit_twice")] == \
            [f"submit_twice:{p}" for p in pages]
        for p in pages:
            assert len(events(r, p, "submit")) == 1, (sid, p, r["events"])
        assert r["answers"]["phase2"]["plan"] == s.plan_for(o.instance)
    r, s = got["f-twice"], scripts["f-twice"]
    # every phase-2 edit was sent twice too: each stored once
    assert [e["kind"] for e in events(r, "phase2")] == [e.op for e in s.edits_for(None)] + ["submit"]
    assert r["answers"]["phase2"]["plan"] == ["(put-down c)", "(pick-up a)"]
    assert r["answers"]["tlx"]["ratings"]["frustration"] == 60
    assert got["f-twice2"]["answers"]["suggestion"] == {"correct": False}


@needs_chromium
def test_no_script_left_for_an_arm_abandons_and_fails(served, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ADMIN_ENV, ADMIN_TOKEN)
    srv = served[0]
    path = cohort_file(tmp_path, """
        format: 1
        participants:
          - {id: lone-1, arm: unassisted, text: "lone-1: a", plan: ["(unstack c a)"],
             tlx: [5, 5, 5, 5, 5, 5]}
          - {id: lone-2, arm: unassisted, text: "lone-2: b", plan: ["(unstack c a)"],
             tlx: [5, 5, 5, 5, 5, 5]}
        """)
    p = argparse.ArgumentParser()
    add_arguments(p)
    out = tmp_path / "summary.json"
    args = p.parse_args(["--cohort", str(path), "--url", srv.url, "--concurrency", "2",
                         "--out", str(out), *(["--chromium", CHROMIUM] if CHROMIUM else [])])
    assert main(args) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["ok"] is False
    assert (printed["entered"], printed["finished"], printed["abandoned"]) == (2, 1, 1)
    lost = next(o for o in printed["participants"] if o["status"] == "abandoned")
    assert lost["arm"] == "suggested" and lost["script"] is None and not lost["scripted"]
    assert lost["page"] == "consent" and "no script left for arm 'suggested'" in lost["error"]
    assert printed["unused_scripts"] == ["lone-2"]
    assert printed["arms"]["suggested"] == {"entered": 1, "finished": 0, "abandoned": 1,
                                            "errors": 0}


@needs_chromium
def test_errors_are_named_by_page_and_the_run_goes_on(served, tmp_path):
    srv, store, study = served
    path = cohort_file(tmp_path, """
        format: 1
        participants:
          - id: err-action
            arm: unassisted
            text: "err-action: flies"
            plan: ["(unstack c a)", "(fly c a)"]
            tlx: [5, 5, 5, 5, 5, 5]
          - id: err-instance
            arm: suggested
            text: {blocksworld/p99: "err-instance: a task the study has not"}
            plan: ["(unstack c a)"]
            suggestion_correct: true
            tlx: [5, 5, 5, 5, 5, 5]
        """)
    summary, progress = run(path, srv.url)
    assert not summary.ok and summary.errors == 2 and summary.finished == 0
    by = {o.script: o for o in summary.participants}
    assert by["err-action"].page == "phase2"
    assert "edit 2: (fly c a) is not one of the page's actions" in by["err-action"].error
    assert by["err-instance"].page == "consent" and by["err-instance"].instance is None
    assert "matches none the cohort names" in by["err-instance"].error
    assert {p["page"] for p in summary.problems} == {"phase2", "consent"}
    assert progress.count("ERROR at") == 2
    # the first one's edits up to the failing one were stored, the rest not
    r = records_of(store, study, summary)["err-action"]
    assert r["step"] == "phase2" and r["answers"]["phase2"] == {"plan": ["(unstack c a)"]}


@needs_chromium
def test_a_server_that_is_down_is_an_error_per_participant(tmp_path):
    path = cohort_file(tmp_path, """
        format: 1
        participants:
          - {id: d1, text: x, plan: ["(a)"], tlx: [5, 5, 5, 5, 5, 5]}
          - {id: d2, text: x, plan: ["(a)"], tlx: [5, 5, 5, 5, 5, 5]}
        """)
    summary, _ = run(path, f"http://127.0.0.1:{free_port()}/")
    assert not summary.ok and summary.entered == 0 and summary.errors == 2
    assert all(o.page == "entry" and "ERR_CONNECTION_REFUSED" in o.error
               for o in summary.participants)
    assert summary.unused_scripts == ["d1", "d2"]


# -- the cohort file's errors: file:line: field ------------------------------------------

GOOD = """\
format: 1
participants:
  - id: u001
    arm: unassisted
    text: "free text"
    plan: ["(unstack c a)"]
    tlx: [55, 10, 40, 30, 60, 20]
"""

BAD = [
    # (the file, its line, the field, what the message says)
    (GOOD.replace("format: 1", "format: 2"), 1, "format", "must be 1"),
    (GOOD.replace("    tlx: [55, 10, 40, 30, 60, 20]", "    tlx: [55, 10, 40, 30, 60]"), 7,
     "participants[0].tlx", "6 values 0..100 in steps of 5"),
    (GOOD.replace("[55, 10, 40, 30, 60, 20]", "[55, 10, 40, 30, 60, 22]"), 7,
     "participants[0].tlx", "6 values 0..100 in steps of 5"),
    (GOOD + "    colour: blue\n", 8, "participants[0].colour", "unknown key 'colour'"),
    (GOOD + "extra: 1\n", 8, "extra", "unknown key 'extra'"),
    (GOOD.replace("    arm: unassisted\n", "    arm: unassisted\n    accepts: [a]\n"), 5,
     "participants[0].accepts", "arm or accepts, not both"),
    (GOOD.replace('["(unstack c a)"]', '["(unstack c a)", {up: 1}]'), 6,
     "participants[0].plan[1]", "up 1: the plan has 1 step(s) at that point"),
    (GOOD.replace('["(unstack c a)"]', '["(unstack c a)", {undo: true}]'), 6,
     "participants[0].plan", "the edits leave no step to submit"),
    (GOOD.replace('["(unstack c a)"]', '["unstack c a"]'), 6, "participants[0].plan[0]",
     "a grounded action as the page lists it"),
    (GOOD.replace('["(unstack c a)"]', '["(unstack c a)", {jump: 1}]'), 6,
     "participants[0].plan[1].jump", "unknown edit 'jump'"),
    (GOOD + "    faults: [{abandon: phase3}]\n", 8, "participants[0].faults[0].abandon",
     "'phase3' is no page"),
    (GOOD + "    faults: [{reload: phase1, after: 2}]\n", 8, "participants[0].faults[0].after",
     "after goes with {reload: phase2} only"),
    (GOOD + "    faults:\n      - {reload: phase2, after: 3}\n", 9, "participants[0].faults[0].after",
     "reload after edit 3, but the plan has 1 edit(s)"),
    (GOOD + "    tlx_pairs: [mental]\n", 8, "participants[0].tlx_pairs", "15 choices"),
    (GOOD + "  - id: u001\n    text: x\n    plan: ['(a)']\n    tlx: [5, 5, 5, 5, 5, 5]\n", 8,
     "participants[1].id", "'u001' names two scripts"),
    (GOOD.replace("    tlx: [55, 10, 40, 30, 60, 20]\n", ""), 3, "participants[0]",
     "needs tlx"),
    (GOOD.replace('    text: "free text"\n', ""), 3, "participants[0]", "needs a text"),
    ("instances: [blocksworld/p02]\n" + GOOD.replace('text: "free text"',
                                                     'text: {blocksworld/p09: "x"}'), 6,
     "participants[0].text.blocksworld/p09", "not one of the cohort's instances"),
    (GOOD.replace("participants:", "url_parameters: {participant: 'a b'}\nparticipants:"), 2,
     "url_parameters.participant", "a URL parameter's name"),
    ("format: 1\nparticipants: []\n", 2, "participants", "a non-empty list of scripts"),
]


@pytest.mark.parametrize("text,line,field,says", BAD, ids=[b[2] + ":" + b[3][:20] for b in BAD])
def test_a_bad_cohort_file_names_file_line_and_field(tmp_path, text, line, field, says):
    path = tmp_path / "cohort.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_cohort(path)
    assert str(e.value).startswith(f"{path}:{line}: {field}: "), str(e.value)
    assert says in str(e.value)


def test_a_good_cohort_file_reads_back(tmp_path):
    path = tmp_path / "cohort.yaml"
    path.write_text(GOOD + "    faults: [{reload: phase2, after: 1}, {submit_twice: tlx}]\n")
    c = load_cohort(path)
    s = c.participants[0]
    assert c.params == {"participant": "PROLIFIC_PID", "study": "STUDY_ID",
                        "session": "SESSION_ID"}
    assert s.admits("unassisted") and not s.admits("suggested")
    assert s.plan_for(None) == ["(unstack c a)"] and s.text_for("any/key") == "free text"
    assert [str(f) for f in s.faults] == ["reload:phase2@1", "submit_twice:tlx"]
    assert instance_tag(P02) == "8c87f79752cf" and c.resolve(instance_tag(P02)) is None

