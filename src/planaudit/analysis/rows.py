"""What every analysis module knows of a row, in one place below the tables, figures and
report that share it: how a reference model is labelled, which rows count, what scores."""

from __future__ import annotations

import polars as pl

REFERENCE_SUFFIX = " (reference, not an LLM)"
# a classical planner's rows (model planner/..., the offline method `planner` it alone runs)
PLANNER_SUFFIX = " (classical planner, not an LLM)"
PLANNER_METHOD = "planner"
# the regimes the configuration tables and figures are built on (their outcomes and
# baselines); the curriculum and ACPBench have a table (and ACPBench a figure) of their own
MAIN_REGIMES = ("offline", "online")
ACPBENCH = "acpbench"

# an unreachable model is kept apart, never a failure; every other outcome counts, the
# model's own `budget-exhausted` and `context-exhausted` included (in every denominator)
OK = pl.col("outcome") != "error"
SCORE = pl.col("success") | pl.col("detected")
