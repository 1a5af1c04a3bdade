"""`planaudit study export`: a study's records as a folder anyone may share and the
workflow may judge. Pseudonymised (the keyed hash, never the platform id; no address is
ever stored), self-contained (each instance's task and proven truth beside the records),
and judged at once by the human regime (`human.judge`) into rows of the row contract and
a table of every event.

The folder:
- `study.json`: the format, the study's name, its design, each instance's task folder,
  each arm's feedback and suggestion plans, the pseudonyms of simulated participants
  (platform ids `SIMULATED-...`, which `planaudit study simulate` enters);
- `records.jsonl`: one participant a line (answers and events, as the store keeps them);
- `tasks/<n>/`: the n-th instance's domain.pddl, problem.pddl, truth.json, brief.json;
- `rows.parquet`, `events.parquet`: the judged rows and the events (the workflow judges
  `records.jsonl` again, through `planaudit human shard`, when the config names the
  folder under `study: {records: [...]}`);
- `codings.csv`, `coding.json`: the phase-1 texts coded by hand (`/admin/coding`), each
  coder's last coding with its category, and the coders' agreement (`study/coding.py`)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from planaudit import __version__, atomic
from planaudit.study.allocation import STUDY
from planaudit.study.settings import SIMULATED_PREFIX  # the simulator's platform ids

TASK_FILES = ("domain.pddl", "problem.pddl", "truth.json", "brief.json")


def simulated(store, study: str) -> list[str]:
    """The pseudonyms whose platform ids the simulator entered."""
    from sqlalchemy import select

    from planaudit.study.store import ledger, participants

    with store.read() as conn:
        found = conn.execute(
            select(participants.c.pseudonym).join(
                ledger, ledger.c.participant_id == participants.c.id)
            .where(participants.c.study == study,
                   ledger.c.platform_id.startswith(SIMULATED_PREFIX))).scalars().all()
    return sorted(found)


def consented_only(record: dict) -> dict:
    """A record as exported: whole for a participant who consented; for one who entered
    and never consented, only that they entered, where they were assigned and their place
    (counted in the flow, nothing of theirs kept)."""
    if record.get("consent_at") is not None:
        return {**record, "consented": True}
    keep = ("participant", "arm", "instance", "step", "allocation")
    return {**{k: record.get(k) for k in keep}, "consented": False, "answers": {},
            "events": [], "created_at": None, "finished_at": None, "consent_hash": None,
            "consent_at": None}


def _by_id(study, store, records: list[dict], path: Path | None, what: str, column: str,
           field: str) -> list[str]:
    """Mark records from a CSV `id,<column>` (the id a platform id or a pseudonym) with
    `field`; the ids that match no one are returned (said, never guessed). A missing file,
    or one without the header, is an InputError naming it."""
    from planaudit.commandline import InputError
    from planaudit.study.store import keyed_hash

    if path is None:
        return []
    if not path.is_file():
        raise InputError(f"{path}: no such file ({what} in {study.source})")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"id", column} <= set(rows[0]):
        raise InputError(f"{path}: the header must be id,{column}")
    secret = store.open_study(study.name)
    by = {r["participant"]: r for r in records}
    unknown = []
    for line, row in enumerate(rows, 2):
        who = (row.get("id") or "").strip()
        value = (row.get(column) or "").strip()
        if not who or not value:
            raise InputError(f"{path}:{line}: an id and a {column} are both needed")
        found = by.get(who) or by.get(keyed_hash(secret, who))
        if found is None:
            unknown.append(who)
        else:
            found[field] = value
    return unknown


def mark_exclusions(study, store, records: list[dict]) -> list[str]:
    """The study's exclusion list (`exclusions`: `id,reason`) marked on the records."""
    return _by_id(study, store, records, study.exclusions, "exclusions", "reason", "excluded")


def mark_authenticity(study, store, records: list[dict]) -> list[str]:
    """The platform's own authenticity verdicts (`authenticity`: `id,verdict`), kept."""
    return _by_id(study, store, records, study.authenticity, "authenticity", "verdict",
                  "authenticity")


def planbench_copy(truth: dict, folder: Path) -> dict:
    """What the judge needs of a PlanBench instance's config (its words, to read phase-1
    texts), copied beside the task as a root of its own (`planbench/configs/NAME.yaml` and
    its domain file): the export then holds no path of this machine."""
    from planaudit.planbench.material import load_config

    pb = truth["planbench"]
    cfg = load_config(pb["root"], truth["domain"])
    atomic.copy_file(cfg.path, folder / "planbench" / "configs" / cfg.path.name)
    atomic.copy_file(cfg.domain_path, folder / "planbench" / "instances" / cfg.data["domain_file"])
    return {"root": "planbench", "config": f"planbench/configs/{cfg.path.name}",
            "problem": "problem.pddl"}


def local_paths_out(value):
    """`value` with every absolute path in it (a brief's nl.yaml) told by its place in
    planaudit's built-in domains, or by its file name alone: no path of this machine."""
    from planaudit.paths import PACKAGE

    if isinstance(value, dict):
        return {k: local_paths_out(v) for k, v in value.items()}
    if isinstance(value, list):
        return [local_paths_out(v) for v in value]
    if isinstance(value, str) and value.startswith("/") and Path(value).exists():
        path = Path(value).resolve()
        return (f"planaudit/{path.relative_to(PACKAGE).as_posix()}"
                if path.is_relative_to(PACKAGE) else path.name)
    return value


def relocatable(source: str | None, base: Path) -> str | None:
    """A suggestion's source as the export keeps it: relative to the study config's folder
    when it lies beneath it, else by its file name (no path of this machine); a label such
    as "given" stays as it is."""
    if not source or not Path(source).is_absolute():
        return source
    import os

    rel = Path(os.path.relpath(source, base)).as_posix()
    return Path(source).name if rel.startswith("..") else rel


def mark_attention(study, records: list[dict]) -> None:
    """Count each record's attention checks answered and failed (`attention`), and
    exclude, with the rule as its reason, whoever failed `reject_after` of them and is not
    excluded already (the platform's rule: reject only after two failures)."""
    checks, reject_after = study.attention
    if not checks:
        return
    for r in records:
        if r.get("consented") is False:  # nothing of theirs is kept
            continue
        answers = r.get("answers") or {}
        said = {k: v for c in checks
                for k, v in ((answers.get(c.page) or {}).get("attention") or {}).items()
                if k == c.id}
        failed = sorted(c.id for c in checks if c.id in said and said[c.id] != c.answer)
        r["attention"] = {"checks": len(said), "failed": len(failed), "failed_ids": failed}
        if len(failed) >= reject_after and not r.get("excluded"):
            r["excluded"] = f"failed {reject_after} or more attention checks"


def allocation_csv(study, records: list[dict]) -> str:
    """Every place of every stratum's allocation sequence drawn so far (the seed gives it:
    `study/allocation.py`), through the end of its block, with the participant who took it
    and the arm they got: a reader checks the assignment against the sequence."""
    rule, arms = study.allocation, [a.name for a in study.arms]
    taken: dict[tuple[str, int], dict] = {}
    for r in records:
        if r.get("allocation") is not None:
            stratum = r["instance"] if rule.strata == "instance" else STUDY
            taken[(stratum, r["allocation"])] = r
    strata = list(study.instances) if rule.strata == "instance" else [STUDY]
    out = io.StringIO()
    table = csv.writer(out, lineterminator="\n")
    table.writerow(["stratum", "place", "block", "arm", "participant", "assigned"])
    for stratum in strata:
        n = 1 + max((place for s, place in taken if s == stratum), default=-1)
        for place, (block, arm) in enumerate(rule.sequence(stratum, arms, n)):
            who = taken.get((stratum, place)) or {}
            table.writerow([stratum, place, block, arm, who.get("participant", ""),
                            who.get("arm", "")])
    return out.getvalue()


def coding_files(study, materials, store, records: list[dict], rows: list[dict]) -> tuple[str, dict]:
    """`codings.csv` (every coder's last coding of each phase-1 text, with its category)
    and `coding.json` (kappa between the two coders with the most texts in common, their
    disagreements, and the automatic reading against each coder): `study/coding.py`."""
    from planaudit.study import coding

    instance = {r["participant"]: r["instance"] for r in records}
    wrote = {r["participant"] for r in records if ((r.get("answers") or {}).get("phase1") or {})
             .get("text")}
    machine = {r["participant"]: coding.from_outcome(r.get("text_outcome")) for r in rows
               if r["participant"] in wrote}
    out = io.StringIO()
    table = csv.writer(out, lineterminator="\n")
    table.writerow(["pseudonym", "coder", "kind", "value", "category", "at"])
    codes: dict[str, dict[str, str]] = {}
    last = coding.latest(store.codings(study.name))
    for (pseudonym, coder), r in sorted(last.items()):
        m = materials.instances.get(instance.get(pseudonym, ""))
        if m is None:  # no such participant in the records: nothing to judge it on
            continue
        cat = coding.category(r["kind"], r["value"], m)
        codes.setdefault(coder, {})[pseudonym] = cat
        table.writerow([pseudonym, coder, r["kind"], json.dumps(r["value"]), cat, r["at"]])
    return out.getvalue(), coding.summary(codes, machine, instance)


def export(study, materials, store, out: Path) -> dict:
    """Write the export folder; the summary (participants, finished, simulated, rows)."""
    import polars as pl

    from planaudit.human.judge import judge
    from planaudit.study.materials import design

    out.mkdir(parents=True, exist_ok=True)
    instances = {}
    for n, (key, m) in enumerate(materials.instances.items(), 1):
        folder = out / "tasks" / str(n)
        for name in TASK_FILES:
            if name.endswith(".json"):  # no local path in them: relocatable
                data = json.loads((m.folder / name).read_text())
                if name == "truth.json" and data.get("planbench"):
                    data["planbench"] = planbench_copy(data, folder)
                atomic.write_text(folder / name, json.dumps(local_paths_out(data), indent=2)
                                  + "\n")
            else:
                atomic.copy_file(m.folder / name, folder / name)
        instances[key] = {"folder": f"tasks/{n}", "optimal_length": m.optimal_length}
    arms = {}
    for arm in study.arms:
        sug = materials.suggestions.get(arm.name)
        arms[arm.name] = {
            "feedback": arm.feedback, "show_state": arm.show_state,
            "suggestion": None if sug is None else {
                k: {"plan": v["plan"], "valid": v["check"]["valid"],
                    "source": relocatable(v["source"], study.source.parent),
                    "model": v["model"], "method": v["method"]} for k, v in sug.items()},
            # the live assistant (issue 49): its model entry and budget, for the judge's
            # assistant columns and the assistant's own rows beside the people's
            "assistant": None if arm.assistant is None else {
                "model": arm.assistant.model, "turns": arm.assistant.turns,
                "tokens": arm.assistant.tokens, "sees_plan": arm.assistant.sees_plan}}
    records = [consented_only(r) for r in store.records(study.name)]
    unknown = mark_exclusions(study, store, records)
    unverdicted = mark_authenticity(study, store, records)
    mark_attention(study, records)
    sims = simulated(store, study.name)
    meta = {"format": 1, "study": study.name, "exported_at": datetime.now(UTC).isoformat(),
            "code_version": __version__, "design": design(study, materials),
            "instances": instances, "arms": arms, "arm_order": [a.name for a in study.arms],
            "simulated": sims, "assignment": study.allocation.to_json(),
            "pay": dataclasses.asdict(study.pay), "participants": len(records)}
    atomic.write_text(out / "records.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n"
                                                      for r in records))
    atomic.write_text(out / "study.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")
    atomic.write_text(out / "allocation.csv", allocation_csv(study, records))
    rows, events = judge(out)
    atomic.write_parquet(pl.DataFrame(rows, infer_schema_length=None), out / "rows.parquet")
    atomic.write_parquet(pl.DataFrame(events, infer_schema_length=None, schema_overrides={
        "data": pl.String, "seconds": pl.Float64}), out / "events.parquet")
    codings, agreement = coding_files(study, materials, store, records, rows)
    atomic.write_text(out / "codings.csv", codings)
    atomic.write_text(out / "coding.json", json.dumps(agreement, indent=1) + "\n")
    if agreement["coders"]:
        k = agreement["kappa"]
        print(f"study {study.name}: phase-1 texts coded by {len(agreement['coders'])} coder(s); "
              f"kappa {'undefined' if k is None else f'{k:.3f}'} over {agreement['texts']} "
              f"text(s) of {' and '.join(agreement['pair'] or [])}, "
              f"{len(agreement['disagreements'])} disagreement(s) -> coding.json",
              file=sys.stderr)
    for ids, what in ((unknown, "the exclusion list"), (unverdicted, "the authenticity file")):
        if ids:
            print(f"study {study.name}: {len(ids)} id(s) of {what} match no participant: "
                  f"{', '.join(ids[:5])}", file=sys.stderr)
    summary = {"study": study.name, "out": str(out), "participants": len(records),
               "finished": sum(r["finished"] for r in rows), "simulated": len(sims),
               "valid": sum(r["success"] for r in rows), "events": len(events)}
    print(f"study {study.name}: {summary['participants']} participant(s) "
          f"({summary['finished']} finished, {summary['simulated']} simulated), "
          f"{summary['valid']} valid plan(s), {summary['events']} event(s) -> {out}",
          file=sys.stderr)
    return summary
