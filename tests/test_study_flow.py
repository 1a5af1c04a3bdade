"""Every participant accounted for, over HTTP against a real `planaudit study serve`: a
cohort with a non-consenter, people who stop after being told their plan fails, people on
the exclusion list and people who stop early, exported, judged and laid out as the flow
table; every figure computed here from the script, apart from the code. Also the
platform's checks (the study id, the session id) and a full or closed study."""

from __future__ import annotations

import json
import subprocess

import httpx
import polars as pl
import pytest
import yaml

from tests.study_server import PLANAUDIT, RIGHT_P02, Server, entry, study_config
from tests.test_study_server import ENV, Person, record_of

WRONG = ["(pick-up a)"]  # a is under c in p02: the first step cannot be done
ARMS = [{"name": "unassisted", "feedback": "none"},
        {"name": "feedback", "feedback": "submission"}]
# what each participant does, by arm, in entry order within the arm
SCRIPT = {"unassisted": ["no-consent", "valid", "invalid", "stop-phase1", "valid-excluded",
                         "valid", "valid-inattentive"],
          "feedback": ["valid", "stop-after-feedback", "stop-after-feedback", "invalid",
                       "valid-excluded", "no-consent", "valid-one-slip"]}
# three instructed-response items; the platform's rule: excluded after two failures
CHECKS = [{"id": "read", "page": "instructions", "question": 'To show that you read this, '
           'choose "Purple".', "options": ["Red", "Purple", "Green"], "answer": "Purple"},
          {"id": "example", "page": "example", "question": 'Please choose "Seven" here.',
           "options": ["Three", "Seven"], "answer": "Seven"},
          {"id": "workload", "page": "tlx", "question": 'Choose "Never" for this question.',
           "options": ["Always", "Never", "Sometimes"], "answer": "Never"}]
RIGHT = {"attention_read": "Purple", "attention_example": "Seven", "attention_workload": "Never"}
# the inattentive fail two (read, workload): excluded; one slip (example) is not enough
WRONG_ANSWERS = {"valid-inattentive": {"attention_read": "Red", "attention_workload": "Always"},
                 "valid-one-slip": {"attention_example": "Three"}}


# who pasted on the study's pages (the counts their pages' script sends), by arm and
# place in the arm; and who the platform's authenticity check called "low"
PASTED = {("unassisted", 1), ("feedback", 3)}
LOW = {("unassisted", 5)}


def play(p: Person, what: str, pasted: bool = False) -> None:
    """One scripted participant, already entered."""
    if what == "no-consent":
        return
    p.attention = {**RIGHT, **WRONG_ANSWERS.get(what, {})}
    p.paradata = json.dumps({"paste": 1 if pasted else 0, "pasted_chars": 40 if pasted else 0,
                             "blur": 0, "hidden": 0, "hidden_ms": 0, "first_key_ms": 1200,
                             "open_ms": 30000})
    p.walk("phase1")
    if what == "stop-phase1":
        return
    p.walk("phase2")
    for step in (RIGHT_P02 if what.startswith("valid") else WRONG):
        assert p.post({"op": "add", "action": step}).status_code == 303
    assert p.post({"op": "submit"}).status_code == 303
    if p.step == "phase2":  # told that the plan fails (the feedback arm)
        if what == "stop-after-feedback":
            return
        assert p.post({"op": "submit", "confirm": "yes"}).status_code == 303
    p.walk("done")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flow")
    (tmp / "exclusions.csv").write_text("id,reason\n")  # filled once the cohort has played
    (tmp / "authenticity.csv").write_text("id,verdict\n")
    cfg = study_config(tmp, arms=ARMS, instances=["blocksworld/p02"],
                       platform={"study_id": "s1"}, enrolment={"cap": 14},
                       exclusions="exclusions.csv", authenticity="authenticity.csv",
                       attention={"checks": CHECKS, "reject_after": 2})
    server = Server(cfg, f"sqlite:///{tmp}/flow.sqlite", env=ENV)
    try:
        people: dict[str, list[Person]] = {"unassisted": [], "feedback": []}
        k = 0
        while sum(map(len, people.values())) < 14:
            p = Person(server.url, f"flow-{k}")
            k += 1
            assert p.enter().status_code == 303
            arm = record_of(server, p.pid)["arm"]
            if len(people[arm]) == len(SCRIPT[arm]):
                pytest.fail(f"the sequence gave {arm} more than its scripts")
            people[arm].append(p)
            play(p, SCRIPT[arm][len(people[arm]) - 1], (arm, len(people[arm]) - 1) in PASTED)
        yield tmp, cfg, server, people
    finally:
        server.stop()


def test_the_platform_checks_and_a_full_or_closed_study(study):
    tmp, cfg, server, people = study
    url = server.url
    r = httpx.get(f"{url}/?PROLIFIC_PID=flow-x&STUDY_ID=another&SESSION_ID=x")
    assert r.status_code == 403 and "for another study" in r.text
    r = httpx.get(f"{url}/?PROLIFIC_PID=flow-x&STUDY_ID=s1")
    assert r.status_code == 400 and "lacks your session id" in r.text
    r = httpx.get(entry(url, "flow-newcomer"))  # the cap of 14 is reached
    assert r.status_code == 403 and "This study is full" in r.text
    assert people["unassisted"][3].enter().status_code == 303  # someone in (at phase 1) goes on
    closed = tmp / "closed.yaml"  # the same study, closed (a config field: a restart)
    closed.write_text(yaml.safe_dump({**yaml.safe_load(cfg.read_text()),
                                      "enrolment": {"closed": True}}))
    other = Server(closed, f"sqlite:///{tmp}/flow.sqlite", env=ENV)
    try:
        r = httpx.get(entry(other.url, "flow-late"))
        assert r.status_code == 403 and "This study is closed" in r.text
    finally:
        other.stop()


def test_the_flow_accounts_for_everyone_and_gives_both_rates(study):
    tmp, cfg, _server, people = study
    excluded = {arm: [p for p, what in zip(ps, SCRIPT[arm], strict=True)
                      if what == "valid-excluded"] for arm, ps in people.items()}
    (tmp / "exclusions.csv").write_text(
        "id,reason\n" + "".join(f"{p.pid},random answers\n" for ps in excluded.values()
                                for p in ps) + "nobody-here,typo\n")
    (tmp / "authenticity.csv").write_text("id,verdict\n" + "".join(
        f"{people[arm][i].pid},{'low' if (arm, i) in LOW else 'high'}\n"
        for arm, ps in people.items() for i in range(len(ps))))
    out = tmp / "export"
    r = subprocess.run([PLANAUDIT, "study", "export", "--config", str(cfg), "--db",
                        f"sqlite:///{tmp}/flow.sqlite", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "1 id(s) of the exclusion list match no participant: nobody-here" in r.stderr
    records = [yaml.safe_load(line) for line in (out / "records.jsonl").read_text().splitlines()]
    quiet = [x for x in records if not x["consented"]]
    assert len(quiet) == 2 and all(x["events"] == [] and x["answers"] == {} for x in quiet)
    shard = tmp / "human.parquet"
    r = subprocess.run([PLANAUDIT, "human", "shard", "--records", str(out), "--out", str(shard)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from planaudit.human.flow import flow_table

    flow = {row["arm"]: row for row in flow_table(pl.read_parquet(shard)).to_dicts()}
    for arm, script in SCRIPT.items():  # each figure from the script alone
        consent = [w for w in script if w != "no-consent"]
        finished = [w for w in consent if w.startswith(("valid", "invalid"))]
        out_ = {"valid-excluded": "random answers",
                "valid-inattentive": "failed 2 or more attention checks"}
        kept = [w for w in consent if w not in out_]
        got = flow[arm]
        assert (got["entered"], got["consented"]) == (len(script), len(consent))
        assert got["submitted"] == sum(w != "stop-phase1" for w in consent)
        assert got["reached_phase2"] == got["submitted"] and got["finished"] == len(finished)
        reasons = sorted(out_[w] for w in consent if w in out_)
        assert got["excluded"] == len(reasons)
        assert got["excluded_reasons"] == "; ".join(f"{r}: {reasons.count(r)}"
                                                    for r in sorted(set(reasons)))
        analysed = [w for w in finished if w not in out_]
        assert got["analysed"] == len(analysed)
        assert got["valid_completers"] == sum(w.startswith("valid") for w in analysed)
        assert (got["valid_itt"], got["itt_n"]) == (sum(w.startswith("valid") for w in kept),
                                                   len(kept))
        assert got["itt_lo"] <= got["itt_share"] <= got["itt_hi"]
    # each participant's attention checks, counted from the script (never shown to them)
    rows = pl.read_parquet(shard)
    for arm, ps in people.items():
        for p, what in zip(ps, SCRIPT[arm], strict=True):
            who = record_of(_server, p.pid)["participant"]
            row = rows.filter(pl.col("participant") == who).row(0, named=True)
            if what == "no-consent":
                assert row["attention_checks"] is None
                continue
            answered = 2 if what.startswith("stop") else 3  # the TLX page's not reached
            failed = len(WRONG_ANSWERS.get(what, {}))
            assert (row["attention_checks"], row["attention_failed"]) == (answered, failed)
    # integrity: the valid rate of all analysed beside those with no signal (a paste, or
    # the platform's "low"), each computed from the script
    from planaudit.human.integrity import sensitivity_table

    sens = {r["arm"]: r for r in sensitivity_table(rows).to_dicts()}
    for arm, script in SCRIPT.items():
        analysed = [(i, w) for i, w in enumerate(script) if w.startswith(("valid", "invalid"))
                    and w not in out_]
        flagged = {i for i, _ in analysed if (arm, i) in PASTED | LOW}
        clean = [w for i, w in analysed if i not in flagged]
        got = sens[arm]
        assert (got["analysed"], got["valid"]) == (len(analysed), sum(
            w.startswith("valid") for _, w in analysed))
        assert (got["with_signal"], got["unrecorded"]) == (len(flagged), 0)
        assert (got["clean"], got["clean_valid"]) == (len(clean), sum(
            w.startswith("valid") for w in clean))
    pasted = rows.filter(pl.col("paste_events") > 0)
    assert pasted.height == len(PASTED) and pasted["integrity_signal"].all()
    assert rows.filter(pl.col("authenticity") == "low").height == len(LOW)
    # the feedback arm's two who stopped after being told: their verdicts kept, not dropped
    rows = pl.read_parquet(shard)
    stopped = rows.filter((pl.col("method") == "feedback") & pl.col("submitted")
                          & ~pl.col("finished"))
    assert stopped.height == 2 and stopped["submitted_valid"].to_list() == [False, False]
    # and the completers' rate flatters that arm: 2 of 3 against 2 of 5 by intention to treat
    assert flow["feedback"]["completers_share"] == 2 / 3 and flow["feedback"]["itt_share"] == 0.4
