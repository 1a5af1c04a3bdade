"""What every analysis module knows of a row, in one place below the tables, figures and
report that share it: how a reference model is labelled, which rows count, what scores."""

from __future__ import annotations

import polars as pl

REFERENCE_SUFFIX = " (reference, not an LLM)"
# the regimes the configuration tables and figures are built on (their outcomes and
# baselines); the curriculum and ACPBench have a table (and ACPBench a figure) of their own
MAIN_REGIMES = ("offline", "online")
ACPBENCH = "acpbench"

OK = pl.col("outcome") != "error"  # an unreachable model is kept apart, never a failure
SCORE = pl.col("success") | pl.col("detected")
