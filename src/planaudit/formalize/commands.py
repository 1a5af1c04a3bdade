"""`planaudit formalize judge`: files a formalizer wrote elsewhere (a Planetarium or
Text2World output, a colleague's pipeline), judged against the hidden model they describe."""

from __future__ import annotations

import argparse
import json
import sys

from planaudit.commandline import EXIT_NEGATIVE, EXIT_OK, InputError
from planaudit.formal import equivalence

GOOD = ("success", "detected")


def add_parser(sub: argparse._SubParsersAction, config_arg) -> None:
    """`planaudit formalize judge` and the regime's `planaudit formalize shard`."""
    from planaudit.regime import get
    from planaudit.shard import add_shard

    f = sub.add_parser("formalize", help=get("formalize").help)
    fsub = f.add_subparsers(dest="formalize_command", required=True)
    add_shard(fsub, "formalize", config_arg)
    j = fsub.add_parser(
        "judge", help="parse, check, prove, plan on and compare a model's domain and problem "
                      "with the hidden ones (exit 0: equivalent and the route's answer right; "
                      "1: any check failed or the comparison is undecided; 2: bad input)")
    j.add_argument("hidden_domain", help="the hidden model's domain file")
    j.add_argument("hidden_problem", help="the hidden model's problem file")
    j.add_argument("domain", help="the domain file the model wrote (or the hidden one, when "
                                  "the model wrote the problem only)")
    j.add_argument("problem", help="the problem file the model wrote")
    j.add_argument("--json", action="store_true", help="print the judgement as JSON")
    j.add_argument("--max-pairs", type=int, default=equivalence.MAX_PAIRS,
                   help="the equivalence check's bound: reachable state pairs")
    j.add_argument("--max-seconds", type=float, default=equivalence.MAX_SECONDS,
                   help="the equivalence check's bound: CPU seconds")
    j.add_argument("--astar-seconds", type=float, default=300.0,
                   help="CPU seconds for A* on either task")
    j.add_argument("--no-external", action="store_true",
                   help="prove both tasks with planaudit's own search only (no Fast Downward)")
    j.set_defaults(func=cmd_judge)


def cmd_judge(args) -> int:
    from planaudit.formal.truth import Limits
    from planaudit.formalize.judge import judge

    if args.max_pairs < 1 or args.max_seconds <= 0:
        raise InputError("--max-pairs and --max-seconds must be positive")
    limits = Limits(astar_seconds=args.astar_seconds, external=not args.no_external)
    j = judge(args.hidden_domain, args.hidden_problem, args.domain, args.problem,
              limits=limits, max_pairs=args.max_pairs, max_seconds=args.max_seconds)
    if args.json:
        print(json.dumps(j.to_json(), indent=2))
    else:
        print(j.words())
    sys.stdout.flush()
    same = j.equivalence is not None and j.equivalence.verdict == equivalence.EQUIVALENT
    return EXIT_OK if same and j.outcome in GOOD else EXIT_NEGATIVE
