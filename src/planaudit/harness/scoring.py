"""A planaudit row as an Inspect score, by the sample contract of `planaudit.interop`.

The row is made by the regime's own code (the offline and online episode, the
curriculum's and ACPBench's `make_row`), so `formal/` has decided its outcome; this
module only files it: value CORRECT for `success`/`detected`, answer the outcome,
explanation the first failure (or the verdict's detail), metadata[ROW] the row.
"""

from __future__ import annotations

import json
import math

from inspect_ai.scorer import CORRECT, INCORRECT, Score

from planaudit.interop import ROW, SUCCESSES

ROW_KEY = "planaudit:row"  # the store key a solver leaves its row under
TRANSCRIPT_KEY = "planaudit:transcript"


def explanation(row: dict) -> str:
    """The first failure in one line, as the pipeline's report names it."""
    if row.get("error"):
        return f"error: {row['error']}"
    parts = []
    if row.get("first_failure_kind"):
        step = row.get("first_failure_step")
        action = row.get("first_failure_action")
        parts.append(f"{row['first_failure_kind']}"
                     + (f" at step {step}" if step is not None else "")
                     + (f" ({action})" if action else ""))
    detail = row.get("first_failure_detail") or row.get("verdict_detail") or row.get(
        "contract_breach")
    if detail:
        parts.append(str(detail))
    return ": ".join(parts) or row["outcome"]


def plain(row: dict) -> dict:
    """The row as JSON values (NaN to None; anything else through json)."""
    def value(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        return v

    return json.loads(json.dumps({k: value(v) for k, v in row.items()}, default=str))


def row_score(row: dict) -> Score:
    return Score(value=CORRECT if row["outcome"] in SUCCESSES else INCORRECT,
                 answer=row["outcome"], explanation=explanation(row),
                 metadata={ROW: plain(row)})


def sample_metadata(row: dict) -> dict:
    from planaudit.interop import SAMPLE_KEYS

    return {k: row[k] for k in SAMPLE_KEYS if k in row}


def stored_row(state) -> dict:
    """The row the task's solver left in the sample's store."""
    from inspect_ai.util import store

    row = store().get(ROW_KEY)
    if row is None:
        raise RuntimeError(f"sample {state.sample_id}: the solver left no planaudit row (this "
                           "task's scorer reads the row its own solver makes)")
    return row
