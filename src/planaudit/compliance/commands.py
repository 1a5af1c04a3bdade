"""`planaudit compliance score`: plan compliance of phase sequences recorded elsewhere."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from planaudit.commandline import (
    EXIT_OK,
    InputError,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    cp = sub.add_parser("compliance", help="plan compliance of phase sequences")
    cpsub = cp.add_subparsers(dest="compliance_command", required=True)
    cs = cpsub.add_parser("score", help="PPC, POC, PPF and PC of sequences in the paper's layout "
                                        "([{instance_id, resolution_status, languatory}])")
    cs.add_argument("file", help="the sequences: a JSON list in the paper's layout")
    cs.add_argument("--expected", required=True, help="the expected phases in order: N,R,P,V")
    cs.add_argument("--json", action="store_true",
                    help="print the scores as JSON instead of a table")
    cs.set_defaults(func=cmd_compliance_score)


def cmd_compliance_score(args) -> int:
    from planaudit.compliance.external import (
        SequenceError,
        parse_expected,
        read_sequences,
        render,
        score_sequences,
    )

    try:
        expected = parse_expected(args.expected)
        result = score_sequences(read_sequences(Path(args.file)), expected)
    except SequenceError as e:
        raise InputError(str(e)) from None
    print(json.dumps(result, indent=2) if args.json else render(result))
    return EXIT_OK
