"""Truth records of suite tasks: made once per task, gathered into summary.csv."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from planaudit.formal.certificate import check
from planaudit.formal.load import load_task
from planaudit.formal.truth import Limits, solve
from planaudit.suite.audit import label_problems
from planaudit.suite.catalog import TaskEntry

SUMMARY_COLUMNS = ("domain", "task", "label", "solvable", "optimal_length", "optimal_cost",
                   "states", "methods_agreeing", "finished", "single_witness", "certificate")


class LabelError(ValueError):
    """A task whose claims disagree with what is proven."""


def make_truth(entry: TaskEntry, outdir: Path, limits: Limits) -> dict:
    """Prove one task, write truth.json (and certificate.json), then audit its label."""
    outdir.mkdir(parents=True, exist_ok=True)
    domain_copy, problem_copy = outdir / "domain.pddl", outdir / "problem.pddl"
    shutil.copyfile(entry.domain_file, domain_copy)
    shutil.copyfile(entry.problem_file, problem_copy)
    record = solve(str(domain_copy), str(problem_copy), limits)
    cert = record.pop("certificate_data", None)
    cert_path = outdir / "certificate.json"
    if cert is not None:
        cert_path.write_text(json.dumps(cert, indent=1) + "\n")
        check(load_task(domain_copy, problem_copy), domain_copy, problem_copy, cert)
        record["certificate_checked"] = True
    elif cert_path.exists():
        cert_path.unlink()
    record = {"domain": entry.domain, "task": entry.id, "label": entry.label,
              "claimed_optimal_length": entry.optimal_length, "tests": entry.tests, **record}
    (outdir / "truth.json").write_text(json.dumps(record, indent=2) + "\n")
    problems = label_problems(entry, record)
    if problems:
        raise LabelError("; ".join(problems))
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
        "certificate": record["certificate"] or "",
    }


def write_summary(truths: list[Path], out: Path) -> list[dict]:
    rows = [summary_row(json.loads(path.read_text())) for path in truths]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=SUMMARY_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return rows
