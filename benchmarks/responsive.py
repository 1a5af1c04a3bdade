"""What the positive control costs: computing each episode's expected score, against the
episode it describes.

For the `responsive` entry of a config, on every undisguised task of a prepared suite
(`make run` prepares `results/suite`), under every offline strategy and online
architecture the computation knows, it times `reference.expected.expectation` (every
combination of the calibrator's draws, each played on the hidden model) and the real
episode through the pipeline (`offline.run` / `online.run`, the calibrator answering in
process, a fresh cache so that nothing is answered from disk), and prints both per
episode and their ratio per method: the share the control adds to its own episodes.
The expectation is judged by VAL where it is installed (`--witness`). It also checks
the control itself: every episode must end as computed, and an `error` episode (a
failed call, a calibrator that lost track of the conversation) is a failure, not a row
to leave out; it prints the count per method and exits 1 when any episode failed.

    .venv/bin/python benchmarks/responsive.py [--config config/config.yaml]
                                              [--suite results/suite] [--tasks N]
                                              [--witness auto|val|formal]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.append(str(Path(__file__).resolve().parent))  # benchmarks/record.py, also under runpy
import record
from planaudit.experiment import ModelEntry
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.reference.expected import MECHANISM, WITNESSES, expectation, resolve


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--suite", default="results/suite")
    ap.add_argument("--tasks", type=int, default=None, help="only the first N tasks")
    ap.add_argument("--witness", choices=WITNESSES, default="auto")
    args = ap.parse_args()
    config = yaml.safe_load(Path(args.config).read_text())
    entry = next((m for m in config["models"] if m["model"] == "reference/responsive"), None)
    if entry is None:
        sys.exit(f"{args.config}: no reference/responsive model")
    folders = sorted(p.parent for p in Path(args.suite).glob("*/*/truth.json")
                     if "@" not in p.parent.name)
    if not folders:
        sys.exit(f"{args.suite}: no prepared tasks (run `make run` first)")
    folders = folders[:args.tasks]
    meta_base = ModelEntry.from_dict(entry).reference
    print(f"{len(folders)} tasks, model {entry['name']}, witness {resolve(args.witness)}; "
          "ms per episode")
    print(f"{'regime':8} {'method':15} {'episode':>9} {'expected':>9} {'ratio':>7} "
          f"{'as computed':>12} {'errors':>7}")
    totals = [0.0, 0.0]
    failed: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for regime, methods in MECHANISM.items():
            section = config.get(regime, {})
            for method in methods:
                params = {**(section.get("params") or {}).get(method, {}),
                          "budget": section.get("budget", 200)}
                if regime == "offline":
                    from planaudit.offline.run import run_episode
                else:
                    from planaudit.online.run import run_episode
                client = Client(ModelConfig(entry["name"], entry["model"]),
                                Cache(Path(tmp) / f"{regime}-{method}"))
                episode = expected = 0.0
                computed = errors = 0
                for folder in folders:
                    name = f"{folder.parent.name}/{folder.name}"
                    t0 = time.perf_counter()
                    row, _ = asyncio.run(run_episode(client, method, params, folder,
                                                     task_name=name, reference_meta=meta_base))
                    t1 = time.perf_counter()
                    _, predicted = expectation({"task_dir": str(folder), "task": name,
                                                "sample": 0, **meta_base}, regime, method,
                                               params, witness=args.witness)
                    t2 = time.perf_counter()
                    episode += t1 - t0
                    expected += t2 - t1
                    if row["outcome"] == "error":
                        errors += 1
                        failed.append(f"{regime} {method} {name}: error ({row.get('error')})")
                    elif bool(row["success"] or row["detected"]) == predicted:
                        computed += 1
                    else:
                        failed.append(f"{regime} {method} {name}: {row['outcome']}, "
                                      f"computed {'a' if predicted else 'no'} success")
                totals[0] += episode
                totals[1] += expected
                n = len(folders)
                print(f"{regime:8} {method:15} {1000 * episode / n:9.1f} "
                      f"{1000 * expected / n:9.1f} {expected / episode:7.3f} "
                      f"{f'{computed} of {n}':>12} {errors:7d}")
                rows.append((regime, method, 1000 * episode / n, 1000 * expected / n,
                             expected / episode, computed, n, errors))
    print(f"all methods: episodes {totals[0]:.1f} s, expectations {totals[1]:.1f} s, "
          f"ratio {totals[1] / totals[0]:.3f}")
    record.write("responsive", {
        "episodes": record.figure(sum(r[6] for r in rows), "episodes", f"{len(folders)} tasks, every "
                                                                       "method"),
        "as_computed": record.figure(sum(r[5] for r in rows), "episodes", "ended as computed"),
        "errors": record.figure(sum(r[7] for r in rows), "episodes", "ended as error"),
        "failed": record.figure(len(failed), "episodes", "not as computed (the control fails if "
                                                         "any)"),
        "episodes_s": record.figure(totals[0], "s", "the episodes, through the pipeline"),
        "expected_s": record.figure(totals[1], "s", "their expected scores"),
    }, anchor={"name": "the episodes the control describes", "ratio": round(totals[1] / totals[0], 3),
               "about": "the expectation's time over the episodes' time"},
        tables={"methods": record.table(
            ["regime", "method", "episode ms", "expected ms", "ratio", "as computed", "of",
             "errors"], rows, f"Per method (witness {resolve(args.witness)})")})
    if failed:
        print(f"the control FAILS: {len(failed)} episodes did not end as computed "
              "(errors among them):")
        print("\n".join(f"  {f}" for f in failed))
        return 1
    print("the control holds: every episode ended as computed, none as error")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
