"""Simulated participants: a client of the study server, kept outside its package.

A cohort file scripts participants (`cohort`), `planaudit study cohort` writes one to
given counts (`cohorts`), and `planaudit study simulate` plays it in headless Chromium
against a running `planaudit study serve` (`simulate`), as people would reach it: over
HTTP, through the pages. The server knows nothing of them but their platform ids'
prefix. This module holds only what the command line needs, so building the parser
imports no browser code."""

from __future__ import annotations

import argparse


def cohort_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, metavar="STUDY.yaml", help="the study config")
    p.add_argument("--counts", required=True, metavar="COUNTS.yaml",
                   help="scripts per arm and intent (see planaudit.simulated.cohorts)")
    p.add_argument("--out", required=True, metavar="COHORT.yaml", help="the cohort file written")


CHROMIUM_ENV = "PLANAUDIT_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 60_000  # how long a page may take to come (Playwright's own waiting)


def simulate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cohort", required=True, metavar="COHORT.yaml",
                   help="the scripted participants (format: planaudit.simulated.cohort)")
    p.add_argument("--url", required=True, help="the study's address (where participants "
                                                "enter, e.g. http://127.0.0.1:8000/)")
    p.add_argument("--concurrency", type=int, default=4, metavar="N",
                   help="participants at once (default: 4)")
    p.add_argument("--out", metavar="SUMMARY.json", help="also write the summary here")
    p.add_argument("--chromium", metavar="PATH",
                   help=f"the Chromium to drive (default ${CHROMIUM_ENV}, else {DEFAULT_CHROMIUM})")
    p.add_argument("--timeout", type=float, default=WAIT_MS / 1000, metavar="SECONDS",
                   help="how long a page may take to come (default: %(default)s)")


def add_parsers(ss: argparse._SubParsersAction) -> None:
    """`planaudit study cohort` and `planaudit study simulate`, beside the server's own."""
    co = ss.add_parser("cohort", help="a cohort file of simulated participants scripted to "
                                      "given counts per arm and intent")
    cohort_arguments(co)
    co.set_defaults(func=lambda args: _main("cohorts", args))
    si = ss.add_parser("simulate", help="play a cohort file's scripted participants in headless "
                                        "Chromium against a running study (SIMULATED-... ids)")
    simulate_arguments(si)
    si.set_defaults(func=lambda args: _main("simulate", args))


def _main(module: str, args) -> int:
    """A subcommand's `main`, imported only when it runs (the parser is built at every
    `planaudit` start; the simulator's imports would add some 14 ms to each)."""
    import importlib

    return importlib.import_module(f"planaudit.simulated.{module}").main(args)
