"""What a study shows and judges, in process on the real code: plans judged by the formal
core with the first failure in the domain's words, suggestions taken from a run's
transcripts (or made once by a reference model, never by a paid one), feedback on
submission, and NASA-TLX's two scores."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from planaudit.config import ConfigError
from planaudit.study.allocation import Assignment
from planaudit.study.app import create_app
from planaudit.study.materials import resolve
from planaudit.study.settings import load_study
from planaudit.study.store import Store
from planaudit.study.tlx import PAIRS, raw_tlx, read_tlx, weighted_tlx
from tests.study_server import RIGHT_P02, WRONG_P03, study_config


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> tuple[Path, object]:
    tmp = tmp_path_factory.mktemp("study")
    cfg = study_config(tmp)
    study = load_study(cfg)
    return tmp, resolve(study)


def test_plans_are_judged_by_the_formal_core_in_the_domains_words(prepared):
    _, materials = prepared
    p02, p03 = materials.instances["blocksworld/p02"], materials.instances["blocksworld/p03"]
    right = p02.check(RIGHT_P02)
    assert (right.valid, right.optimal, right.length) == (True, True, 6)
    wrong = p03.check(WRONG_P03)  # c is still on d at the fifth step
    assert (wrong.valid, wrong.executable, wrong.failure_step, wrong.failure_kind) == (
        False, False, 5, "precondition")
    assert wrong.message == ("Step 5, (pick-up d), cannot be done at that point: this does not "
                             "hold: nothing is on block d (and the arm does not hold it).")
    two = p02.check(["(unstack c a)", "(stack a c)"])  # the arm holds c, not a
    assert two.message.endswith("these do not hold: the arm holds block a; "
                                "nothing is on block c (and the arm does not hold it).")
    short = p02.check(RIGHT_P02[:4])
    assert (short.valid, short.executable, short.failure_step, short.failure_kind) == (
        False, True, None, "goal")
    assert short.message == ("Every step can be done, but the goal does not hold at the end: "
                             "block a is on block b still missing.")
    bad = p02.check(["(pick-up a)"])  # c is on a
    assert (bad.failure_step, bad.failure_kind) == (1, "precondition")
    assert bad.message == ("Step 1, (pick-up a), cannot be done at that point: this does not "
                           "hold: nothing is on block a (and the arm does not hold it).")
    longer = p02.check(["(unstack c a)", "(stack c b)", "(unstack c b)", "(put-down c)",
                        "(pick-up b)", "(stack b c)", "(pick-up a)", "(stack a b)"])
    assert (longer.valid, longer.optimal) == (True, False)
    assert p02.state_after(["(unstack c a)"]) == sorted(
        ["block a is on the table", "block b is on the table", "nothing is on block a (and the "
         "arm does not hold it)", "nothing is on block b (and the arm does not hold it)",
         "the arm holds block c"])
    assert p02.state_after(["(pick-up a)"]) is None
    # the suggestions were judged before opening, and kept for the record
    sug = materials.suggestions["suggested"]
    assert sug["blocksworld/p02"]["check"]["valid"] is True
    assert sug["blocksworld/p03"]["check"]["valid"] is False


def test_a_suggestion_comes_from_a_runs_transcript(tmp_path):
    run = tmp_path / "run"
    folder = run / "transcripts" / "offline" / "gpt-4o" / "direct" / "blocksworld"
    folder.mkdir(parents=True)
    reply = "Here is my plan:\n```\n" + "\n".join(RIGHT_P02) + "\n```"
    (folder / "p02.jsonl").write_text(json.dumps({"purpose": "final", "messages": [],
                                                  "call": {"content": reply}}) + "\n"
                                      + json.dumps({"outcome": "success"}) + "\n")
    cfg = study_config(tmp_path, instances=["blocksworld/p02"], arms=[
        {"name": "s", "suggestion": {"run": str(run), "model": "gpt-4o", "method": "direct"}}])
    got = resolve(load_study(cfg)).suggestions["s"]["blocksworld/p02"]
    assert got["plan"] == RIGHT_P02 and got["check"]["valid"] is True
    assert got["source"].endswith("p02.jsonl")
    # a model that is not a reference model is never called: no transcript, no study
    cfg = study_config(tmp_path, instances=["blocksworld/p03"], arms=[
        {"name": "s", "suggestion": {"run": str(run), "model": "gpt-4o", "method": "direct"}}])
    with pytest.raises(ConfigError, match=r"study.yaml:\d+: arms\[0\].suggestion: no transcript"):
        resolve(load_study(cfg))


def test_a_reference_models_missing_suggestion_is_made_once(tmp_path):
    cfg = study_config(tmp_path, instances=["blocksworld/p02"], arms=[
        {"name": "s", "suggestion": {"run": str(tmp_path / "norun"), "model": "oracle",
                                     "method": "direct"}}])
    study = load_study(cfg)
    got = resolve(study).suggestions["s"]["blocksworld/p02"]
    assert got["check"]["valid"] is True and got["check"]["optimal"] is True
    made = study.results / "suggestions" / "oracle" / "direct" / "blocksworld" / "p02.jsonl"
    assert Path(got["source"]) == made and made.is_file()
    stamp = made.stat().st_mtime_ns
    resolve(study)
    assert made.stat().st_mtime_ns == stamp  # kept, not made again


def test_a_suggestion_naming_what_the_task_lacks_stops_the_study(tmp_path):
    cfg = study_config(tmp_path, instances=["blocksworld/p02"], arms=[
        {"name": "s", "suggestion": {"plans": {"blocksworld/p02": ["(stack x y)"]}}}])
    with pytest.raises(ConfigError, match=r"study.yaml:\d+: arms\[0\].suggestion on blocksworld/p02"):
        resolve(load_study(cfg))


def test_feedback_on_submission_names_the_failure_then_lets_it_stand(tmp_path, prepared):
    src, _ = prepared
    shutil.copytree(src / "study" / "suite", tmp_path / "study" / "suite")  # proven already
    cfg = study_config(tmp_path, instances=["blocksworld/p02"],
                       arms=[{"name": "fb", "feedback": "submission"}])
    study = load_study(cfg)
    store = Store(study.database_url())
    store.migrate()
    client = TestClient(create_app(study, resolve(study), store))

    def post(r, **data):
        key = re.search(r'name="key" value="([0-9a-f]{32})"', r.text).group(1)
        return client.post(str(r.url), data={"key": key, **data})

    r = client.get("/?PROLIFIC_PID=fb1&STUDY_ID=s&SESSION_ID=x")
    r = post(post(post(r, agree="yes")))
    r = post(r, text="take a first")
    r = post(r, op="add", action="(pick-up a)")
    r = post(r, op="submit")
    assert r.url.path.endswith("/phase2")
    assert "Your plan does not solve the task: Step 1, (pick-up a), cannot be done" in r.text
    r = post(r, op="submit", confirm="yes")
    assert r.url.path.endswith("/tlx")
    record = next(store.records("teststudy"))
    shown = [e for e in record["events"] if e["kind"] == "feedback"]
    assert len(shown) == 1 and shown[0]["data"]["failure_step"] == 1
    assert record["answers"]["phase2"] == {"plan": ["(pick-up a)"], "submitted": True}


def test_nasa_tlx_raw_and_weighted():
    form = {"mental": "70", "physical": "5", "temporal": "40", "performance": "25",
            "effort": "60", "frustration": "30"}
    assert read_tlx(form, pairwise=False) == {
        "ratings": {"mental": 70, "physical": 5, "temporal": 40, "performance": 25,
                    "effort": 60, "frustration": 30}, "raw": 230 / 6}
    # mental wins all 5 comparisons, effort 4, temporal 3, frustration 2, performance 1
    order = ["mental", "effort", "temporal", "frustration", "performance", "physical"]
    pairs = {f"pair_{a}_{b}": min(a, b, key=order.index) for a, b in PAIRS}
    got = read_tlx({**form, **pairs}, pairwise=True)
    assert got["weighted"] == (70 * 5 + 60 * 4 + 40 * 3 + 30 * 2 + 25 * 1 + 5 * 0) / 15
    assert got["weighted"] == weighted_tlx(got["ratings"], got["pairs"])
    assert raw_tlx(got["ratings"]) == 230 / 6
    # some comparisons left out: kept, no weighted score
    partial = read_tlx({**form, "pair_mental_physical": "mental"}, pairwise=True)
    assert partial["pairs"] == {"mental/physical": "mental"} and "weighted" not in partial
    for bad, why in ((dict(form, mental="72"), "steps of 5"), (dict(form, effort=""), "rate effort"),
                     (dict(form, effort="105"), "steps of 5"),
                     ({**form, "pair_mental_physical": "effort"}, "takes one of the two")):
        with pytest.raises(ValueError, match=why):
            read_tlx(bad, pairwise=True)


def test_the_pilot_config_is_valid_and_names_a_wrong_suggestion():
    root = Path(__file__).resolve().parents[1]
    data = yaml.safe_load((root / "config" / "study.yaml").read_text())
    study = load_study(root / "config" / "study.yaml")
    assert [a.name for a in study.arms] == ["unassisted", "suggested"]
    assert study.arm("suggested").suggestion.model == "flawed"
    assert "reference model" in study.arm("suggested").suggestion.label
    assert data["instances"] == ["blocksworld/p02", "blocksworld/p03", "blocksworld/p06"]


def test_a_database_of_the_first_schema_is_upgraded_in_place(tmp_path):
    """Alembic's migrations carry a study's records forward: a database made by 0001 (as a
    server of an earlier planaudit left it, with people in it) reaches the newest schema
    with every record kept."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    store = Store(f"sqlite:///{tmp_path}/old.sqlite")
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).resolve().parents[1]
                                               / "src" / "planaudit" / "study" / "migrations"))
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    with store.engine.begin() as conn:
        conn.execute(text("insert into studies (name, secret, opened_at) values "
                          "('old', 's3cret', '2026-01-01 00:00:00')"))
    store.open_study("old")
    p, new = store.enrol("old", "pseudo1", {"participant": "P1"}, ["a", "b"], ["t1"], Assignment(),
                         "consent")
    assert new
    store.migrate()
    with store.read() as conn:
        assert conn.execute(text("select version_num from alembic_version")).scalar() == "0005"
        assert conn.execute(text("select secret, design from studies")).one() == ("s3cret", None)
    assert store.find(p.id) == p
    assert store.keep_design("old", {"arms.a": 1}) == []  # the first design of an old study


def test_a_changed_design_is_refused_once_people_have_enrolled(tmp_path, prepared):
    from planaudit.commandline import InputError
    from planaudit.study.commands import opened

    src, _ = prepared
    shutil.copytree(src / "study" / "suite", tmp_path / "study" / "suite")
    cfg = study_config(tmp_path)
    _, _, store = opened(str(cfg), None)  # no one yet: the design may change freely
    cfg = study_config(tmp_path, arms=[{"name": "unassisted", "feedback": "step"},
                                       {"name": "suggested", "suggestion": {"plans": {
                                           "blocksworld/p02": RIGHT_P02, "blocksworld/p03": WRONG_P03}}}])
    study, _, store = opened(str(cfg), None)
    store.enrol(study.name, "someone", {"participant": "X1"}, ["unassisted", "suggested"],
                list(study.instances), study.allocation, "consent")
    assert opened(str(cfg), None)[0].name == "teststudy"  # the same design opens again
    changed = study_config(tmp_path, arms=[{"name": "unassisted", "feedback": "none"},
                                           {"name": "suggested", "suggestion": {"plans": {
                                               "blocksworld/p02": RIGHT_P02,
                                               "blocksworld/p03": RIGHT_P02}}}])
    with pytest.raises(InputError, match=r"another design: arms.suggested, arms.unassisted changed"):
        opened(str(changed), None)
