"""The assistant arm (issue 49), in process on the real code: a participant's messages
answered through `llm/` by the reference model `responsive` (its first plan one step
short, its second the optimum), every proposal judged on the hidden model when it is
made, a proposal taken as the plan, the budget held, and the config's mistakes refused
before anything is sent."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from planaudit.config import ConfigError
from planaudit.contract import parse_action
from planaudit.formal.load import load_task
from planaudit.formal.validate import validate
from planaudit.study.app import create_app
from planaudit.study.assistant import estimate
from planaudit.study.materials import resolve
from planaudit.study.settings import load_study
from planaudit.study.store import Store
from tests.study_server import study_config

ASSISTANT = {"name": "assistant", "assistant": {"model": "responsive", "turns": 3,
                                               "tokens": 20000, "reply_tokens": 600}}


@pytest.fixture(scope="module")
def proven(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("assistant")
    study = load_study(study_config(tmp, instances=["blocksworld/p02"], arms=[ASSISTANT]))
    resolve(study)
    return tmp / "study" / "suite"


def _open(tmp: Path, proven: Path, **over):
    shutil.copytree(proven, tmp / "study" / "suite")
    cfg = study_config(tmp, instances=["blocksworld/p02"], **{"arms": [ASSISTANT], **over})
    study = load_study(cfg)
    store = Store(study.database_url())
    store.migrate()
    return study, store, TestClient(create_app(study, resolve(study), store))


def _post(client, r, **data):
    key = re.search(r'name="key" value="([0-9a-f]{32})"', r.text).group(1)
    return client.post(str(r.url).split("#")[0], data={"key": key, **data})


def _phase2(client, pid: str):
    r = client.get(f"/?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x")
    r = _post(client, _post(client, _post(client, r, agree="yes")))
    return _post(client, r, text="move the blocks")


def _judge(folder: Path, plan: list[str]) -> tuple[bool, int | None]:
    """A plan's verdict from the formal core directly (not through the study)."""
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    v = validate(task, [parse_action(s) for s in plan])
    return v.valid, None if v.failure is None else v.failure.step


def test_a_conversation_is_answered_judged_and_a_wrong_proposal_taken(tmp_path, proven):
    _, store, client = _open(tmp_path, proven)
    folder = tmp_path / "study" / "suite" / "blocksworld" / "p02"
    optimum = json.loads((folder / "truth.json").read_text())["plan"]
    r = _phase2(client, "talker")
    assert r.url.path.endswith("/phase2") and 'id="ask"' in r.text and "3 of 3 left" in r.text
    r = _post(client, r, op="ask", message="Which plan would you use?")
    assert r.url.path.endswith("/phase2") and "2 of 3 left" in r.text
    chat = next(store.records("teststudy"))["answers"]["phase2"]["chat"]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    first = chat[1]["proposal"]
    # responsive's first plan: the optimum with one step dropped, so it fails where it
    # lacks that step (the formal core says where, apart from the study's code)
    assert len(first) == len(optimum) - 1 and all(s in optimum for s in first)
    valid, step = _judge(folder, first)
    assert not valid and chat[1]["verdict"]["valid"] is False
    assert chat[1]["verdict"]["failure_step"] == step
    assert chat[1]["input_tokens"] > 0 and chat[1]["output_tokens"] > 0
    assert chat[1]["cost_usd"] == 0.0 and chat[1]["price_source"] == "reference"
    # the user's message carried the plan it was sent beside (sees_plan)
    assert chat[0] == {"role": "user", "text": "Which plan would you use?", "plan": []}
    assert "Use this plan as mine" in r.text
    r = _post(client, r, op="adopt", message="1")
    answer = next(store.records("teststudy"))["answers"]["phase2"]
    assert answer["plan"] == first and len(answer["chat"]) == 2
    r = _post(client, r, op="ask", message="Are you sure?")
    chat = next(store.records("teststudy"))["answers"]["phase2"]["chat"]
    assert chat[2]["plan"] == first  # the plan as it stood when the message was sent
    assert chat[3]["proposal"] == optimum and chat[3]["verdict"]["valid"] is True
    assert chat[3]["verdict"]["optimal"] is True
    r = _post(client, r, op="submit")  # the wrong plan it took, submitted as it is
    assert r.url.path.endswith("/tlx")
    record = next(store.records("teststudy"))
    assert record["answers"]["phase2"]["plan"] == first
    kinds = [e["kind"] for e in record["events"] if e["page"] == "phase2"]
    assert kinds.count("ask") == 2 and kinds.count("reply") == 2 and kinds.count("adopt") == 1
    reply = next(e for e in record["events"] if e["kind"] == "reply")
    assert reply["data"]["proposal"] == first and reply["data"]["verdict"]["valid"] is False


def test_the_budget_of_messages_is_held(tmp_path, proven):
    arm = {"name": "assistant", "assistant": {**ASSISTANT["assistant"], "turns": 1}}
    _, store, client = _open(tmp_path, proven, arms=[arm])
    r = _phase2(client, "brief")
    r = _post(client, r, op="ask", message="Help?")
    assert 'id="ask-spent"' in r.text and 'id="ask"' not in r.text
    key = re.search(r'name="key" value="([0-9a-f]{32})"', r.text).group(1)
    r = client.post(str(r.url).split("#")[0], data={"key": key, "op": "ask", "message": "More?"})
    assert r.status_code == 422 and "used all 1 messages" in r.text
    chat = next(store.records("teststudy"))["answers"]["phase2"]["chat"]
    assert len(chat) == 2  # the refused message was not stored, nothing was sent


def test_an_arm_without_an_assistant_takes_no_message(tmp_path, proven):
    _, store, client = _open(tmp_path, proven, arms=[{"name": "alone"}])
    r = _phase2(client, "alone1")
    assert 'id="chat"' not in r.text
    r = _post(client, r, op="ask", message="hello")
    assert r.status_code == 422 and "no assistant" in r.text
    assert "chat" not in (next(store.records("teststudy"))["answers"].get("phase2") or {})


@pytest.mark.parametrize("arm, said", [
    ({"name": "a", "assistant": {"model": "nobody"}}, "arms[0].assistant.model: 'nobody' is not a model"),
    ({"name": "a", "assistant": {"model": "lama"}}, "is a classical planner"),
    ({"name": "a", "assistant": {"model": "oracle", "tokens": 500, "reply_tokens": 800}},
     "arms[0].assistant.reply_tokens: 800 leaves nothing"),
    ({"name": "a", "assistant": {"model": "oracle"}, "suggestion": {"plans": {}}},
     "a suggestion or has an assistant, not both"),
    ({"name": "a", "assistant": {"model": "oracle", "turns": 0}}, "turns"),
])
def test_an_assistants_config_mistake_is_named_before_anything_is_sent(tmp_path, arm, said):
    cfg = study_config(tmp_path, arms=[arm])
    with pytest.raises(ConfigError) as e:
        load_study(cfg)
    assert said in str(e.value) and "study.yaml:" in str(e.value)


def test_the_estimate_is_the_most_the_budget_can_be_billed(tmp_path):
    cfg = study_config(tmp_path, arms=[ASSISTANT], enrolment={"cap": 40})
    exp = yaml.safe_load(Path(load_study(cfg).raw["experiment"]).read_text())
    for m in exp["models"]:
        if m["name"] == "responsive":
            m.update(input_price=2.5, output_price=10.0)  # dollars per million tokens
    Path(load_study(cfg).raw["experiment"]).write_text(yaml.safe_dump(exp))
    (row,) = estimate(load_study(cfg))
    # 3 replies of at most 600 tokens; the rest of 20,000 as input
    assert (row.output_tokens, row.input_tokens) == (1800, 18200)
    assert row.usd == pytest.approx((18200 * 2.5 + 1800 * 10.0) / 1e6)
    assert row.participants == 40 and row.total_usd == pytest.approx(40 * row.usd)
