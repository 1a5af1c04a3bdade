"""The study server under a crowd: 200 participants at once, through the whole path.

A study is opened to many people at the same minute (a platform's launch), so the
server must answer every page quickly while it stores every step before it answers.
This starts ONE real `planaudit study serve` process on this machine (the small
two-arm Blocksworld study of tests/study_server.py) and runs N simulated participants
against it over loopback HTTP, all started together (asyncio, one httpx.AsyncClient
each, no think time by default: the worst case). Each one enters from the platform
link, then GETs and POSTs every page with realistic content: consent, instructions,
the example, a phase-1 plan in words (with two draft saves, as the page's script
sends while typing), phase 2 built by hand (4-8 actions added, one undo, one move up
or down, submit), the suggestion question when their arm shows it, NASA-TLX (with
the pairwise part when it is asked), the completion page. Redirects are followed by
hand, so every request is timed alone.

It prints the total requests, the wall time, requests per second, p50/p99/max
latency per page (GET and POST apart; phase 2's posts per operation), the CPU each
side used, on PostgreSQL the sessions the server opened and its transactions per
request, the arms' counts, and the lost steps: the records are downloaded afterwards
(/admin/records.jsonl) and every acknowledged post (a 303 received) missing from the
participant's events is counted, as is a stored step or answer that differs from the
one the participant was sent on with, and any participant who did not finish.
Goal, per database: p99 < 200 ms over all requests, arms within one, 0 lost steps.

The entry burst is reported apart (issue 48): every participant's first request, the
platform link (`enter GET`: the enrolment, an arm assigned under the study's lock, and
the redirect), is sent in the same instant, so its p99 is the launch's worst wait; beside
it, the link to the first page shown (that request plus the consent page it redirects to,
summed per participant), and after the crowd the same burst of clients against `/healthz`,
which does nothing: its p99 is the clients' and the HTTP server's own share on this machine.
Each engine's entry p99 and its ratio to the 200 ms goal end the output. `--entry-only`
stops every participant at the consent page (a quick look at the burst alone), and
`--repeat N` runs each engine N times (a fresh server and database each) and prints the
range, as a shared machine's figures vary from run to run.

The client and the server share this machine's cores (the client's CPU time, the
server's, and the machine's busy share are printed): with no think time every
latency is also queueing behind the other participants (Little's law: mean latency
is about N / throughput), so the p99 goal is a throughput goal here. `--think S`
pauses a participant after each page (exponential, mean S seconds), as people do:
most of the queueing is then the launch burst (everyone entering at once).

    .venv/bin/python benchmarks/study_load.py [--db sqlite|postgresql|both]
                                              [--participants 200] [--think SECONDS]
                                              [--entry-only] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.study_server import POSTGRES, Server, entry, form_key, study_config  # noqa: E402

import record  # noqa: E402
from planaudit.study.app import ADMIN_ENV  # noqa: E402
from planaudit.study.settings import load_study  # noqa: E402
from planaudit.study.store import Store, keyed_hash  # noqa: E402

GOAL_P99_MS = 200.0
ENTRY = "enter GET"  # every participant's first request: the enrolment
POST_KINDS = {"submit", "add", "undo", "up", "down", "remove", "feedback"}
PATH = ("enter", "consent", "instructions", "example", "phase1", "phase2", "suggestion", "tlx", "done")
FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
OPTION = re.compile(r'<option value="([^"]+)">')
SLOT = re.compile(r'<select name="arg\d+"[^>]*>(.*?)</select>', re.S)  # a picker line's object
RADIO = re.compile(r'<input type="radio" name="(pair_[a-z]+_[a-z]+)" value="([a-z]+)"')
SCALE = re.compile(r'<input type="radio" name="([a-z]+)" value="(\d+)" required')
WORDS = ("first", "take", "the", "block", "off", "put", "it", "down", "on", "table", "then", "pick",
         "up", "stack", "onto", "so", "that", "tower", "ends", "with", "top", "clear", "hand")


class Unexpected(Exception):
    """A response the path does not allow (the participant stops there)."""


@dataclass
class Participant:
    """One simulated participant: what they were told was stored, and their timings."""

    n: int
    platform_id: str
    rng: random.Random
    times: list[tuple[str, float]] = field(default_factory=list)  # (label, seconds)
    acked: Counter = field(default_factory=Counter)  # (page, kind) answered with a 303
    step: str = "consent"  # where the server's last redirect sent them
    answers: dict = field(default_factory=dict)  # what they sent, as the records should hold
    finished: bool = False
    error: str | None = None


async def request(client: httpx.AsyncClient, who: Participant, method: str, url: str, label: str,
                  want: int, data: dict | None = None) -> httpx.Response:
    t0 = time.perf_counter()
    r = await (client.get(url) if method == "GET" else client.post(url, data=data))
    who.times.append((label, time.perf_counter() - t0))
    if r.status_code != want:
        raise Unexpected(f"{method} {label}: {r.status_code}, wanted {want}: {r.text[:200]!r}")
    return r


def forms(html: str) -> list[dict[str, str]]:
    """Every form's hidden fields (a browser's view of what each button would send)."""
    return [dict(HIDDEN.findall(body)) for _, body in FORM.findall(html)]


def phase2_form(html: str, op: str, index: int | None = None) -> dict[str, str]:
    for f in forms(html):
        if f.get("op") == op and (index is None or f.get("index") == str(index)):
            return f
    raise Unexpected(f"phase2: no {op} form{'' if index is None else f' for step {index}'}")


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


async def participant(client: httpx.AsyncClient, who: Participant, go: asyncio.Event,
                      think: float, entry_only: bool = False) -> None:
    await go.wait()
    rng = who.rng

    async def pause() -> None:
        if think > 0:
            await asyncio.sleep(rng.expovariate(1 / think))

    async def post(page: str, kind: str, data: dict, label: str) -> str:
        """POST one form; its 303 is an acknowledged step. Returns where it sends."""
        r = await request(client, who, "POST", f"/s/{tok}/{page}", label, 303, data)
        who.acked[(page, kind)] += 1
        who.step = r.headers["location"].rsplit("/", 1)[1]
        return r.headers["location"]

    try:
        r = await request(client, who, "GET", entry("", who.platform_id), "enter GET", 303)
        location = r.headers["location"]
        tok = location.split("/")[2]
        for _ in range(100):  # a path is ~20 pages; more means the server loops us
            page = location.rsplit("/", 1)[1]
            html = (await request(client, who, "GET", location, f"{page} GET", 200)).text
            if entry_only:  # the burst alone: in, and shown the first page
                who.finished = True
                return
            await pause()
            if page == "done":
                if "TESTCODE" not in html:
                    raise Unexpected("done: no completion code on the page")
                who.finished = True
                return
            key = form_key(html)
            if page == "consent":
                location = await post(page, "submit", {"key": key, "agree": "yes"}, "consent POST")
            elif page in ("instructions", "example"):
                location = await post(page, "submit", {"key": key}, f"{page} POST")
            elif page == "phase1":
                lines = [f"{i + 1}. {words(rng, rng.randint(6, 16))}" for i in range(rng.randint(4, 9))]
                text = "\r\n".join(lines)  # a browser posts a textarea's line breaks as CRLF
                for cut in (len(lines) // 3, 2 * len(lines) // 3):  # the script's drafts
                    r = await request(client, who, "POST", f"/s/{tok}/phase1/draft", "phase1 draft POST",
                                      200, {"text": "\r\n".join(lines[:cut + 1])})
                    if r.json() != {"saved": True}:
                        raise Unexpected(f"phase1 draft: {r.text[:200]}")
                location = await post(page, "submit", {"key": key, "text": text}, "phase1 POST")
                who.answers["phase1"] = {"text": text.replace("\r\n", "\n")}
            elif page == "phase2":
                location = await phase2(client, who, tok, html, post, pause)
            elif page == "suggestion":
                said = rng.choice(("yes", "no"))
                location = await post(page, "submit", {"key": key, "correct": said}, "suggestion POST")
                who.answers["suggestion"] = {"correct": said == "yes"}
            elif page == "tlx":
                marks: dict[str, list[str]] = defaultdict(list)
                for name, v in SCALE.findall(html):
                    marks[name].append(v)
                ratings = {k: rng.choice(vs) for k, vs in marks.items()}
                pairs: dict[str, list[str]] = defaultdict(list)
                for name, v in RADIO.findall(html):
                    pairs[name].append(v)
                picks = {k: rng.choice(vs) for k, vs in pairs.items()}
                location = await post(page, "submit", {"key": key, **ratings, **picks}, "tlx POST")
                who.answers["tlx"] = {k: int(v) for k, v in ratings.items()}
            else:
                raise Unexpected(f"a page the path does not have: {page}")
        raise Unexpected("100 pages without reaching the end")
    except (Unexpected, httpx.HTTPError) as e:
        who.error = f"{type(e).__name__}: {e}"


def pick(html: str, rng: random.Random) -> tuple[dict[str, str], str]:
    """An action added as a participant adds one, and the form that sends it: on the picker
    (the default), a line and an object for each of its places, with that line's form; on
    the paper's list (`picker: list`), one of the list's actions."""
    lines = [(dict(HIDDEN.findall(body)), [OPTION.findall(s) for s in SLOT.findall(body)])
             for attrs, body in FORM.findall(html) if 'class="pick"' in attrs]
    if not lines:
        actions = OPTION.findall(html)
        if not actions:
            raise Unexpected("phase2: no actions to pick")
        action = rng.choice(actions)
        return {**phase2_form(html, "add"), "action": action}, action
    fields, slots = rng.choice(lines)
    args = [rng.choice(options) for options in slots]
    return ({**fields, **{f"arg{k}": a for k, a in enumerate(args, 1)}},
            f"({' '.join([fields['name'], *args])})")


async def phase2(client: httpx.AsyncClient, who: Participant, tok: str, html: str, post, pause) -> str:
    """Build the plan by hand: 4-8 adds, one undo, one move, submit (every post's
    redirect GET timed as phase2 GET). Returns where the submit sends."""
    rng = who.rng
    adds = rng.randint(4, 8)
    undo_after = rng.randint(1, adds)
    move_after = rng.randint(2, adds)
    plan: list[str] = []
    moved = False

    async def send(op: str, fields: dict, index: int | None = None) -> str:
        nonlocal html
        form = {} if op == "add" else phase2_form(html, op, index)  # an add brings its own
        location = await post("phase2", op, {**form, **fields}, f"phase2 POST {op}")
        if location.rsplit("/", 1)[1] != "phase2":
            return location
        if op == "submit":  # a feedback arm's verdict, not the submission: stored as feedback
            who.acked[("phase2", "submit")] -= 1
            who.acked[("phase2", "feedback")] += 1
        html = (await request(client, who, "GET", location, "phase2 GET", 200)).text
        await pause()
        return location

    async def move() -> None:
        nonlocal moved
        op = rng.choice(("up", "down"))
        i = rng.randint(1, len(plan) - 1) if op == "up" else rng.randint(0, len(plan) - 2)
        j = i - 1 if op == "up" else i + 1
        await send(op, {"do": f"{op}-{i}"}, i)
        plan[i], plan[j] = plan[j], plan[i]
        moved = True

    for k in range(1, adds + 1):
        fields, action = pick(html, rng)
        await send("add", fields)
        plan.append(action)
        if k == undo_after:
            await send("undo", {})
            plan.pop()
        if not moved and k >= move_after and len(plan) >= 2:
            await move()
    if not moved:
        await move()
    location = await send("submit", {})
    if location.rsplit("/", 1)[1] == "phase2":  # a feedback arm showed a verdict: submit as it is
        location = await send("submit", {"confirm": "yes"})
    who.answers["phase2"] = {"plan": plan, "submitted": True}
    return location


def cpu_ticks(pid: int | str = "self") -> float:
    """A process's user + system CPU seconds (/proc)."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine (/proc/stat)."""
    v = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def pct(xs: list[float], q: float) -> float:
    """Nearest-rank percentile of xs (seconds) in ms."""
    s = sorted(xs)
    return 1000 * s[max(0, math.ceil(q * len(s)) - 1)]


async def crowd(url: str, n: int, think: float, seed: int,
                entry_only: bool = False) -> tuple[list[Participant], float, float]:
    """The participants run at once; returns them, the wall time and the client's CPU
    seconds from the start (their clients' making, a TLS context each, left out)."""
    people = [Participant(i, f"load{seed}x{i:04d}", random.Random(seed * 100003 + i)) for i in range(n)]
    go = asyncio.Event()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)  # one browser tab
    clients = [httpx.AsyncClient(base_url=url, timeout=120, limits=limits, follow_redirects=False)
               for _ in people]  # made before the clock: each builds its own TLS context
    tasks = [asyncio.create_task(participant(c, p, go, think, entry_only))
             for c, p in zip(clients, people, strict=True)]
    await asyncio.sleep(0)
    cpu, t0 = cpu_ticks(), time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    wall, cpu = time.perf_counter() - t0, cpu_ticks() - cpu
    await asyncio.gather(*(c.aclose() for c in clients))
    return people, wall, cpu


async def floor(url: str, n: int) -> list[float]:
    """The same burst against a page that does nothing (`/healthz`: no database, no
    template): n clients made as the participants' are, one request each, all at once.
    What it takes is the clients' and the HTTP server's own share of the entry burst on
    this machine, the part no change to the entry path can remove."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=url, timeout=120, limits=limits) for _ in range(n)]
    go, times = asyncio.Event(), []

    async def one(client: httpx.AsyncClient) -> None:
        await go.wait()
        t0 = time.perf_counter()
        (await client.get("/healthz")).raise_for_status()
        times.append(time.perf_counter() - t0)

    tasks = [asyncio.create_task(one(c)) for c in clients]
    await asyncio.sleep(0)
    go.set()
    await asyncio.gather(*tasks)
    await asyncio.gather(*(c.aclose() for c in clients))
    return times


def lost(people: list[Participant], records: dict[str, dict], pseudonym,
         entry_only: bool = False) -> dict[str, int]:
    """Acknowledged posts missing from the records, stored steps and answers that differ
    from what the participant was told, participants not finished (client or records; with
    `entry_only`, the client's word alone: no one was meant to finish the path), and stored
    posts no one was told of (a response lost on the way: not a loss)."""
    out = Counter()
    for p in people:
        rec = records.get(pseudonym(p.platform_id))
        if rec is None:
            out["posts"] += sum(p.acked.values())
            out["steps"] += 1
            out["unfinished"] += 1
            continue
        stored = Counter((e["page"], e["kind"]) for e in rec["events"] if e["kind"] in POST_KINDS)
        out["posts"] += sum((p.acked - stored).values())
        out["unacknowledged"] += sum((stored - p.acked).values())
        out["steps"] += rec["step"] != p.step
        for page, want in p.answers.items():
            got = rec["answers"].get(page)
            if page == "tlx":
                got = got and got.get("ratings")
            out["answers"] += got != want
        out["unfinished"] += not (p.finished and (entry_only or rec["finished_at"]))
    return out


def entry_times(people: list[Participant]) -> tuple[list[float], list[float]]:
    """The entry burst: each participant's enrolment request (`enter GET`), and the link to
    the first page shown (that request plus the GET of the page it redirected to)."""
    enter, first = [], []
    for p in people:
        if p.times and p.times[0][0] == ENTRY:
            enter.append(p.times[0][1])
            if len(p.times) > 1 and p.times[1][0].endswith(" GET"):
                first.append(p.times[0][1] + p.times[1][1])
    return enter, first


def run(db: str, n: int, think: float, seed: int, entry_only: bool = False) -> tuple[dict, dict]:
    """One server, one crowd; prints the figures and returns the goal's verdicts and the
    figures a record keeps."""
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="study-load-") as tmp:
        config = study_config(Path(tmp))
        url = None
        if db == "postgresql":
            out = subprocess.run([str(POSTGRES), "createdb", "study_load"], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"no PostgreSQL database ({POSTGRES} up first?): {out.stderr.strip()}")
            url = out.stdout.strip().splitlines()[-1]
        t = time.perf_counter()
        server = Server(config, db=url, env={ADMIN_ENV: token})
        try:
            print(f"\n== {db}: server pid {server.proc.pid} up in {time.perf_counter() - t:.1f} s, "
                  f"{n} participants, think time {think:g} s, load average before "
                  f"{os.getloadavg()[0]:.1f}")
            cpu_server, machine = cpu_ticks(server.proc.pid), machine_ticks()
            people, wall, cpu_client = asyncio.run(crowd(server.url, n, think, seed, entry_only))
            cpu_server = cpu_ticks(server.proc.pid) - cpu_server
            busy, total = (a - b for a, b in zip(machine_ticks(), machine, strict=True))
            bare = asyncio.run(floor(server.url, n))  # after the crowd: it measures untouched
            t = time.perf_counter()
            r = httpx.get(f"{server.url}/admin/records.jsonl", params={"token": token}, timeout=300)
            r.raise_for_status()
            fetched = time.perf_counter() - t
        finally:
            server.stop()
        study = load_study(str(config))
        store = Store(study.database_url(url))
        secret = store.open_study(study.name)
        pg = None
        if not store.sqlite:  # the server's connections and transactions (fresh database)
            time.sleep(1)  # PostgreSQL publishes a closed session's counts within a second
            with store.engine.connect() as conn:
                pg = conn.exec_driver_sql(
                    "select sessions, xact_commit + xact_rollback from pg_stat_database "
                    "where datname = current_database()").one()
        store.close()
    rows = [json.loads(line) for line in r.text.splitlines() if line.strip()]
    records = {row["participant"]: row for row in rows}

    by: dict[str, list[float]] = defaultdict(list)
    for p in people:
        for label, s in p.times:
            by[label].append(s)
    every = [s for p in people for _, s in p.times]
    print(f"requests {len(every)} in {wall:.1f} s wall: {len(every) / wall:.0f} requests/s "
          f"({sum(sum(p.acked.values()) for p in people)} acknowledged posts)")
    print(f"CPU over the run: client {cpu_client:.1f} s, server process {cpu_server:.1f} s, machine "
          f"{100 * busy / total:.0f}% busy of {os.cpu_count()} cores (database processes included)")
    if pg is not None:
        print(f"PostgreSQL: {pg[0]} sessions opened, {pg[1]} transactions "
              f"({pg[1] / len(every):.1f} per request, pings and reads included)")
    print(f"{'page':24} {'n':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    order = {name: i for i, name in enumerate(PATH)}
    for label in sorted(by, key=lambda x: (order.get(x.split()[0], 99), x)):
        xs = by[label]
        print(f"{label:24} {len(xs):6d} {pct(xs, .5):8.1f} {pct(xs, .99):8.1f} {1000 * max(xs):8.1f}")
    p99 = pct(every, .99)
    print(f"{'all':24} {len(every):6d} {pct(every, .5):8.1f} {p99:8.1f} {1000 * max(every):8.1f}")

    enter, first = entry_times(people)
    entry_p99 = pct(enter, .99) if enter else math.nan
    first_p99 = pct(first, .99) if first else math.nan
    print(f"entry burst: {len(enter)} enrolments sent at once, p50 {pct(enter, .5):.0f} ms, p99 "
          f"{entry_p99:.0f} ms ({entry_p99 / GOAL_P99_MS:.2f}x the {GOAL_P99_MS:.0f} ms goal), max "
          f"{1000 * max(enter):.0f} ms; to the first page shown (+ its GET): p99 {first_p99:.0f} ms "
          f"({first_p99 / GOAL_P99_MS:.2f}x); the same burst to /healthz (the clients' and HTTP's "
          f"own share): p99 {pct(bare, .99):.0f} ms")

    arms = Counter(row["arm"] for row in rows)
    cells = Counter((row["arm"], row["instance"]) for row in rows)
    print("arms: " + ", ".join(f"{a} {k}" for a, k in sorted(arms.items())) + "; per instance: "
          + ", ".join(f"{a}/{i.split('/')[-1]} {k}" for (a, i), k in sorted(cells.items())))
    gone = lost(people, records, lambda pid: keyed_hash(secret, pid), entry_only)
    errors = [p.error for p in people if p.error]
    print(f"records: {len(rows)} participants, {sum(len(x['events']) for x in rows)} events, fetched in "
          f"{fetched:.2f} s; lost: {gone['posts']} acknowledged posts, {gone['steps']} final steps, "
          f"{gone['answers']} answers; {gone['unfinished']} participants not finished "
          f"({gone['unacknowledged']} stored posts never acknowledged)")
    if errors:
        print(f"participants stopped by an unexpected response: {len(errors)}, e.g. {errors[0]}")
    steps = gone["posts"] + gone["steps"] + gone["answers"] + gone["unfinished"]
    spread = max(arms.values()) - min(arms.values()) if len(arms) > 1 else len(rows)
    verdict = {"entry p99": entry_p99 < GOAL_P99_MS, "p99": p99 < GOAL_P99_MS, "arms": spread <= 1,
               "lost": steps == 0}
    over = [label for label in by if pct(by[label], .99) >= GOAL_P99_MS]
    print(f"goal: p99 < 200 ms, arms within one, 0 lost steps -> {db}: "
          f"p99 {p99:.0f} ms {'met' if verdict['p99'] else 'MISSED'}"
          f"{f' ({len(over)} of {len(by)} pages over)' if over else ''}; "
          f"arms {'/'.join(str(arms[a]) for a in sorted(arms))} {'met' if verdict['arms'] else 'MISSED'}; "
          f"{steps} lost {'met' if verdict['lost'] else 'MISSED'}")
    figures = {"requests": len(every), "wall_s": wall, "requests_per_s": len(every) / wall,
               "p50_ms": pct(every, .5), "p99_ms": p99, "max_ms": 1000 * max(every),
               "entry_p50_ms": pct(enter, .5), "entry_p99_ms": entry_p99,
               "entry_goal_ratio": entry_p99 / GOAL_P99_MS, "first_page_p99_ms": first_p99,
               "floor_p99_ms": pct(bare, .99),
               "cpu_client_s": cpu_client, "cpu_server_s": cpu_server,
               "server_ms_per_request": 1000 * cpu_server / len(every),
               "arms": "/".join(str(arms[a]) for a in sorted(arms)), "lost": steps,
               "lost_posts": gone["posts"] + gone["steps"] + gone["answers"],
               "unfinished": gone["unfinished"], "stopped": len(errors),
               "pages": [(label, len(by[label]), pct(by[label], .5), pct(by[label], .99),
                          1000 * max(by[label]))
                         for label in sorted(by, key=lambda x: (order.get(x.split()[0], 99), x))]}
    return verdict, figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--participants", type=int, default=200)
    ap.add_argument("--think", type=float, default=0.0,
                    help="mean pause (s, exponential) after each page is shown; 0: none, the worst case")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--entry-only", action="store_true",
                    help="each participant enters and is shown the consent page, nothing more")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per engine, each on a fresh server and database (the range is printed)")
    args = ap.parse_args()
    print(f"machine: os.cpu_count() = {os.cpu_count()}, shared: the simulated participants (one "
          "asyncio process) and the server (one process, its database's too) compete for these cores")
    dbs = ("sqlite", "postgresql") if args.db == "both" else (args.db,)
    every: dict[str, list[tuple[dict, dict]]] = {db: [] for db in dbs}
    for k in range(args.repeat):
        for db in dbs:
            if args.repeat > 1:
                print(f"\n-- run {k + 1} of {args.repeat}")
            every[db].append(run(db, args.participants, args.think, args.seed + k, args.entry_only))
    print()
    for db, done in every.items():
        for k, (v, _) in enumerate(done):
            print(f"goal: entry p99 and p99 < 200 ms, arms within one, 0 lost steps -> {db}"
                  f"{f' (run {k + 1})' if args.repeat > 1 else ''}: "
                  + ", ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in v.items()))
    print(f"\n{'engine':12} {'entry p99 ms':>16} {'x 200 ms goal':>14} {'first page p99':>16} "
          f"{'all p99 ms':>14} {'/healthz p99':>14}")
    for db, done in every.items():
        def span(key: str, done=done) -> str:
            xs = sorted(f[key] for _, f in done)
            return f"{xs[0]:.0f}" if len(xs) == 1 else f"{xs[0]:.0f}-{xs[-1]:.0f}"
        ratios = sorted(f["entry_goal_ratio"] for _, f in done)
        ratio = f"{ratios[0]:.2f}" + ("" if len(ratios) == 1 else f"-{ratios[-1]:.2f}")
        print(f"{db:12} {span('entry_p99_ms'):>16} {ratio:>14} {span('first_page_p99_ms'):>16} "
              f"{span('p99_ms'):>14} {span('floor_p99_ms'):>14}")
    units = {"requests": ("requests", "requests, all pages"), "wall_s": ("s", "wall time"),
             "requests_per_s": ("requests/s", "throughput"), "p50_ms": ("ms", "latency, median"),
             "p99_ms": ("ms", "latency, 99th percentile (goal: under 200 ms)"),
             "max_ms": ("ms", "latency, max"),
             "entry_p50_ms": ("ms", "entry burst (every participant's first request at once), median"),
             "entry_p99_ms": ("ms", "entry burst, 99th percentile (goal: under 200 ms)"),
             "entry_goal_ratio": ("x", "entry burst's 99th percentile over the 200 ms goal"),
             "first_page_p99_ms": ("ms", "the link to the first page shown (entry + its GET), "
                                         "99th percentile"),
             "floor_p99_ms": ("ms", "the same burst to /healthz (no database, no page), 99th "
                                    "percentile: the clients' and HTTP's own share"),
             "cpu_client_s": ("CPU s", "the participants' process"),
             "cpu_server_s": ("CPU s", "the server process"),
             "server_ms_per_request": ("CPU ms", "the server's CPU a request"),
             "arms": ("participants", "per arm"),
             "lost": ("", "lost, as the goal counts it: the next two summed (goal: 0)"),
             "lost_posts": ("", "acknowledged posts, final steps and answers missing or changed"),
             "unfinished": ("participants", "not finished"),
             "stopped": ("participants", "stopped by an unexpected response (e.g. a dropped "
                                         "connection)")}
    figures, tables = {}, {}
    for db, done in every.items():
        _, f = done[-1]  # the last run's figures; with --repeat, the ranges beside them
        for key, (unit, label) in units.items():
            figures[f"{db}_{key}"] = record.figure(f[key], unit, f"{db}: {label}")
        if len(done) > 1:
            for key in ("entry_p99_ms", "p99_ms", "floor_p99_ms"):
                xs = [g[key] for _, g in done]
                figures[f"{db}_{key}_range"] = record.figure(
                    f"{min(xs):.0f}-{max(xs):.0f}", "ms", f"{db}: {units[key][1]}, over {len(done)} runs")
        tables[db] = record.table(["page", "n", "p50 ms", "p99 ms", "max ms"], f["pages"],
                                  f"{db}: latency per page")
    variant = None if args.db == "both" else args.db
    if args.think:
        variant = f"{variant or 'both'}-think"
    if args.entry_only:
        variant = f"{variant or 'both'}-entry"
    record.write("study_load", figures, variant=variant, tables=tables,
                 notes=[f"{args.participants} participants at once, think time {args.think:g} s"
                        f"{', entry only' if args.entry_only else ''}"
                        f"{f', {args.repeat} runs per engine' if args.repeat > 1 else ''}; the "
                        "participants and the server share this machine's cores"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
