"""The label audit: a task's claimed label and optimum against what is proven.

Each disagreement has a kind. `solvability` (a solvable task labelled
unsolvable or the reverse) always matters; `optimum` (a wrong claimed optimal
length or cost) and the method-level kinds matter for our own suite, while an
external suite's `optimum` mismatches are reported without failing the run.

An unsolvable task needs a certificate a checker can verify without search
(`formal/certificate.py`). Where none could be made (its state space is past what
a certificate may hold), three kinds: `no-certificate` when two independent methods
proved the task unsolvable and agree; `single-proof` when one did and the other ran
and stopped at its limit without a word against it (the seed paper's LoadBalancing
p08: ENHSP proves it in 22 s, our A* stops at its state limit); `certificate` when
no second method ran (the external planner off or failing), or none proved it.
`audit: warn` keeps an external suite's `no-certificate` and `single-proof` tasks,
reported in the record, audit.csv, the summary (its `audit` column), the report and
every row of the task (`truth_proofs`: how many methods its truth rests on);
`audit: strict` and our own suite do not: there every unsolvability claim must be
checkable.
"""

from __future__ import annotations

from planaudit.suite.catalog import TaskEntry

FATAL_FOR_EXTERNAL = frozenset({"solvability", "disagree", "undecided", "certificate",
                                "no-certificate", "single-proof"})
# reported, not fatal, under warn
WARN_KEEPS = frozenset({"solvability", "no-certificate", "single-proof"})
LIMITED = ("limit",)  # a method's status when it stopped at its limit, deciding nothing


def label_problems(entry: TaskEntry, truth: dict) -> list[tuple[str, str]]:
    """(kind, message) for every way the task's claims disagree with its truth."""
    name = f"{entry.domain}/{entry.id}"
    problems: list[tuple[str, str]] = []
    if not truth["agree"]:
        found = truth.get("disagreements") or [
            {"kind": "verdict", "at_fault": "unknown", "message": str(truth["methods"])}]
        for d in found:
            problems.append(("disagree", f"{name}: the proving methods disagree ({d['kind']}; "
                                         f"at fault: {d['at_fault']}): {d['message']}"))
    if truth["solvable"] is None:
        problems.append(("undecided", f"{name}: no method decided solvability within its limits"))
        return problems
    proven = "solvable" if truth["solvable"] else "unsolvable"
    if proven != entry.label:
        problems.append(("solvability", f"{name}: labelled {entry.label} but proven {proven}"))
    if (entry.optimal_length is not None and truth["optimal_length"] is not None
            and entry.optimal_length != truth["optimal_length"]):
        problems.append(("optimum", f"{name}: claims optimal length {entry.optimal_length}, "
                                    f"proven {truth['optimal_length']}"))
    if (entry.optimal_cost is not None and truth["optimal_cost"] is not None
            and abs(entry.optimal_cost - truth["optimal_cost"]) > 1e-9):
        problems.append(("optimum", f"{name}: claims optimal cost {entry.optimal_cost:g}, "
                                    f"proven {truth['optimal_cost']:g}"))
    if truth["solvable"] is False and truth.get("certificate") is None:
        why = truth.get("certificate_missing")
        why = f" ({why})" if why else ""
        unsolvable = [k for k in truth["proven_by"] if truth["methods"][k]["status"] == "unsolvable"]
        stopped = [k for k, m in truth["methods"].items() if m["status"] in LIMITED]
        if len(unsolvable) >= 2:
            problems.append(("no-certificate", f"{name}: unsolvable, proven by {' and '.join(unsolvable)}, "
                                               f"but no certificate could be made{why}"))
        elif len(unsolvable) == 1 and stopped:
            problems.append(("single-proof", f"{name}: unsolvable, proven by {unsolvable[0]} "
                                             f"alone ({' and '.join(stopped)} stopped at its "
                                             f"limit), and no certificate could be made{why}"))
        else:
            problems.append(("certificate", f"{name}: unsolvable but no certificate could be "
                                            f"made{why}"))
    return problems


def fatal(entry: TaskEntry, problems: list[tuple[str, str]], audit_mode: str) -> list[str]:
    """The problems that fail the task's rule under the configured audit mode."""
    if not entry.external:
        return [m for _, m in problems]
    if audit_mode == "warn":
        return [m for k, m in problems if k in FATAL_FOR_EXTERNAL - WARN_KEEPS]
    return [m for k, m in problems if k in FATAL_FOR_EXTERNAL]
