"""A trajectory as a graph: nodes are the distinct tool calls (tool name and normalised
arguments), temporal edges join consecutive calls (counted with multiplicity), loops are
the simple cycles of the collapsed directed graph (self-loops included).

A graph can hold exponentially many simple cycles, so counting stops at `max_loops`
(networkx enumerates cycles in time linear in the graph per cycle found, so the bound also
bounds the time); `bounded` says the bound was hit (the count is then a floor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice, pairwise

from planaudit.contract import parse_action

MAX_LOOPS = 1_000


@dataclass(frozen=True)
class Graph:
    nodes: int
    temporal_edges: int
    loops: int
    bounded: bool


def node(tool: str, args: dict | None) -> str:
    """A call as a node: `act (stack a b)`, `query_state on/a`, `get_task`."""
    args = args or {}
    if tool == "act":
        raw = str(args.get("action", ""))
        step = parse_action(raw)
        text = "(" + " ".join((step[0], *step[1])) + ")" if step else " ".join(raw.lower().split())
        return f"act {text}"
    if tool == "query_state":
        bits = [str(args.get(k) or "").strip().lower() for k in ("predicate", "object")]
        return "query_state" + (" " + "/".join(bits) if any(bits) else "")
    return tool


def trajectory_graph(calls: Sequence[tuple[str, dict]], max_loops: int = MAX_LOOPS) -> Graph:
    import networkx as nx  # here: a trajectory without a repeated call needs no graph library

    names = [node(t, a) for t, a in calls]
    if len(set(names)) == len(names):  # no call repeats: a path, no cycle (the common case)
        return Graph(len(names), max(len(names) - 1, 0), 0, False)
    g = nx.DiGraph()
    g.add_nodes_from(names)
    g.add_edges_from(pairwise(names))
    bounded = False
    loops = 0
    if g.number_of_edges():
        found = sum(1 for _ in islice(nx.simple_cycles(g), max_loops + 1))
        loops = min(found, max_loops)
        bounded = found > max_loops
    return Graph(len(set(names)), max(len(names) - 1, 0), loops, bounded)
