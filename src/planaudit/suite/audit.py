"""The label audit: a task's claimed label and length against what is proven."""

from __future__ import annotations

from planaudit.suite.catalog import TaskEntry


def label_problems(entry: TaskEntry, truth: dict) -> list[str]:
    """Every way the task's claims disagree with its truth record (empty if none)."""
    name = f"{entry.domain}/{entry.id}"
    problems = []
    if not truth["agree"]:
        problems.append(f"{name}: the proving methods disagree: {truth['methods']}")
    if truth["solvable"] is None:
        problems.append(f"{name}: no method decided solvability within its limits")
        return problems
    proven = "solvable" if truth["solvable"] else "unsolvable"
    if proven != entry.label:
        problems.append(f"{name}: labelled {entry.label} but proven {proven}")
    if (entry.optimal_length is not None and truth["optimal_length"] is not None
            and entry.optimal_length != truth["optimal_length"]):
        problems.append(f"{name}: claims optimal length {entry.optimal_length}, "
                        f"proven {truth['optimal_length']}")
    if truth["solvable"] is False and truth.get("certificate") is None:
        problems.append(f"{name}: unsolvable but no certificate could be made")
    return problems
