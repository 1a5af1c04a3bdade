"""Plan-compliance tables: how well online agents follow the workflow of their plan
setting, whether following it goes with success, and whether a setting changes success.

- `compliance`: mean PPC, POC, PPF, PC (and the share strictly compliant), with the
  trajectory graph's means, per model x architecture x setting, over all counted
  episodes and split by success and failure (solvable tasks: success or not).
- `compliance_tests`: per model x architecture (settings with an order pooled), the
  two-sided Mann-Whitney U test of PC on successes vs failures, and Pearson's r of PC
  against nodes, temporal edges and loops.
- `settings`: success under each setting against `standard`, exact McNemar paired by
  task (first repeat), Holm-corrected within each family (LLMs, references apart); the
  same on the deterministic subset (tasks whose outcome is the same in every repeat of
  both settings), where `online.epochs` > 1.
- `determinism`: per model x architecture x setting, how many tasks end the same way in
  every repeat, and success on that subset.

Rows without the compliance columns (offline rows, older shards) give header-only tables.
Rows written before the phase labels became names (`U_1`, order `USPAV`) are read with
today's names (`compliance.phases.runs_named`, `order_names`).
"""

from __future__ import annotations

import math

import polars as pl

from planaudit.analysis.rows import OK, REFERENCE_SUFFIX
from planaudit.analysis.stats import holm, mcnemar_exact
from planaudit.compliance.phases import order_names, order_text, runs_named

COMPLIANCE_TABLES = ("compliance", "compliance_tests", "settings", "determinism")
METRICS = ("ppc", "poc", "ppf", "pc")
GRAPH = ("nodes", "temporal_edges", "loops")
NEEDED = ("plan_setting", "phases", *METRICS, "strict_compliance", *GRAPH)
KEY = ["model", "method", "plan_setting"]
BASELINE_SETTING = "standard"


def compliance_rows(ep: pl.DataFrame) -> pl.DataFrame:
    """The online rows that carry compliance columns, counted (no `error`), the model
    labelled as a reference where it is one."""
    if ep.is_empty() or any(c not in ep.columns for c in NEEDED):
        return ep.head(0).with_columns(*(pl.lit(None).alias(c) for c in NEEDED
                                         if c not in ep.columns))
    rows = ep.filter((pl.col("regime") == "online") & pl.col("plan_setting").is_not_null() & OK)
    label = pl.when(pl.col("reference")).then(pl.col("model") + REFERENCE_SUFFIX).otherwise(
        pl.col("model"))
    if "epoch" not in rows.columns:
        rows = rows.with_columns(pl.lit(0).alias("epoch"))
    return rows.with_columns(label.alias("model"), pl.col("epoch").fill_null(0),
                             *named_phases(rows))


def named_phases(rows: pl.DataFrame) -> list[pl.Expr]:
    """`phases` and `plan_order` in today's phase names, whenever the row was written."""
    out = [pl.lit(pl.Series("phases", [None if p is None else runs_named(p)
                                       for p in rows["phases"].to_list()],
                            dtype=pl.List(pl.String)))]
    if "plan_order" in rows.columns:
        out.append(pl.lit(pl.Series("plan_order", [None if o is None else order_text(order_names(o))
                                                   for o in rows["plan_order"].to_list()],
                                    dtype=pl.String)))
    return out


COMPLIANCE = {"model": pl.String, "method": pl.String, "plan_setting": pl.String,
              "episodes": pl.String, "n": pl.Int64, "ppc": pl.Float64, "poc": pl.Float64,
              "ppf": pl.Float64, "pc": pl.Float64, "strict": pl.Float64,
              "nodes": pl.Float64, "temporal_edges": pl.Float64, "loops": pl.Float64}


def compliance_table(ep: pl.DataFrame) -> pl.DataFrame:
    rows = []
    data = compliance_rows(ep)
    for g in data.partition_by(KEY, maintain_order=True):
        split = {"all": g, "success": g.filter(pl.col("success")),
                 "failure": g.filter(pl.col("solvable") & ~pl.col("success"))}
        for name, part in split.items():
            row = {"model": g["model"][0], "method": g["method"][0],
                   "plan_setting": g["plan_setting"][0], "episodes": name, "n": part.height}
            for c in (*METRICS, *GRAPH):
                row[c] = part[c].cast(pl.Float64).mean() if part.height else None
            strict = part["strict_compliance"].drop_nulls()
            row["strict"] = strict.cast(pl.Float64).mean() if strict.len() else None
            rows.append(row)
    return pl.DataFrame(rows, schema=COMPLIANCE)


TESTS = {"model": pl.String, "method": pl.String, "n_success": pl.Int64, "n_failure": pl.Int64,
         "pc_success": pl.Float64, "pc_failure": pl.Float64, "mwu_u": pl.Float64,
         "mwu_p": pl.Float64, "r_nodes": pl.Float64, "p_nodes": pl.Float64,
         "r_temporal_edges": pl.Float64, "p_temporal_edges": pl.Float64, "r_loops": pl.Float64,
         "p_loops": pl.Float64}


def _pearson(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    """Pearson's r and its two-sided p; None where it is undefined (fewer than three
    points, or a constant variable)."""
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    from scipy.stats import pearsonr

    res = pearsonr(x, y)
    r, p = float(res.statistic), float(res.pvalue)
    return (r if math.isfinite(r) else None), (p if math.isfinite(p) else None)


def compliance_tests_table(ep: pl.DataFrame) -> pl.DataFrame:
    rows = []
    data = compliance_rows(ep).filter(pl.col("pc").is_not_null())
    for g in data.partition_by(["model", "method"], maintain_order=True):
        solv = g.filter(pl.col("solvable"))
        good = solv.filter(pl.col("success"))["pc"].to_list()
        bad = solv.filter(~pl.col("success"))["pc"].to_list()
        row = {"model": g["model"][0], "method": g["method"][0], "n_success": len(good),
               "n_failure": len(bad), "pc_success": sum(good) / len(good) if good else None,
               "pc_failure": sum(bad) / len(bad) if bad else None,
               "mwu_u": None, "mwu_p": None}
        if good and bad:
            from scipy.stats import mannwhitneyu

            res = mannwhitneyu(good, bad, alternative="two-sided")
            row["mwu_u"] = float(res.statistic)
            row["mwu_p"] = float(res.pvalue) if math.isfinite(res.pvalue) else None
        pc = g["pc"].to_list()
        for c in GRAPH:
            row[f"r_{c}"], row[f"p_{c}"] = _pearson(pc, g[c].cast(pl.Float64).to_list())
        rows.append(row)
    return pl.DataFrame(rows, schema=TESTS)


SETTINGS = {"model": pl.String, "method": pl.String, "plan_setting": pl.String,
            "baseline": pl.String, "n": pl.Int64, "success": pl.Float64,
            "baseline_success": pl.Float64, "b": pl.Int64, "c": pl.Int64, "p": pl.Float64,
            "p_adj": pl.Float64, "significant": pl.Boolean, "n_deterministic": pl.Int64,
            "b_deterministic": pl.Int64, "c_deterministic": pl.Int64,
            "p_deterministic": pl.Float64, "p_adj_deterministic": pl.Float64}


def _deterministic(g: pl.DataFrame) -> pl.DataFrame:
    """(domain, task, stable): whether every repeat of the task ended the same way."""
    return g.group_by(["domain", "task"]).agg(
        (pl.col("outcome").n_unique() == 1).alias("stable"))


def settings_table(ep: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    rows = []
    data = compliance_rows(ep).filter(pl.col("solvable"))
    for g in data.partition_by(["model", "method"], maintain_order=True):
        by = g.partition_by("plan_setting", maintain_order=True, as_dict=True)
        base = by.get((BASELINE_SETTING,))
        if base is None:
            continue
        base_first = base.filter(pl.col("epoch") == 0)
        for (setting,), other in by.items():
            if setting == BASELINE_SETTING:
                continue
            paired = other.filter(pl.col("epoch") == 0).select(
                "domain", "task", pl.col("success").alias("a")).join(
                base_first.select("domain", "task", pl.col("success").alias("z")),
                on=["domain", "task"], how="inner")
            b = int((paired["a"] & ~paired["z"]).sum())
            c = int((~paired["a"] & paired["z"]).sum())
            stable = _deterministic(other).join(_deterministic(base), on=["domain", "task"],
                                                suffix="_b").filter(
                pl.col("stable") & pl.col("stable_b")).select("domain", "task")
            det = paired.join(stable, on=["domain", "task"], how="inner")
            bd = int((det["a"] & ~det["z"]).sum())
            cd = int((~det["a"] & det["z"]).sum())
            rows.append({"model": g["model"][0], "method": g["method"][0],
                         "plan_setting": setting, "baseline": BASELINE_SETTING,
                         "n": paired.height,
                         "success": paired["a"].mean() if paired.height else None,
                         "baseline_success": paired["z"].mean() if paired.height else None,
                         "b": b, "c": c, "p": mcnemar_exact(b, c),
                         "n_deterministic": det.height, "b_deterministic": bd,
                         "c_deterministic": cd, "p_deterministic": mcnemar_exact(bd, cd)})
    families: dict[bool, list[dict]] = {}
    for r in rows:
        families.setdefault(r["model"].endswith(REFERENCE_SUFFIX), []).append(r)
    for members in families.values():
        for r, adj, adj_d in zip(members, holm([r["p"] for r in members]),
                                 holm([r["p_deterministic"] for r in members]), strict=True):
            r["p_adj"], r["significant"], r["p_adj_deterministic"] = adj, adj <= alpha, adj_d
    return pl.DataFrame(rows, schema=SETTINGS)


DETERMINISM = {"model": pl.String, "method": pl.String, "plan_setting": pl.String,
               "epochs": pl.Int64, "tasks": pl.Int64, "deterministic": pl.Int64,
               "success_deterministic": pl.Float64, "success_all": pl.Float64}


def determinism_table(ep: pl.DataFrame) -> pl.DataFrame:
    rows = []
    data = compliance_rows(ep)
    for g in data.partition_by(KEY, maintain_order=True):
        stable = _deterministic(g)
        det = g.join(stable.filter(pl.col("stable")), on=["domain", "task"], how="inner")
        solv_det = det.filter(pl.col("solvable"))
        solv = g.filter(pl.col("solvable"))
        rows.append({"model": g["model"][0], "method": g["method"][0],
                     "plan_setting": g["plan_setting"][0], "epochs": g["epoch"].n_unique(),
                     "tasks": stable.height, "deterministic": int(stable["stable"].sum()),
                     "success_deterministic": (solv_det["success"].mean()
                                               if solv_det.height else None),
                     "success_all": solv["success"].mean() if solv.height else None})
    return pl.DataFrame(rows, schema=DETERMINISM)


def build(ep: pl.DataFrame, alpha: float = 0.05) -> dict[str, pl.DataFrame]:
    return {"compliance": compliance_table(ep), "compliance_tests": compliance_tests_table(ep),
            "settings": settings_table(ep, alpha), "determinism": determinism_table(ep)}
