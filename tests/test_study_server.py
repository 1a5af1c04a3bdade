"""The study server over HTTP against real `planaudit study serve` processes, on SQLite and
on PostgreSQL: config errors named by file:line before anything listens, bad input refused
with a clear page and nothing stored, idempotent posts, one participation per platform id,
balanced assignment under concurrent entries (two servers on one PostgreSQL database), a
cohort surviving kill -9, no address or platform id outside the ledger, the researchers'
view and `planaudit study status`, and migrations that match the tables' metadata.
"Stored nothing" is checked on the records download (before == after)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import secrets
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import cache
from pathlib import Path

import httpx
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import MetaData, create_engine, make_url, select, text

from planaudit.study.store import Store, keyed_hash, metadata
from planaudit.study.tlx import KEYS
from tests.study_server import (
    PLANAUDIT,
    RIGHT_P02,
    WRONG_P03,
    Server,
    entry,
    form_key,
    free_port,
    postgres_url,
    study_config,
)

ADMIN_ENV, ADMIN = "PLANAUDIT_STUDY_ADMIN_TOKEN", "admin-token-for-tests"
ENV = {ADMIN_ENV: ADMIN}
ENGINES = ["sqlite", "postgresql"]
ORDER = ["consent", "instructions", "example", "phase1", "phase2", "suggestion", "tlx", "done"]
FORM = {"consent": {"agree": "yes"}, "phase1": {"text": "Take c off a, then build the tower."},
        "phase2": {"op": "submit"}, "suggestion": {"correct": "no"}, "tlx": dict.fromkeys(KEYS, "50")}
OPTION = re.compile(r'<option value="([^"]+)">')
PICK = re.compile(r'<form[^>]*class="pick" data-action="([^"]+)">(.*?)</form>', re.S)
SLOT = re.compile(r'<select name="arg\d+"[^>]*>(.*?)</select>', re.S)


def action_of(data: dict) -> str | None:
    """The grounded action a phase-2 post names: `action`, or the picker's name and objects."""
    if "name" not in data:
        return data.get("action")
    args = [data[k] for k in sorted(k for k in data if k.startswith("arg"))]
    return f"({' '.join([data['name'], *args])})"


def actions_on(html: str) -> list[str]:
    """The grounded actions a phase-2 page offers: each picker line with every choice of
    its objects (or, with the `list` picker, the list's options)."""
    lines = PICK.findall(html)
    if not lines:
        return OPTION.findall(html)
    return [f"({name} {' '.join(args)})" if args else f"({name})" for name, body in lines
            for args in itertools.product(*(OPTION.findall(s) for s in SLOT.findall(body)))]
CREATED: list[str] = []  # PostgreSQL databases


def database(engine: str, home: Path, name: str) -> str:
    if engine == "sqlite":
        return f"sqlite:///{home.parent / name}.sqlite"
    CREATED.append(postgres_url(f"pa_study_{os.getpid()}_{name}"))
    return CREATED[-1]


@pytest.fixture(scope="module", autouse=True)
def _drop_databases():
    """The PostgreSQL databases made here are dropped when the module's servers are gone."""
    yield
    if CREATED:
        engine = create_engine(make_url(CREATED[0]).set(database="postgres"), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            for url in CREATED:
                conn.execute(text(f"drop database if exists {make_url(url).database} with (force)"))
        engine.dispose()


def records(server: Server) -> list[dict]:
    r = httpx.get(f"{server.url}/admin/records.jsonl", headers={"Authorization": f"Bearer {ADMIN}"},
                  timeout=120)
    assert r.status_code == 200, r.text
    return [json.loads(line) for line in r.text.splitlines()]


@cache
def secret(db: str) -> str:
    store = Store(db)
    try:
        return store.open_study("teststudy")
    finally:
        store.close()


def record_of(server: Server, pid: str, recs: list[dict] | None = None) -> dict | None:
    """The record of platform id `pid` (found by its pseudonym, under the study's secret)."""
    pseudonym = keyed_hash(secret(server.db), pid)
    return next((r for r in (recs or records(server)) if r["participant"] == pseudonym), None)


def posts(rec: dict) -> list[tuple]:
    """A record's stored posts as (page, kind, action), as `Person.acked` holds them."""
    return [(e["page"], e["kind"], (e["data"] or {}).get("action")) for e in rec["events"]
            if e["kind"] not in ("view", "enrol")]


def replay(stored: list[tuple]) -> list[str]:
    plan: list[str] = []
    for page, kind, action in stored:
        if page == "phase2" and kind == "add":
            plan.append(action)
        elif page == "phase2" and kind == "undo":
            plan.pop()
    return plan


def subsequence(short: list, long: list) -> bool:
    it = iter(long)
    return all(x in it for x in short)


class Person:
    """One participant over HTTP (redirects followed by hand). `acked` holds every post the
    server acknowledged with a 303, as (page, kind, action); `plan` their phase 2 plan."""

    def __init__(self, url: str, pid: str):
        self.url, self.pid = url, pid
        self.http = httpx.Client(base_url=url, timeout=120)
        self.tok = self.step = self.html = None
        self.acked: list[tuple] = []
        self.plan: list[str] = []
        self.attention: dict[str, str] = {}  # the answers to a study's attention checks
        self.paradata: str | None = None  # what the pages' script would send with each form

    def enter(self) -> httpx.Response:
        r = self.http.get(entry(self.url, self.pid))
        if r.status_code == 303:
            self.tok, self.step = r.headers["location"].split("/")[2:]
        return r

    def show(self) -> str:
        r = self.http.get(f"/s/{self.tok}/{self.step}", follow_redirects=True)
        assert r.status_code == 200, r.text
        self.step, self.html = r.url.path.rsplit("/", 1)[1], r.text
        return r.text

    def post(self, data: dict, page: str | None = None, key: str | None = None) -> httpx.Response:
        page = page or self.step
        key = key or form_key(self.html or self.show())
        r = self.http.post(f"/s/{self.tok}/{page}", data={"key": key, **data})
        self.html = r.text if r.status_code == 422 else None
        if r.status_code == 303:
            self.acked.append((page, data.get("op", "submit"), action_of(data)))
            self.step = r.headers["location"].rsplit("/", 1)[1]
            if data.get("op") == "add":
                self.plan.append(action_of(data))
            elif data.get("op") == "undo":
                self.plan.pop()
        return r

    def add(self, rng=random) -> httpx.Response:
        """A random action, picked as the page offers it (an action's line and its objects)."""
        html = self.html or self.show()
        action = rng.choice(actions_on(html))
        if not PICK.search(html):
            return self.post({"op": "add", "action": action})
        name, *args = action.strip("()").split()
        return self.post({"op": "add", "name": name,
                          **{f"arg{k}": a for k, a in enumerate(args, 1)}})

    def forward(self) -> None:
        """One page on (a first step added to an empty plan)."""
        self.show()
        if self.step == "phase2" and not self.plan:
            assert self.add().status_code == 303
        extra = {"paradata": self.paradata} if self.paradata else {}
        r = self.post({**FORM.get(self.step, {}), **self.attention, **extra})
        assert r.status_code == 303, r.text

    def walk(self, to: str = "done") -> Person:
        if self.tok is None:
            assert self.enter().status_code == 303
        while self.step != to:
            self.forward()
        return self


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """The study config, its tasks and suggestions prepared once for every server here."""
    cfg = study_config(tmp_path_factory.mktemp("study"))
    out = subprocess.run([PLANAUDIT, "study", "serve", "--config", str(cfg), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return cfg


@pytest.fixture(scope="module", params=ENGINES)
def server(request, home):
    s = Server(home, database(request.param, home, "shared"), env=ENV)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def other(home):
    """Another study (another name, its own database), the researchers' view off."""
    (home.parent / "other").mkdir()
    cfg = study_config(home.parent / "other", study="otherstudy", results=str(home.parent / "study"))
    s = Server(cfg, database("sqlite", home, "other"), env={ADMIN_ENV: ""})
    yield s
    s.stop()


# -- 1. config errors -------------------------------------------------------------------

def _suggest(plans: dict) -> dict:
    return {"arms": [{"name": "s", "suggestion": {"plans": plans}}]}


BAD = [  # (sections laid over the good config, the line's text and occurrence, the field named)
    pytest.param(dict(colour="red"), "colour: red", 0, "colour", id="unknown-key"),
    pytest.param(dict(arms=[{"name": "unassisted", "feedback": "loud"}]), "feedback: loud", 0,
                 "arms[0].feedback", id="feedback"),
    pytest.param(dict(arms=[{"name": "same"}, {"name": "same"}]), "- name: same", 1, "arms[1].name",
                 id="duplicate-arm"),
    pytest.param(dict(example={"task": "blocksworld/p02"}), "task: blocksworld/p02", 0, "example.task",
                 id="example-is-instance"),
    pytest.param(_suggest({"blocksworld/p02": RIGHT_P02}), "plans:", 0,
                 "arms[0].suggestion.plans: no plan for blocksworld/p03", id="plan-missing"),
    pytest.param(_suggest({"blocksworld/p02": ["(stack x y)"], "blocksworld/p03": WRONG_P03}),
                 "plans:", 0, "arms[0].suggestion on blocksworld/p02: Step 1: no object named 'x'",
                 id="unknown-object"),
    pytest.param(dict(instances=["nodomain/p01"]), "- nodomain/p01", 0, "instances[0]",
                 id="unknown-domain"),
    pytest.param(dict(instances=["blocksworld/p02", "blocksworld/p99"]), "- blocksworld/p99", 0,
                 "instances[1]", id="unknown-task"),
    pytest.param(dict(attention={"checks": [{"id": "a", "page": "tlx", "question": 'Pick "B".',
                                             "options": ["A", "B"], "answer": "C"}]}),
                 "answer: C", 0, "attention.checks[0].answer: 'C' is not one of its options",
                 id="attention-answer"),
]


@pytest.mark.parametrize("over,line,nth,field", BAD)
def test_config_error_named_before_listening(home, tmp_path, over, line, nth, field):
    cfg = study_config(tmp_path, results=str(home.parent / "study"), **over)
    lines = cfg.read_text().splitlines()
    where = [i + 1 for i, s in enumerate(lines) if s.strip() == line][nth]
    port = free_port()
    serve = [PLANAUDIT, "study", "serve", "--config", str(cfg)]
    with ThreadPoolExecutor(2) as ex:  # --check, and a plain serve: it must stop, not listen
        runs = list(ex.map(lambda extra: subprocess.run(serve + extra, capture_output=True, text=True,
                                                        timeout=120),
                           [["--check"], ["--port", str(port)]]))
    for out in runs:
        assert out.returncode == 2, out.stderr
        assert f"study.yaml:{where}: " in out.stderr and field in out.stderr, out.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/healthz")


# -- 2. bad input ------------------------------------------------------------------------

def test_bad_input_stores_nothing(server, other):
    p = Person(server.url, "bad-input-1")
    p.enter()
    p.show()
    before = records(server)

    def refused(r: httpx.Response, status: int, words: str) -> None:
        assert r.status_code == status and words in r.text, r.text
        assert records(server) == before

    url = server.url
    refused(httpx.get(f"{url}/?STUDY_ID=s1&SESSION_ID=x"), 400, "PROLIFIC_PID")
    for bad in ("has space", "a" * 129, "<script>", "../x"):
        refused(httpx.get(f"{url}/", params={"PROLIFIC_PID": bad, "STUDY_ID": "s1"}), 400,
                "not one a platform gives")
    sig = p.tok.rsplit(".", 1)[1]
    forged = p.tok[: -len(sig)] + ("0" if sig[0] != "0" else "1") + sig[1:]
    key = form_key(p.html)
    refused(p.http.get(f"/s/{forged}/consent"), 403, "not yours")
    refused(p.http.post(f"/s/{forged}/consent", data={"key": key, "agree": "yes"}), 403, "not yours")
    stranger = Person(other.url, "bad-input-1")
    stranger.enter()
    refused(p.http.get(f"/s/{stranger.tok}/consent"), 403, "not yours")
    refused(p.http.post(f"/s/{stranger.tok}/consent", data={"key": key, "agree": "yes"}), 403,
            "not yours")
    refused(p.post({"op": "add", "action": "(pick-up b)"}, page="phase2", key=key), 409, "not reached")
    r = p.http.post(f"/s/{p.tok}/consent", data={"agree": "yes"})
    refused(r, 400, "form key")
    assert f'id="back" href="/s/{p.tok}/consent"' in r.text
    refused(p.http.post(f"/s/{p.tok}/consent", data={"agree": "yes", "key": "x" * 32}), 400, "form key")
    assert p.step == "consent"

    p.walk("phase1").show()
    before = records(server)
    refused(p.post({"text": "x" * 5001}), 422, "5001 characters")
    r = p.post({"text": "x" * 300_000})
    refused(r, 413, "Too much text")  # and a way back to the page, as every error page has
    assert f'id="back" href="/s/{p.tok}/phase1"' in r.text
    markup = "<script>alert('x')</script> then <b>stack</b> & done"
    assert p.post({"text": markup}).status_code == 303
    assert record_of(server, p.pid)["answers"]["phase1"]["text"] == markup
    page = p.show()
    assert "&lt;script&gt;alert(" in page and "<script>alert(" not in page and "<b>stack" not in page

    assert p.add().status_code == 303
    p.show()
    before = records(server)
    for action in ("(fly a)", "(stack a a a)", "stack a b"):
        refused(p.post({"op": "add", "action": action}), 422, "is not one of this task")
    refused(p.post({"op": "add", "action": ""}), 422, "Choose an action first")
    for picked, says in (({"name": "fly", "arg1": "a"}, "Choose one of the actions shown"),
                         ({"name": "stack", "arg1": "a"}, "Choose every object of &#39;stack&#39;"),
                         ({"name": "stack", "arg1": "a", "arg2": "zz"}, "do not fit")):
        refused(p.post({"op": "add", **picked}), 422, says)
    assert record_of(server, p.pid)["answers"]["phase2"]["plan"] == p.plan


def test_hostile_requests_get_a_page_never_a_500(server):
    """Each request a hostile or confused client may send gets its page and status, and
    stores nothing: a token of non-ASCII characters, any URL parameter that is not a
    platform's, a stale second tab's edit; every page has the security headers and no
    inline script; a platform id's second browser is told where the study is open."""
    url = server.url
    p = Person(url, "hostile-1").walk("phase1")
    p.show()
    before = records(server)

    def refused(r: httpx.Response, status: int, words: str) -> None:
        assert r.status_code == status and words in r.text, (r.status_code, r.text[-500:])
        assert records(server) == before

    refused(p.http.get(f"/s/{p.tok}é/phase1"), 403, "not yours")
    refused(p.http.get("/s/ü.ö/phase1"), 403, "not yours")
    refused(p.http.post(f"/s/ü{p.tok}/phase1", data={"key": "0" * 32, "text": "x"}), 403,
            "not yours")
    refused(httpx.get(f"{url}/admin", params={"token": "ädmin"}), 403, "Not allowed")
    for name, what in (("STUDY_ID", "study id"), ("SESSION_ID", "session id")):
        for bad in ("s" * 129, "<x>", "ü", "a b"):
            params = {"PROLIFIC_PID": "hostile-2", "STUDY_ID": "s1", "SESSION_ID": "x", name: bad}
            refused(httpx.get(f"{url}/", params=params), 400, f"The {what} in the link")

    page = p.http.get(f"/s/{p.tok}/phase1")
    headers = page.headers
    policy = dict(part.strip().split(" ", 1) for part in headers["content-security-policy"].split(";"))
    assert policy["frame-ancestors"] == "'none'" and policy["script-src"] == "'self'"
    assert (headers["cache-control"], headers["referrer-policy"], headers["x-frame-options"]) == (
        "no-store", "no-referrer", "DENY")
    assert not re.search(r"<script(?![^>]*\bsrc=)", page.text)  # the draft script is a file
    script = p.http.get("/static/draft.js")
    assert script.status_code == 200 and "fetch(form.dataset.draft" in script.text
    assert p.http.get("/static/../app.py").status_code == 404

    # a stale tab: the plan changed in another one; its step numbers would hit other steps
    assert p.post({"text": "Take c off a, then build the tower."}).status_code == 303
    for _ in range(3):
        assert p.add().status_code == 303
    tab = p.show()  # the first tab, three steps shown
    version = re.search(r'name="version" value="([0-9a-f]+)"', tab).group(1)
    keys = re.findall(r'name="key" value="([0-9a-f]{32})"', tab)  # one per form of the page
    assert p.post({"op": "remove", "index": "0", "version": version}, key=keys[0]).status_code == 303
    before = records(server)
    refused(p.post({"op": "remove", "index": "1", "version": version}, key=keys[1]), 409,
            "out of date")
    assert record_of(server, p.pid)["answers"]["phase2"]["plan"] == p.plan[1:]
    stale = p.http.post(f"/s/{p.tok}/phase2", data={"key": "f" * 32, "op": "add",
                                                   "version": version, "action": p.plan[0]})
    assert f'href="/s/{p.tok}/phase2"' in stale.text  # a way back to the page as it is now

    # a second browser with the same platform id sees no answer of the first
    other = Person(url, "hostile-1")
    r = other.enter()
    assert r.status_code == 409 and "open in another browser" in r.text
    assert "Take c off a" not in r.text and p.tok not in r.text


def test_the_engine_keeps_parameters_out_of_its_log(server):
    from planaudit.study.store import Store

    store = Store(server.db)
    try:
        assert store.engine.hide_parameters and store.reader.hide_parameters
    finally:
        store.close()


def test_chunked_body_over_the_limit_refused(server):
    p = Person(server.url, "chunked-1").walk("instructions")
    key = form_key(p.show())
    before = records(server)
    body = (f"key={key}&junk=".encode(), *[b"x" * 10_000] * 30)
    r = p.http.post(f"/s/{p.tok}/instructions", content=iter(body),
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413 and records(server) == before


# -- 3. idempotency ----------------------------------------------------------------------

def test_same_post_twice_stores_once(server):
    p = Person(server.url, "idem-1").walk("instructions")
    key = form_key(p.show())
    assert p.post({}, key=key).status_code == 303
    r = p.post({}, page="instructions", key=key)
    assert r.status_code == 303 and r.headers["location"].endswith("/example")
    rec = record_of(server, p.pid)
    assert posts(rec).count(("instructions", "submit", None)) == 1 and rec["step"] == "example"

    p.walk("phase2")  # the same add sent twice at once
    key, action = form_key(p.show()), actions_on(p.html)[0]
    with ThreadPoolExecutor(2) as ex:
        rs = list(ex.map(lambda _: p.http.post(f"/s/{p.tok}/phase2",
                                               data={"key": key, "op": "add", "action": action}),
                         range(2)))
    assert [r.status_code for r in rs] == [303, 303]
    rec = record_of(server, p.pid)
    assert [x for x in posts(rec) if x[0] == "phase2"] == [("phase2", "add", action)]
    assert rec["answers"]["phase2"]["plan"] == [action] and rec["step"] == "phase2"

    before = records(server)  # forms of pages already done (the back button): stored nothing
    for page, data in (("phase1", {"text": "changed my mind"}), ("consent", {"agree": "yes"})):
        r = p.http.post(f"/s/{p.tok}/{page}", data={"key": secrets.token_hex(16), **data})
        assert r.status_code == 303 and r.headers["location"] == f"/s/{p.tok}/phase2"
    assert records(server) == before


def test_concurrent_plan_edits_all_kept(server):
    p = Person(server.url, "edits-1").walk("phase2")
    actions = actions_on(p.show())[:8]

    def add(go: threading.Barrier, key: str, action: str) -> int:
        go.wait()
        return p.http.post(f"/s/{p.tok}/phase2", data={"key": key, "op": "add", "action": action}).status_code

    for _ in range(6):  # 8 adds at once (two tabs, a double click on two buttons), 6 times
        go = threading.Barrier(len(actions))
        with ThreadPoolExecutor(len(actions)) as ex:
            done = ex.map(add, [go] * len(actions), [form_key(p.show()) for _ in actions], actions)
            assert set(done) == {303}
    rec = record_of(server, p.pid)
    assert len(replay(posts(rec))) == 48 and rec["answers"]["phase2"]["plan"] == replay(posts(rec))


# -- 4. one participation per platform id ------------------------------------------------------

def test_one_participation_per_platform_id(server):
    p = Person(server.url, "once-1").walk("example")
    assert p.enter().status_code == 303 and p.step == "example"  # the same browser comes back
    again = Person(server.url, "once-1")  # another browser: told, not shown the session
    r = again.enter()
    assert r.status_code == 409 and "open in another browser" in r.text and p.tok not in r.text
    r = again.http.post("/here", data={"PROLIFIC_PID": "once-1", "key": "0" * 32})
    assert r.status_code == 303 and r.headers["location"] == f"/s/{p.tok}/example"
    assert again.enter().status_code == 303  # this browser now holds it too
    p.walk("done")
    r = Person(server.url, "once-1").enter()
    assert r.status_code == 200 and "already taken part" in r.text and "TESTCODE" in r.text

    n = len(records(server))
    with ThreadPoolExecutor(30) as ex:
        rs = list(ex.map(lambda _: httpx.get(entry(server.url, "same-new-1"), timeout=120), range(30)))
    assert {r.status_code for r in rs} == {303} and len({r.headers["location"] for r in rs}) == 1
    assert len(records(server)) == n + 1


# -- 5. assignment under concurrent entries ------------------------------------------------------

RACES = ["sqlite", "postgresql", "postgresql-two-servers", "postgresql-workers"]


async def _enter_all(urls: list[str], n: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=None)) as c:
        return await asyncio.gather(*(c.get(entry(urls[i % len(urls)], f"race-{i}")) for i in range(n)))


@pytest.fixture(scope="module", params=RACES)
def race(request, home) -> list[dict]:
    """The records after 100 concurrent first entries (split between the servers)."""
    db = database(request.param.split("-")[0], home, f"race{RACES.index(request.param)}")
    n = {"two-servers": 2}.get(request.param.partition("-")[2], 1)
    servers = [Server(home, db, env=ENV, workers=2 if request.param.endswith("workers") else 1)
               for _ in range(n)]
    try:
        rs = asyncio.run(_enter_all([s.url for s in servers], 100))
        assert [r.status_code for r in rs] == [303] * 100
        yield records(servers[0])
    finally:
        for s in servers:
            s.stop()


def test_assignment_balanced_in_every_prefix(race):
    def enrolled(rec: dict) -> datetime:
        return datetime.fromisoformat(next(e["at"] for e in rec["events"] if e["kind"] == "enrol"))

    arms = [r["arm"] for r in sorted(race, key=enrolled)]
    assert len(arms) == 100
    for k in range(1, 101):
        c = Counter(arms[:k])
        assert abs(c["unassisted"] - c["suggested"]) <= 1, (k, arms[:k])


@pytest.mark.parametrize("race", ["sqlite"], indirect=True)
def test_balanced_assignment_crosses_arms_with_instances(race):
    cells = Counter((r["arm"], r["instance"]) for r in race)
    assert len(cells) == 4 and max(cells.values()) - min(cells.values()) <= 1, cells


def test_allocation_counts_equal_the_participants_after_the_race(race, request, home):
    """The counts assignment reads (`allocation_counts`, kept by each batch of entries) equal
    the participants' own after the 100 concurrent entries: one server, two servers on one
    PostgreSQL database, or two worker processes, each enrolling its own batches."""
    param = request.node.callspec.params["race"]
    name = f"race{RACES.index(param)}"  # the fixture's database, as `database` named it
    db = (f"sqlite:///{home.parent / name}.sqlite" if param == "sqlite" else
          next(u for u in CREATED if make_url(u).database == f"pa_study_{os.getpid()}_{name}"))
    store = Store(db)
    try:
        with store.read() as conn:
            kept = Counter({(a, i): n for a, i, n in conn.execute(text(
                "select arm, instance, n from allocation_counts where study = 'teststudy'"))})
            real = Counter({(a, i): n for a, i, n in conn.execute(text(
                "select arm, instance, count(*) from participants where study = 'teststudy' "
                "group by arm, instance"))})
    finally:
        store.close()
    assert kept == real == Counter((r["arm"], r["instance"]) for r in race), (kept, real)
    assert sum(kept.values()) == 100


def test_workers_need_postgresql(home, tmp_path):
    out = subprocess.run([PLANAUDIT, "study", "serve", "--config", str(home), "--workers", "2", "--db",
                          f"sqlite:///{tmp_path}/w.sqlite", "--check"], capture_output=True, text=True)
    assert out.returncode == 2 and "needs PostgreSQL" in out.stderr, out.stderr


# -- 6. kill -9 in the middle of a cohort ------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_kill_9_mid_cohort_loses_no_acknowledged_step(home, engine):
    s = Server(home, database(engine, home, "kill"), env=ENV)
    people = [Person(s.url, f"kill-{i}") for i in range(20)]
    errors: list[BaseException] = []

    def busy(i: int, p: Person) -> None:  # to phase 2, then add and undo until the server dies
        rng = random.Random(i)
        time.sleep(0.15 * i)
        try:
            p.enter()
            for _ in range(1000):
                if p.step != "phase2":
                    p.forward()
                elif len(p.plan) < 4 and (not p.plan or rng.random() < 0.6):
                    assert p.add(rng).status_code == 303
                else:
                    assert p.post({"op": "undo"}).status_code == 303
        except httpx.TransportError:
            return
        except BaseException as e:
            errors.append(e)

    try:
        threads = [threading.Thread(target=busy, args=(i, p)) for i, p in enumerate(people)]
        for t in threads:
            t.start()
        time.sleep(3)
        s.kill()
        for t in threads:
            t.join()
        assert not errors, errors
        assert any(p.step == "phase2" for p in people) and any(p.acked for p in people)
        s.start()
        recs = records(s)
        for p in people:
            known = p.step or "consent"
            # the same browser (its cookie), new connections
            p.http = httpx.Client(base_url=s.url, timeout=120, cookies=p.http.cookies)
            assert p.enter().status_code == 303
            assert ORDER.index(p.step) - ORDER.index(known) in (0, 1), (p.pid, known, p.step)
            rec = record_of(s, p.pid, recs) or {"step": "consent", "events": [], "answers": {}}
            assert p.step == rec["step"]
            stored = posts(rec)
            assert subsequence(p.acked, stored) and len(stored) <= len(p.acked) + 1, (p.acked, stored)
            p.plan = replay(stored)
            assert p.plan == rec["answers"].get("phase2", {}).get("plan", [])
        with ThreadPoolExecutor(len(people)) as ex:
            list(ex.map(lambda p: p.walk("done"), people))
        recs = records(s)
        assert len(recs) == len(people) and all(r["step"] == "done" and r["finished_at"] for r in recs)
        for p in people:
            stored = posts(record_of(s, p.pid, recs))
            assert subsequence(p.acked, stored) and len(stored) <= len(p.acked) + 1, (p.acked, stored)
    finally:
        s.stop()


# -- 7. privacy ----------------------------------------------------------------------------

def test_no_address_and_platform_ids_only_in_the_ledger(server):
    for i in range(2):
        Person(server.url, f"priv-{i}").walk("done" if i else "phase2")
    engine = create_engine(server.db)
    try:
        tables = MetaData()
        tables.reflect(engine)
        with engine.connect() as conn:
            dump = {t.name: repr(conn.execute(select(t)).all()) for t in tables.sorted_tables}
            ids = conn.execute(select(tables.tables["ledger"].c.platform_id)).scalars().all()
    finally:
        engine.dispose()
    assert {"priv-0", "priv-1"} <= set(ids)
    for name, rows in dump.items():
        assert "127.0.0.1" not in rows, name
        assert name == "ledger" or not [i for i in ids if i in rows], name
    if server.db.startswith("sqlite"):
        path = Path(server.db.split("///", 1)[1])
        for f in (path, path.with_name(path.name + "-wal")):
            assert not f.exists() or b"127.0.0.1" not in f.read_bytes()
    download = json.dumps(records(server))
    assert not [i for i in ids if i in download]


# -- 8. the researchers' view and `planaudit study status` -----------------------------------

def test_admin_view_and_status(server, other, home):
    off = httpx.get(f"{other.url}/admin?token={ADMIN}")
    assert off.status_code == 403 and ADMIN_ENV in off.text
    assert httpx.get(f"{other.url}/admin/records.jsonl").status_code == 403
    for wrong in ({"params": {"token": "wrong"}}, {"headers": {"Authorization": "Bearer wrong"}}, {}):
        r = httpx.get(f"{server.url}/admin", **wrong)
        assert r.status_code == 403 and "Not allowed" in r.text
        assert httpx.get(f"{server.url}/admin/records.jsonl", **wrong).status_code == 403
    Person(server.url, "admin-1").walk("done")
    page = httpx.get(f"{server.url}/admin", params={"token": ADMIN})
    assert page.status_code == 200
    table = {a: (int(n), int(d)) for a, n, d in
             re.findall(r"<tr><td>([a-z]+)</td><td>(\d+)</td><td>(\d+)</td>", page.text)}
    recs = records(server)
    assert table == {a: (sum(r["arm"] == a for r in recs), sum(r["arm"] == a and r["step"] == "done"
                                                              for r in recs))
                     for a in ("unassisted", "suggested")}
    status = [PLANAUDIT, "study", "status", "--config", str(home), "--db", server.db]
    out = subprocess.run(status, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    printed = {m[0]: (int(m[1]), int(m[2])) for m in
               (line.split()[:3] for line in out.stdout.splitlines()) if m[0] in table}
    assert printed == table
    out = subprocess.run([*status, "--json"], capture_output=True, text=True)
    assert {r["arm"]: (r["enrolled"], r["finished"]) for r in json.loads(out.stdout)} == table



def test_no_page_names_the_arm_and_only_researchers_learn_it(server):
    """A participant reading any page's source cannot learn their arm; the simulator asks
    /admin/whois, which answers the researchers' token alone."""
    seen: dict[str, str] = {}
    for n in range(4):  # both arms, every page of each
        p = Person(server.url, f"whois-{n}")
        assert p.enter().status_code == 303
        pages = []
        while p.step != "done":
            pages.append(p.show())
            p.forward()
        pages.append(p.show())
        who = httpx.get(f"{server.url}/admin/whois", params={"participant": p.pid},
                        headers={"Authorization": f"Bearer {ADMIN}"})
        assert who.status_code == 200, who.text
        seen[p.pid] = who.json()["arm"]
        for html in pages:
            assert "data-arm" not in html and "unassisted" not in html and '"suggested"' not in html
    assert set(seen.values()) == {"unassisted", "suggested"}
    url = f"{server.url}/admin/whois"
    assert httpx.get(url, params={"participant": "whois-0"}).status_code == 403
    assert httpx.get(url, params={"participant": "whois-0"},
                     headers={"Authorization": "Bearer wrong"}).status_code == 403
    auth = {"Authorization": f"Bearer {ADMIN}"}
    assert httpx.get(url, params={"participant": "no one/../x"}, headers=auth).status_code == 400
    assert httpx.get(url, params={"participant": "never-entered"}, headers=auth).status_code == 404

# -- 9. migrations --------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_migrations_match_metadata_and_rerun_is_a_no_op(home, engine):
    store = Store(database(engine, home, "migrate"))

    def state() -> tuple:
        with store.engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
            return diff, conn.execute(text("select version_num from alembic_version")).scalars().all()

    try:
        store.migrate()
        assert state() == ([], ["0005"])
        kept = store.open_study("teststudy")
        store.migrate()
        assert state() == ([], ["0005"]) and store.open_study("teststudy") == kept
    finally:
        store.close()
