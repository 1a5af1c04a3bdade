"""The formalizer regime's tables on rows of our own making: the positive control counts
what was seeded beside what was found and fails where the judge missed or flagged, the
formalize table counts each check, and formalize_vs_offline pairs tasks per disguise."""

from __future__ import annotations

import polars as pl

from planaudit.analysis.tables import build_tables, versus_table
from planaudit.formalize.tables import faults_table, formalize_table


def row(model="flawed", method="problem", task="p01", outcome="success", seeded="none",
        first=False, equivalence="equivalent", regime="formalize", disguise="none",
        solvable=True, reference=True, **extra) -> dict:
    return {"regime": regime, "model": model, "reference": reference, "method": method,
            "domain": "blocksworld", "task": task, "disguise": disguise, "solvable": solvable,
            "outcome": outcome, "success": outcome == "success",
            "detected": outcome == "detected", "executable": True, "fault_seeded": seeded,
            "first_faulty": first, "equivalence": equivalence, "parses": True,
            "well_formed": True, "rounds": 1, "input_tokens": 10, "output_tokens": 5,
            "cost_usd": 0.0, "truncated": False, **extra}


def test_the_control_sets_seeded_beside_found_and_fails_on_a_miss_or_a_false_alarm():
    rows = pl.DataFrame([
        row(task="p01", seeded="init-dropped", first=True, equivalence="different",
            outcome="false-abstention"),
        row(task="p02", seeded="init-dropped", first=True, equivalence="different"),
        row(task="p03", seeded="goal-wrong", first=False),  # missed by the judge
        row(task="p04"), row(task="p05", first=True, equivalence="different"),  # false alarm
        row(task="p06", seeded="type-wrong", first=None, equivalence="undecided"),
        row(model="oracle", seeded=None),  # not a faulty reference: not in the control
    ])
    t = {r["fault"]: r for r in faults_table(rows).iter_rows(named=True)}
    assert set(t) == {"init-dropped", "goal-wrong", "type-wrong", "none"}
    assert (t["init-dropped"]["expected"], t["init-dropped"]["found"]) == (2, 2)
    assert t["init-dropped"]["all_found"] is True
    assert (t["goal-wrong"]["found"], t["goal-wrong"]["all_found"]) == (0, False)
    assert (t["type-wrong"]["undecided"], t["type-wrong"]["all_found"]) == (1, False)
    assert (t["none"]["expected"], t["none"]["found"], t["none"]["all_found"]) == (2, 1, False)


def test_the_formalize_table_counts_each_check_among_episodes_that_reached_the_model():
    rows = pl.DataFrame([
        row(task="p01"), row(task="p02", equivalence="different"),  # succeeded, files wrong
        row(task="p03", outcome="malformed", equivalence=None, well_formed=False),
        row(task="p09", outcome="detected", solvable=False),
        row(task="p10", outcome="error", equivalence=None, solvable=False),
    ])
    [t] = formalize_table(rows, lambda hits: f"{sum(hits)}/{len(hits)}").iter_rows(named=True)
    assert (t["n"], t["errors"]) == (5, 1)
    assert t["well_formed"] == "3/4" and t["route_success"] == "2/3"
    assert t["detection"] == "1/1" and t["equivalent"] == "2/4"
    assert t["success_not_equivalent"] == 1


def test_formalize_is_paired_with_offline_per_model_and_disguise_on_shared_tasks():
    rows = [row(task=t, outcome=o, model="m", reference=False)
            for t, o in (("p01", "success"), ("p02", "success"), ("p03", "malformed"))]
    rows += [row(regime="offline", method="direct", task=t, outcome=o, model="m",
                 reference=False, seeded=None, first=None, equivalence=None)
             for t, o in (("p01", "success"), ("p02", "goal-not-reached"),
                          ("p03", "goal-not-reached"), ("p04", "success"))]
    rows += [row(regime="offline", method="direct", task="p01", outcome="success", model="m",
                 reference=False, disguise="deceptive", seeded=None, first=None,
                 equivalence=None)]
    t = versus_table(pl.DataFrame(rows), "formalize", "offline")
    plain = t.filter(pl.col("disguise") == "none").row(0, named=True)
    assert (plain["n"], plain["b"], plain["c"]) == (3, 1, 0)  # p04: offline only, unpaired
    assert plain["formalize_score"] == 2 / 3 and plain["offline_score"] == 1 / 3
    assert t.filter(pl.col("disguise") == "deceptive").is_empty()  # no formalize row there
    tables = build_tables(pl.DataFrame(rows, infer_schema_length=None), n_resamples=50)
    main = tables["main"].filter(pl.col("regime") == "formalize")
    assert main.height == 1 and main["success"][0] == 2 / 3  # beside offline's rows
    assert tables["formalize_vs_offline"].height == t.height
