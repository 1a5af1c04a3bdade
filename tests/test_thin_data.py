"""Figures, tables and the report from degenerate rows: no rows, one method, every episode
an error, no online rows, agents that never call a tool. Each must build through the
same commands the workflow runs, with placeholders that say why where a figure cannot
be drawn, and index.html rewritten from the current tables."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from planaudit.analysis.figures import FIGURES
from planaudit.cli import main
from tests.episodes_fixture import make_episodes

BASE = make_episodes(0)
ONLINE_ZERO = {"n_epistemic": 0, "n_ontic": 0, "sensing_ratio": None,
               "sensed_before_first_act": None, "steps": 3}


def _no_tools(frame: pl.DataFrame) -> pl.DataFrame:
    """Online agents that never call a tool: every count zero, no ratio."""
    return frame.with_columns(
        *(pl.when(pl.col("regime") == "online").then(pl.lit(v)).otherwise(pl.col(k)).alias(k)
          for k, v in ONLINE_ZERO.items()))


CASES = {
    "empty": BASE.head(0),
    "one-method": BASE.filter((pl.col("method") == "direct") & (pl.col("regime") == "offline")),
    "all-error": BASE.with_columns(pl.lit("error").alias("outcome"), pl.lit(False).alias("success"),
                                   pl.lit(False).alias("detected")),
    "no-online": BASE.filter(pl.col("regime") == "offline"),
    "no-tool-calls": _no_tools(BASE),
    "one-task": BASE.filter((pl.col("domain") == BASE["domain"][0]) & (pl.col("task") == BASE["task"][0])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_figures_tables_and_report_build_from_thin_rows(case, tmp_path, capsys):
    episodes = tmp_path / "episodes.parquet"
    CASES[case].write_parquet(episodes)
    out = tmp_path / "report"
    out.mkdir()
    stale = out / "index.html"
    stale.write_text("STALE PAGE")
    assert main(["tables", "--episodes", str(episodes), "--out", str(out), "--bootstrap", "200"]) == 0
    assert main(["figures", "--episodes", str(episodes), "--out", str(out / "figures")]) == 0
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{name}.{ext}").stat().st_size > 0
    assert main(["report", "--episodes", str(episodes), "--tables", str(out),
                 "--figures", str(out / "figures"), "--out", str(stale)]) == 0
    page = stale.read_text()
    assert "STALE PAGE" not in page and "planaudit report" in page
    assert not list(out.glob(".*.tmp"))  # written through a temporary file, then renamed
    err = capsys.readouterr().err
    if case in ("empty", "no-online", "one-method"):
        assert "not drawn" in err  # a placeholder names why
    if case == "no-tool-calls":
        svg = (out / "figures" / "sensing.svg").read_text()
        assert "no sensing" in svg


def test_sensing_placeholder_names_the_reason(tmp_path):
    episodes = tmp_path / "e.parquet"
    CASES["no-online"].write_parquet(episodes)
    assert main(["figures", "--episodes", str(episodes), "--out", str(tmp_path / "f")]) == 0
    assert "no online episodes" in (tmp_path / "f" / "sensing.svg").read_text()


def test_report_of_missing_episodes_is_named(tmp_path, capsys):
    assert main(["figures", "--episodes", str(tmp_path / "none.parquet"), "--out",
                 str(tmp_path)]) == 2
    assert "none.parquet: no such episodes file" in capsys.readouterr().err
    assert not Path(tmp_path / "index.html").exists()
