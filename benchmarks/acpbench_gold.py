"""Time and peak memory of ACPBench's gold answers by proof, per question type and domain,
each item's proof run within the bound `planaudit acpbench gold` uses (a child process,
its memory capped, killed past its time: `acpbench/bound.py`).

    .venv/bin/python benchmarks/acpbench_gold.py [--root ../shared/acpbench]
        [--types areach reach] [--memory-mb 4096] [--seconds 300] [--skip alfred]

Per (type, domain): items, how many agree with the file, how many a search limit left
undecided, how many ran past the bound (not answered), the seconds of all its items and
the largest peak resident memory one item's proof added. ACPBench's household domain
(`alfred`, from ALFWorld) is skipped by default (`--skip ''` runs it, under the bound):
one of its areach items grew past 23 GB unbounded. The dev split here holds none of it.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import record
from planaudit.acpbench.agree import compare
from planaudit.acpbench.bound import Bound, PastBound
from planaudit.acpbench.gold import gold_each
from planaudit.acpbench.items import ORDER, read_items
from planaudit.formal.space import Unsupported

ROOT = Path(__file__).resolve().parents[1]
_DOMAIN = re.compile(r"\(\s*domain\s+([^\s()]+)", re.I)


def _domain(item) -> str:
    m = _DOMAIN.search(item.domain)
    return m.group(1).lower() if m else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(ROOT.parent / "shared" / "acpbench"))
    ap.add_argument("--split", default="dev")
    ap.add_argument("--types", nargs="*", default=list(ORDER), choices=ORDER)
    ap.add_argument("--memory-mb", type=int, default=4096)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--skip", nargs="*", default=["alfred"],
                    help="domains not run (PDDL domain names; default: alfred)")
    args = ap.parse_args()
    bound = Bound(args.memory_mb or None, args.seconds or None)
    print(f"bound per item: {bound}")
    print(f"{'type':7} {'domain':18} {'items':>5} {'agree':>5} {'limit':>5} {'past':>5} "
          f"{'seconds':>8} {'peak MB':>8}")
    total_s, total_items, past_all, rows = 0.0, 0, [], []
    for qtype in args.types:
        path = Path(args.root) / "dataset" / qtype / f"{args.split}.gen.json"
        if not path.is_file():
            print(f"{qtype:7} (no {path})")
            continue
        stats: dict[str, dict] = defaultdict(lambda: {"items": 0, "agree": 0, "limit": 0,
                                                      "past": 0, "seconds": 0.0, "peak": 0.0})
        items = [(item, _domain(item)) for item in read_items(path)]
        items = [item for item, domain in items if domain not in args.skip]
        for item, g, error, usage in gold_each(items, bound):
            domain = _domain(item)
            s = stats[domain]
            s["items"] += 1
            if isinstance(error, PastBound):
                s["past"] += 1
                past_all.append(f"{qtype} {domain} {item.id}: {error}")
            elif error is not None and not isinstance(error, Unsupported):
                raise error
            elif error is None:
                s["agree"] += compare(qtype, g, item.answer).agree
                s["limit"] += bool(g.limits)
                s["peak"] = max(s["peak"], usage.peak_mb or 0.0)
            s["seconds"] += usage.seconds
        for domain, s in sorted(stats.items()):
            total_s += s["seconds"]
            total_items += s["items"]
            print(f"{qtype:7} {domain:18} {s['items']:5} {s['agree']:5} {s['limit']:5} "
                  f"{s['past']:5} {s['seconds']:8.1f} {s['peak']:8.1f}")
            rows.append((qtype, domain, s["items"], s["agree"], s["limit"], s["past"],
                         s["seconds"], s["peak"]))
    print(f"total: {total_items} items in {total_s:.1f} s, {len(past_all)} past the bound")
    for line in past_all:
        print(f"  not answered: {line}")
    agree = sum(r[3] for r in rows)
    record.write("acpbench_gold", {
        "items": record.figure(total_items, "items", f"{args.split} split, gen questions"),
        "agree": record.figure(agree, "items", "gold answer by proof equal to the file's"),
        "limit": record.figure(sum(r[4] for r in rows), "items", "left undecided by a search limit"),
        "past": record.figure(len(past_all), "items", "past the bound (not answered)"),
        "seconds": record.figure(total_s, "s", "all items, each in its bounded child process"),
        "peak": record.figure(max((r[7] for r in rows), default=0.0), "MB",
                              "largest peak memory one item's proof added"),
    }, tables={"types": record.table(
        ["type", "domain", "items", "agree", "limit", "past", "seconds", "peak MB"], rows,
        f"Per question type and domain (bound per item: {bound})")},
        notes=[f"skipped domains: {', '.join(args.skip)}"] if args.skip else [])


if __name__ == "__main__":
    main()
