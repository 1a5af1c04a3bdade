"""The participant's whole path in a real headless Chromium (Playwright): both arms by
clicking, the same path with script off, resuming a draft and a session, markup typed as
text, and full-page screenshots of every page for a human reviewer (when
PLANAUDIT_STUDY_SCREENSHOTS names a folder). The records are then read back through the
researchers' download. Every server is a real `planaudit study serve` process."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import yaml
from playwright.sync_api import expect, sync_playwright

from tests.study_server import PLANAUDIT, RIGHT_P02, Server, entry, postgres_url, study_config

CHROMIUM = shutil.which("chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ADMIN = "PLANAUDIT_STUDY_ADMIN_TOKEN"
TOKEN = "browser-test-token"
SHOTS = os.environ.get("PLANAUDIT_STUDY_SCREENSHOTS")
WAIT = 60_000  # ms: Playwright's own waiting, generous on a shared machine
# what test_both_arms_by_clicking builds: four adds, an undo, one up and one down
BUILT = ["(pick-up b)", "(unstack c a)", "(put-down c)"]
PHASE2_OPS = ["add", "add", "add", "undo", "add", "up", "down", "submit"]
DONE = "https://platform.example/done?cc=TESTCODE"

# CI installs chromium (.ci/run): there a missing browser is a failure, not a skip.
pytestmark = pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"),
                                reason="chromium not installed")
expect.set_options(timeout=WAIT)


@pytest.fixture(scope="module")
def browser():
    assert CHROMIUM, "chromium is not installed (CI installs it in .ci/run)"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def serve(tmp: Path, db: str | None = None, **over) -> Iterator[Server]:
    srv = Server(study_config(tmp, **over), db=db, env={ADMIN: TOKEN})
    yield srv
    srv.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, tmp_path_factory) -> Iterator[Server]:
    db = postgres_url(f"study_browser_{os.getpid()}") if request.param == "postgresql" else None
    yield from serve(tmp_path_factory.mktemp(f"browser-{request.param}"), db)


@pytest.fixture(scope="module")
def step_server(tmp_path_factory) -> Iterator[Server]:
    """One arm with every aid (step feedback, the state shown, a suggestion) on p02 alone
    (RIGHT_P02 solves it); texts up to 100 characters."""
    arm = {"name": "stepwise", "feedback": "step", "show_state": True,
           "suggestion": {"plans": {"blocksworld/p02": RIGHT_P02}}}
    yield from serve(tmp_path_factory.mktemp("browser-step"), arms=[arm], limits={"text_chars": 100},
                     instances=["blocksworld/p02"])


@contextmanager
def tab(browser, js: bool = True):
    """A fresh context (no cookies, no cache) and its page: a new browser window."""
    ctx = browser.new_context(java_script_enabled=js, viewport={"width": 1000, "height": 800})
    ctx.set_default_timeout(WAIT)
    try:
        yield ctx.new_page()
    finally:
        ctx.close()


def shot(page, name: str, on: bool = True) -> None:
    if SHOTS and on:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def heading(page, text: str) -> None:
    expect(page.locator("h1")).to_have_text(text)


def click(page, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()


def intro(page, url: str, pid: str, shots: bool = False) -> bool:
    """From the entry link to phase 1 by clicking; True when the suggestion shows."""
    page.goto(entry(url, pid))
    heading(page, "Before you start")
    expect(page.locator(".progress")).to_contain_text("Step 1 of ")
    shot(page, "01-consent", shots)
    page.get_by_label("I agree to take part").check()
    click(page, "Continue")
    heading(page, "How this study works")
    shot(page, "02-instructions", shots)
    click(page, "I have read this: show me the example")
    heading(page, "A worked example")
    expect(page.locator("ol.plan li").first).to_be_visible()
    shot(page, "03-example", shots)
    click(page, "Go to my task")
    heading(page, "Your plan, in your own words")
    return page.locator("#suggestion").is_visible()


def phase1(page, text: str) -> None:
    page.locator("#text").fill(text)
    click(page, "Save and go on")
    heading(page, "Build your plan from the actions")


def plan_is(page, steps: list[str]) -> None:
    expect(page.locator("#plan > li > code")).to_have_text(steps)


def add(page, action: str) -> None:
    """Pick `action` ("(unstack c a)") as a person does: its line, then its objects. After
    a post from this page the browser is back at the picker (the form's #picker), and the
    line must already be in view: no scrolling between picks."""
    name, *args = action.strip("()").split()
    line = page.locator(f'form.pick[data-action="{name}"]')
    if page.url.endswith("#picker"):
        expect(line).to_be_in_viewport(ratio=1)
    for k, obj in enumerate(args, 1):
        line.locator(f'select[name="arg{k}"]').select_option(obj)
    line.get_by_role("button").click()


def build(page) -> None:
    """Phase 2 as BUILT: add, undo, reorder (up and down), submit."""
    expect(page.locator("#plan-empty")).to_have_text("No step yet.")
    for action in ["(unstack c a)", "(put-down c)", "(pick-up a)"]:
        add(page, action)
    plan_is(page, ["(unstack c a)", "(put-down c)", "(pick-up a)"])
    click(page, "Undo the last step")
    plan_is(page, ["(unstack c a)", "(put-down c)"])
    add(page, "(pick-up b)")
    plan_is(page, ["(unstack c a)", "(put-down c)", "(pick-up b)"])
    click(page, "up step 3")
    plan_is(page, ["(unstack c a)", "(pick-up b)", "(put-down c)"])
    click(page, "down step 1")
    plan_is(page, BUILT)
    click(page, "Submit my plan")


def finish(page, suggested: bool, shots: bool = False) -> None:
    """The suggestion question (if the arm has one), NASA-TLX, and the completion page."""
    if suggested:
        heading(page, "About the suggested plan")
        shot(page, "08-suggestion", shots)
        page.get_by_label("No, it is not correct").check()
        click(page, "Save and go on")
    heading(page, "How demanding was the task?")
    expect(page.locator("fieldset[id^=scale-]")).to_have_count(6)
    for k, v in zip(("mental", "physical", "temporal", "performance", "effort", "frustration"),
                    (70, 5, 40, 25, 60, 35), strict=True):
        page.locator(f"#scale-{k} input[value='{v}']").check()
    page.locator("input[name=pair_mental_effort][value=mental]").check()
    shot(page, "09-tlx", shots)
    click(page, "Finish")
    heading(page, "Thank you: you have finished")
    expect(page.locator("#code")).to_have_text("TESTCODE")
    expect(page.locator("#return")).to_have_attribute("href", DONE)
    shot(page, "10-done", shots)


def records(url: str) -> list[dict]:
    r = httpx.get(f"{url}/admin/records.jsonl", params={"token": TOKEN}, timeout=60)
    assert r.status_code == 200, r.text
    return [json.loads(line) for line in r.text.splitlines()]


def record(url: str, marker: str) -> dict:
    """The one participant whose phase-1 text holds `marker` (records carry no platform id)."""
    got = [r for r in records(url)
           if marker in (r["answers"].get("phase1") or r["answers"].get("phase1:draft") or {})
           .get("text", "")]
    assert len(got) == 1, [r["answers"] for r in records(url)]
    return got[0]


def text_of(r: dict) -> str:
    # a form posts a textarea's line breaks as CRLF (HTML's form encoding)
    return r["answers"]["phase1"]["text"].replace("\r\n", "\n")


def check_built(r: dict, since: datetime) -> None:
    """The phase-2 plan stored as built, and its events in order with server times."""
    assert r["answers"]["phase2"] == {"plan": BUILT, "submitted": True}
    evs = [e for e in r["events"] if e["page"] == "phase2" and e["kind"] != "view"]
    assert [e["kind"] for e in evs] == PHASE2_OPS
    # each with the page's paradata where its script ran (tested on its own below)
    assert [{k: v for k, v in e["data"].items() if k != "paradata"} for e in evs[3:7]] == [
        {"removed": "(pick-up a)"}, {"action": "(pick-up b)"}, {"from": 2, "to": 1},
        {"from": 0, "to": 1}]
    assert evs[-1]["data"]["plan"] == BUILT
    times = [datetime.fromisoformat(e["at"]) for e in r["events"]]
    assert all(t.tzinfo is not None for t in times)
    assert times == sorted(times) and since <= times[0] and times[-1] <= datetime.now(UTC)
    assert r["step"] == "done" and r["finished_at"] is not None


def test_both_arms_by_clicking(browser, server):
    since = datetime.now(UTC)
    arms = {}
    for pid in ("armsA", "armsB"):
        with tab(browser) as page:
            suggested = intro(page, server.url, pid)
            phase1(page, f"Plan of {pid}:\n1. lift c off a\n2. put c down\n3. build a on b on c")
            expect(page.locator("details .brief").first).to_contain_text(f"Plan of {pid}:")
            build(page)
            finish(page, suggested)
        arms[suggested] = pid
    assert set(arms) == {True, False}, "balanced assignment gives the two people different arms"
    for suggested, pid in arms.items():
        r = record(server.url, f"Plan of {pid}:")
        assert r["arm"] == ("suggested" if suggested else "unassisted")
        assert text_of(r) == f"Plan of {pid}:\n1. lift c off a\n2. put c down\n3. build a on b on c"
        check_built(r, since)
        assert r["answers"]["tlx"]["ratings"]["mental"] == 70
        assert r["answers"]["tlx"]["pairs"] == {"mental/effort": "mental"}
        assert ("suggestion" in r["answers"]) == suggested
        if suggested:
            assert r["answers"]["suggestion"] == {"correct": False}


def test_the_path_needs_no_script(browser, server):
    since = datetime.now(UTC)
    with tab(browser, js=False) as page:
        suggested = intro(page, server.url, "nojs")
        phase1(page, "Plan of nojs: unstack c, put it down, then stack the rest")
        build(page)
        finish(page, suggested)
    r = record(server.url, "Plan of nojs:")
    assert text_of(r) == "Plan of nojs: unstack c, put it down, then stack the rest"
    assert "phase1:draft" not in r["answers"], "no script ran: no draft was autosaved"
    check_built(r, since)


def test_a_draft_and_a_session_resume(browser, server):
    typed = "Plan of resume: first lift c,\nthen"
    with tab(browser) as page:
        suggested = intro(page, server.url, "resume")
        page.locator("#text").press_sequentially(typed)
        expect(page.locator("#saved")).to_have_text("draft saved")
        page.reload()
        heading(page, "Your plan, in your own words")
        expect(page.locator("#text")).to_have_value(typed)
    with tab(browser) as page:  # another window: no cookie, no cache, only the link
        page.goto(entry(server.url, "resume"))
        heading(page, "This study is open in another browser")  # its answers not shown
        assert "Plan of resume" not in page.content()
        click(page, "Continue here")
        heading(page, "Your plan, in your own words")
        expect(page.locator("#text")).to_have_value(typed)
        assert page.locator("#suggestion").is_visible() == suggested
        page.locator("#text").press("Control+End")  # typing goes on at the end of the text
        page.locator("#text").press_sequentially(" stack b on c and a on b")
        click(page, "Save and go on")
        heading(page, "Build your plan from the actions")
        expect(page.locator("details .brief").first).to_have_text(typed + " stack b on c and a on b")
        build(page)
        finish(page, suggested)
    with tab(browser) as page:
        page.goto(entry(server.url, "resume"))
        heading(page, "You have already taken part")
        expect(page.locator("#code")).to_have_text("TESTCODE")
        expect(page.locator("#return")).to_have_attribute("href", DONE)
    r = record(server.url, "Plan of resume:")
    assert text_of(r) == typed + " stack b on c and a on b"
    assert r["answers"]["phase1:draft"]["text"] == typed


MARKUP = "</textarea><script>window.__pwned=1</script><b>bold</b>"


def test_markup_in_free_text_shows_as_text(browser, server):
    with tab(browser) as page:
        intro(page, server.url, "markup")
        page.locator("#text").press_sequentially(MARKUP)
        expect(page.locator("#saved")).to_have_text("draft saved")
        page.reload()  # the draft comes back inside the textarea, not after it
        expect(page.locator("#text")).to_have_value(MARKUP)
        assert page.evaluate("typeof window.__pwned") == "undefined"
        click(page, "Save and go on")
        heading(page, "Build your plan from the actions")
        shown = page.locator("details .brief").first
        expect(shown).to_have_text(MARKUP)
        expect(shown.locator("b, script")).to_have_count(0)
        assert "<b>bold</b>" in page.locator("body").inner_text()
        assert page.evaluate("typeof window.__pwned") == "undefined"
    assert record(server.url, "<b>bold</b>")["answers"]["phase1"]["text"] == MARKUP


def test_every_page_renders(browser, step_server):
    """Each page of the path once, with its screenshot when PLANAUDIT_STUDY_SCREENSHOTS is
    set; the arm gives step feedback in words, the state, and a suggestion."""
    url = step_server.url
    with tab(browser) as page:
        assert intro(page, url, "shots", shots=True)
        click(page, "Save and go on")  # nothing written: the page says so, nothing stored
        expect(page.locator("p.error")).to_have_text(
            "Please write your plan in your own words before going on.")
        shot(page, "04-phase1-empty")
        page.locator("#text").fill("1. Take c off a and put it down.\n2. Put b on c.\n3. Put a on b.")
        shot(page, "05-phase1")
        phase1(page, page.locator("#text").input_value())
        add(page, "(unstack c a)")
        add(page, "(put-down c)")
        plan_is(page, ["(unstack c a)", "(put-down c)"])
        expect(page.locator("#feedback")).to_have_text("Every step so far can be done.")
        expect(page.locator("#state > li").first).to_be_visible()
        shot(page, "06-phase2")
        add(page, "(stack a c)")  # a is on the table, not held
        feedback = page.locator("#feedback")
        expect(feedback).to_have_class("error")
        # the unmet precondition named in the domain's words ("the arm holds block a")
        expect(feedback).to_have_text(re.compile(r"^Step 3, \(stack a c\), cannot be done\b.*holds? block a"))
        assert "(" not in feedback.inner_text().split("cannot be done", 1)[1], "words, not PDDL"
        expect(page.locator("#state")).to_contain_text("cannot be done")
        shot(page, "07-phase2-feedback")
        click(page, "Undo the last step")
        for action in ["(pick-up b)", "(stack b c)", "(pick-up a)", "(stack a b)"]:
            add(page, action)
        plan_is(page, RIGHT_P02)
        expect(page.locator("#feedback")).to_have_text(
            "Every step so far can be done. The goal holds after the last step.")
        click(page, "Submit my plan")
        finish(page, True, shots=True)
        page.goto(entry(url, "shots"))
        heading(page, "You have already taken part")
        expect(page.locator("#code")).to_have_text("TESTCODE")
        shot(page, "11-already-finished")
        response = page.goto(f"{url}/?STUDY_ID=s1")
        assert response is not None and response.status == 400
        heading(page, "This link is incomplete")
        expect(page.locator("p").first).to_contain_text("PROLIFIC_PID")
        shot(page, "12-error")
    assert record(url, "Take c off a")["answers"]["phase2"]["plan"] == RIGHT_P02


def test_a_text_the_textarea_allows_is_taken(browser, step_server):
    with tab(browser) as page:
        intro(page, step_server.url, "limit")
        page.locator("#text").press_sequentially("At the limit\n" + "ab\n" * 40)
        typed = page.locator("#text").input_value()
        assert len(typed) == 100, "the textarea's maxlength stops typing at the study's limit"
        with page.expect_navigation():
            click(page, "Save and go on")
        assert page.locator("h1").inner_text() == "Build your plan from the actions", \
            page.locator("p.error").all_inner_texts()
    assert record(step_server.url, "At the limit\n")["answers"]["phase1"]["text"] == typed


def test_the_completion_page_counts_no_step_past_the_last(browser, step_server):
    with tab(browser) as page:
        intro(page, step_server.url, "count")
        phase1(page, "Counting steps: lift c, then build the tower")
        for action in RIGHT_P02:
            add(page, action)
        click(page, "Submit my plan")
        finish(page, True)
        expect(page.locator("#code")).to_have_text("TESTCODE")
        assert page.locator("p.progress").count() == 0  # the completion page is no step


@pytest.fixture(scope="module")
def long_server(tmp_path_factory) -> Iterator[Server]:
    """One unassisted arm on p06 (seven blocks, 14 steps at best) and p09 (unsolvable: a
    cyclic goal), stratified so the first person gets p06 and the second p09."""
    tmp = tmp_path_factory.mktemp("browser-long")
    yield from serve(tmp, arms=[{"name": "unassisted", "feedback": "none"}],
                     instances=["blocksworld/p06", "blocksworld/p09"], assignment="stratified")


def test_fourteen_picks_without_scrolling_and_cannot_be_done_is_detected(browser, long_server,
                                                                        tmp_path):
    """The default picker on seven blocks: the proven 14-step plan built by picking each
    action's line and objects, every line in view when the page comes back (no scrolling
    between picks); then "this task cannot be done" on the unsolvable instance, judged
    `detected` in the export, as a model's UNSOLVABLE is."""
    from planaudit.study.materials import resolve
    from planaudit.study.settings import load_study

    url, cfg = long_server.url, long_server.config
    materials = resolve(load_study(cfg))
    best = materials.instances["blocksworld/p06"].plan
    assert len(best) == 14
    with tab(browser) as page:
        intro(page, url, "long-1")
        phase1(page, "Long plan: fourteen steps")
        for action in best:
            add(page, action)  # each in view on arrival: no scroll between picks
        plan_is(page, best)
        assert page.locator("#action").count() == 0, "the default is no list of every action"
        shot(page, "13-phase2-fourteen-picks")
        click(page, "Submit my plan")
        finish(page, False)
    with tab(browser) as page:
        intro(page, url, "long-2")
        phase1(page, "Cannot be done: a on b and b on a")
        click(page, "Submit: this task cannot be done")  # the box not ticked: asked again
        heading(page, "Build your plan from the actions")
        page.get_by_label("I am sure this task cannot be done").check()
        shot(page, "14-phase2-cannot-be-done")
        click(page, "Submit: this task cannot be done")
        finish(page, False)
    out = tmp_path / "export"
    r = subprocess.run([PLANAUDIT, "study", "export", "--config", str(cfg), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import polars as pl

    rows = {row["task"]: row for row in pl.read_parquet(out / "rows.parquet").to_dicts()}
    assert rows["p06"]["outcome"] == "success" and rows["p06"]["plan_length"] == 14
    assert rows["p06"]["optimal"] is True and rows["p06"]["picker"] == "objects"
    assert (rows["p09"]["outcome"], rows["p09"]["detected"], rows["p09"]["solvable"]) == \
        ("detected", True, False)
    assert rows["p09"]["submitted_valid"] is True


def test_paradata_with_script_and_none_without(browser, step_server):
    """With script, the page counts a real paste (keyboard, from the clipboard), the time
    to the first keystroke, a focus loss and the page hidden, and sends them with its
    form; without script nothing is recorded and the study runs the same."""
    url = step_server.url
    clip = "1. Take c off a. 2. Put b on c. 3. Put a on b."
    ctx = browser.new_context(viewport={"width": 1000, "height": 800})
    ctx.set_default_timeout(WAIT)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    try:
        page = ctx.new_page()
        intro(page, url, "para-1")
        box = page.locator("#text")
        box.press_sequentially("Pasted plan: ")
        page.evaluate("text => navigator.clipboard.writeText(text)", clip)
        box.press("Control+V")
        expect(box).to_have_value("Pasted plan: " + clip)
        # headless Chromium never hides a page or moves the focus away (another tab brought
        # to the front leaves it visible), so the events a headed browser fires then are
        # dispatched here as it would fire them: the window's blur, the page hidden, shown
        page.evaluate("""() => {
            window.dispatchEvent(new Event("blur"));
            Object.defineProperty(document, "visibilityState", {value: "hidden", configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
            Object.defineProperty(document, "visibilityState", {value: "visible", configurable: true});
            document.dispatchEvent(new Event("visibilitychange"));
        }""")
        phase1(page, box.input_value())
    finally:
        ctx.close()
    r = record(url, "Pasted plan:")
    sent = next(e["data"]["paradata"] for e in r["events"]
                if e["page"] == "phase1" and e["kind"] == "submit")
    assert (sent["paste"], sent["pasted_chars"]) == (1, len(clip))
    assert (sent["blur"], sent["hidden"]) == (1, 1), sent
    assert sent["first_key_ms"] is not None and 0 < sent["first_key_ms"] < sent["open_ms"]
    with tab(browser, js=False) as page:
        intro(page, url, "para-2")
        phase1(page, "No script: nothing recorded")
    r = record(url, "No script: nothing recorded")
    assert not [e for e in r["events"] if "paradata" in (e["data"] or {})]


# the assistant's reply in pieces a second apart, through the tests' own OpenAI-compatible
# server (in this process), streamed by the study server to the page (static/chat.js)
PIECES = ["Try this plan:\n```\n(unstack c a)\n(put-down c)\n", "(pick-up b)\n(stack b c)\n",
          "(pick-up a)\n(stack a b)\n```\n", "It puts a on b on c."]


def test_the_reply_streams_into_the_page_without_it_navigating(browser, tmp_path):
    from tests.fake_openai import FakeOpenAI, streamed

    arm = {"name": "assistant", "assistant": {"model": "served", "turns": 3, "tokens": 20000,
                                              "reply_tokens": 600}}
    with FakeOpenAI([streamed("".join(PIECES), PIECES, gap=1.0, prompt_tokens=700,
                              completion_tokens=60)]) as model:
        cfg = study_config(tmp_path, arms=[arm], instances=["blocksworld/p02"])
        path = Path(yaml.safe_load(cfg.read_text())["experiment"])
        exp = yaml.safe_load(path.read_text())
        exp["models"].append({"name": "served", "model": "openai/served",
                              "api_base": model.api_base, "api_key_env": "none",
                              "input_price": 1.0, "output_price": 2.0, "max_retries": 0})
        path.write_text(yaml.safe_dump(exp))
        srv = Server(cfg, env={ADMIN: TOKEN})
        try:
            with tab(browser) as page:
                intro(page, srv.url, "chatter")
                phase1(page, "Plan of chatter: ask the assistant")
                posts: list[str] = []
                page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
                page.evaluate("window.sameDocument = true")
                page.locator("#message").fill("Which plan would you use?")
                with page.expect_response(lambda r: r.url.endswith("/phase2/ask")) as sent:
                    click(page, "Send")
                assert sent.value.headers["content-type"].startswith("text/event-stream")
                said = page.locator("#streaming .said")
                expect(said).to_contain_text("(put-down c)")  # the first piece
                partial = said.text_content()
                assert "It puts a on b on c." not in partial  # shown before the reply ended
                expect(page.locator("#ask button[type=submit]")).to_be_disabled()
                expect(page.locator("#messages")).to_have_attribute("aria-busy", "true")
                expect(page.locator("#messages li.you").last).to_have_text(
                    "YouWhich plan would you use?")
                assert page.evaluate("window.sameDocument") is True  # no navigation yet
                shot(page, "chat-streaming")
                # at the end the server's page: the proposal judged, with its button
                expect(page.get_by_role(
                    "button", name="Use the assistant's plan of message 2")).to_be_visible()
                expect(page.locator("#streaming")).to_have_count(0)
                expect(page.locator('#messages[aria-busy="true"]')).to_have_count(0)
                assert page.evaluate("window.sameDocument") is None  # the page was loaded anew
                expect(page.locator("#messages li.assistant .said")).to_contain_text(
                    "It puts a on b on c.")
                shot(page, "chat-answered")
                # the one post from phase 2 went to the stream route, not the form's action
                assert [u.split("/s/")[1].split("/", 1)[1] for u in posts] == ["phase2/ask"]
            (r,) = records(srv.url)
            reply = r["answers"]["phase2"]["chat"][1]
            assert reply["text"] == "".join(PIECES) and len(partial) < len(reply["text"])
            assert reply["verdict"]["valid"] is True and reply["output_tokens"] == 60
        finally:
            srv.stop()
        assert len(model.requests) == 1 and model.requests[0]["stream"] is True
