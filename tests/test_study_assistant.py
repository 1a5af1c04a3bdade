"""The assistant arm (issue 49), in process on the real code: a participant's messages
answered through `llm/` by the reference model `responsive` (its first plan one step
short, its second the optimum), every proposal judged on the hidden model when it is
made, a proposal taken as the plan, the budget held, and the config's mistakes refused
before anything is sent."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
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
from tests.study_server import form_post as _post
from tests.study_server import study_config
from tests.study_server import to_phase2 as _phase2

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
    sent = chat[0].pop("at")  # when it was sent (a stale wait is told by it)
    assert datetime.fromisoformat(sent).tzinfo is not None
    assert chat[0] == {"role": "user", "text": "Which plan would you use?", "plan": []}
    assert "Use this plan as mine" in r.text
    # the plan is shown once, in the task's words below the reply, not also as its raw block
    assert "```" not in r.text and r.text.count(first[0]) == 1
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
    for m in exp["models"]:  # input dearer than output: the bound is all input
        if m["name"] == "responsive":
            m.update(input_price=10.0, output_price=2.5)
    Path(load_study(cfg).raw["experiment"]).write_text(yaml.safe_dump(exp))
    (row,) = estimate(load_study(cfg))
    assert (row.input_tokens, row.output_tokens) == (20000, 0)
    assert row.usd == pytest.approx(20000 * 10.0 / 1e6)


def _served(tmp: Path, proven: Path, srv, assistant: dict):
    """A study whose assistant is a model behind the tests' own OpenAI-compatible server,
    priced in its entry, reached through litellm as any paid model is."""
    shutil.copytree(proven, tmp / "study" / "suite")
    cfg = study_config(tmp, instances=["blocksworld/p02"],
                       arms=[{"name": "assistant", "assistant": assistant}])
    exp_path = Path(yaml.safe_load(cfg.read_text())["experiment"])
    exp = yaml.safe_load(exp_path.read_text())
    exp["models"].append({"name": "served", "model": "openai/served", "api_base": srv.api_base,
                          "api_key_env": "none", "max_retries": 0, "input_price": 2.5,
                          "output_price": 10.0})
    exp_path.write_text(yaml.safe_dump(exp))
    study = load_study(cfg)
    store = Store(study.database_url())
    store.migrate()
    return study, store, TestClient(create_app(study, resolve(study), store))


def test_a_provider_failure_mid_study_loses_nothing_and_the_page_says_so(tmp_path, proven):
    from tests.fake_openai import FakeOpenAI, reply, status

    plan = "I would start with:\n```\n(unstack c a)\n(put-down c)\n```"
    with FakeOpenAI([reply(plan, 900, 40), status(500)]) as srv:
        _, store, client = _served(tmp_path, proven, srv, {"model": "served", "turns": 4})
        r = _phase2(client, "unlucky")
        r = _post(client, r, op="ask", message="How do I start?")
        r = _post(client, r, op="add", name="unstack", arg1="c", arg2="a")
        r = _post(client, r, op="ask", message="And then?")  # the provider fails: a 500
        assert r.status_code == 200 and "The assistant is unavailable just now" in r.text
        assert "4 of 4 left" not in r.text and "3 of 4 left" in r.text  # a failure costs no turn
        r = _post(client, r, op="add", name="put-down", arg1="c")
        r = _post(client, r, op="submit")
        assert r.url.path.endswith("/tlx") and len(srv.requests) == 2
    record = next(store.records("teststudy"))
    answer = record["answers"]["phase2"]
    assert answer["plan"] == ["(unstack c a)", "(put-down c)"] and answer["submitted"]
    chat = answer["chat"]
    assert [m["role"] for m in chat] == ["user", "assistant", "user", "assistant"]
    assert chat[1]["proposal"] == ["(unstack c a)", "(put-down c)"]
    assert chat[1]["verdict"]["executable"] and not chat[1]["verdict"]["valid"]
    assert chat[1]["cost_usd"] == pytest.approx((900 * 2.5 + 40 * 10.0) / 1e6)
    assert chat[3]["text"] is None and "500" in chat[3]["error"]
    # what the participant was told is in the record too: the failed reply's event
    failed = [e for e in record["events"] if e["kind"] == "reply" and e["data"]["error"]]
    assert len(failed) == 1


def test_the_estimate_equals_what_a_participant_spending_the_whole_budget_is_billed(
        tmp_path, proven):
    from tests.fake_openai import FakeOpenAI, reply

    budget = {"model": "served", "turns": 2, "tokens": 20000, "reply_tokens": 600}
    # the server bills each reply as the most the budget allows: 600 out, the rest in
    with FakeOpenAI([reply("No plan from me.", 9400, 600), reply("Still none.", 9400, 600)]) as srv:
        study, store, client = _served(tmp_path, proven, srv, budget)
        (bound,) = estimate(study, participants=1)
        r = _phase2(client, "spender")
        r = _post(client, r, op="ask", message="Help?")
        r = _post(client, r, op="ask", message="More?")
        assert 'id="ask-spent"' in r.text
        assert [b["max_tokens"] for b in srv.requests] == [600, 600]
    chat = next(store.records("teststudy"))["answers"]["phase2"]["chat"]
    billed = sum(m["cost_usd"] for m in chat if m["role"] == "assistant")
    assert round(billed, 2) == round(bound.usd, 2) and billed == pytest.approx(bound.usd)
    assert (bound.input_tokens, bound.output_tokens) == (18800, 1200)


def test_serve_stops_before_anyone_enters_when_the_assistant_fails_its_preflight(
        tmp_path, proven, capsys):
    from planaudit.cli import main
    from tests.study_server import free_port

    class Closed:  # a server that is not there: nothing listens on its port
        api_base = f"http://127.0.0.1:{free_port()}/v1"

    study, store, _ = _served(tmp_path, proven, Closed, {"model": "served"})
    store.close()
    assert main(["study", "serve", "--config", str(study.source), "--check"]) == 2
    err = capsys.readouterr().err
    assert "cannot start, nothing was sent" in err and "served" in err
    assert main(["study", "estimate", "--config", str(study.source), "--participants", "10"]) == 0
    out = capsys.readouterr().out
    # 6 replies of at most 800 tokens, the rest of 30,000 as input, at $2.50 and $10 per M
    per = (25200 * 2.5 + 4800 * 10.0) / 1e6
    assert f"${per:,.2f} a participant" in out and f"10 participants: ${10 * per:,.2f}" in out


def test_a_reply_that_arrives_after_the_plan_was_submitted_is_kept_not_counted(tmp_path, proven):
    import threading
    import time

    from planaudit.human.assistance import measures
    from tests.fake_openai import FakeOpenAI, reply

    slow = {"delay": 1.5, **reply("Try:\n```\n(unstack c a)\n```", 900, 40)}
    with FakeOpenAI([slow]) as srv:
        _, store, client = _served(tmp_path, proven, srv, {"model": "served"})
        r = _phase2(client, "hasty")
        r = _post(client, r, op="add", name="unstack", arg1="c", arg2="a")
        asked: dict = {}
        waiting = threading.Thread(target=lambda: asked.update(
            r=_post(client, r, op="ask", message="Is this right?")))
        waiting.start()
        time.sleep(0.5)  # the question is stored and the model is still writing
        key = re.search(r'name="key" value="([0-9a-f]{32})"', r.text).group(1)
        done = client.post(str(r.url).split("#")[0],
                           data={"key": key[:28] + "0003", "op": "submit"})
        waiting.join()
    assert done.url.path.endswith("/tlx") and asked["r"].url.path.endswith("/tlx")
    answer = next(store.records("teststudy"))["answers"]["phase2"]
    assert answer["submitted"] and answer["plan"] == ["(unstack c a)"]
    late = answer["chat"][1]
    # kept with what it cost, marked as never shown, and not a proposal they could take
    assert late["after_submit"] is True and late["proposal"] == ["(unstack c a)"]
    assert late["cost_usd"] == pytest.approx((900 * 2.5 + 40 * 10.0) / 1e6)
    got = measures(answer["chat"], [], answer["plan"], False)
    assert (got["assistant_proposals"], got["final_equals_proposal"]) == (0, False)
    assert got["assistant_cost_usd"] == pytest.approx(late["cost_usd"])


def test_a_message_whose_reply_never_came_lets_the_participant_ask_again(tmp_path, proven):
    """The server stopped between a message and its reply: past the longest a reply can
    take, the message is recorded as unanswered and a new one is taken; before, refused."""
    from datetime import timedelta

    from planaudit.study.assistant import NO_REPLY, Assistants
    from planaudit.study.store import Edit

    study, store, client = _open(tmp_path, proven)
    r = _phase2(client, "stranded")
    pid = r.url.path.split("/")[2].split(".")[0]  # the session token: id.signature
    wait = Assistants(study).waits_at_most(study.arms[0])
    order = ["consent", "instructions", "example", "phase1", "phase2", "tlx", "done"]

    def stranded(seconds_ago: float, idem: str) -> None:  # a message stored, no reply
        at = (datetime.now().astimezone() - timedelta(seconds=seconds_ago)).isoformat()
        store.post(pid, "phase2", order, idem, "ask", edit=lambda got: Edit(
            "ask", {}, {**(got or {}), "chat": [{"role": "user", "text": "lost?", "plan": [],
                                                  "at": at}]}))

    stranded(wait / 2, "a" * 32)
    refused = _post(client, r, op="ask", message="Hello again?")
    assert refused.status_code == 422 and "still answering" in refused.text
    stranded(wait + 60, "b" * 32)
    r = _post(client, r, op="ask", message="Hello again?")
    chat = next(store.records("teststudy"))["answers"]["phase2"]["chat"]
    assert [m["role"] for m in chat] == ["user", "assistant", "user", "assistant"]
    assert chat[1]["error"] == NO_REPLY and chat[1]["cost_usd"] == 0.0
    assert chat[3]["error"] is None and chat[3]["proposal"]
    assert "The assistant is unavailable just now" in r.text  # what the lost one shows
