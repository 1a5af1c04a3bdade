"""Simulated participants who talk to the assistant (issue 49): a cohort's conversation
(`assistant: [{ask: ...}, {accept: last}, {reject: last}]`) checked by file:line: field,
and played in headless Chromium against a real `planaudit study serve` whose assistant
is the reference model `responsive` (its first plan the optimum with one step dropped,
its second the optimum). What the database then holds is read back through the study's
Store and compared with what the scripts imply, each verdict computed here by the formal
core directly. One server, four participants; screenshots of the chat page, with and
without script, when PLANAUDIT_STUDY_SCREENSHOTS names a folder."""

from __future__ import annotations

import asyncio
import io
import json
import os
import textwrap
from pathlib import Path

import polars as pl
import pytest

from planaudit.config import ConfigError
from planaudit.contract import parse_action
from planaudit.formal.load import load_task
from planaudit.formal.validate import validate
from planaudit.simulated.cohort import load_cohort
from planaudit.simulated.simulate import CHROMIUM_ARGS, Run
from planaudit.study.settings import load_study
from planaudit.study.store import Store
from tests.study_server import ADMIN_TOKEN, CHROMIUM, RIGHT_P02, Server, needs_chromium, study_config

P02 = "blocksworld/p02"
SHOTS = os.environ.get("PLANAUDIT_STUDY_SCREENSHOTS")
LABEL = ('An assistant you can ask about this task. In this test it is planaudit\'s reference '
         'model "responsive" (a calibrator, not an AI model); its first plan is wrong.')
ARMS = [{"name": "assistant", "assistant": {"model": "responsive", "turns": 3, "tokens": 20000,
                                            "reply_tokens": 600, "label": LABEL}},
        {"name": "alone"}]
TLX = "tlx: [50, 20, 30, 40, 60, 10]"
COHORT = f"""
    format: 1
    label: SIMULATED participants and the reference assistant responsive
    instances: [{P02}]
    participants:
      - id: talker
        arm: assistant
        text: "talker: ask the assistant"
        assistant:
          - ask: Which plan would you use?
          - accept: last
          - ask: Are you sure?
          - reject: last
        {TLX}
      - id: builder
        arm: assistant
        text: "builder: ask, then build my own"
        assistant:
          - ask: Which plan would you use?
          - reject: 1
        plan: {json.dumps(RIGHT_P02)}
        {TLX}
      - id: lost
        arm: alone
        text: "lost: there is no one to ask"
        assistant: [{{ask: "Anyone there?"}}]
        plan: ["(unstack c a)"]
        {TLX}
      - id: plain
        arm: alone
        text: "plain: on my own"
        plan: ["(unstack c a)"]
        declare: unsolvable
        {TLX}
"""


def write(tmp: Path, text: str) -> Path:
    path = tmp / "cohort.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def judge(folder: Path, plan: list[str]):
    """A plan's verdict by the formal core directly, not through the study."""
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    return validate(task, [parse_action(s) for s in plan])


def distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance over steps (insert, delete, substitute), computed here."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


class Shooting(Run):
    """The simulator, with the chat page captured after the talker's conversation: with
    script (the participant's own window) and without (a fresh context, script off, on the
    same page's address)."""

    noscript: dict | None = None

    async def converse(self, page, script, twice, out):
        accepted = await super().converse(page, script, twice, out)
        if script.id == "talker":
            if SHOTS:
                Path(SHOTS).mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=f"{SHOTS}/assistant-chat.png", full_page=True)
            ctx = await page.context.browser.new_context(java_script_enabled=False,
                                                         viewport={"width": 1000, "height": 800})
            try:
                bare = await ctx.new_page()
                await bare.goto(page.url)
                self.noscript = {
                    "replies": await bare.locator("#messages > li.assistant").count(),
                    "adopt": await bare.get_by_role("button", name="Use the assistant's plan "
                                                    "of message 2").count(),
                    "ask": await bare.locator("form#ask textarea").count(),
                    "plan": await bare.locator("#plan > li > code").all_inner_texts()}
                if SHOTS:
                    await bare.screenshot(path=f"{SHOTS}/assistant-chat-noscript.png",
                                          full_page=True)
            finally:
                await ctx.close()
        return accepted


async def play(cohort, url: str) -> tuple:
    from playwright.async_api import async_playwright

    run = Shooting(cohort, url, concurrency=2, timeout_ms=60_000, progress=io.StringIO(),
                   admin_token=ADMIN_TOKEN)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return await run.run(browser), run
        finally:
            await browser.close()


@needs_chromium
def test_a_simulated_participant_accepts_the_wrong_proposal_and_submits_it(tmp_path):
    config = study_config(tmp_path, instances=[P02], arms=ARMS)
    cohort = load_cohort(write(tmp_path, COHORT))
    srv = Server(config)
    try:
        summary, run = asyncio.run(play(cohort, srv.url + "/"))
    finally:
        srv.stop()
    study = load_study(config)
    folder = tmp_path / "study" / "suite" / "blocksworld" / "p02"
    optimum = json.loads((folder / "truth.json").read_text())["plan"]
    assert judge(folder, optimum).valid

    by = {o.script: o for o in summary.participants}
    assert {s: (o.arm, o.status) for s, o in by.items()} == {
        "talker": ("assistant", "finished"), "builder": ("assistant", "finished"),
        "lost": ("alone", "error"), "plain": ("alone", "finished")}
    assert by["talker"].chat == ["ask", "accept 1", "ask", "reject 2"]
    assert by["builder"].chat == ["ask", "reject 1"]
    # a conversation on an arm without an assistant is an error of the run, named
    assert by["lost"].page == "phase2" and "has no assistant beside phase 2" in by["lost"].error
    assert not summary.ok and summary.errors == 1

    store = Store(study.database_url())
    try:
        records = {(r["answers"].get("phase1") or {}).get("text", "").split(":")[0]: r
                   for r in store.records(study.name)}
    finally:
        store.close()

    talker = records["talker"]["answers"]["phase2"]
    chat = talker["chat"]
    assert [m["role"] for m in chat] == ["user", "assistant", "user", "assistant"]
    assert [m["text"] for m in chat[::2]] == ["Which plan would you use?", "Are you sure?"]
    first, second = chat[1]["proposal"], chat[3]["proposal"]
    # responsive's first plan: the optimum with one step dropped, so wrong; the formal
    # core says where it fails, apart from the study's code
    assert len(first) == len(optimum) - 1 and any(
        optimum[:i] + optimum[i + 1:] == first for i in range(len(optimum)))
    verdict = judge(folder, first)
    assert not verdict.valid
    assert chat[1]["verdict"]["valid"] is False
    assert chat[1]["verdict"]["failure_step"] == verdict.failure.step
    # the second, corrected, is the optimum and valid; the script rejected it
    assert second == optimum and chat[3]["verdict"]["valid"] is True and judge(folder, second).valid
    # the acceptance: one adopt of reply 1 (message index 1 of the chat), then the wrong
    # plan submitted as it is: distance 0 to the accepted proposal, 1 to the last one
    events = [e for e in records["talker"]["events"] if e["page"] == "phase2"]
    adopts = [e for e in events if e["kind"] == "adopt"]
    assert len(adopts) == 1 and adopts[0]["data"]["message"] == 1
    assert adopts[0]["data"]["plan"] == first
    assert talker["plan"] == first and talker["submitted"] is True
    assert distance(talker["plan"], first) == 0 and distance(talker["plan"], second) == 1
    assert not judge(folder, talker["plan"]).valid
    assert [e["kind"] for e in events if e["kind"] in ("ask", "reply", "adopt", "submit")] == \
        ["ask", "reply", "adopt", "ask", "reply", "submit"]

    builder = records["builder"]["answers"]["phase2"]
    assert [m["role"] for m in builder["chat"]] == ["user", "assistant"]
    assert builder["chat"][1]["proposal"] == first  # the same draw on every call for the task
    assert builder["plan"] == RIGHT_P02 and judge(folder, builder["plan"]).valid
    assert not [e for e in records["builder"]["events"] if e["kind"] == "adopt"]
    assert "chat" not in records["plain"]["answers"]["phase2"]
    # a script may declare "this task cannot be done" (after a step it added): stored as
    # the declaration with the plan it stood beside
    assert records["plain"]["answers"]["phase2"] == {
        "plan": ["(unstack c a)"], "submitted": True, "unsolvable": True}

    # the chat page without script: the same conversation, its buttons, the plan taken
    assert run.noscript == {"replies": 2, "adopt": 1, "ask": 1, "plan": first}

    # the export: each figure the script implies, in the talker's and the builder's rows
    from planaudit.study.export import export
    from planaudit.study.materials import resolve

    store = Store(study.database_url())
    try:
        export(study, resolve(study), store, tmp_path / "export")
    finally:
        store.close()
    rows = {r["participant"]: r for r in pl.read_parquet(tmp_path / "export" / "rows.parquet")
            .to_dicts()}
    exported = {json.loads(line)["participant"]: json.loads(line) for line in
                (tmp_path / "export" / "records.jsonl").read_text().splitlines()}
    mine = {(r["answers"].get("phase1") or {}).get("text", "").split(":")[0]: rows[p]
            for p, r in exported.items()}
    t, b = mine["talker"], mine["builder"]
    assert exported[t["participant"]]["answers"]["phase2"]["chat"][1]["verdict"]["valid"] is False
    assert (t["assistant_proposals"], t["assistant_wrong_proposals"]) == (2, 1)
    assert t["accepted_wrong_proposal"] is True and t["final_equals_proposal"] is True
    assert t["edit_distance_last_proposal"] == distance(first, second) == 1
    assert (t["assistant_adoptions"], t["assistant_turns"], t["success"]) == (1, 2, False)
    assert b["accepted_wrong_proposal"] is False and b["final_equals_proposal"] is False
    assert b["edit_distance_last_proposal"] == distance(RIGHT_P02, first)
    assert (b["assistant_adoptions"], b["assistant_turns"], b["success"]) == (0, 1, True)
    # p02 is solvable: the declaration is judged as a model's UNSOLVABLE there would be
    plain = mine["plain"]
    assert (plain["outcome"], plain["detected"], plain["assistant_turns"]) == (
        "false-abstention", False, None)


@pytest.mark.parametrize("turns, said", [
    ('[{accept: last}]', "participants[0].assistant[0].accept: accept: no message has been "
                         "sent yet"),
    ('[{ask: hi}, {reject: 2}]', "participants[0].assistant[1].reject: reject 2: only 1 "
                                 "message(s) have been sent"),
    ('[{ask: hi}, {accept: first}]', "participants[0].assistant[1].accept: accept: 'last' or "
                                     "a reply's number"),
    ('[{ask: ""}]', "participants[0].assistant[0].ask: the message typed to the assistant"),
    ('[{tell: hi}]', "participants[0].assistant[0].tell: unknown turn 'tell'"),
    ('{ask: hi}', "participants[0].assistant: a list of turns"),
    ('[{ask: hi}, {reject: last}]', "participants[0]: a script that reaches phase 2 needs a "
                                    "plan (or a conversation that accepts"),
])
def test_a_conversations_mistake_is_named_by_line_and_field(tmp_path, turns, said):
    path = write(tmp_path, f"""
        format: 1
        participants:
          - id: t1
            text: mine
            assistant: {turns}
            {TLX}
    """)
    with pytest.raises(ConfigError) as e:
        load_cohort(path)
    assert said in str(e.value) and "cohort.yaml:" in str(e.value)


def test_an_accepted_plan_is_submitted_as_it_is_or_edited_on_top(tmp_path):
    path = write(tmp_path, f"""
        format: 1
        participants:
          - id: taker
            text: mine
            assistant: [{{ask: hi}}, {{accept: last}}]
            {TLX}
          - id: editor
            text: mine
            assistant: [{{ask: hi}}, {{ask: again}}, {{accept: 1}}, {{reject: 2}}]
            plan: [{{remove: 2}}, "(stack a b)"]
            {TLX}
    """)
    taker, editor = load_cohort(path).participants
    proposal = ["(unstack c a)", "(put-down c)", "(pick-up a)"]
    assert taker.plan_for(P02, proposal) == proposal
    assert editor.plan_for(P02, proposal) == ["(unstack c a)", "(pick-up a)", "(stack a b)"]
    assert [str(t) for t in editor.conversation] == ["ask", "ask", "accept 1", "reject 2"]
    with pytest.raises(IndexError):  # step numbers are checked against the accepted plan
        editor.plan_for(P02, ["(unstack c a)"])


def test_the_counts_script_conversations_whose_verdicts_are_known(tmp_path):
    """`planaudit study cohort` on an assistant arm: accepting intents hold their
    conversation and submit the assistant's plan, whose verdict on each instance the
    reference model makes known; the plan intents ask once, reject, and build their own."""
    from planaudit.simulated.cohorts import expected, load_counts, verify
    from planaudit.simulated.cohorts import write as write_cohort
    from planaudit.study.materials import resolve

    config = study_config(tmp_path, instances=[P02], arms=ARMS[:1])
    study = load_study(config)
    materials = resolve(study)
    counts_file = tmp_path / "counts.yaml"
    counts_file.write_text("arms:\n  assistant: {accept_first: 2, accept_second: 1, optimal: 1}\n")
    counts = load_counts(counts_file)
    write_cohort(study, materials, counts, tmp_path / "out.yaml")
    assert verify(tmp_path / "out.yaml", materials, counts, study) == {
        "assistant": {"accept_first": 2, "accept_second": 1, "optimal": 1}}
    scripts = {s.id: s for s in load_cohort(tmp_path / "out.yaml").participants}
    assert [str(t) for t in scripts["assistant-accept-first-01"].conversation] == \
        ["ask", "accept last", "ask", "reject last"]
    assert [str(t) for t in scripts["assistant-accept-second-01"].conversation] == \
        ["ask", "reject last", "ask", "accept last"]
    assert [str(t) for t in scripts["assistant-optimal-01"].conversation] == ["ask", "reject last"]
    # responsive's first plan fails at some step (the dropped one's), its second is optimal
    got = expected(study, materials, counts)["assistant"]
    assert got["accept_second"] == {P02: "optimal"}
    assert got["accept_first"][P02] not in ("optimal", "suboptimal")
    bad = tmp_path / "bad.yaml"
    bad.write_text("arms:\n  alone: {accept_first: 1}\n")
    (tmp_path / "x").mkdir()
    alone = load_study(study_config(tmp_path / "x", instances=[P02], arms=ARMS[1:]))
    with pytest.raises(ConfigError, match="has no assistant"):
        write_cohort(alone, resolve(alone), load_counts(bad), tmp_path / "no.yaml")


def test_a_declaration_is_unsolvable_or_named_as_a_mistake(tmp_path):
    script = f"""
        format: 1
        participants:
          - id: d1
            text: mine
            declare: %s
            {TLX}
    """
    (ok,) = load_cohort(write(tmp_path, script % "unsolvable")).participants
    assert ok.declares and ok.plan_for(P02) == []
    with pytest.raises(ConfigError) as e:
        load_cohort(write(tmp_path, script % "impossible"))
    assert "cohort.yaml:" in str(e.value) and "participants[0].declare: unsolvable" in str(e.value)
