"""The assistant arm's measures (issue 49, `human/assistance.py`): on conversations written
by hand, each value worked out by hand; then in process on the real server, the reference
model `responsive` answering (its first plan the optimum with one step dropped, its
second the optimum), two scripted participants exported and judged into rows whose
assistant columns equal what their scripts imply."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from fastapi.testclient import TestClient

from planaudit.human import analysis
from planaudit.human.assistance import COLUMNS, absent, edit_distance, measures
from planaudit.human.report import assistant_text
from planaudit.study.app import create_app
from planaudit.study.commands import summary_text
from planaudit.study.export import export
from planaudit.study.materials import resolve
from planaudit.study.settings import load_study
from planaudit.study.store import Store
from planaudit.study.tlx import KEYS
from tests.study_server import form_post as _post
from tests.study_server import study_config
from tests.study_server import to_phase2 as _phase2

# ---------------------------------------------------------------- by hand

A = ["(pick-up a)", "(stack a b)", "(pick-up c)", "(stack c a)"]


def ask(text="?", plan=()):
    return {"role": "user", "text": text, "plan": list(plan)}


def reply(proposal=None, valid=None, unsolvable=False, error=None, tin=100, tout=20,
          usd=0.001):
    verdict = None if valid is None else {"valid": valid}
    if error is not None:
        return {"role": "assistant", "text": None, "error": error, "input_tokens": 0,
                "output_tokens": 0, "cost_usd": 0.0, "proposal": None, "unsolvable": False,
                "verdict": None}
    return {"role": "assistant", "text": "...", "error": None, "input_tokens": tin,
            "output_tokens": tout, "cost_usd": usd, "proposal": proposal,
            "unsolvable": unsolvable, "verdict": verdict}


def test_edit_distance_by_hand():
    # A -> B: substitute step 2 ((stack a b) -> (stack a c)), delete step 4: 2
    b = ["(pick-up a)", "(stack a c)", "(pick-up c)"]
    assert edit_distance(A, b) == 2 and edit_distance(b, A) == 2
    assert edit_distance(A, A) == 0
    assert edit_distance([], A) == 4  # four inserts
    # one step dropped from the middle: one insert
    assert edit_distance(A[:1] + A[2:], A) == 1
    # the same steps with the first two swapped: two substitutions
    assert edit_distance([A[1], A[0], *A[2:]], A) == 2


def test_a_wrong_plan_taken_then_a_right_one_ignored():
    wrong = A[:3]  # one step short: judged invalid when made
    chat = [ask(), reply(wrong, False, tin=100, tout=20, usd=0.001),
            ask(plan=wrong), reply(A, True, tin=150, tout=30, usd=0.002)]
    events = [{"page": "phase2", "kind": "adopt", "data": {"message": 1, "plan": wrong}}]
    got = measures(chat, events, wrong, False)
    assert got == {
        "assistant_turns": 2, "assistant_unanswered": 0, "assistant_proposals": 2,
        "assistant_wrong_proposals": 1, "final_equals_proposal": True,
        "accepted_wrong_proposal": True,
        "edit_distance_last_proposal": 1,  # wrong -> A: one insert
        "assistant_adoptions": 1, "assistant_input_tokens": 250,
        "assistant_output_tokens": 50, "assistant_cost_usd": pytest.approx(0.003)}
    assert set(got) == set(COLUMNS)


def test_a_failure_prose_and_a_plan_of_ones_own():
    mine = [A[0], A[1]]  # neither proposal
    chat = [ask(), reply(error="APIError: 500"), ask(), reply(None, None),  # prose only
            ask(), reply(A, True, usd=None)]  # unpriced
    got = measures(chat, [], mine, False)
    assert got["assistant_turns"] == 2 and got["assistant_unanswered"] == 1
    assert got["assistant_proposals"] == 1 and got["assistant_wrong_proposals"] == 0
    assert got["final_equals_proposal"] is False and got["accepted_wrong_proposal"] is False
    assert got["edit_distance_last_proposal"] == 2  # two deletes from A
    assert got["assistant_input_tokens"] == 200 and got["assistant_output_tokens"] == 40
    assert got["assistant_cost_usd"] is None  # an answered call had no price
    assert got["assistant_adoptions"] == 0


def test_cannot_be_done_counts_as_wrong_only_after_a_false_claim():
    claim = reply(None, False, unsolvable=True)  # "cannot be done" on a solvable task
    got = measures([ask(), claim], [], None, True)
    assert got["assistant_proposals"] == 1 and got["assistant_wrong_proposals"] == 1
    assert got["final_equals_proposal"] is True and got["accepted_wrong_proposal"] is True
    assert got["edit_distance_last_proposal"] is None  # no plan either side
    right = reply(None, True, unsolvable=True)  # the task really cannot be done
    got = measures([ask(), right], [], None, True)
    assert got["final_equals_proposal"] is True and got["accepted_wrong_proposal"] is False
    # declared it with no claim from the assistant: accepted nothing
    got = measures([ask(), reply(A[:3], False)], [], None, True)
    assert got["final_equals_proposal"] is False and got["accepted_wrong_proposal"] is False


def test_nothing_submitted_or_no_assistant():
    got = measures([ask(), reply(A, True)], [], None, False)
    assert got["final_equals_proposal"] is None and got["accepted_wrong_proposal"] is None
    assert got["edit_distance_last_proposal"] is None and got["assistant_turns"] == 1
    got = measures([], [], A, False)  # offered, never asked
    assert got["assistant_turns"] == 0 and got["final_equals_proposal"] is False
    assert got["edit_distance_last_proposal"] is None and got["assistant_cost_usd"] == 0.0
    assert absent() == dict.fromkeys(COLUMNS)


# ---------------------------------------------------------------- the analysis

def _row(arm, i, valid, **extra):
    return {"study": "s", "model": "people", "method": arm, "arm_index": i,
            "outcome": "success" if valid else "inapplicable-action", "success": valid,
            "detected": False, "excluded": None, "consented": True, "optimal": valid,
            "text_outcome": "malformed", "text_agrees": None, "time_s": 100.0 + 10 * i,
            "tlx_raw": 40.0 + i, **{f"tlx_{k}": 40 for k in KEYS},
            "suggestion_called_correct": None,
            "suggestion_valid": None, "suggestion_verbatim": None, "suggested": False,
            "domain": "blocksworld",
            "task": "p02", **dict.fromkeys(COLUMNS), **extra}


def test_the_assistant_arm_against_the_unassisted_and_the_suggestion_arm():
    talk = dict(assistant_turns=2, assistant_input_tokens=300, assistant_output_tokens=60,
                assistant_cost_usd=0.01, assistant_wrong_proposals=1)
    rows = pl.DataFrame(
        [_row("alone", 0, True), _row("alone", 0, False),
         _row("suggested", 1, True, suggested=True, suggestion_valid=False,
              suggestion_verbatim=False),
         _row("suggested", 1, True, suggested=True, suggestion_valid=False,
              suggestion_verbatim=False),
         _row("assistant", 2, False, **talk, accepted_wrong_proposal=True,
              final_equals_proposal=True),
         _row("assistant", 2, True, **{**talk, "assistant_turns": 4,
                                        "assistant_cost_usd": 0.03},
              accepted_wrong_proposal=False, final_equals_proposal=True),
         _row("assistant", 2, True, **{**talk, "assistant_wrong_proposals": 0},
              accepted_wrong_proposal=False, final_equals_proposal=False)],
        infer_schema_length=None)
    table = analysis.human_table(rows)
    a = table.filter(pl.col("arm") == "assistant").row(0, named=True)
    assert a["assistant_turns_mean"] == pytest.approx((2 + 4 + 2) / 3)
    assert a["assistant_tokens_mean"] == pytest.approx(360)
    assert a["assistant_usd_mean"] == pytest.approx((0.01 + 0.03 + 0.01) / 3)
    # two of the three were shown a wrong proposal; one of them submitted it
    assert a["wrong_proposal_shown"] == 2 and a["accepted_wrong"] == 1
    assert a["accepted_wrong_share"] == pytest.approx(0.5)
    assert 0 < a["accepted_wrong_lo"] < 0.5 < a["accepted_wrong_hi"] < 1
    alone = table.filter(pl.col("arm") == "alone").row(0, named=True)
    assert alone["assistant_turns_mean"] is None and alone["wrong_proposal_shown"] is None
    tests = analysis.tests_table(rows, n_resamples=200)
    pairs = set(tests.select("first", "second").unique().iter_rows())
    # the first arm against each other, and the assistant against the static suggestion
    assert pairs == {("alone", "suggested"), ("alone", "assistant"), ("suggested", "assistant")}
    got = tests.filter((pl.col("first") == "suggested") & (pl.col("second") == "assistant"))
    assert set(got["measure"]) >= {"valid", "time on task (s)", "raw NASA-TLX"}
    valid = got.filter((pl.col("measure") == "valid") & (pl.col("test") == "Fisher exact")
                       & (pl.col("alternative") == "two-sided")).row(0, named=True)
    assert (valid["n_first"], valid["n_second"]) == (2, 3)
    assert valid["second_value"] == pytest.approx(2 / 3)
    # the report's line and `study analyze`'s summary say the same numbers
    said = assistant_text(a, "95% CI")
    assert "2.67 turns, 360 tokens, $0.0167" in said
    assert "shown a wrong proposal 2, submitted one 1 (50.0%, 95% CI" in said
    assert assistant_text(alone, "95% CI") == ""
    power = {"rates": [0.7, 0.8], "power": 0.8, "alternative": "two-sided", "reached": [],
             "needed": {"exact_fisher": 1, "exact_fisher_window": 1, "normal": 1}}
    lines = summary_text(table, tests.clear(), power, 0.05).splitlines()
    mine = next(x for x in lines if "/ assistant:" in x)
    assert "assistant per participant 2.67 turns, 360 tokens, $0.0167" in mine
    assert "wrong proposal accepted 1/2 50.0%" in mine
    assert "assistant per participant" not in next(x for x in lines if "/ alone:" in x)


# ---------------------------------------------------------------- end to end

ASSISTANT = {"name": "assistant", "assistant": {"model": "responsive", "turns": 3,
                                               "tokens": 20000, "reply_tokens": 600}}


@pytest.fixture(scope="module")
def proven(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("assistance")
    resolve(load_study(study_config(tmp, instances=["blocksworld/p02"], arms=[ASSISTANT])))
    return tmp / "study" / "suite"



def _finish(client, r):
    assert r.url.path.endswith("/tlx"), r.url
    r = _post(client, r, **dict.fromkeys(KEYS, "40"))
    assert r.url.path.endswith("/done"), r.url


def test_a_scripted_conversation_is_exported_into_the_rows_it_implies(tmp_path, proven):
    shutil.copytree(proven, tmp_path / "study" / "suite")
    study = load_study(study_config(tmp_path, instances=["blocksworld/p02"], arms=[ASSISTANT]))
    store = Store(study.database_url())
    store.migrate()
    materials = resolve(study)
    client = TestClient(create_app(study, materials, store))
    optimum = json.loads((tmp_path / "study" / "suite" / "blocksworld" / "p02"
                          / "truth.json").read_text())["plan"]
    # the taker: asks, takes the first (wrong) plan, asks again, submits what it took
    r = _phase2(client, "taker")
    r = _post(client, r, op="ask", message="Which plan would you use?")
    r = _post(client, r, op="adopt", message="1")
    r = _post(client, r, op="ask", message="Are you sure?")
    _finish(client, _post(client, r, op="submit"))
    # the builder: asks twice, takes neither, adds the optimum step by step
    r = _phase2(client, "builder")
    r = _post(client, r, op="ask", message="Which plan would you use?")
    r = _post(client, r, op="ask", message="Are you sure?")
    for step in optimum:
        r = _post(client, r, op="add", action=step)
    _finish(client, _post(client, r, op="submit"))

    out = tmp_path / "export"
    export(study, materials, store, out)
    rows = {r["participant"]: r for r in pl.read_parquet(out / "rows.parquet").to_dicts()}
    records = {r["participant"]: r for r in map(json.loads, (out / "records.jsonl")
                                                .read_text().splitlines())}
    assert len(rows) == 2
    for who, row in rows.items():
        chat = records[who]["answers"]["phase2"]["chat"]
        # each proposal's verdict per message is in the exported record
        first, second = chat[1], chat[3]
        assert len(first["proposal"]) == len(optimum) - 1
        assert first["verdict"]["valid"] is False and second["verdict"]["valid"] is True
        assert second["proposal"] == optimum
        tin = first["input_tokens"] + second["input_tokens"]
        tout = first["output_tokens"] + second["output_tokens"]
        assert tin > 0 and tout > 0
        assert (row["assistant_input_tokens"], row["assistant_output_tokens"]) == (tin, tout)
        assert row["assistant_cost_usd"] == 0.0  # a reference model costs nothing
        # the row's call columns are the assistant's, as a model row's are its model's
        assert (row["n_calls"], row["input_tokens"], row["output_tokens"]) == (2, tin, tout)
        assert row["cost_usd"] == 0.0 and row["price_source"] == "reference"
        assert (row["assistant_turns"], row["assistant_unanswered"]) == (2, 0)
        assert (row["assistant_proposals"], row["assistant_wrong_proposals"]) == (2, 1)
        assert row["final_equals_proposal"] is True
        if row["success"]:
            builder = row
        else:
            taker = row
    # the taker submitted the first plan, one step short of the optimum: the wrong
    # proposal accepted, one insert away from the last proposal (the optimum), adopted once
    assert taker["outcome"] != "success" and taker["accepted_wrong_proposal"] is True
    assert taker["edit_distance_last_proposal"] == 1 and taker["assistant_adoptions"] == 1
    # the builder built the optimum itself: the second proposal, right, by hand
    assert builder["accepted_wrong_proposal"] is False
    assert builder["edit_distance_last_proposal"] == 0 and builder["assistant_adoptions"] == 0
    people = pl.read_parquet(out / "rows.parquet")
    arm = analysis.human_table(people).row(0, named=True)
    assert (arm["wrong_proposal_shown"], arm["accepted_wrong"]) == (2, 1)
    assert arm["assistant_turns_mean"] == 2.0
    # the people beside the models: the assistant's model's own row on the same task is
    # marked as the assistant alone; people's rows and other models' are not
    assert set(people["assistant_model"].to_list()) == {"responsive"}
    row = people.row(0, named=True)
    alone = {**row, "regime": "offline", "model": "responsive", "reference": True,
             "method": "direct", "study": None, "assistant_model": None}
    other = {**alone, "model": "oracle"}
    from planaudit.analysis.tables import model_label, same_tasks_table

    same = same_tasks_table(pl.DataFrame([alone, other], schema=people.schema), people,
                            n_resamples=50)
    marks = {(r["regime"], r["model"]): r["assistant_alone"] for r in same.to_dicts()}
    assert marks[("offline", model_label("responsive", True))] == "assistant (teststudy)"
    assert marks[("offline", model_label("oracle", True))] is None
    assert all(v is None for (regime, _), v in marks.items() if regime == "human")
