"""`planaudit study bonus` on the real code, on SQLite and PostgreSQL: finished participants
paid by the pay rule on the formal core's verdict of their phase-2 plan, the bulk bonus
file (`platform_id,amount`) holding the platform ids people entered with, no one paid
twice (a second run, two runs at once, a crash between the ledger and the file mended by
--batch), nothing for those who did not finish, a dry run that changes nothing, and a
database of migration 0002 upgraded in place. Participants go through the store's own
calls as the server makes them, or through a real server over HTTP."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import create_engine, inspect, make_url, select, text

from planaudit.commandline import InputError
from planaudit.study import bonus
from planaudit.study.app import pages
from planaudit.study.commands import bonus_arguments
from planaudit.study.materials import resolve
from planaudit.study.settings import Pay, load_study
from planaudit.study.store import Store, bonuses, keyed_hash
from planaudit.study.tlx import KEYS
from tests.study_server import ROOT, Server, entry, form_key, postgres_url, study_config

ENGINES = ["sqlite", "postgresql"]
CREATED: list[str] = []  # PostgreSQL databases
MIGRATIONS = ROOT / "src" / "planaudit" / "study" / "migrations"
LINE = re.compile(r"^[A-Za-z0-9_-]+,\d+\.\d\d$")


@pytest.fixture(scope="module", autouse=True)
def _drop_databases():
    yield
    if CREATED:
        engine = create_engine(make_url(CREATED[0]).set(database="postgres"),
                               isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            for url in CREATED:
                conn.execute(text(f"drop database if exists {make_url(url).database} with (force)"))
        engine.dispose()


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The study's tasks prepared and proven once; each test copies them."""
    tmp = tmp_path_factory.mktemp("bonus")
    materials = resolve(load_study(study_config(tmp)))
    return tmp / "study" / "suite", materials


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    return request.param


def setup(tmp: Path, prepared, engine: str, name: str, **over) -> tuple[Path, str | None]:
    """A study config under `tmp` with the prepared tasks, and its --db (None: SQLite under
    the study's folder)."""
    shutil.copytree(prepared[0], tmp / "study" / "suite")
    cfg = study_config(tmp, **over)
    if engine == "sqlite":
        return cfg, None
    CREATED.append(postgres_url(f"pa_bonus_{os.getpid()}_{name}"))
    return cfg, CREATED[-1]


def opened(cfg: Path, db: str | None, migrate: bool = True):
    study = load_study(cfg)
    store = Store(study.database_url(db))
    if migrate:
        store.migrate()
    return study, store


class Cohort:
    """Participants entering and posting through the store's calls, as the app makes them."""

    def __init__(self, study, store: Store, materials):
        self.study, self.store, self.materials = study, store, materials
        self.secret = store.open_study(study.name)
        self.n = 0

    def enter(self, platform_id: str):
        s = self.study
        p, new = self.store.enrol(s.name, keyed_hash(self.secret, platform_id),
                                  {"participant": platform_id, "study": "s1", "session": "x"},
                                  [a.name for a in s.arms], list(s.instances),
                                  s.allocation, "consent")
        assert new
        return p

    def post(self, p, page: str, order: list[str], **kw) -> str:
        self.n += 1
        step, stored = self.store.post(p.id, page, order, f"{self.n:032x}", kw.pop("kind", "submit"),
                                       **kw)
        assert stored
        return step

    def run(self, platform_id: str, valid: bool, stop: str | None = None):
        """One participant through the path (up to `stop`, not posted), planning validly
        (the task's proven plan) or not (its first step only: the goal is not reached)."""
        p = self.enter(platform_id)
        order = pages(self.study, p.arm)
        proven = self.materials.instances[p.instance].plan
        plan = proven if valid else proven[:1]
        answers = {"consent": {"agree": True, "consent_hash": self.study.consent_hash},
                   "phase1": {"text": "clear the blocks, then stack them"},
                   "suggestion": {"correct": False}, "tlx": {"ratings": dict.fromkeys(KEYS, 50)}}
        for page in order[:-1]:
            if page == stop:
                return p
            if page == "phase2":
                for i in range(len(plan)):
                    self.post(p, page, order, kind="add", data={"action": plan[i]},
                              answer={"plan": plan[: i + 1]})
                self.post(p, page, order, answer={"plan": plan, "submitted": True}, advance=True)
            else:
                self.post(p, page, order, answer=answers.get(page), advance=True,
                          consent_hash=self.study.consent_hash if page == "consent" else None)
        assert self.store.find(p.id).finished
        return p


def run(cfg: Path, db: str | None, out: Path, *extra: str) -> int:
    parser = argparse.ArgumentParser()
    bonus_arguments(parser)
    argv = ["--config", str(cfg), "--out", str(out), *extra]
    return bonus.main(parser.parse_args(argv + (["--db", db] if db else [])))


def read(out: Path) -> dict[str, str]:
    text_ = out.read_text()
    lines = text_.splitlines()
    assert all(LINE.match(line) for line in lines), text_
    assert text_ == "" or text_.endswith("\n")
    got = dict(line.split(",") for line in lines)
    assert len(got) == len(lines)  # no platform id twice
    return got


def ledger_rows(store: Store) -> dict[str, tuple]:
    """The bonuses table by platform id: (amount, currency, valid, batch)."""
    with store.read() as conn:
        rows = conn.execute(text(
            "select l.platform_id, b.amount, b.currency, b.valid, b.batch from bonuses b "
            "join ledger l on l.participant_id = b.participant_id")).all()
    return {r[0]: (Decimal(str(r[1])).quantize(Decimal("0.01")), r[2], bool(r[3]), r[4]) for r in rows}


def test_migration_0003_matches_the_metadata(tmp_path, engine):
    """The newest migration makes exactly the tables' metadata (bonuses included), and
    running it again changes nothing."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from planaudit.study.store import metadata

    if engine == "sqlite":
        url = f"sqlite:///{tmp_path}/m.sqlite"
    else:
        CREATED.append(postgres_url(f"pa_bonus_{os.getpid()}_meta"))
        url = CREATED[-1]
    store = Store(url)
    try:
        for _ in range(2):
            store.migrate()
            with store.engine.connect() as conn:
                assert compare_metadata(MigrationContext.configure(conn), metadata) == []
                assert conn.execute(text("select version_num from alembic_version")).scalars().all() \
                    == ["0005"]
    finally:
        store.close()


# -- the rule --------------------------------------------------------------------------------

def test_the_pay_rule_in_cents():
    paper = Pay("USD", 0.5, 1.0, 0.5)
    assert bonus.amount(paper, True) == Decimal("1.50")
    assert bonus.amount(paper, False) == Decimal("0.00")
    assert bonus.amount(Pay("GBP", 0.5, 1.0, 0.2), False) == Decimal("0.30")
    assert bonus.amount(Pay("GBP", 0.5, 1.0, 0.75), False) == Decimal("0.00")  # never below 0
    assert bonus.amount(Pay("USD", 0.1, 0.2, 0), True) == Decimal("0.30")  # not 0.30000000000000004
    assert bonus.amount(Pay("USD", 1.005, 0, 0), True) == Decimal("1.01")  # half a cent up
    assert bonus.lines([("A1", Decimal("1.5"), "USD", True), ("B2", Decimal("0.00"), "USD", False)]) \
        == "A1,1.50\n"


# -- paying ----------------------------------------------------------------------------------

def test_valid_and_invalid_plans_paid_by_the_rule_and_nobody_twice(tmp_path, prepared, engine, capsys):
    cfg, db = setup(tmp_path, prepared, engine, "rule",
                    pay={"currency": "GBP", "base": 0.5, "valid_bonus": 1.0, "invalid_deduction": 0.2})
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    good, bad = people.run("GOOD01", valid=True), people.run("BAD002", valid=False)
    left = people.run("LEFT03", valid=True, stop="tlx")  # planned validly, never finished
    people.run("EARLY4", valid=True, stop="phase1")
    out = tmp_path / "bonus.csv"
    assert run(cfg, db, out) == 0
    assert read(out) == {"GOOD01": "1.50", "BAD002": "0.30"}
    said = capsys.readouterr().err
    assert "paid 2 (valid 1, invalid 1), total 1.80 GBP in 2 line(s)" in said
    assert "skipped 0 already paid, 2 unfinished" in said
    rows = ledger_rows(store)
    assert {k: v[:3] for k, v in rows.items()} == {"GOOD01": (Decimal("1.50"), "GBP", True),
                                                   "BAD002": (Decimal("0.30"), "GBP", False)}
    assert len({v[3] for v in rows.values()}) == 1  # one batch
    # the same plans judged by the materials as the server judges them
    assert prepared[1].instances[good.instance].check(store.answers(good.id)["phase2"]["plan"]).valid
    assert not prepared[1].instances[bad.instance].check(store.answers(bad.id)["phase2"]["plan"]).valid

    # a second run: no one anew, and the old file replaced by an empty one
    assert run(cfg, db, out) == 0
    assert out.read_text() == ""
    said = capsys.readouterr().err
    assert "paid 0 (valid 0, invalid 0), total 0.00 GBP in 0 line(s)" in said
    assert "skipped 2 already paid, 2 unfinished" in said
    assert ledger_rows(store) == rows

    # the one who left at the questionnaire comes back and finishes: paid alone, once
    order = pages(study, left.arm)
    people.post(left, "tlx", order, answer={"ratings": dict.fromkeys(KEYS, 50)}, advance=True)
    assert run(cfg, db, out) == 0
    assert read(out) == {"LEFT03": "1.50"}
    assert "skipped 2 already paid, 1 unfinished" in capsys.readouterr().err
    assert len(ledger_rows(store)) == 3
    store.close()


def test_the_papers_rule_records_a_zero_without_a_line(tmp_path, prepared, engine, capsys):
    cfg, db = setup(tmp_path, prepared, engine, "paper")  # 0.50 base, +1.00, -0.50
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    people.run("VALID1", valid=True)
    people.run("WRONG2", valid=False)
    out = tmp_path / "bonus.csv"
    assert run(cfg, db, out) == 0
    assert read(out) == {"VALID1": "1.50"}
    assert "paid 2 (valid 1, invalid 1), total 1.50 USD in 1 line(s) (1 owed 0.00: recorded, " \
           "no line)" in capsys.readouterr().err
    rows = ledger_rows(store)
    assert rows["WRONG2"][:3] == (Decimal("0.00"), "USD", False)  # judged: never judged again
    assert run(cfg, db, out) == 0
    assert out.read_text() == ""
    store.close()


def test_a_crash_before_the_file_is_mended_by_batch(tmp_path, prepared, engine, capsys, monkeypatch):
    cfg, db = setup(tmp_path, prepared, engine, "crash")
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    for i in range(4):
        people.run(f"P{i}", valid=i != 2)
    out = tmp_path / "bonus.csv"

    def crash(path, text_):
        raise OSError("disk full")

    with monkeypatch.context() as m:  # the bonus file's write fails, after the ledger's commit
        m.setattr(bonus, "atomic", SimpleNamespace(write_text=crash))
        with pytest.raises(OSError, match="disk full"):
            run(cfg, db, out)
    assert not out.exists()
    said = capsys.readouterr().err
    (batch,) = re.findall(r"batch (\S+) is in the ledger but its file was not written", said)
    assert f"--batch {batch}" in said
    assert store.bonus_batches(study.name) == [(batch, 4)]
    # a plain run pays no one again: the ledger has them
    assert run(cfg, db, out) == 0
    assert out.read_text() == ""
    # --batch writes that batch's file from the ledger
    assert run(cfg, db, out, "--batch", batch) == 0
    assert read(out) == {"P0": "1.50", "P1": "1.50", "P3": "1.50"}
    assert "no one paid anew" in capsys.readouterr().err
    assert store.bonus_batches(study.name) == [(batch, 4)]
    with pytest.raises(InputError, match=rf"no batch nosuch .*its batches: {batch} \(4\)"):
        run(cfg, db, out, "--batch", "nosuch")
    store.close()


def test_batch_writes_the_same_file_again(tmp_path, prepared, engine, capsys):
    cfg, db = setup(tmp_path, prepared, engine, "again")
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    for i, pid in enumerate(["zeta9", "Alpha_1", "m-42", "Beta"]):
        people.run(pid, valid=i % 2 == 0)
    first = tmp_path / "first.csv"
    assert run(cfg, db, first) == 0
    (batch,) = re.findall(r"\(batch (\S+)\)", capsys.readouterr().err)
    people.run("later", valid=True)
    assert run(cfg, db, tmp_path / "second.csv") == 0  # another batch in between
    again = tmp_path / "again.csv"
    assert run(cfg, db, again, "--batch", batch) == 0
    assert again.read_bytes() == first.read_bytes()
    assert read(again) == {"zeta9": "1.50", "m-42": "1.50"}
    assert read(tmp_path / "second.csv") == {"later": "1.50"}
    # a dry run of a batch prints its lines and writes nothing
    capsys.readouterr()
    assert run(cfg, db, tmp_path / "none.csv", "--batch", batch, "--dry-run") == 0
    assert capsys.readouterr().out == first.read_text()
    assert not (tmp_path / "none.csv").exists()
    store.close()


def test_a_dry_run_changes_nothing_then_a_0002_database_is_upgraded_in_place(
        tmp_path, prepared, engine, capsys):
    from alembic import command
    from alembic.config import Config

    cfg, db = setup(tmp_path, prepared, engine, "upgrade")
    study, store = opened(cfg, db, migrate=False)
    acfg = Config()
    acfg.set_main_option("script_location", str(MIGRATIONS))
    with store.engine.begin() as conn:  # as a server of the previous planaudit left it
        acfg.attributes["connection"] = conn
        command.upgrade(acfg, "0002")
    people = Cohort(study, store, prepared[1])
    people.run("OLD1", valid=True)
    people.run("OLD2", valid=False)
    people.run("OLD3", valid=True, stop="phase2")

    def version() -> list[str]:
        with store.read() as conn:
            return conn.execute(text("select version_num from alembic_version")).scalars().all()

    out = tmp_path / "bonus.csv"
    assert run(cfg, db, out, "--dry-run") == 0
    got = capsys.readouterr()
    assert got.out == "OLD1,1.50\n"
    assert "dry run: nothing recorded, no file written" in got.err
    assert "would pay 2 (valid 1, invalid 1)" in got.err and "1 unfinished" in got.err
    assert not out.exists()
    assert version() == ["0002"]
    with store.read() as conn:
        assert not inspect(conn).has_table("bonuses")

    assert run(cfg, db, out) == 0
    assert version() == ["0005"]
    assert read(out) == {"OLD1": "1.50"}
    # every record kept; the seeded sequence gave OLD1 unassisted, OLD2 and OLD3 suggested
    assert [arm for _, arm in study.allocation.sequence("study", ["unassisted", "suggested"],
                                                        3)[:3]] == [
        "unassisted", "suggested", "suggested"]
    assert store.status(study.name) == [
        {"arm": "suggested", "enrolled": 2, "finished": 1, "steps": {"done": 1, "phase2": 1}},
        {"arm": "unassisted", "enrolled": 1, "finished": 1, "steps": {"done": 1}}]
    # a dry run after paying: no one owed
    assert run(cfg, db, out, "--dry-run") == 0
    got = capsys.readouterr()
    assert got.out == "" and "skipped 2 already paid, 1 unfinished" in got.err
    assert read(out) == {"OLD1": "1.50"}  # untouched
    store.close()


def test_no_database_no_run(tmp_path, prepared):
    cfg, _ = setup(tmp_path, prepared, "sqlite", "none")
    with pytest.raises(InputError, match="no such database"):
        run(cfg, None, tmp_path / "bonus.csv")
    assert not (tmp_path / "study" / "study.sqlite").exists()


# -- at once ---------------------------------------------------------------------------------

def test_concurrent_runs_pay_each_participant_once(tmp_path, prepared, engine):
    """Four `study bonus` processes started together on 16 finished participants: every
    participant in exactly one file and one ledger row."""
    cfg, db = setup(tmp_path, prepared, engine, "race")
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    ids = [f"R{i:02d}" for i in range(16)]
    for i, pid in enumerate(ids):
        people.run(pid, valid=i % 4 != 3)
    code = ("import argparse, sys\nfrom planaudit.study import bonus\n"
            "from planaudit.study.commands import bonus_arguments\n"
            "p = argparse.ArgumentParser(); bonus_arguments(p)\n"
            "sys.exit(bonus.main(p.parse_args(sys.argv[1:])))")
    outs = [tmp_path / f"bonus{k}.csv" for k in range(4)]
    procs = [subprocess.Popen([sys.executable, "-c", code, "--config", str(cfg), "--out", str(o),
                               *(["--db", db] if db else [])], cwd=ROOT, stderr=subprocess.PIPE,
                              text=True) for o in outs]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errs
    files = [read(o) for o in outs]
    paid = [pid for f in files for pid in f]
    want = {pid for i, pid in enumerate(ids) if i % 4 != 3}
    assert sorted(paid) == sorted(want)  # each once, across all files
    rows = ledger_rows(store)
    assert set(rows) == set(ids)
    batches = {v[3] for v in rows.values()}
    assert len(batches) == sum(1 for f in files if f)
    store.close()


def test_a_stale_read_inserts_nothing(tmp_path, prepared, engine):
    """Two runs that read the same owed participants: the one that records second (in
    turn, or in threads at once) inserts none of them."""
    cfg, db = setup(tmp_path, prepared, engine, "stale")
    study, store = opened(cfg, db)
    people = Cohort(study, store, prepared[1])
    for i in range(6):
        people.run(f"S{i}", valid=True)
    owed, _, _ = store.owed(study.name)
    rows = [{"participant_id": o.participant_id, "amount": Decimal("1.50"), "currency": "USD",
             "valid": True} for o in owed]
    other = Store(store.url)
    assert set(other.record_bonuses(study.name, "one", rows[:4])) == {o.participant_id for o in owed[:4]}
    assert store.record_bonuses(study.name, "two", rows) == [o.participant_id for o in owed[4:]]
    # at once: one of three threads on their own stores takes the last two, the others none
    for o in owed:
        people.run(f"T{o.participant_id[:6]}", valid=True)
    fresh, already, _ = store.owed(study.name)
    assert already == 6 and len(fresh) == 6
    rows = [{"participant_id": o.participant_id, "amount": Decimal("1.50"), "currency": "USD",
             "valid": True} for o in fresh]
    stores = [Store(store.url) for _ in range(3)]
    got: list[list[str]] = [[] for _ in stores]
    start = threading.Barrier(len(stores))

    def go(k: int) -> None:
        start.wait()
        got[k] = stores[k].record_bonuses(study.name, f"t{k}", rows)

    threads = [threading.Thread(target=go, args=(k,)) for k in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(len(g) for g in got) == [0, 0, 6]
    with store.read() as conn:
        assert conn.execute(select(bonuses.c.participant_id)).scalars().all().__len__() == 12
    for s in [other, *stores, store]:
        s.close()


# -- over HTTP -------------------------------------------------------------------------------

def _send(url: str, data: dict | None = None) -> tuple[str, str]:
    """A GET (or a POST of `data`), redirects followed: (the final URL, its page)."""
    body = None if data is None else urllib.parse.urlencode(data).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=60) as r:
        return r.url, r.read().decode()


def test_the_file_holds_the_platform_ids_people_entered_with(tmp_path, prepared, engine, capsys):
    cfg, db = setup(tmp_path, prepared, engine, "http")
    server = Server(cfg, db)
    study = load_study(cfg)
    store = Store(study.database_url(db))
    entered = {"5f3c9a1b2e4d6f7a8b9c0d1e": True, "60aa7b2c3d4e5f6a7b8c9d0e": False,
               "prolific_x-1": True, "left-early": None}
    try:
        for pid, valid in entered.items():
            url, html = _send(entry(server.url, pid))
            while not url.endswith("/done"):
                page = url.rsplit("/", 1)[1]
                if page == "phase2":
                    p = store.find(url.rsplit("/", 2)[1].split(".")[0])
                    if valid is None:
                        break
                    proven = prepared[1].instances[p.instance].plan
                    for action in proven if valid else proven[:1]:
                        url, html = _send(url, {"key": form_key(html), "op": "add", "action": action})
                    form = {"op": "submit"}
                else:
                    form = {"consent": {"agree": "yes"}, "phase1": {"text": "my plan"},
                            "suggestion": {"correct": "no"}, "tlx": dict.fromkeys(KEYS, "50")
                            }.get(page, {})
                url, html = _send(url, {"key": form_key(html), **form})
        out = tmp_path / "bonus.csv"
        assert run(cfg, db, out) == 0
        assert read(out) == {"5f3c9a1b2e4d6f7a8b9c0d1e": "1.50", "prolific_x-1": "1.50"}
        assert "paid 3 (valid 2, invalid 1)" in capsys.readouterr().err
        # the platform id stays in the ledger: the bonuses table has none
        with store.read() as conn:
            assert "platform_id" not in {c["name"] for c in inspect(conn).get_columns("bonuses")}
            held = conn.execute(text("select * from bonuses")).all()
        assert not any(pid in str(row) for row in held for pid in entered)
    finally:
        server.stop()
        store.close()
