"""The formalizer regime's own tables (`Regime.tables`): the tables stage hands them the
regime's rows, models labelled as every table labels them, and the report's cell (hits of
those that reached the model, share, seeded 95% bootstrap interval over tasks).

- `formalize`: per model x method, each check of the judge as a rate: files that parse,
  that are well formed, the route's success and detection, files equivalent to the
  hidden model, and the episodes where the route succeeded on files that are not (the
  gap an end-to-end check hides);
- `formalize_faults`: the positive control, per reference formalizer x method x fault
  kind: the faults seeded (computed from the seeded draw, apart from the judge) beside
  those the judge found in the first answer, and the episodes seeded with none beside
  those judged equivalent.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from planaudit.reference.formalizer import KINDS

Cell = Callable[[list[bool]], str]
OK = pl.col("outcome") != "error"

TABLE = {"model": pl.String, "reference": pl.Boolean, "method": pl.String, "n": pl.Int64,
         "errors": pl.Int64, "parses": pl.String, "well_formed": pl.String,
         "route_success": pl.String, "detection": pl.String, "equivalent": pl.String,
         "undecided": pl.Int64, "success_not_equivalent": pl.Int64, "mean_rounds": pl.Float64}


def _hits(frame: pl.DataFrame, column: str) -> list[bool]:
    return [bool(v) for v in frame[column].fill_null(False).to_list()]


def formalize_table(rows: pl.DataFrame, cell: Cell) -> pl.DataFrame:
    """Per model x method: each check of the judge among the episodes that reached the model."""
    out = []
    for g in rows.partition_by(["model", "method"], maintain_order=True) if rows.height else []:
        ok = g.filter(OK)
        solvable, unsolvable = ok.filter(pl.col("solvable")), ok.filter(~pl.col("solvable"))
        equivalent = ok.select(pl.col("equivalence") == "equivalent").to_series()
        out.append({
            "model": g["model"][0], "reference": g["reference"][0], "method": g["method"][0],
            "n": g.height, "errors": g.height - ok.height,
            "parses": cell(_hits(ok, "parses")), "well_formed": cell(_hits(ok, "well_formed")),
            "route_success": cell(_hits(solvable, "success")),
            "detection": cell(_hits(unsolvable, "detected")),
            "equivalent": cell([bool(v) for v in equivalent.fill_null(False).to_list()]),
            "undecided": int((ok["equivalence"] == "undecided").sum()),
            "success_not_equivalent": ok.filter(
                pl.col("success") & (pl.col("equivalence") == "different")).height,
            "mean_rounds": ok["rounds"].mean() if ok.height else None,
        })
    return pl.DataFrame(out, schema=TABLE)


FAULTS = {"model": pl.String, "method": pl.String, "fault": pl.String, "expected": pl.Int64,
          "found": pl.Int64, "undecided": pl.Int64, "repaired": pl.Int64, "all_found": pl.Boolean}
NONE = "none"  # episodes seeded with no fault: found means judged to differ (a false alarm)


def faults_table(rows: pl.DataFrame, cell: Cell | None = None) -> pl.DataFrame:
    """Per reference formalizer (flawed, responsive) x method x fault kind: `expected` the
    episodes whose first answer was seeded with the kind (the `fault_seeded` column,
    computed apart from the judge), `found` those the judge found unlike the hidden model
    in that first answer, `undecided` those past the equivalence bound, `repaired` those
    whose final answer was equivalent (after feedback); the row `none`: episodes seeded
    with nothing, `found` counting those judged to differ (a false alarm). `all_found`:
    every seeded fault found (on `none`: no false alarm)."""
    if rows.height == 0 or "fault_seeded" not in rows.columns:
        return pl.DataFrame(schema=FAULTS)
    seeded = rows.filter(OK & pl.col("fault_seeded").is_not_null())
    out = []
    for g in seeded.partition_by(["model", "method"], maintain_order=True) if seeded.height else []:
        for kind in (*KINDS, NONE):
            part = g.filter(pl.col("fault_seeded") == kind)
            if part.is_empty() and kind != NONE:
                continue
            found = int(part["first_faulty"].fill_null(False).sum())
            undecided = int(part["first_faulty"].is_null().sum())
            out.append({"model": g["model"][0], "method": g["method"][0], "fault": kind,
                        "expected": part.height, "found": found, "undecided": undecided,
                        "repaired": int((part["equivalence"] == "equivalent").sum())
                        if kind != NONE else None,
                        "all_found": found == 0 if kind == NONE else found == part.height})
    return pl.DataFrame(out, schema=FAULTS)
