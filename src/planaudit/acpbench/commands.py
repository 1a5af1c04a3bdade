"""`planaudit acpbench gold`: every item of an ACPBench gen file answered by proof,
and the agreement with the answers the file records, per question type."""

from __future__ import annotations

import json
import sys
import time

from planaudit.acpbench.agree import compare
from planaudit.acpbench.gold import gold
from planaudit.acpbench.items import ORDER, ItemsError, read_items
from planaudit.formal.space import Unsupported


def add_parser(sub) -> None:
    ac = sub.add_parser("acpbench", help="ACPBench: its questions answered by proof from their PDDL")
    asub = ac.add_subparsers(dest="acpbench_command", required=True)
    g = asub.add_parser("gold", help="answer every item of a gen file from its PDDL and question "
                                     "alone; compare with the file's answers per type")
    g.add_argument("file", metavar="FILE.json[.gz]")
    g.add_argument("--json", action="store_true",
                   help='print {"items": [{"id", "task", "answer"}...], "summary": {...}}')
    g.set_defaults(func=cmd_gold)


def run(path) -> tuple[list[dict], dict]:
    """Per item: id, task, our answer, agreement, reason, limits, notes, seconds; and the
    summary per type (items, agree, limit hit, seconds)."""
    rows, summary = [], {}
    for item in read_items(path):
        start = time.perf_counter()
        try:
            g = gold(item)
            a = compare(item.task, g, item.answer)
            row = {"id": item.id, "task": item.task, "answer": g.answer, "agree": a.agree,
                   "reason": a.reason, "limits": g.limits, "notes": g.notes}
        except Unsupported as e:
            row = {"id": item.id, "task": item.task, "answer": None, "agree": False,
                   "reason": f"unsupported: {e}", "limits": [], "notes": []}
        row["seconds"] = round(time.perf_counter() - start, 3)
        rows.append(row)
        s = summary.setdefault(item.task, {"items": 0, "agree": 0, "limit_hit": 0,
                                           "seconds": 0.0})
        s["items"] += 1
        s["agree"] += row["agree"]
        s["limit_hit"] += bool(row["limits"])
        s["seconds"] = round(s["seconds"] + row["seconds"], 3)
    summary = {k: summary[k] for k in sorted(summary, key=lambda t: ORDER.index(t))}
    return rows, summary


def cmd_gold(args) -> int:
    try:
        rows, summary = run(args.file)
    except ItemsError as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"items": [{k: r[k] for k in ("id", "task", "answer")} for r in rows],
                          "summary": summary}))
        return 0
    for task, s in summary.items():
        print(f"{task}: {s['agree']}/{s['items']} agree, {s['limit_hit']} with a limit hit, "
              f"{s['seconds']:.1f} s")
    for r in rows:
        if not r["agree"]:
            print(f"  {r['task']} {r['id']}: {r['reason']}")
        elif r["limits"]:
            print(f"  {r['task']} {r['id']}: agrees; limit hit: {'; '.join(r['limits'])}")
    return 0
