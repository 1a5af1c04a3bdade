"""`planaudit study bonus`: the bonuses a study owes, as the platform's bulk bonus file.

Every finished participant not yet in the ledger's `bonuses` table has their submitted
phase-2 plan judged by `formal/` through the study's materials (the validator everything
else uses) and is owed `base + valid_bonus` for a valid plan, `base - invalid_deduction`
(never below zero) for an invalid one. Their rows go into `bonuses` in one transaction,
under the study's lock, before the file is written; the file (`platform_id,amount` a line,
no header: Prolific's bulk bonus form) holds exactly that batch's rows, read back from the
ledger. So no one is paid twice: a participant in `bonuses` is never written again, two
runs at once take each participant once, and a crash between the commit and the file is
mended by `--batch ID`, which writes that batch's file again from the ledger. A zero
amount is recorded (the participant was judged) but has no line; a participant who did
not finish gets neither."""

from __future__ import annotations

import argparse
import re
import secrets
import sys
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from planaudit import atomic
from planaudit.commandline import EXIT_OK, InputError
from planaudit.study.settings import Pay, Study

CENT = Decimal("0.01")
# a line of the file is `id,amount`: an id the study server let in has none of ",\r\n"
SAFE_ID = re.compile(r"^[^,\r\n]+$")


def amount(pay: Pay, valid: bool) -> Decimal:
    """What a participant is paid: base plus the bonus for a valid plan, base less the
    deduction for an invalid one, in cents (half a cent up), never below zero."""
    base = _decimal(pay.base)
    got = base + _decimal(pay.valid_bonus) if valid else base - _decimal(pay.invalid_deduction)
    return max(Decimal("0.00"), got.quantize(CENT, rounding=ROUND_HALF_UP))


def _decimal(x: float) -> Decimal:
    return Decimal(str(x))  # 0.1 as written in the config, not its binary neighbour


def new_batch() -> str:
    """A batch id: its UTC time, then random (two runs in one microsecond differ)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{secrets.token_hex(4)}"


def lines(rows: list[tuple[str, Decimal, str, bool]]) -> str:
    """The file's text: one `platform_id,amount` line per non-zero amount."""
    out = []
    for platform_id, amt, _currency, _valid in rows:
        if amt <= 0:
            continue
        if not SAFE_ID.match(platform_id):
            raise InputError(f"platform id {platform_id!r} cannot be a line of a bulk bonus file")
        out.append(f"{platform_id},{amt:.2f}\n")
    return "".join(out)


def main(args: argparse.Namespace) -> int:
    from planaudit.config import ConfigError
    from planaudit.study.settings import load_study

    try:
        study = load_study(args.config)
    except ConfigError as e:
        raise InputError(str(e)) from None
    store = _store(study, args.db)
    try:
        if args.batch:
            return _rewrite(study, store, args)
        return _pay(study, store, args)
    finally:
        store.close()


def _store(study: Study, db: str | None):
    from sqlalchemy.engine import make_url

    from planaudit.study.store import Store

    url = study.database_url(db)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not Path(parsed.database or "").is_file():
        raise InputError(f"{parsed.database}: no such database (has the study been served yet?)")
    return Store(url)


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _pay(study: Study, store, args) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from planaudit.config import ConfigError

    try:
        if not args.dry_run:  # a dry run changes nothing, not even the schema
            store.migrate()
        owed, already, unfinished = store.owed(study.name)
    except SQLAlchemyError as e:
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e} (has the study been "
                         "served yet?)") from None
    rows = []
    if owed:
        from planaudit.study.materials import resolve

        try:
            materials = resolve(study)
        except ConfigError as e:
            raise InputError(str(e)) from None
        for o in owed:
            m = materials.instances.get(o.instance)
            if m is None:
                raise InputError(f"{args.config}: a participant finished instance {o.instance}, "
                                 "which the config no longer lists: put it back to judge "
                                 "their plan (nothing was recorded)")
            valid = m.check(list((o.phase2 or {}).get("plan") or [])).valid
            rows.append({"participant_id": o.participant_id, "platform_id": o.platform_id,
                         "amount": amount(study.pay, valid), "currency": study.pay.currency,
                         "valid": valid})
    cur = study.pay.currency
    if args.dry_run:
        got = sorted((r["platform_id"], r["amount"], cur, r["valid"]) for r in rows)
        sys.stdout.write(lines(got))
        print(f"study {study.name} (dry run: nothing recorded, no file written): "
              f"{_summary(got, cur, 'would pay')}; skipped {already} already paid, "
              f"{unfinished} unfinished", file=sys.stderr)
        return EXIT_OK
    batch = new_batch()
    taken = set(store.record_bonuses(study.name, batch, rows)) if rows else set()
    lost = len(rows) - len(taken)  # another run took them between our read and our write
    got = store.bonus_batch(study.name, batch) if taken else []
    if got:
        print(f"study {study.name}: batch {batch} recorded in the ledger ({len(got)} "
              "participant(s)); writing its file", file=sys.stderr, flush=True)
    try:
        atomic.write_text(args.out, lines(got))
    except BaseException:
        if got:
            print(f"study {study.name}: batch {batch} is in the ledger but its file was not "
                  f"written: write it with `planaudit study bonus --config {args.config} "
                  f"--batch {batch} --out FILE` (a run without --batch will not pay them "
                  "again)", file=sys.stderr, flush=True)
        raise
    print(f"study {study.name}: {_summary(got, cur, 'paid')} in {args.out}"
          f"{f' (batch {batch})' if got else ''}; skipped {already + lost} already paid, "
          f"{unfinished} unfinished", file=sys.stderr)
    return EXIT_OK


def _summary(rows: list[tuple[str, Decimal, str, bool]], currency: str, verb: str) -> str:
    valid = sum(1 for r in rows if r[3])
    zero = sum(1 for r in rows if r[1] <= 0)
    total = sum((r[1] for r in rows), Decimal("0.00"))
    currencies = sorted({r[2] for r in rows}) or [currency]
    text = (f"{verb} {len(rows)} (valid {valid}, invalid {len(rows) - valid}), total "
            f"{total:.2f} {'/'.join(currencies)} in {len(rows) - zero} line(s)")
    if zero:
        text += f" ({zero} owed 0.00: recorded, no line)"
    return text


def _rewrite(study: Study, store, args) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    try:
        got = store.bonus_batch(study.name, args.batch)
        batches = [] if got else store.bonus_batches(study.name)
    except SQLAlchemyError as e:
        raise InputError(f"{_safe(store.url)}: {type(e).__name__}: {e} (has `study bonus` run "
                         "on this database?)") from None
    if not got:
        known = ", ".join(f"{b} ({n})" for b, n in batches) or "none"
        raise InputError(f"study {study.name} has no batch {args.batch} in {_safe(store.url)}; "
                         f"its batches: {known}")
    text = lines(got)
    if args.dry_run:
        sys.stdout.write(text)
        print(f"study {study.name}: batch {args.batch} (dry run, no file written): "
              f"{_summary(got, study.pay.currency, 'paid')}", file=sys.stderr)
        return EXIT_OK
    atomic.write_text(args.out, text)
    print(f"study {study.name}: batch {args.batch} written again from the ledger: "
          f"{_summary(got, study.pay.currency, 'paid')} in {args.out}; no one paid anew",
          file=sys.stderr)
    return EXIT_OK
