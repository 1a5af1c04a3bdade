"""ACPBench's subcommands: `gold` (every item of an ACPBench gen file answered by proof,
and the agreement with the file's answers, per type), `shard` (the workflow's job: one
model x question type) and `show` (one generated question with its proven truth)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from planaudit.acpbench.agree import compare
from planaudit.acpbench.bound import DEFAULT, Bound, PastBound
from planaudit.acpbench.gold import gold_each
from planaudit.acpbench.items import ORDER, ItemsError, read_items
from planaudit.formal.space import Unsupported


def add_parser(sub, config_arg=None) -> None:
    ac = sub.add_parser("acpbench", help="ACPBench: its questions answered by proof from their PDDL")
    asub = ac.add_subparsers(dest="acpbench_command", required=True)
    g = asub.add_parser("gold", help="answer every item of a gen file from its PDDL and question "
                                     "alone; compare with the file's answers per type")
    g.add_argument("file", metavar="FILE.json[.gz]",
                   help="an ACPBench gen file (its items' PDDL, questions and answers)")
    g.add_argument("--json", action="store_true",
                   help='print {"items": [{"id", "task", "answer"}...], "summary": {...}, '
                        '"past_bound": [{"id", "task", "reason"}...]}')
    g.add_argument("--max-memory-mb", type=_bound_value(int), default=DEFAULT.memory_mb,
                   help=f"memory one item's proof may add, in a child process (default "
                        f"{DEFAULT.memory_mb}; 0: no bound); an item past it is not answered, "
                        "and named")
    g.add_argument("--max-seconds", type=_bound_value(float), default=DEFAULT.seconds,
                   help=f"wall-clock seconds one item's proof may take (default "
                        f"{DEFAULT.seconds:g}; 0: no bound)")
    g.set_defaults(func=cmd_gold)
    sh = asub.add_parser("shard", help="run one model x question type over the acpbench "
                                       "section's domains and forms")
    if config_arg:
        config_arg(sh)
    sh.add_argument("--spec", help="the config slice as JSON (the workflow passes this)")
    sh.add_argument("--model", required=True, help="a model's name in the config's models")
    sh.add_argument("--type", required=True, dest="qtype",
                    help="the question type: " + ", ".join(ORDER))
    sh.add_argument("--suite", default="results/suite", help="the prepared suite folder")
    sh.add_argument("--out", required=True, help="the job's Parquet file")
    sh.add_argument("--transcripts", required=True, help="folder for the questions' transcripts")
    sh.set_defaults(func=cmd_shard)
    s = asub.add_parser("show", help="one generated question, its proven truth and an answer "
                                     "that scores full marks")
    if config_arg:
        config_arg(s)
    s.add_argument("qtype", metavar="TYPE", help="the question type: " + ", ".join(ORDER))
    s.add_argument("task", metavar="DOMAIN/TASK", help="a suite task (gripper/p02)")
    s.add_argument("--form", default="gen", choices=("bool", "mcq", "gen"),
                   help="the question's form: yes/no, multiple choice or generative")
    s.add_argument("--state", type=int, default=0, help="which drawn state (0: a random walk, "
                                                       "1: a plan prefix, ...)")
    s.add_argument("--seed", type=int, help="default: the config's acpbench seed")
    s.set_defaults(func=cmd_show)


def _bound_value(kind):
    """An argparse type: a positive number, 0 meaning no bound (None)."""
    def read(text: str):
        value = kind(text)
        if value < 0:
            raise ValueError(text)
        return value or None
    read.__name__ = kind.__name__
    return read


def run(path, bound: Bound = DEFAULT) -> tuple[list[dict], dict]:
    """Per item: id, task, our answer, agreement, reason, limits, notes, seconds, the
    peak memory its proof added (MB) and `past_bound` (why it was not answered, or None);
    and the summary per type (items, agree, limit hit, past the bound, seconds). Each
    item's proof runs within `bound` (`bound.py`)."""
    rows, summary = [], {}
    for item, g, error, usage in gold_each(read_items(path), bound):
        base = {"id": item.id, "task": item.task, "answer": None, "agree": False,
                "limits": [], "notes": [], "peak_mb": None, "past_bound": None}
        if isinstance(error, Unsupported):
            row = {**base, "reason": f"unsupported: {error}"}
        elif isinstance(error, PastBound):
            row = {**base, "reason": f"not answered: {error}", "past_bound": str(error)}
        elif error is not None:
            raise error
        else:
            a = compare(item.task, g, item.answer)
            row = {**base, "answer": g.answer, "agree": a.agree, "reason": a.reason,
                   "limits": g.limits, "notes": g.notes, "peak_mb": usage.peak_mb}
        row["seconds"] = usage.seconds
        rows.append(row)
        s = summary.setdefault(item.task, {"items": 0, "agree": 0, "limit_hit": 0,
                                           "past_bound": 0, "seconds": 0.0})
        s["items"] += 1
        s["agree"] += row["agree"]
        s["limit_hit"] += bool(row["limits"])
        s["past_bound"] += row["past_bound"] is not None
        s["seconds"] = round(s["seconds"] + row["seconds"], 3)
    summary = {k: summary[k] for k in sorted(summary, key=lambda t: ORDER.index(t))}
    return rows, summary


def cmd_gold(args) -> int:
    bound = Bound(args.max_memory_mb, args.max_seconds)
    try:
        rows, summary = run(args.file, bound)
    except ItemsError as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 2
    past = [{k: r[k] for k in ("id", "task")} | {"reason": r["past_bound"]} for r in rows
            if r["past_bound"]]
    if args.json:
        print(json.dumps({"items": [{k: r[k] for k in ("id", "task", "answer")} for r in rows],
                          "summary": summary, "past_bound": past}))
        return 0
    for task, s in summary.items():
        print(f"{task}: {s['agree']}/{s['items']} agree, {s['limit_hit']} with a limit hit, "
              f"{s['past_bound']} past the bound ({bound}), {s['seconds']:.1f} s")
    for r in rows:
        if not r["agree"]:
            print(f"  {r['task']} {r['id']}: {r['reason']}")
        elif r["limits"]:
            print(f"  {r['task']} {r['id']}: agrees; limit hit: {'; '.join(r['limits'])}")
    return 0


def _input_error(message: str):
    from planaudit.commandline import InputError

    return InputError(message)


def cmd_shard(args) -> int:
    from planaudit.acpbench.questions import QuestionError
    from planaudit.acpbench.shard import AcpbenchShardFailed, run_acpbench_shard
    from planaudit.commandline import read_config
    from planaudit.experiment import ConfigError, Experiment
    from planaudit.llm.batch import BatchFailed
    from planaudit.suite.world import WorldError

    experiment = Experiment.from_dict(json.loads(args.spec) if args.spec else read_config(args))
    try:
        entry = experiment.model(args.model)
        entry.require()
        frame, skipped = run_acpbench_shard(experiment, entry, args.qtype, Path(args.suite),
                                            args.out, args.transcripts)
    except (ConfigError, QuestionError, WorldError, ItemsError, FileNotFoundError,
            ValueError) as e:
        raise _input_error(str(e)) from None
    except (AcpbenchShardFailed, BatchFailed) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 1
    right = int(frame["success"].sum()) if frame.height else 0
    print(f"acpbench/{args.model}/{args.qtype}: {right}/{frame.height} correct", file=sys.stderr)
    for (domain, qtype, form, why), n in sorted(skipped.counts.items()):
        print(f"  not posed: {domain} {qtype} {form}: {n} ({why})", file=sys.stderr)
    past = skipped.past_bound()
    if past:
        from planaudit.acpbench.shard import not_posed_path

        print(f"acpbench/{args.model}/{args.qtype}: {sum(past.values())} questions not asked: "
              f"their gold ran past its bound (listed in {not_posed_path(args.out)})",
              file=sys.stderr)
    return 0


def cmd_show(args) -> int:
    from planaudit.acpbench.generate import Skipped, questions
    from planaudit.acpbench.questions import QuestionError
    from planaudit.acpbench.shard import settings
    from planaudit.commandline import read_config
    from planaudit.suite.world import WorldError, prepared_domain

    if "/" not in args.task:
        raise _input_error(f"'{args.task}': name a task as DOMAIN/TASK (gripper/p02)")
    domain, task = args.task.split("/", 1)
    config = read_config(args)
    cfg = settings(config.get("acpbench") or {})
    seed = cfg["seed"] if args.seed is None else args.seed
    skipped = Skipped()
    try:
        suite_dir = prepared_domain(config, domain, Path(config.get("results", "results")))
        found = questions(suite_dir, domain, [args.qtype], [args.form], None, args.state + 1,
                          seed, only=task, skipped=skipped)
    except (QuestionError, WorldError, ValueError, FileNotFoundError) as e:
        raise _input_error(str(e)) from None
    found = [q for q in found if q.state == f"s{args.state}"]
    if not found:
        why = "; ".join(r for (_, _, _, r) in skipped.counts) or "no such state"
        raise _input_error(f"{args.task}: no {args.qtype} {args.form} question on state "
                           f"s{args.state} ({why})")
    q = found[0]
    print(f"== {q.type} {q.form} {q.id} (seed {seed}) ==\n")
    print(q.prompt)
    print("\n== proven truth ==")
    print(json.dumps({k: v for k, v in q.truth.items() if k not in ("facts", "fixed")},
                     indent=1))
    print("\n== an answer that scores full marks ==")
    print(q.oracle)
    return 0
