"""Labelling, metrics and trajectory graph for 10,000 online trajectories, against the
episode they come from.

The trajectories are synthesised (seeded) in the shape the environment records them
(`Environment.trace`): a task read, some sensing, a plan text of grounded actions,
then acts interleaved with queries, re-reads, replans and refused calls, and a submit
with or without a summary; lengths 5-200 turns (the default budget). Four in five follow
a plan (distinct actions, one in ten repeating an earlier one); one in five flails,
acting at random over a Blocksworld-sized vocabulary, so that calls repeat and the graph
is dense with cycles (the worst case for the loop count, which stops at its bound).
Each is labelled, scored against `standard`'s order and turned into its graph
(`compliance.assess.assess`, what every online row runs). The anchor is the wall time
of one in-process online episode of the oracle (ReAct, `standard`) on a prepared task,
the cheapest episode there is: the compliance columns' share of an episode's cost.

With `--transcripts` (default `results/transcripts`, when it exists) it also relabels
every online transcript of a run (each keeps its trace) and reports the cost per real
episode and in total.

With `--planbench` it only reads every recorded model reply of PlanBench (../shared/
planbench, every results file), whole and paragraph by paragraph, and counts how the plan
rule (`compliance.phases.is_plan`) reads them against the rule it replaced (two or more
grounded actions, done or not, counted on the same reading of the text): the texts each
rule calls a plan, and those they disagree on, with the first of each kind.

    .venv/bin/python benchmarks/compliance.py [--n 10000] [--task blocksworld/p04]
                                              [--transcripts results/transcripts]
    .venv/bin/python benchmarks/compliance.py --planbench
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import record  # noqa: E402
from planaudit.compliance.assess import assess  # noqa: E402

ACTIONS = ("pick-up", "put-down", "stack", "unstack")
STANDARD = "read,sense,plan,act,verify"  # `standard`'s expected order
PLANBENCH = ROOT.parent / "shared" / "planbench"
BLOCKS = [f"b{i}" for i in range(6)]


def grounded(rng: random.Random) -> str:
    a = rng.choice(ACTIONS)
    k = 1 if a in ("pick-up", "put-down") else 2
    return "(" + " ".join([a, *rng.sample(BLOCKS, k)]) + ")"


def synthesise(rng: random.Random) -> list[dict]:
    def turn(tool=None, text="", mark="", **args):
        return {"text": text, "tool": tool, "args": args, "mark": mark}

    def plan_text():
        return "Plan:\n" + "\n".join(f"{i}. {grounded(rng)}" for i in range(1, rng.randint(2, 20)))

    flailing = rng.random() < 0.2  # a fifth act at random (dense graphs, many cycles)
    plan = [grounded(rng) for _ in range(rng.randint(4, 60))]
    done = 0

    def action() -> str:
        nonlocal done
        if flailing:
            return grounded(rng)
        if done and rng.random() < 0.1:  # now and then an action again
            return plan[rng.randrange(done)]
        done = min(done + 1, len(plan))
        return plan[done - 1]

    out = [turn("get_task")]
    if rng.random() < 0.7:
        out.append(turn("query_state", predicate=rng.choice(["", "on", "clear"])))
    length = rng.randint(5, 200)
    first = True
    while len(out) < length - 1:
        r = rng.random()
        if r < 0.65:
            text = plan_text() if first and rng.random() < 0.6 else ""
            out.append(turn("act", text, rng.choice(["", "", "", "blocked", "ill-formed"]),
                            action=action()))
            first = False
        elif r < 0.85:
            out.append(turn("query_state", object=rng.choice(BLOCKS)))
        elif r < 0.92:
            out.append(turn(None, plan_text()))
        elif r < 0.96:
            out.append(turn("get_task"))
        else:
            out.append(turn(None, "Let me think about what to do next."))
    summary = "I read the task, sensed, planned, acted and checked; " * rng.randint(0, 3)
    out.append(turn("submit", summary))
    return out


def anchor(task: str, runs: int = 5) -> float:
    """Seconds of one oracle episode in process (ReAct under `standard`), median of runs."""
    from tests.test_reference import task_dir

    from planaudit.compliance.settings import load_settings
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client, ModelConfig
    from planaudit.online.run import run_episode

    tmp = Path(tempfile.mkdtemp())
    folder = task_dir(task, str(tmp / "suite"))
    params = {"plan_setting": load_settings(ROOT / "config" / "plan_settings.yaml")
              ["standard"].to_json()}
    times = []
    for i in range(runs):
        client = Client(ModelConfig("oracle", "reference/oracle"), Cache(tmp / f"cache{i}"))
        start = time.perf_counter()
        asyncio.run(run_episode(client, "react", params, folder, task_name=task))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def real(folder: Path) -> dict | None:
    """The compliance columns of every online episode of a run, from its transcripts."""
    import json

    files = sorted((folder / "online").rglob("*.jsonl")) if (folder / "online").is_dir() else []
    traces = []
    for f in files:
        last = json.loads(f.read_text().splitlines()[-2])  # before the row: the ending record
        if "trace" in last:
            traces.append(last["trace"])
    if not traces:
        print(f"real: no online transcript with a trace under {folder}")
        return None
    start = time.perf_counter()
    for t in traces:
        assess(t, ACTIONS, "standard", STANDARD)
    wall = time.perf_counter() - start
    print(f"real: {len(traces)} online episodes of {folder} ({sum(map(len, traces)) / len(traces):.0f} "
          f"turns on average) relabelled in {wall:.2f} s: {wall / len(traces) * 1e3:.2f} ms an episode")
    return {"episodes": len(traces), "seconds": wall}


def planbench(root: Path = PLANBENCH) -> list[tuple]:
    """The plan rule against the two-action rule on every recorded PlanBench reply."""
    import json
    import re

    from planaudit.compliance.phases import is_plan, mentions

    words = {"blocksworld": ACTIONS, "mystery": ("attack", "feast", "succumb", "overcome")}
    counts: dict[tuple[str, bool, bool], int] = {}
    first: dict[tuple[str, bool, bool], str] = {}
    files = sorted(root.glob("*/results/*/*/*.json"))
    for f in files:
        actions = frozenset(words["mystery" if "mystery" in f.parts[-3] else "blocksworld"])
        for item in json.loads(f.read_text())["instances"]:
            reply = str(item.get("llm_raw_response") or "")
            for kind, text in [("reply", reply)] + [("paragraph", p)
                                                    for p in re.split(r"\n\s*\n", reply)]:
                key = (kind, len(mentions(text, actions)) >= 2, is_plan(text, actions))
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, f"{f.relative_to(root)} #{item['instance_id']}")
    print(f"planbench: {len(files)} results files under {root}")
    rows = []
    for kind in ("reply", "paragraph"):
        total = sum(v for k, v in counts.items() if k[0] == kind)
        for old, new in ((True, True), (False, False), (False, True), (True, False)):
            n = counts.get((kind, old, new), 0)
            where = f" (first: {first[(kind, old, new)]})" if n and old != new else ""
            print(f"  {kind}s: {n} of {total} two-action rule {'plan' if old else 'none'}, "
                  f"plan rule {'plan' if new else 'none'}{where}")
            rows.append(({"reply": "replies"}.get(kind, f"{kind}s"), "plan" if old else "none",
                         "plan" if new else "none", n, total,
                         first[(kind, old, new)] if n and old != new else ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--planbench", action="store_true",
                    help="only compare the plan rule with the two-action rule on PlanBench's replies")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--task", default="blocksworld/p04")
    ap.add_argument("--transcripts", default=str(ROOT / "results" / "transcripts"))
    args = ap.parse_args()
    if args.planbench:
        rows = planbench()
        differ = [r for r in rows if r[1] != r[2]]
        record.write("compliance", {
            f"{r[0]}_{r[1]}_{r[2]}": record.figure(r[3], r[0], f"two-action rule {r[1]}, plan rule "
                                                   f"{r[2]}, of {r[4]}") for r in differ},
            variant="planbench", tables={"rules": record.table(
                ["text", "two-action rule", "plan rule", "texts", "of", "first"], rows,
                "The plan rule against the two-action rule on PlanBench's recorded replies")})
        return
    relabelled = real(Path(args.transcripts))
    rng = random.Random(0)
    traces = [synthesise(rng) for _ in range(args.n)]
    turns = sum(len(t) for t in traces)
    start = time.perf_counter()
    rows = [assess(t, ACTIONS, "standard", STANDARD) for t in traces]
    wall = time.perf_counter() - start
    per = wall / args.n
    bounded = sum(r["loops_bounded"] for r in rows)
    print(f"compliance: {args.n} trajectories ({turns / args.n:.0f} turns on average, "
          f"{max(len(t) for t in traces)} at most) labelled, scored and graphed in {wall:.2f} s "
          f"wall: {per * 1e3:.2f} ms an episode; loop bound hit in {bounded}")
    episode = anchor(args.task)
    print(f"anchor: one oracle episode (react, standard, {args.task}) in process: "
          f"{episode * 1e3:.1f} ms; compliance columns cost {per / episode:.1%} of it")
    figures = {
        "trajectories": record.figure(args.n, "trajectories", "synthetic, seeded"),
        "turns": record.figure(turns / args.n, "turns", "a trajectory, on average"),
        "per_episode": record.figure(per * 1e3, "ms", "labels, metrics and graph of one trajectory"),
        "loop_bound": record.figure(bounded, "trajectories", "the loop count's bound hit"),
        "anchor_episode": record.figure(episode * 1e3, "ms", f"one oracle episode (react, "
                                                             f"standard, {args.task})"),
    }
    if relabelled:
        figures["real_episodes"] = record.figure(relabelled["episodes"], "episodes",
                                                 "online episodes of a run relabelled")
        figures["real_per_episode"] = record.figure(
            relabelled["seconds"] / relabelled["episodes"] * 1e3, "ms", "a real episode")
    record.write("compliance", figures, anchor={
        "name": "one in-process oracle episode (ReAct, standard)", "ratio": round(per / episode, 4),
        "about": "the compliance columns' cost over the episode's"})


if __name__ == "__main__":
    main()
