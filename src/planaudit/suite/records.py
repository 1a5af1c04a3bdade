"""Truth records of suite tasks: made once per task, gathered into summary.csv
and audit.csv."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from planaudit import atomic
from planaudit.formal.certificate import check
from planaudit.formal.certificate import dumps as dump_certificate
from planaudit.formal.load import load_task
from planaudit.formal.search import Progress, quiet
from planaudit.formal.truth import Limits, solve
from planaudit.suite.audit import fatal, label_problems
from planaudit.suite.catalog import TaskEntry

SUMMARY_COLUMNS = ("domain", "task", "label", "solvable", "optimal_length", "optimal_cost",
                   "states", "methods_agreeing", "finished", "single_witness", "certificate",
                   "audit")
AUDIT_COLUMNS = ("domain", "task", "kind", "label", "claimed_optimal", "solvable",
                 "optimal_length", "optimal_cost", "message")


class LabelError(ValueError):
    """A task whose claims disagree with what is proven."""


def make_truth(entry: TaskEntry, outdir: Path, limits: Limits, audit_mode: str = "strict",
               progress: Progress = quiet) -> dict:
    """Prove a prepared task, write truth.json (and certificate.json), audit its label."""
    domain_file, problem_file = outdir / "domain.pddl", outdir / "problem.pddl"
    record = solve(str(domain_file), str(problem_file), limits, progress)
    cert = record.pop("certificate_data", None)
    cert_path = outdir / "certificate.json"
    if cert is not None:
        atomic.write_text(cert_path, dump_certificate(cert))
        check(load_task(domain_file, problem_file), domain_file, problem_file, cert)
        record["certificate_checked"] = True
    elif cert_path.exists():
        cert_path.unlink()
    claimed = entry.optimal_cost if entry.external else entry.optimal_length
    record = {"domain": entry.domain, "task": entry.id, "label": entry.label,
              "claimed_optimal": claimed, "tests": entry.tests, **record}
    problems = label_problems(entry, record)
    record["audit"] = [{"kind": k, "message": m} for k, m in problems]
    atomic.write_text(outdir / "truth.json", json.dumps(record, indent=2) + "\n")
    failing = fatal(entry, problems, audit_mode)
    if failing:
        raise LabelError("; ".join(failing))
    return record


def check_disguise(record: dict, base: dict, name: str) -> list[str]:
    """How a disguised task's proven truth differs from its undisguised task's (a
    disguise renames, so any difference is a bug in the renaming, never a finding)."""
    diffs = []
    for key in ("solvable", "optimal_length", "optimal_cost"):
        a, b = record.get(key), base.get(key)
        same = (a is None) == (b is None) and (a is None or abs(float(a) - float(b)) < 1e-9)
        if not same:
            diffs.append(f"{name}: {key} is {a} disguised but {b} undisguised")
    return diffs


def make_disguised_truth(entry: TaskEntry, outdir: Path, base_dir: Path, disguise: str,
                         limits: Limits, audit_mode: str = "strict",
                         progress: Progress = quiet) -> dict:
    """Prove a disguised task on its own hidden model, then check that it equals the
    undisguised task's truth (`base_dir/truth.json`): same solvability, optimal length
    and cost. A difference fails (LabelError naming the task)."""
    base = json.loads((base_dir / "truth.json").read_text())
    name = f"{entry.domain}/{entry.id}@{disguise}"
    try:
        record = make_truth(entry, outdir, limits, audit_mode, progress)
    except LabelError as e:
        raise LabelError(f"{name}: {e}") from None
    record["disguise"] = disguise
    diffs = check_disguise(record, base, name)
    record["disguise_agrees"] = not diffs
    (outdir / "truth.json").write_text(json.dumps(record, indent=2) + "\n")
    if diffs:
        raise LabelError("; ".join(diffs))
    return record


def summary_row(record: dict) -> dict:
    finished = [k for k, m in record["methods"].items() if m["status"] in ("solved", "unsolvable")]
    return {
        "domain": record["domain"],
        "task": record["task"],
        "label": record["label"],
        "solvable": record["solvable"],
        "optimal_length": record["optimal_length"],
        "optimal_cost": record["optimal_cost"],
        "states": record["states"],
        "methods_agreeing": "+".join(record["proven_by"]),
        "finished": "+".join(finished),
        "single_witness": len(finished) == 1,
        # "missing": unsolvable without one (kept only under `audit: warn`, see audit.py)
        "certificate": record["certificate"] or ("missing" if record["solvable"] is False else ""),
        # the label audit's kinds, "+"-joined: a task kept under `audit: warn` says why here
        "audit": "+".join(a["kind"] for a in record.get("audit", [])),
    }


def audit_rows(record: dict) -> list[dict]:
    return [{"domain": record["domain"], "task": record["task"], "kind": a["kind"],
             "label": record["label"], "claimed_optimal": record["claimed_optimal"],
             "solvable": record["solvable"], "optimal_length": record["optimal_length"],
             "optimal_cost": record["optimal_cost"], "message": a["message"]}
            for a in record.get("audit", [])]


def _write_csv(path: Path, columns, rows: list[dict]) -> None:
    with atomic.atomic_path(path) as tmp, tmp.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def write_summary(truths: list[Path], out: Path, audit_out: Path | None = None) -> list[dict]:
    records = [json.loads(path.read_text()) for path in truths]
    rows = [summary_row(r) for r in records]
    _write_csv(out, SUMMARY_COLUMNS, rows)
    if audit_out is not None:
        _write_csv(audit_out, AUDIT_COLUMNS, [a for r in records for a in audit_rows(r)])
    return rows
