"""`planaudit study serve` and `planaudit study status`: a study opened for people, and
where it stands. The config is checked, every task prepared and proven and every
suggestion resolved and judged before the server listens; a mistake stops it first."""

from __future__ import annotations

import argparse
import os
import sys

from planaudit.commandline import EXIT_OK, InputError

CONFIG_ENV, DB_ENV = "PLANAUDIT_STUDY_CONFIG", "PLANAUDIT_STUDY_DB"


def add_parser(sub: argparse._SubParsersAction) -> None:
    st = sub.add_parser("study", help="studies with people on the same tasks as the models")
    ss = st.add_subparsers(dest="study_command", required=True)
    sv = ss.add_parser("serve", help="open a study to participants (a web server)")
    sv.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    sv.add_argument("--db", help="a database URL instead of the config's (postgresql+psycopg://"
                                 "user@host/db); default SQLite under the study's folder")
    sv.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (behind a reverse "
                                                        "proxy; 0.0.0.0 to listen on every address)")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--workers", type=int, default=1,
                    help="server processes (PostgreSQL only: SQLite takes one writer)")
    sv.add_argument("--check", action="store_true",
                    help="check the config, prepare the tasks and suggestions, migrate the "
                         "database, then stop without serving")
    sv.set_defaults(func=cmd_serve)
    ss_ = ss.add_parser("status", help="enrolment and completion per arm")
    ss_.add_argument("--config", required=True, metavar="STUDY.yaml")
    ss_.add_argument("--db", help="the database URL, if not the config's")
    ss_.add_argument("--json", action="store_true")
    ss_.set_defaults(func=cmd_status)


def _study(path: str):
    from planaudit.config import ConfigError
    from planaudit.study.settings import load_study

    try:
        return load_study(path)
    except ConfigError as e:
        raise InputError(str(e)) from None


def opened(config: str, db: str | None):
    """The study, its materials and its migrated store: everything a server needs."""
    from planaudit.config import ConfigError
    from planaudit.study.materials import design, resolve
    from planaudit.study.store import Store

    study = _study(config)
    try:
        materials = resolve(study)
    except ConfigError as e:
        raise InputError(str(e)) from None
    store = Store(study.database_url(db))
    try:
        store.migrate()
    except Exception as e:  # the database cannot be reached or migrated: say which
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e}") from None
    changed = store.keep_design(study.name, design(study, materials))
    if changed:
        raise InputError(f"{config}: people have enrolled in study '{study.name}' (in "
                         f"{_safe(store.url)}) under another design: {', '.join(changed)} "
                         "changed. Put it back, or give the changed study another name")
    arms = {a.name for a in study.arms}
    for arm, instance in sorted(store.cells(study.name)):
        if arm not in arms or instance not in materials.instances:
            gone = f"arm '{arm}'" if arm not in arms else f"instance {instance}"
            raise InputError(f"{config}: people are enrolled in {gone}, which the config no "
                             f"longer lists (in {_safe(store.url)}): put it back, or give the "
                             "changed study another name")
    return study, materials, store


def factory():
    """The app of the study named in the environment (uvicorn's worker processes)."""
    from planaudit.study.app import create_app

    study, materials, store = opened(os.environ[CONFIG_ENV], os.environ.get(DB_ENV) or None)
    return create_app(study, materials, store)


def cmd_serve(args) -> int:
    import uvicorn

    study, materials, store = opened(args.config, args.db)
    if args.workers > 1 and store.sqlite:
        raise InputError("--workers > 1 needs PostgreSQL (--db or the config's database): "
                         "SQLite takes one writing process")
    n = sum(len(v) for v in materials.suggestions.values())
    print(f"study {study.name}: {len(materials.instances)} instance(s), "
          f"{len(study.arms)} arm(s) ({', '.join(a.name for a in study.arms)}), "
          f"{n} suggestion(s) judged; records in {_safe(store.url)}", file=sys.stderr)
    if args.check:
        store.close()
        return EXIT_OK
    p = study.params
    print(f"participants enter at http://{args.host}:{args.port}/?{p['participant']}=...&"
          f"{p['study']}=...&{p['session']}=...", file=sys.stderr, flush=True)
    # no access log: it would write every participant's address
    if args.workers > 1:
        store.close()
        os.environ[CONFIG_ENV] = args.config
        os.environ[DB_ENV] = args.db or ""
        uvicorn.run("planaudit.study.commands:factory", factory=True, host=args.host,
                    port=args.port, workers=args.workers, access_log=False, log_level="warning")
        return EXIT_OK
    from planaudit.study.app import create_app

    uvicorn.run(create_app(study, materials, store), host=args.host, port=args.port,
                access_log=False, log_level="warning")
    return EXIT_OK


def cmd_status(args) -> int:
    import json

    from planaudit.study.store import Store

    study = _study(args.config)
    store = Store(study.database_url(args.db))
    try:
        rows = store.status(study.name)
    except Exception as e:
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e} (has the study been "
                         "served yet?)") from None
    if args.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    print(f"study {study.name} ({_safe(store.url)})")
    print(f"{'arm':<16} {'enrolled':>8} {'finished':>8}  where the others are")
    for arm in [a.name for a in study.arms]:
        r = next((x for x in rows if x["arm"] == arm), {"enrolled": 0, "finished": 0, "steps": {}})
        where = ", ".join(f"{s}: {n}" for s, n in r["steps"].items() if s != "done") or "-"
        print(f"{arm:<16} {r['enrolled']:>8} {r['finished']:>8}  {where}")
    return EXIT_OK


def _safe(url: str) -> str:
    """A database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
