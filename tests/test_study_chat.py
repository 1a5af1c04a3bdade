"""The assistant's reply streamed (issue 49: "streams with script"), in process: the route
`POST /s/{tok}/phase2/ask` that static/chat.js posts the ask form to answers server-sent
events (the reply's text as it arrives, then `done` with the page to show again, or
`error` with what the page without script says), with the form post's checks and
records; a model behind the tests' own OpenAI-compatible server streams in pieces and
fails mid-reply."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml
from fastapi.testclient import TestClient

from planaudit.study.app import create_app
from planaudit.study.assistant import UNAVAILABLE
from planaudit.study.materials import resolve
from planaudit.study.settings import load_study
from planaudit.study.store import Store
from tests.fake_openai import FakeOpenAI, streamed
from tests.study_server import form_post as _post
from tests.study_server import study_config
from tests.study_server import to_phase2 as _phase2
from tests.test_study_assistant import ASSISTANT, proven  # noqa: F401

KEY = re.compile(r'name="key" value="([0-9a-f]{32})"')


def _open(tmp: Path, suite: Path, arm: dict = ASSISTANT, model: dict | None = None):
    """The study of test_study_assistant; `model`: an entry added to its experiment."""
    shutil.copytree(suite, tmp / "study" / "suite")
    cfg = study_config(tmp, instances=["blocksworld/p02"], arms=[arm])
    if model is not None:
        path = Path(yaml.safe_load(cfg.read_text())["experiment"])
        exp = yaml.safe_load(path.read_text())
        exp["models"].append(model)
        path.write_text(yaml.safe_dump(exp))
    study = load_study(cfg)
    store = Store(study.database_url())
    store.migrate()
    return store, TestClient(create_app(study, resolve(study), store))


def events(text: str) -> list[tuple[str, object]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def ask(client, page, message: str):
    """The ask form as chat.js posts it: its fields, to the stream route."""
    path = str(page.url).split("#")[0]
    return client.post(path + "/ask", data={"key": KEY.search(page.text).group(1), "op": "ask",
                                            "message": message})


def chat_of(store, pseudonym_index: int = 0) -> list[dict]:
    return list(store.records("teststudy"))[pseudonym_index]["answers"]["phase2"]["chat"]


def test_the_stream_gives_the_reply_then_the_page_and_stores_what_the_form_post_stores(
        tmp_path, proven):  # noqa: F811
    store, client = _open(tmp_path, proven)
    by_form = _phase2(client, "form")
    _post(client, by_form, op="ask", message="Which plan would you use?")
    by_script = _phase2(client, "script")
    tok = str(by_script.url).split("/s/")[1].split("/")[0]
    r = ask(client, by_script, "Which plan would you use?")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    # responsive is answered in process: its whole text in one event, then the page
    assert [name for name, _ in got] == ["text", "done"]
    assert got[1][1] == {"url": f"/s/{tok}/phase2#chat"}
    records = list(store.records("teststudy"))
    assert len(records) == 2
    form_chat, script_chat = (r["answers"]["phase2"]["chat"] for r in records)
    assert got[0][1] == script_chat[1]["text"] == form_chat[1]["text"]
    # the same message, the same stored records (but when it was sent and the time the call
    # took)
    same = [[{k: v for k, v in m.items() if k not in ("latency_s", "at")} for m in c]
            for c in (form_chat, script_chat)]
    assert same[0] == same[1] and script_chat[1]["proposal"] and script_chat[1]["verdict"]
    kinds = [[e["kind"] for e in r["events"] if e["page"] == "phase2"] for r in records]
    assert kinds[0] == kinds[1] and kinds[0].count("ask") == kinds[0].count("reply") == 1
    page = client.get(f"/s/{tok}/phase2")
    assert "Use this plan as mine" in page.text and "2 of 3 left" in page.text


def test_a_refusal_is_an_error_event_and_stores_nothing(tmp_path, proven):  # noqa: F811
    arm = {"name": "assistant", "assistant": {**ASSISTANT["assistant"], "turns": 1}}
    store, client = _open(tmp_path, proven, arm=arm)
    page = _phase2(client, "once")
    assert events(ask(client, page, "Help?").text)[-1][0] == "done"
    page = client.get(str(page.url))
    r = ask(client, page, "More?")
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/event-stream")
    (name, data), = events(r.text)
    # the form post's words, and no page to show: nothing was stored
    assert name == "error" and data["url"] is None and "used all 1 messages" in data["message"]
    assert len(chat_of(store)) == 2
    # the same form sent again: refused again, still nothing stored
    again = ask(client, page, "More?")
    assert again.status_code == 422 and len(chat_of(store)) == 2


def test_the_pieces_stream_and_a_provider_failing_mid_reply_is_stored_and_said(
        tmp_path, proven, monkeypatch):  # noqa: F811
    pieces = ["I would ", "start by ", "unstacking c."]
    with FakeOpenAI([streamed("".join(pieces), pieces, prompt_tokens=900, completion_tokens=12),
                     streamed("Then stack it all.", ["Then ", "stack it all."], break_after=1)
                     ]) as srv:
        model = {"name": "served", "model": "openai/served", "api_base": srv.api_base,
                 "api_key_env": "none", "input_price": 1.0, "output_price": 2.0,
                 "max_retries": 0}
        arm = {"name": "assistant", "assistant": {**ASSISTANT["assistant"], "model": "served"}}
        store, client = _open(tmp_path, proven, arm=arm, model=model)
        page = _phase2(client, "served")
        got = events(ask(client, page, "How do I start?").text)
        assert got == [*[("text", p) for p in pieces], ("done", {"url": got[-1][1]["url"]})]
        reply = chat_of(store)[1]
        assert reply["text"] == "".join(pieces) and reply["error"] is None
        assert (reply["input_tokens"], reply["output_tokens"]) == (900, 12)
        assert reply["cost_usd"] == (900 * 1.0 + 12 * 2.0) / 1e6
        page = client.get(str(page.url))
        got = events(ask(client, page, "And then?").text)
        # half a reply was shown, then the server hung up: no retry, the failure stored
        assert got[0] == ("text", "Then ") and got[-1][0] == "error"
        assert got[-1][1]["message"] == UNAVAILABLE and got[-1][1]["url"].endswith("/phase2#chat")
        failed = chat_of(store)[3]
        assert failed["text"] is None and "not retried" in failed["error"]
        assert len(srv.requests) == 2 and srv.requests[0]["stream"] is True
        assert UNAVAILABLE in client.get(str(page.url)).text
