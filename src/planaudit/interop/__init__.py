"""Runs exchanged with the community's tools: Inspect eval logs out and in, Every Eval Ever
records out.

inspect_ai and every_eval_ever are imported only inside the modules that write or read their
formats (`inspect_log.py`, `inspect_rows.py`, `eee.py`), never by the default pipeline.

The contract between planaudit's Inspect samples (the export here, and the tasks of
`planaudit.harness` run under `inspect eval`) and the import: every sample carries one score
under the scorer name `SCORER`, its value `CORRECT` when the episode's outcome is a success
(`success`, `detected`), its answer the outcome, its explanation the first failure or the
verdict's detail, and `score.metadata[ROW]` the episode's planaudit row (the columns of
workflow/schemas/row.schema.yaml); the sample's own metadata carries the task's facts
(`SAMPLE_KEYS`) so that `inspect view` shows them without opening the score.
"""

from __future__ import annotations

SCORER = "outcome"
ROW = "row"
SUCCESSES = ("success", "detected")
# the row's columns a sample's metadata repeats for readers of the log
SAMPLE_KEYS = ("regime", "model", "reference", "method", "domain", "task", "disguise", "solvable",
               "optimal_length", "plan_setting", "source", "form")


class InteropError(Exception):
    """A results folder or a log that cannot be exchanged: the message names the file."""
