"""The `planaudit planbench` subcommand group: built here so that other commands of
the group (`planbench show`) add themselves beside `replay` without touching cli.py."""

from __future__ import annotations

import json
import sys


def add_parser(sub) -> tuple:
    """Add `planbench` to the top-level subparsers; returns (group parser, its subparsers)
    so that other modules can add their commands to the same group."""
    pb = sub.add_parser("planbench", help="PlanBench: replay recorded results files, "
                                          "repair their plans with LPG, show a generated test case")
    psub = pb.add_subparsers(dest="planbench_command", required=True)
    r = psub.add_parser("replay", help="score a PlanBench results file again and compare with "
                                       "the verdicts it records")
    r.add_argument("results", metavar="RESULTS.json",
                   help="a PlanBench results file (results/<domain>/<model>/task_*.json)")
    r.add_argument("--root", help="the PlanBench root (configs/, instances/); default: the root "
                                   "the file sits in")
    r.add_argument("--dialect", help="how to read responses (2022, 2023, 2024, 2025, published, "
                                     "translated, translated-early, translated-published, strict); "
                                     "default: the one the file was scored by")
    r.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    r.set_defaults(func=cmd_replay)
    h = psub.add_parser("repair", help="heuristic mode: LPG repairs every plan of a t1 or t2 "
                                       "results file; planaudit judges the repaired plans")
    h.add_argument("results", metavar="RESULTS.json",
                   help="a PlanBench results file of t1 or t2 (task_1_plan_generation.json, "
                        "task_2_plan_optimality.json)")
    h.add_argument("--root", help="the PlanBench root (configs/, instances/); default: the root "
                                   "the file sits in")
    h.add_argument("--seed", type=int, default=0, help="LPG's -seed (default: 0)")
    h.add_argument("--timeout", type=float, default=10.0,
                   help="seconds per plan, wall clock and LPG's -cputime")
    h.add_argument("--jobs", type=int, default=1, help="LPG runs at once")
    h.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    h.set_defaults(func=cmd_repair)
    return pb, psub


def cmd_repair(args) -> int:
    from planaudit.formal.repair import RepairUnavailable, lpg_binary
    from planaudit.planbench.material import MaterialError
    from planaudit.planbench.repair import SUMMARY_KEYS, repair_file
    from planaudit.planbench.replay import ResultsError

    try:
        lpg_binary()
        s = repair_file(args.results, args.root, args.seed, args.timeout, args.jobs)
    except RepairUnavailable as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 2
    except (ResultsError, MaterialError) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({k: s[k] for k in SUMMARY_KEYS}))
        return 0
    print(f"{s['file']}: {s['task']} {s['domain']} {s['model']}, dialect {s['dialect']}, "
          f"LPG seed {s['seed']}")
    print(f"  {s['instances']} plans: {s['repaired']} repaired, {s['valid_after_repair']} valid "
          f"after repair; {s['valid_seeds']} valid as given, {s['valid_seeds_unchanged']} of them "
          f"unchanged ({s['valid_seeds_unchanged_reordered']} once reordered)")
    print(f"  mean distance {s['mean_distance']} actions to LPG's plans as returned "
          f"({s['mean_distance_reordered']} reordered towards the model's), mean repaired length "
          f"{s['mean_repaired_length']}, {s['mean_seconds']} s a plan")
    print(f"  LPG: {s['statuses']}; {s['dropped_steps']} steps dropped (not groundable)")
    return 0


def cmd_replay(args) -> int:
    from planaudit.planbench.material import MaterialError
    from planaudit.planbench.replay import ResultsError, replay

    try:
        summary = replay(args.results, args.root, args.dialect)
    except (ResultsError, MaterialError) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary))
        return 0
    s = summary
    print(f"{s['file']}: {s['task']} {s['domain']} {s['model']}, dialect {s['dialect']}")
    print(f"  {s['scored']} scored of {s['instances']}: {s['correct']} correct "
          f"(recorded {s['recorded_correct']}), agree on {s['agree']}")
    apart = [f"{s[k]} {what}" for k, what in (("no_response", "without a response"),
                                              ("empty", "empty"),
                                              ("no_verdict", "without a recorded verdict")) if s[k]]
    if apart:
        print(f"  not scored: {', '.join(apart)}")
    if s["task"] == "t3":
        for k in ("binary", "w_type", "w_expl"):
            print(f"  {k}: {s['correct_' + k]} (recorded {s['recorded_' + k]})")
    for d in s["disagreements"]:
        print(f"  instance {d['instance_id']}: ours {d['ours']}, recorded {d['recorded']}: {d['why']}")
    for u in s["unreadable"]:
        print(f"  instance {u['instance_id']} unreadable: {u['why']}")
    for name, d in s["dialects"].items():
        print(f"  dialect {name}: {d['correct']} correct, agree {d['agree']}/{d['scored']}")
    return 0
