"""One online episode's compliance columns, from its trace (see `phases`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from planaudit.compliance.graph import trajectory_graph
from planaudit.compliance.metrics import score
from planaudit.compliance.phases import encode, label, order_names, order_text

COLUMNS = ("plan_setting", "plan_order", "phases", "ppc", "poc", "ppf", "pc", "strict_compliance", "nodes",
           "temporal_edges", "loops", "loops_bounded")


def assess(trace: Sequence[dict], actions: Iterable[str], setting: str, order: str) -> dict:
    """The row's compliance columns: the run-length encoded phases, the metrics against
    `order` (phase names joined by commas; null without one) and the trajectory graph's
    measures."""
    return assessment(trace, actions, setting, order)[0]


def assessment(trace: Sequence[dict], actions: Iterable[str], setting: str,
               order: str) -> tuple[dict, list[dict]]:
    """`assess`'s columns and every labelled step for the transcript (phase, turn, mark),
    from one labelling of the trace."""
    steps = label(trace, actions)
    phases = [s.phase for s in steps]
    expected = order_names(order)
    row: dict = {"plan_setting": setting, "plan_order": order_text(expected),
                 "phases": encode(phases)}
    if expected:
        c = score(phases, expected)
        row |= {"ppc": c.ppc, "poc": c.poc, "ppf": c.ppf, "pc": c.pc, "strict_compliance": c.strict}
    else:
        row |= {"ppc": None, "poc": None, "ppf": None, "pc": None, "strict_compliance": None}
    g = trajectory_graph([(t["tool"], t.get("args") or {}) for t in trace if t.get("tool")])
    row |= {"nodes": g.nodes, "temporal_edges": g.temporal_edges, "loops": g.loops,
            "loops_bounded": g.bounded}
    marks = [{"phase": s.phase, "turn": s.turn, **({"mark": s.mark} if s.mark else {})}
             for s in steps]
    return row, marks
