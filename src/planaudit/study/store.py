"""The study's records in a real database (SQLAlchemy 2): SQLite in WAL mode under the
study's folder, or PostgreSQL through psycopg 3 shared by several server processes. The
tables are created and changed by Alembic's migrations (`migrations/`), never by
`create_all`, so a study's database can be upgraded in place.

What the lessons of the study frameworks ask of it: every step written before the page
advances (one transaction per post, committed before the response); assignment inside one
transaction that holds the study's lock (`BEGIN IMMEDIATE` on SQLite, an advisory lock on
PostgreSQL), so no two starts read the same counts; a post's idempotency key stored with
its event under a unique constraint, so a double submit stores once; the platform id kept
only in `ledger`, every other table holding its keyed hash.

What a launch asks of it (200 people entering in the same second, issue 48): the lock is
held as briefly as it can be. The counts assignment reads are kept in `allocation_counts`
(a few rows read by primary key, not a count of every participant), the sequence's place
is found without walking the sequence (`allocation.py`), and the entries waiting for the
lock are enrolled together, in one transaction (`Enrolments`: a group commit), so a
burst takes the lock and commits a few times, not once per person."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    inspect,
    literal,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from planaudit.study.allocation import STUDY, Assignment

metadata = MetaData()

studies = Table(
    "studies", metadata,
    Column("name", String(64), primary_key=True),
    Column("secret", String(64), nullable=False),  # keys the pseudonyms and session tokens
    Column("opened_at", DateTime(timezone=True), nullable=False),
    Column("design", Text),  # JSON: what people are assigned to and shown (migration 0002)
)

participants = Table(
    "participants", metadata,
    Column("id", String(32), primary_key=True),
    Column("study", String(64), ForeignKey("studies.name"), nullable=False),
    Column("pseudonym", String(64), nullable=False),  # keyed hash of the platform id
    Column("arm", String(64), nullable=False),
    Column("instance", String(128), nullable=False),
    Column("step", String(32), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("consent_hash", String(64)),
    Column("consent_at", DateTime(timezone=True)),
    UniqueConstraint("study", "pseudonym", name="one_participation"),
)

ledger = Table(
    "ledger", metadata,
    Column("participant_id", String(32), ForeignKey("participants.id"), primary_key=True),
    Column("study", String(64), nullable=False),
    Column("platform_id", String(128), nullable=False),
    Column("platform_study", String(128)),
    Column("platform_session", String(128)),
)

answers = Table(
    "answers", metadata,
    Column("participant_id", String(32), ForeignKey("participants.id"), primary_key=True),
    Column("page", String(32), primary_key=True),
    Column("data", Text, nullable=False),  # JSON
    Column("saved_at", DateTime(timezone=True), nullable=False),
)

events = Table(
    "events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("participant_id", String(32), ForeignKey("participants.id"), nullable=False, index=True),
    Column("page", String(32), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("data", Text),  # JSON
    Column("at", DateTime(timezone=True), nullable=False),
    Column("idem", String(64)),
    UniqueConstraint("participant_id", "idem", name="one_post"),
)

bonuses = Table(
    "bonuses", metadata,  # who has been paid a bonus, once each (migration 0003)
    Column("participant_id", String(32), ForeignKey("participants.id"), primary_key=True),
    Column("study", String(64), nullable=False),
    Column("amount", Numeric(10, 2), nullable=False),  # 0 recorded too: judged, nothing owed
    Column("currency", String(16), nullable=False),
    Column("valid", Boolean, nullable=False),  # the phase-2 plan's verdict by `formal/`
    Column("batch", String(64), nullable=False, index=True),  # one run of `study bonus`
    Column("created_at", DateTime(timezone=True), nullable=False),
)


allocation_counts = Table(
    "allocation_counts", metadata,  # people per (arm, instance), kept by enrol (migration 0004)
    Column("study", String(64), ForeignKey("studies.name"), primary_key=True),
    Column("arm", String(64), primary_key=True),
    Column("instance", String(128), primary_key=True),
    Column("n", Integer, nullable=False),
)

codings = Table(
    "codings", metadata,  # phase-1 texts coded by hand, every coding kept (migration 0005)
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("study", String(64), ForeignKey("studies.name"), nullable=False, index=True),
    Column("pseudonym", String(64), nullable=False),
    Column("coder", String(32), nullable=False),
    Column("kind", String(16), nullable=False),  # "steps" or "verdict"
    Column("value", Text, nullable=False),  # JSON: the steps (a list) or the verdict
    Column("at", DateTime(timezone=True), nullable=False),
)

# entries enrolled in one transaction at most (the lock's longest hold): a launch's 200 in
# two or three transactions (the first while the rest are still arriving)
ENROL_BATCH = 250


def now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Edit:
    """What an edit of a page's answer stores: its event and the answer it leaves."""

    kind: str
    data: dict | None
    answer: dict
    advance: bool = False

    def __iter__(self):
        return iter((self.kind, self.data, self.answer, self.advance))


class EnrolmentClosed(Exception):
    """A newcomer to a study that is closed, or `full` (its cap reached): no one enrolled."""

    def __init__(self, full: bool):
        super().__init__("full" if full else "closed")
        self.full = full


class NotReached(Exception):
    """A post for a page the participant has not reached."""


@dataclass(frozen=True)
class Participant:
    id: str
    study: str
    pseudonym: str
    arm: str
    instance: str
    step: str
    finished: bool


@dataclass(frozen=True)
class Owed:
    """A finished participant not yet in `bonuses`, with their phase-2 answer."""

    participant_id: str
    platform_id: str
    instance: str
    phase2: dict | None


@dataclass(eq=False)
class _Entry:
    """One entry waiting for its batch: what it asks, and the future of its outcome."""

    study: str
    pseudonym: str
    platform: dict
    arms: list[str]
    instances: list[str]
    assignment: Assignment
    first_step: str
    cap: int | None
    closed: bool
    future: Future = field(default_factory=Future)


class Enrolments:
    """Entries enrolled in batches (a group commit) by one thread of their own: whoever
    enters queues and is handed a future; the thread takes everything queued, enrols each
    study's share in one transaction under that study's lock, and resolves the futures
    once it has committed. Under a burst each transaction serves dozens of entries, so the
    lock is taken, the counts read and the commit made once per batch rather than once per
    person; and since the server awaits the future rather than a worker thread, an entry
    costs its request no thread of the pool, nor the pool's hand-offs, each a wait for the
    GIL while the event loop is busy with the burst. Alone, an entry is a batch of one."""

    def __init__(self, enrol: Callable[[str, list[_Entry]], None]):
        self._enrol = enrol
        self._ready = threading.Condition()
        self._queue: list[_Entry] = []
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, entry: _Entry) -> Future:
        with self._ready:
            if self._closed:
                raise RuntimeError("the store is closed: no more enrolments")
            self._queue.append(entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="enrolments", daemon=True)
                self._thread.start()
            self._ready.notify()
        return entry.future

    def close(self) -> None:
        """Enrol what is queued, then end the thread."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    return
                batch, self._queue = self._queue[:ENROL_BATCH], self._queue[ENROL_BATCH:]
            batch = [e for e in batch if e.future.set_running_or_notify_cancel()]  # not given up
            for study in dict.fromkeys(e.study for e in batch):
                mine = [e for e in batch if e.study == study]
                try:
                    self._enrol(study, mine)
                except Exception as e:  # nothing of these was committed: each is told
                    for entry in mine:
                        if not entry.future.done():
                            entry.future.set_exception(e)


def _participant(row) -> Participant:
    return Participant(row.id, row.study, row.pseudonym, row.arm, row.instance, row.step,
                       row.finished_at is not None)


def _sqlite_engine(url: str, immediate: bool) -> Engine:
    path = url.split("///", 1)[1]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    # as many pooled connections as the server's worker threads (anyio's 40): one past the
    # pool is closed when returned, and each new one runs the pragmas again
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False},
                           pool_size=40, max_overflow=10, hide_parameters=True)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi, _record) -> None:
        dbapi.isolation_level = None  # SQLAlchemy's BEGIN below, not the driver's
        cur = dbapi.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        # WAL with NORMAL loses nothing when the server process is killed (only a power
        # failure can take the last commits); FULL would sync on every commit
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        # a writer takes the write lock at BEGIN: a read-then-write (assignment, a step's
        # check then save) cannot interleave with another's
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class Store:
    """The database of one or more studies."""

    def __init__(self, url: str):
        self.url = url
        self.sqlite = url.startswith("sqlite")
        # SQLite: this process is the database's one writer (`serve` refuses more workers);
        # its writers queue on a lock here rather than on SQLite's busy timeout, which sleeps
        # and polls while the lock may already be free
        self.writing = threading.Lock() if self.sqlite else nullcontext()
        self._enrolments = Enrolments(self._enrol)
        self._counted = False  # allocation_counts seen (migration 0004); see _cells
        if self.sqlite:
            self.engine = _sqlite_engine(url, immediate=True)
            self.reader = _sqlite_engine(url, immediate=False)
        else:
            # hide_parameters: a failed statement's log line never holds a platform id
            self.engine = create_engine(url, pool_size=40, max_overflow=10, pool_pre_ping=True,
                                        hide_parameters=True)
            self.reader = self.engine

    def migrate(self) -> None:
        """Bring the schema to the newest migration (Alembic), under the database's lock:
        several servers starting at once on one PostgreSQL database migrate once."""
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
        with self.engine.begin() as conn:
            if not self.sqlite:
                conn.execute(select(func.pg_advisory_xact_lock(0x706C616E)))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    def close(self) -> None:
        self._enrolments.close()
        self.engine.dispose()
        if self.reader is not self.engine:
            self.reader.dispose()

    @contextmanager
    def write(self, study: str | None = None) -> Iterator[Connection]:
        """One transaction; with `study`, holding that study's lock until it commits."""
        with self.writing, self.engine.begin() as conn:
            if study is not None and not self.sqlite:
                conn.execute(select(func.pg_advisory_xact_lock(zlib.crc32(study.encode()))))
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.reader.connect() as conn:
            yield conn

    # -- a study ----------------------------------------------------------------------

    def open_study(self, name: str) -> str:
        """The study's secret (made when the study first opens)."""
        with self.write(name) as conn:
            row = conn.execute(select(studies.c.secret).where(studies.c.name == name)).first()
            if row is not None:
                return row.secret
            secret = secrets.token_hex(32)
            conn.execute(insert(studies).values(name=name, secret=secret, opened_at=now()))
            return secret

    def keep_design(self, name: str, design: dict) -> list[str]:
        """Record the study's design; once people have enrolled, the fields of a design
        that differs from the recorded one are returned (and nothing is changed): a study
        whose conditions changed midway mixes two studies."""
        self.open_study(name)
        with self.write(name) as conn:
            old = conn.execute(select(studies.c.design).where(studies.c.name == name)).scalar()
            enrolled = conn.execute(select(func.count()).select_from(participants)
                                    .where(participants.c.study == name)).scalar()
            if old is not None and enrolled:
                before = json.loads(old)
                changed = sorted(k for k in before.keys() | design.keys()
                                 if before.get(k) != design.get(k))
                if changed:
                    return changed
            conn.execute(update(studies).where(studies.c.name == name)
                         .values(design=json.dumps(design, sort_keys=True)))
            return []

    # -- participants -------------------------------------------------------------------

    def find(self, pid: str) -> Participant | None:
        with self.read() as conn:
            row = conn.execute(select(participants).where(participants.c.id == pid)).first()
        return None if row is None else _participant(row)

    def find_pseudonym(self, study: str, pseudonym: str) -> Participant | None:
        with self.read() as conn:
            row = conn.execute(select(participants).where(
                participants.c.study == study, participants.c.pseudonym == pseudonym)).first()
        return None if row is None else _participant(row)

    def enrol(self, study: str, pseudonym: str, platform: dict, arms: list[str],
              instances: list[str], assignment: Assignment, first_step: str,
              cap: int | None = None, closed: bool = False) -> tuple[Participant, bool]:
        """The participant of `pseudonym` (False: they had enrolled before), or a new one
        assigned inside this transaction by `assignment` (seeded permuted blocks). One
        stratum: the next place of the study's sequence gives the arm, then the arm's
        least-filled instance (overall breaking ties); stratified by instance: the
        least-filled instance, then the next place of its sequence. Other ties go in the
        config's order. A newcomer to a `closed` study, or one past the `cap`, raises
        EnrolmentClosed (someone already in goes on). Entries arriving together are
        enrolled together (`Enrolments`), each exactly as if alone, in the order they came."""
        return self.enrolling(study, pseudonym, platform, arms, instances, assignment, first_step,
                              cap, closed).result()

    def enrolling(self, study: str, pseudonym: str, platform: dict, arms: list[str],
                  instances: list[str], assignment: Assignment, first_step: str,
                  cap: int | None = None, closed: bool = False) -> Future:
        """`enrol`, queued: the future of its outcome (what the server awaits)."""
        return self._enrolments.submit(_Entry(study, pseudonym, platform, arms, instances,
                                              assignment, first_step, cap, closed))

    def _enrol(self, study: str, batch: list[_Entry]) -> None:
        """Enrol `batch` in one transaction holding the study's lock, then resolve each
        entry's future. Should the batch fail as a whole (an integrity error, say), each
        entry is tried alone, so one cannot take the others down with it."""
        try:
            outcomes = self._enrol_together(study, batch)
        except Exception:
            if len(batch) == 1:
                raise
            outcomes = []
            for entry in batch:
                try:
                    outcomes += self._enrol_together(study, [entry])
                except Exception as e:
                    outcomes.append(e)
        for entry, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                entry.future.set_exception(outcome)
            else:
                entry.future.set_result(outcome)

    def _enrol_together(self, study: str, batch: list[_Entry]) -> list:
        """One transaction for the batch; its outcomes, in its order, once committed."""
        out: list[tuple[Participant, bool] | BaseException] = []
        with self.write(study) as conn:
            known = {r.pseudonym: _participant(r) for r in conn.execute(
                select(participants).where(participants.c.study == study,
                                           participants.c.pseudonym.in_(
                                               sorted({e.pseudonym for e in batch}))))}
            counted, kept = self._cells(conn, study)
            cell = dict(counted)
            new: list[tuple[_Entry, Participant, int, datetime]] = []
            t = now() - timedelta(microseconds=1)
            for e in batch:
                if e.pseudonym in known:  # a return, or the same link twice at once
                    out.append((known[e.pseudonym], False))
                    continue
                if e.closed:
                    out.append(EnrolmentClosed(full=False))
                    continue
                by_instance = {i: 0 for i in e.instances}
                by_arm = {a: 0 for a in e.arms}
                for (arm, inst), n in cell.items():
                    by_instance[inst] = by_instance.get(inst, 0) + n
                    by_arm[arm] = by_arm.get(arm, 0) + n
                if e.cap is not None and sum(by_arm.values()) >= e.cap:
                    out.append(EnrolmentClosed(full=True))
                    continue
                instances = e.instances
                if e.assignment.strata == "instance":  # each instance's arms balanced
                    instance = min(instances, key=lambda i: (by_instance[i], instances.index(i)))
                    place = by_instance[instance]
                    _, arm = e.assignment.place(instance, e.arms, place)
                else:  # the arms balanced, and each arm's instances (never an arm tied to a task)
                    place = sum(by_arm.values())
                    _, arm = e.assignment.place(STUDY, e.arms, place)
                    instance = min(instances, key=lambda i: (cell.get((arm, i), 0), by_instance[i],
                                                             instances.index(i)))
                cell[(arm, instance)] = cell.get((arm, instance), 0) + 1
                t = max(now(), t + timedelta(microseconds=1))  # the order of entry, kept
                p = Participant(secrets.token_hex(16), study, e.pseudonym, arm, instance,
                                e.first_step, False)
                known[e.pseudonym] = p
                new.append((e, p, place, t))
                out.append((p, True))
            if new:
                conn.execute(insert(participants), [
                    {"id": p.id, "study": study, "pseudonym": p.pseudonym, "arm": p.arm,
                     "instance": p.instance, "step": p.step, "created_at": t, "updated_at": t}
                    for _, p, _, t in new])
                conn.execute(insert(ledger), [
                    {"participant_id": p.id, "study": study,
                     "platform_id": e.platform["participant"],
                     "platform_study": e.platform.get("study"),
                     "platform_session": e.platform.get("session")} for e, p, _, _ in new])
                # the place taken in the stratum's allocation sequence, kept with the enrolment
                conn.execute(insert(events), [
                    {"participant_id": p.id, "page": p.step, "kind": "enrol", "at": t, "idem": None,
                     "data": json.dumps({"arm": p.arm, "instance": p.instance, "place": place})}
                    for _, p, place, t in new])
                if kept:
                    self._count(conn, study, counted, cell)
        return out

    def _cells(self, conn: Connection, study: str) -> tuple[dict[tuple[str, str], int], bool]:
        """People per (arm, instance) of `study`, and whether they are kept in
        `allocation_counts`: read there (a primary-key range, the study's few rows), or on a
        database not yet migrated to 0004 counted from its participants as before (a store
        opened on an earlier schema, as the tests of upgrades do; `serve` always migrates
        first). Once the table is seen it is taken to stay, so only an unmigrated database
        pays for the look."""
        if not self._counted and inspect(conn).has_table("allocation_counts"):
            self._counted = True
        c = allocation_counts.c if self._counted else participants.c
        n = allocation_counts.c.n if self._counted else func.count()
        q = select(c.arm, c.instance, n).where(c.study == study)
        if not self._counted:
            q = q.group_by(c.arm, c.instance)
        return {(arm, inst): k for arm, inst, k in conn.execute(q)}, self._counted

    @staticmethod
    def _count(conn: Connection, study: str, before: dict[tuple[str, str], int],
               after: dict[tuple[str, str], int]) -> None:
        """Add this transaction's enrolments to `allocation_counts` (rows held by the study's
        lock since they were read: added to, never overwritten)."""
        grown = [{"s": study, "a": arm, "i": inst, "k": n - before.get((arm, inst), 0)}
                 for (arm, inst), n in after.items() if n != before.get((arm, inst), 0)]
        old = [g for g in grown if (g["a"], g["i"]) in before]
        fresh = [g for g in grown if (g["a"], g["i"]) not in before]
        c = allocation_counts.c
        if old:
            conn.execute(update(allocation_counts)
                         .where(c.study == bindparam("s"), c.arm == bindparam("a"),
                                c.instance == bindparam("i"))
                         .values(n=c.n + bindparam("k")), old)
        if fresh:
            conn.execute(insert(allocation_counts), [
                {"study": g["s"], "arm": g["a"], "instance": g["i"], "n": g["k"]} for g in fresh])

    def post(self, pid: str, page: str, order: list[str], idem: str, kind: str,
             data: dict | None = None, answer: dict | None = None, advance: bool = False,
             consent_hash: str | None = None,
             edit: Callable[[dict | None], Edit] | None = None,
             late: Callable[[dict | None], Edit] | None = None) -> tuple[str, bool]:
        """Store one post of `page` (its event, its answer, the next step) in one
        transaction. Returns (the participant's step now, stored?): a post whose key was
        seen, or for a page already done, stores nothing; one for a page not reached
        raises NotReached. `edit` turns the page's stored answer into the post's (a plan
        changed step by step): it runs inside the transaction, after the participant's
        lock, so two edits sent at once both count; whatever it raises stores nothing.
        `late` is the edit for a page already done (a reply that arrives after the
        participant went on: its record is kept, the step is not moved); without it such a
        post stores nothing."""
        try:
            with self.write() as conn:
                q = select(participants).where(participants.c.id == pid)
                if not self.sqlite:
                    q = q.with_for_update()
                p = conn.execute(q).first()
                seen = conn.execute(select(events.c.id).where(
                    events.c.participant_id == pid, events.c.idem == idem)).first()
                if seen is not None:
                    return p.step, False
                if page != p.step:
                    if order.index(page) > order.index(p.step):
                        raise NotReached(page)
                    if late is None:
                        return p.step, False
                    edit, advance = late, False
                if edit is not None:
                    row = conn.execute(select(answers.c.data).where(
                        answers.c.participant_id == pid, answers.c.page == page)).first()
                    kind, data, answer, advance = edit(None if row is None else json.loads(row.data))
                t = now()
                conn.execute(insert(events).values(participant_id=pid, page=page, kind=kind,
                                                   data=None if data is None else json.dumps(data),
                                                   at=t, idem=idem))
                if answer is not None:
                    self._save(conn, pid, page, answer, t)
                values: dict = {"updated_at": t}
                if advance:
                    values["step"] = order[order.index(page) + 1]
                    if values["step"] == order[-1]:
                        values["finished_at"] = t
                if consent_hash is not None:
                    values.update(consent_hash=consent_hash, consent_at=t)
                conn.execute(update(participants).where(participants.c.id == pid).values(**values))
                return values.get("step", p.step), True
        except IntegrityError:  # the same key posted twice at once: the other one stored it
            p = self.find(pid)
            return (p.step if p else page), False

    def _save(self, conn: Connection, pid: str, page: str, answer: dict, t: datetime) -> None:
        text = json.dumps(answer)
        done = conn.execute(update(answers).where(answers.c.participant_id == pid,
                                                  answers.c.page == page)
                            .values(data=text, saved_at=t)).rowcount
        if not done:
            conn.execute(insert(answers).values(participant_id=pid, page=page, data=text, saved_at=t))

    def save_draft(self, pid: str, page: str, answer: dict) -> bool:
        """A draft of the current page (typed text kept across a reload); False when the
        participant is past that page."""
        with self.write() as conn:
            step = conn.execute(select(participants.c.step).where(participants.c.id == pid)).scalar()
            if step != page:
                return False
            self._save(conn, pid, f"{page}:draft", answer, now())
            return True

    def answers(self, pid: str) -> dict[str, dict]:
        """Every answer of a participant, by page (drafts as `<page>:draft`)."""
        with self.read() as conn:
            return _answers(conn, pid)

    def view(self, pid: str, page: str) -> tuple[Participant | None, dict[str, dict]]:
        """What showing a page reads, on one connection: the participant and all their
        answers; the page's first view is stamped when it is their step (a write only
        then: a page shown again writes nothing). Two queries (the participant with whether
        the page was viewed, then the answers); on PostgreSQL the stamp is written on the
        same connection, in the same transaction (a checkout, its ping and a commit fewer:
        each round trip is a wait for the GIL under load), on SQLite afterwards by the one
        writer, as reads never take the write lock there."""
        viewed = select(events.c.id).where(events.c.participant_id == pid, events.c.page == page,
                                           events.c.kind == "view").exists()
        stamp = insert(events).values(participant_id=pid, page=page, kind="view")
        with self.read() if self.sqlite else self.write() as conn:
            row = conn.execute(select(participants, viewed.label("viewed"))
                               .where(participants.c.id == pid)).first()
            if row is None:
                return None, {}
            p = _participant(row)
            got = _answers(conn, pid)
            first = p.step == page and not row.viewed
            if first and not self.sqlite:
                conn.execute(stamp.values(at=now()))
        if first and self.sqlite:
            with self.write() as conn:
                conn.execute(stamp.values(at=now()))
        return p, got

    def cells(self, study: str) -> set[tuple[str, str]]:
        """The (arm, instance) pairs people are enrolled in."""
        with self.read() as conn:
            return {(a, i) for a, i in conn.execute(
                select(participants.c.arm, participants.c.instance)
                .where(participants.c.study == study).distinct())}

    # -- the researchers' view -------------------------------------------------------------

    def status(self, study: str) -> list[dict]:
        """Per arm: enrolled, finished, and participants at each step."""
        with self.read() as conn:
            rows = conn.execute(
                select(participants.c.arm, participants.c.step,
                       func.count(), func.count(participants.c.finished_at))
                .where(participants.c.study == study)
                .group_by(participants.c.arm, participants.c.step)).all()
        out: dict[str, dict] = {}
        for arm, step, n, done in rows:
            a = out.setdefault(arm, {"arm": arm, "enrolled": 0, "finished": 0, "steps": {}})
            a["enrolled"] += n
            a["finished"] += done
            a["steps"][step] = n
        return [out[k] for k in sorted(out)]

    def records(self, study: str) -> Iterator[dict]:
        """Every participant with their answers and events: no platform id, no address."""
        with self.read() as conn:
            ps = conn.execute(select(participants).where(participants.c.study == study)
                              .order_by(participants.c.created_at)).all()
            for p in ps:
                evs = conn.execute(select(events).where(events.c.participant_id == p.id)
                                   .order_by(events.c.id)).all()
                enrol = next((json.loads(e.data) for e in evs if e.kind == "enrol"), {})
                yield {
                    "participant": p.pseudonym, "arm": p.arm, "instance": p.instance,
                    "step": p.step, "allocation": enrol.get("place"),  # null: enrolled before
                    "created_at": _iso(p.created_at),
                    "finished_at": _iso(p.finished_at), "consent_hash": p.consent_hash,
                    "consent_at": _iso(p.consent_at),
                    "answers": _answers(conn, p.id),
                    "events": [{"page": e.page, "kind": e.kind, "at": _iso(e.at),
                                "data": None if e.data is None else json.loads(e.data)}
                               for e in evs]}

    # -- bonuses (`planaudit study bonus`) -------------------------------------------------

    def owed(self, study: str) -> tuple[list[Owed], int, int]:
        """The finished participants of `study` with no row in `bonuses` (each with their
        platform id and phase-2 answer), how many finished ones have one, and how many have not finished.
        A database not yet migrated to 0003 (read by a dry run, which changes nothing) has
        paid no one."""
        with self.read() as conn:
            paid_table = inspect(conn).has_table("bonuses")
            paid = bonuses.c.participant_id if paid_table else literal(None)
            q = (select(participants.c.id, participants.c.instance, participants.c.finished_at,
                        paid.label("paid"), ledger.c.platform_id, answers.c.data)
                 .select_from(participants)
                 .join(ledger, ledger.c.participant_id == participants.c.id)
                 .outerjoin(answers, and_(answers.c.participant_id == participants.c.id,
                                          answers.c.page == "phase2"))
                 .where(participants.c.study == study)
                 .order_by(participants.c.created_at, participants.c.id))
            if paid_table:
                q = q.outerjoin(bonuses, bonuses.c.participant_id == participants.c.id)
            rows = conn.execute(q).all()
        out, already, unfinished = [], 0, 0
        for r in rows:
            if r.finished_at is None:
                unfinished += 1
            elif r.paid is not None:
                already += 1
            else:
                out.append(Owed(r.id, r.platform_id, r.instance,
                                None if r.data is None else json.loads(r.data)))
        return out, already, unfinished

    def record_bonuses(self, study: str, batch: str, rows: list[dict]) -> list[str]:
        """`rows` (participant_id, amount, currency, valid) into `bonuses` as batch `batch`,
        in one transaction holding the study's lock; a participant who has a row already
        (another run took them meanwhile) is left out. Returns the ids inserted, committed
        when this returns. Should two runs still collide on a participant (the primary
        key), the loser's transaction inserts nothing and is tried again."""
        for attempt in range(3):
            try:
                with self.write(study) as conn:
                    have = set(conn.execute(select(bonuses.c.participant_id)
                                            .where(bonuses.c.study == study)).scalars())
                    new = [r for r in rows if r["participant_id"] not in have]
                    if new:
                        t = now()
                        conn.execute(insert(bonuses), [
                            {"participant_id": r["participant_id"], "study": study,
                             "amount": r["amount"], "currency": r["currency"],
                             "valid": r["valid"], "batch": batch, "created_at": t} for r in new])
                    return [r["participant_id"] for r in new]
            except IntegrityError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def bonus_batch(self, study: str, batch: str) -> list[tuple[str, Decimal, str, bool]]:
        """Batch `batch` of `study` from the ledger, by platform id: (platform id, amount,
        currency, valid) per participant, zero amounts included."""
        with self.read() as conn:
            rows = conn.execute(
                select(ledger.c.platform_id, bonuses.c.amount, bonuses.c.currency, bonuses.c.valid)
                .join(ledger, ledger.c.participant_id == bonuses.c.participant_id)
                .where(bonuses.c.study == study, bonuses.c.batch == batch)
                .order_by(ledger.c.platform_id, bonuses.c.participant_id)).all()
        return [(r.platform_id, _cents(r.amount), r.currency, bool(r.valid)) for r in rows]

    def bonus_batches(self, study: str) -> list[tuple[str, int]]:
        """The batches of `study` (oldest first) and how many participants each holds."""
        with self.read() as conn:
            return [(b, n) for b, n, _ in conn.execute(
                select(bonuses.c.batch, func.count(), func.min(bonuses.c.created_at))
                .where(bonuses.c.study == study).group_by(bonuses.c.batch)
                .order_by(func.min(bonuses.c.created_at), bonuses.c.batch))]

    # -- phase-1 texts coded by hand (`/admin/coding`, `study/coding.py`) ----------------------

    def phase1_texts(self, study: str, pseudonym: str | None = None) -> list[tuple[str, str, str]]:
        """(pseudonym, instance, text) of everyone who sent a phase-1 text (or of
        `pseudonym` alone), in order of entry; never the arm, which coders must not learn."""
        q = (select(participants.c.pseudonym, participants.c.instance, answers.c.data)
             .join(answers, and_(answers.c.participant_id == participants.c.id,
                                 answers.c.page == "phase1"))
             .where(participants.c.study == study)
             .order_by(participants.c.created_at, participants.c.id))
        if pseudonym is not None:
            q = q.where(participants.c.pseudonym == pseudonym)
        with self.read() as conn:
            rows = conn.execute(q).all()
        return [(r.pseudonym, r.instance, json.loads(r.data).get("text") or "") for r in rows]

    def code(self, study: str, pseudonym: str, coder: str, kind: str, value) -> None:
        """One coding of a phase-1 text, added (a recoding adds a row: the last counts)."""
        with self.write() as conn:
            conn.execute(insert(codings).values(study=study, pseudonym=pseudonym, coder=coder,
                                                kind=kind, value=json.dumps(value), at=now()))

    def codings(self, study: str) -> list[dict]:
        """Every coding of `study`, oldest first (pseudonym, coder, kind, value, at); none
        on a database not yet migrated to 0005 (an export reads it as it is)."""
        with self.read() as conn:
            if not inspect(conn).has_table("codings"):
                return []
            rows = conn.execute(select(codings).where(codings.c.study == study)
                                .order_by(codings.c.at, codings.c.id)).all()
        return [{"pseudonym": r.pseudonym, "coder": r.coder, "kind": r.kind,
                 "value": json.loads(r.value), "at": _iso(r.at)} for r in rows]


def _answers(conn: Connection, pid: str) -> dict[str, dict]:
    return {a.page: json.loads(a.data) for a in conn.execute(
        select(answers.c.page, answers.c.data).where(answers.c.participant_id == pid))}


def _cents(amount) -> Decimal:
    return Decimal(str(amount)).quantize(Decimal("0.01"))


def _iso(t: datetime | None) -> str | None:
    if t is None:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).isoformat()


def keyed_hash(secret: str, value: str) -> str:
    """The pseudonym of a platform id: HMAC-SHA256 under the study's secret."""
    return hmac.new(secret.encode(), value.encode(), hashlib.sha256).hexdigest()[:32]
