"""The ACPBench side of the report: its table (a row per form and question type, a column
per model), its figure, its section of index.html, and that its rows stay out of every
other table and figure. From synthetic rows that pass the row schema, and from a small
real run (reference models through the real shard, collected against the schema)."""

from __future__ import annotations

import html
import random
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from jsonschema import Draft202012Validator
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.image import imread
from matplotlib.text import Text

from planaudit.acpbench.questions import FORMS, TYPES
from planaudit.analysis import figures
from planaudit.analysis.collect import check_shard, collect, default_schema, load_schema
from planaudit.analysis.commands import _without_curriculum
from planaudit.analysis.outputs import table_names
from planaudit.analysis.report import TABLE_CAPTIONS, build
from planaudit.analysis.stats import bootstrap_ci
from planaudit.analysis.tables import (
    acpbench_cells,
    acpbench_table,
    build_tables,
    calibrator_rows,
    write_tables,
)
from planaudit.cli import main
from tests.conftest import DOMAINS, ROOT
from tests.episodes_fixture import make_episodes

ORACLE = "oracle (reference, not an LLM)"
FLAWED = "flawed (reference, not an LLM)"
SEED, RESAMPLES = 3, 400

# (form, type) -> model-a's outcome per question; listed out of TYPES/FORMS order on
# purpose (the table must put them in order). "S" success, "W" a readable wrong answer,
# "M" unreadable (outcome malformed), "E" the model was not reached (error)
MODEL_A = {
    ("gen", "nexta"): "S",
    ("bool", "val"): "SWWM",
    ("gen", "app"): "SS",
    ("bool", "nexta"): "SWSWE",
    ("bool", "app"): "SSWS",
    ("gen", "val"): "WMW",
}


def acp_row(model: str, reference: bool, form: str, qtype: str, task: str, mark: str,
            rng: random.Random) -> dict:
    """One ACPBench row as the shard writes it (workflow/schemas/row.schema.yaml)."""
    outcome = {"S": "success", "W": "wrong-answer", "M": "malformed", "E": "error"}[mark]
    verdict = {"S": "correct", "W": "wrong", "M": "unreadable", "E": None}[mark]
    tin, tout = rng.randint(300, 900), rng.randint(5, 200)
    return {
        "regime": "acpbench", "model": model, "model_tier": "reference" if reference else "large",
        "reference": reference, "method": qtype, "form": form, "domain": "gripper",
        "task": task, "solvable": True, "optimal_length": None, "outcome": outcome,
        "success": mark == "S", "executable": None, "detected": False, "plan_length": None,
        "efficiency": None, "first_failure_step": None, "first_failure_kind": None,
        "first_failure_action": None, "first_failure_detail": None,
        "error": "InternalServerError: 500 after retries" if mark == "E" else None,
        "val_valid": None, "val_detail": None,
        "contract_breach": "no answer line" if mark == "M" else None, "truncated": False,
        "source": "suite", "verdict": verdict,
        "verdict_detail": "the answer names an inapplicable action" if mark == "W" else None,
        "n_calls": 1, "input_tokens": 0 if mark == "E" else tin,
        "output_tokens": 0 if mark == "E" else tout,
        "cost_usd": None if reference else 0.0 if mark == "E" else (tin + 4 * tout) * 2.5e-6,
        "latency_s": rng.uniform(0.1, 2.0), "cache_hits": 0, "config_hash": "acp-fixture",
        "code_version": "0.0.0-fixture",
    }


def make_acpbench() -> pl.DataFrame:
    """model-a as in MODEL_A, the oracle right on every question of the same design."""
    rng = random.Random(0)
    rows = []
    for (form, qtype), marks in MODEL_A.items():
        for i, mark in enumerate(marks):
            task = f"p01/s{i}"
            rows.append(acp_row("model-a", False, form, qtype, task, mark, rng))
            rows.append(acp_row("oracle", True, form, qtype, task, "S", rng))
    return pl.DataFrame(rows, infer_schema_length=None)


@pytest.fixture(scope="module")
def acp() -> pl.DataFrame:
    frame = make_acpbench()
    check_shard(frame, Path("synthetic"), Draft202012Validator(load_schema(default_schema())))
    return frame


@pytest.fixture(scope="module")
def mixed(acp) -> pl.DataFrame:
    """The analysis fixture's offline and online rows with the ACPBench rows beside them."""
    return pl.concat([make_episodes(), acp], how="diagonal_relaxed")


def hits(marks: str) -> list[bool]:
    return [m == "S" for m in marks if m != "E"]


def cell(marks: str) -> str:
    """The cell as the caption says: right / counted (share) [95% interval]; k unreadable."""
    h = hits(marks)
    ci = bootstrap_ci([float(x) for x in h], SEED, RESAMPLES)
    text = f"{sum(h)}/{len(h)} ({100 * sum(h) / len(h):.1f}%)"
    text += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else ""
    return text + (f"; {marks.count('M')} unreadable" if "M" in marks else "")


# -- the table, synthetic rows --------------------------------------------------------


def test_table_rows_follow_forms_then_types_with_an_all_types_row(acp):
    table = acpbench_table(acp, SEED, RESAMPLES)
    assert table.columns == ["form", "type", "model-a", ORACLE]
    expected = []
    for form in FORMS:
        types = [t for t in TYPES if (form, t) in MODEL_A]
        if types:
            expected += [(form, t) for t in types] + [(form, "all types")]
    assert list(table.select("form", "type").iter_rows()) == expected
    assert expected[:4] == [("bool", "app"), ("bool", "val"), ("bool", "nexta"),
                            ("bool", "all types")]


def test_cells_count_right_answers_of_those_that_reached_the_model(acp):
    table = acpbench_table(acp, SEED, RESAMPLES)
    got = {(r["form"], r["type"]): r["model-a"] for r in table.iter_rows(named=True)}
    for key, marks in MODEL_A.items():
        assert got[key] == cell(marks), key
    # by hand: errors left out, unreadable answers wrong and counted apart
    assert got[("bool", "app")].startswith("3/4 (75.0%) [")
    assert got[("bool", "val")].startswith("1/4 (25.0%) [") and got[("bool", "val")].endswith(
        "; 1 unreadable")
    assert got[("bool", "nexta")].startswith("2/4 (50.0%) [")  # 5 asked, 1 error
    assert got[("gen", "nexta")] == "1/1 (100.0%)"  # one question: no interval
    # pooled in the rows' order (by type, then task), which the bootstrap resamples
    pooled = {f: "".join(m for _, _, m in sorted(
        (t, i, m) for (form, t), marks in MODEL_A.items() if form == f
        for i, m in enumerate(marks))) for f in ("bool", "gen")}
    assert got[("bool", "all types")] == cell(pooled["bool"])
    assert got[("bool", "all types")].startswith("6/12 (50.0%) [")
    assert got[("gen", "all types")].startswith("3/6 (50.0%) [")
    assert got[("gen", "all types")].endswith("; 1 unreadable")


def test_the_oracle_scores_every_question_and_the_interval_is_seeded(acp):
    table = acpbench_table(acp, SEED, RESAMPLES)
    for (form, qtype), text in zip(table.select("form", "type").iter_rows(), table[ORACLE],
                                   strict=True):
        n = sum(len(m) for (f, t), m in MODEL_A.items()
                if f == form and (qtype == "all types" or t == qtype))
        assert text == (f"{n}/{n} (100.0%)" + (" [100.0, 100.0]" if n > 1 else "")), (form, qtype)
    assert acpbench_table(acp, SEED, RESAMPLES).equals(table)
    band = re.search(r"\[(.*), (.*)\]", table.filter(
        (pl.col("form") == "bool") & (pl.col("type") == "all types"))["model-a"][0])
    lo, hi = float(band[1]), float(band[2])
    assert 0 <= lo < 50.0 < hi <= 100  # holds the share, and has width


def test_cells_in_numbers_agree_with_the_table(acp):
    cells = acpbench_cells(acp, SEED, RESAMPLES)
    row = cells.filter((pl.col("model") == "model-a") & (pl.col("form") == "bool")
                       & (pl.col("type") == "val")).row(0, named=True)
    assert (row["n"], row["correct"], row["unreadable"], row["accuracy"]) == (4, 1, 1, 0.25)
    lo, hi = bootstrap_ci([1.0, 0.0, 0.0, 0.0], SEED, RESAMPLES)
    assert (row["lo"], row["hi"]) == (lo, hi) and row["reference"] is False
    assert cells.filter(pl.col("model") == ORACLE)["accuracy"].to_list() == [1.0] * 8


def test_an_all_error_model_keeps_its_column_with_empty_cells(acp):
    lost = acp.filter(pl.col("model") == "oracle").with_columns(
        pl.lit("model-b").alias("model"), pl.lit(False).alias("reference"),
        pl.lit("error").alias("outcome"), pl.lit(False).alias("success"))
    table = acpbench_table(pl.concat([acp, lost]), SEED, RESAMPLES)
    assert table["model-b"].to_list() == [""] * table.height


def test_no_acpbench_rows_gives_the_header_only():
    table = acpbench_table(make_episodes())
    assert table.height == 0 and table.columns == ["form", "type"]


# -- kept apart from every other table and figure -------------------------------------


def test_acpbench_rows_do_not_leak_into_the_other_tables(mixed):
    base = build_tables(make_episodes(), seed=0, n_resamples=50)
    both = build_tables(mixed, seed=0, n_resamples=50)
    assert set(both) == set(table_names()) == set(base)  # the regimes' own tables too
    for name in table_names():
        if name != "acpbench":
            assert both[name].equals(base[name]), name
    assert set(both["main"]["regime"]) == {"offline", "online"}
    assert "acpbench" not in set(both["outcomes"]["regime"])
    assert both["acpbench"].height == 8 and base["acpbench"].height == 0
    assert calibrator_rows(mixed, 0, 50).equals(calibrator_rows(make_episodes(), 0, 50))


def test_figures_and_report_read_offline_online_and_acpbench_rows_only(mixed):
    curriculum = make_acpbench().head(2).with_columns(pl.lit("curriculum").alias("regime"),
                                                      pl.lit(None, pl.String).alias("form"))
    kept = _without_curriculum(pl.concat([mixed, curriculum], how="diagonal_relaxed"))
    assert set(kept["regime"]) == {"offline", "online", "acpbench"}
    assert kept.height == mixed.height


@pytest.fixture(scope="module")
def mixed_figures(mixed, tmp_path_factory) -> tuple[Path, list[Path], list[str]]:
    """Every figure of the mixed rows (default analysis settings), drawn once: the
    folder, the files written, the notes."""
    folder = tmp_path_factory.mktemp("mixed-figures")
    notes: list[str] = []
    return folder, figures.draw_all(mixed, folder, notes), notes


def test_the_other_figures_are_unchanged_by_acpbench_rows(episode_figures, mixed_figures):
    _, base, notes_base = episode_figures
    _, both, notes_both = mixed_figures
    assert [p.name for p in base] == [f"{n}.{e}" for n in figures.FIGURES for e in ("png", "svg")]
    assert [p.name for p in both] == [p.name for p in base] + ["acpbench.png", "acpbench.svg"]
    assert notes_both == notes_base
    for a, b in zip(base, both, strict=False):
        assert a.read_bytes() == b.read_bytes(), a.name


# -- the figure -----------------------------------------------------------------------


def ink(png: Path) -> float:
    pixels = imread(png)[..., :3]
    return float(np.any(np.abs(pixels - pixels[0, 0]) > 0.02, axis=-1).mean())


def texts(fig) -> str:
    FigureCanvasAgg(fig).draw()
    return "\n".join(t.get_text() for t in fig.findobj(Text))


def test_the_figure_is_written_and_shows_the_table_numbers(mixed, tmp_path):
    written = figures.draw_all(mixed, tmp_path, analysis={"seed": SEED, "bootstrap": RESAMPLES})
    png, svg = tmp_path / "acpbench.png", tmp_path / "acpbench.svg"
    assert png in written and svg in written
    assert ink(png) > 0.05 and float(imread(png).std()) > 0.05
    assert svg.read_text().lstrip().startswith("<?xml")
    words = texts(figures.draw("acpbench", mixed, {"seed": SEED, "bootstrap": RESAMPLES}))
    assert ORACLE in words and "model-a" in words
    assert "model-a (reference" not in words
    lo, hi = bootstrap_ci([1.0, 1.0, 0.0, 1.0], SEED, RESAMPLES)
    assert f"75% of 4\n[{lo:.0%}, {hi:.0%}]" in words  # bool app: the table's cell
    assert "25% of 4" in words and "50% of 12" in words and "100% of 1" in words
    for t in ("app", "val", "nexta", "all types", "bool", "gen"):
        assert t in words.splitlines(), t


def test_the_figure_is_skipped_without_acpbench_rows(episode_figures):
    frame = make_episodes()
    assert figures.why_not("acpbench", frame) == "no ACPBench episodes in these rows"
    with pytest.raises(figures.NotDrawable):
        figures.draw("acpbench", frame)
    folder, written, _ = episode_figures  # figures.draw_all(frame, folder)
    assert not (folder / "acpbench.png").exists()
    assert folder / "acpbench.png" not in written
    errors = make_acpbench().with_columns(pl.lit("error").alias("outcome"),
                                          pl.lit(False).alias("success"))
    assert "every one is an error" in figures.why_not("acpbench", errors)


# -- the report -----------------------------------------------------------------------


def test_the_report_has_the_acpbench_section_and_figure(mixed, mixed_figures, tmp_path):
    write_tables(mixed, tmp_path, seed=SEED, n_resamples=RESAMPLES)
    shutil.copytree(mixed_figures[0], tmp_path / "figures")  # figures.draw_all(mixed, ...)
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    page = build(mixed, config, tmp_path, tmp_path / "figures", tmp_path / "index.html").read_text()
    section = page[page.index('id="table-acpbench"'):page.index('id="table-disguise"')]
    assert html.escape(TABLE_CAPTIONS["acpbench"]) in section
    for phrase in ("proven by the formal core", "state graph", "calibrators",
                   "not LLMs", "unreadable answer counts as wrong", "malformed"):
        assert html.escape(phrase) in section, phrase
    assert "reference model, not an LLM" in section  # the oracle's column carries the badge
    assert html.escape(cell(MODEL_A[("bool", "val")])) in section
    assert 'src="figures/acpbench.png"' in page and 'id="figure-acpbench"' in page
    # the design section counts the offline and online episodes, as the tables it describes
    base = make_episodes()
    regimes = base.group_by("regime", maintain_order=True).len().iter_rows()
    assert f"<p>{base.height} episodes ({', '.join(f'{n} {r}' for r, n in regimes)});" in page
    rst = (ROOT / "workflow" / "report" / "table-acpbench.rst").read_text()
    assert " ".join(rst.split()) == TABLE_CAPTIONS["acpbench"]
    rst = (ROOT / "workflow" / "report" / "figure-acpbench.rst").read_text()
    assert " ".join(rst.split()) == figures.CAPTIONS["acpbench"]


def test_the_report_says_why_the_figure_is_missing_without_acpbench_rows(tmp_path):
    frame = make_episodes()
    page = build(frame, {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    assert "Figure <b>acpbench</b> not drawn: no ACPBench episodes in these rows" in page


# -- a small real run -----------------------------------------------------------------

REAL_TYPES = ("app", "val")


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> tuple[pl.DataFrame, Path]:
    """The oracle and the flawed model (a wrong answer at rate 0.5) on app and val in every
    form, over gripper and blocksworld p01 prepared as the suite rules do, through the
    real shard; the shards collected against the row schema."""
    from planaudit.acpbench.shard import run_acpbench_shard
    from planaudit.experiment import Experiment
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import load_domain_tasks
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth

    tmp = tmp_path_factory.mktemp("acp-real")
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    suite = tmp / "suite"
    domains = ("gripper", "blocksworld")
    for domain in domains:
        entry = next(e for e in load_domain_tasks(DOMAINS, domain) if e.id == "p01")
        prepare(entry, suite / domain / "p01", domain in config["suite"]["obfuscate"], 0)
        make_truth(entry, suite / domain / "p01",
                   Limits(bfs_states=300_000, astar_seconds=30, external=False))
    config["cache"] = str(tmp / "cache")
    config["acpbench"] = {"types": list(REAL_TYPES), "forms": list(FORMS), "tasks": 1,
                          "states": 2, "seed": 0, "domains": list(domains)}
    flawed = next(m for m in config["models"] if m["name"] == "flawed")
    flawed["faults"]["wrong_answer"] = 0.5
    exp = Experiment.from_dict(config)
    shards = []
    for model in ("oracle", "flawed"):
        for qtype in REAL_TYPES:
            out = tmp / "episodes" / model / f"{qtype}.parquet"
            run_acpbench_shard(exp, exp.model(model), qtype, suite, str(out),
                               str(tmp / "transcripts" / model / qtype))
            shards.append(out)
    frame = collect(shards, load_schema(default_schema()))
    episodes = tmp / "episodes.parquet"
    frame.write_parquet(episodes)
    return frame, episodes


def test_real_run_table_counts_what_the_rows_say(real):
    frame, _ = real
    assert set(frame["regime"]) == {"acpbench"} and set(frame["form"]) == set(FORMS)
    table = acpbench_table(frame, SEED, RESAMPLES)
    assert table.columns == ["form", "type", FLAWED, ORACLE]
    assert list(table.select("form", "type").iter_rows()) == [
        (f, t) for f in FORMS for t in (*REAL_TYPES, "all types")]
    for row in table.iter_rows(named=True):
        for label, model in ((ORACLE, "oracle"), (FLAWED, "flawed")):
            part = frame.filter((pl.col("model") == model) & (pl.col("form") == row["form"])
                                & (pl.col("outcome") != "error"))
            if row["type"] != "all types":
                part = part.filter(pl.col("method") == row["type"])
            right = int((part["verdict"] == "correct").sum())
            assert part.height >= 2
            assert row[label].startswith(f"{right}/{part.height} ("), (label, row)
            if model == "oracle":
                assert right == part.height
                assert row[label] == f"{right}/{right} (100.0%) [100.0, 100.0]"
    flawed = frame.filter(pl.col("model") == "flawed")
    right = int(flawed["success"].sum())
    assert 0 < right < flawed.height  # a model below the oracle
    cells = acpbench_cells(frame, SEED, RESAMPLES).filter(pl.col("type") == "all types")
    assert (cells.filter(pl.col("model") == FLAWED)["correct"].sum()) == right
    assert cells.filter(pl.col("model") == FLAWED)["accuracy"].max() < 1.0


def test_real_run_through_the_commands(real, tmp_path, capsys):
    _, episodes = real
    out = tmp_path / "report"
    assert main(["tables", "--episodes", str(episodes), "--out", str(out), "--bootstrap",
                 "200"]) == 0
    assert main(["figures", "--episodes", str(episodes), "--out", str(out / "figures")]) == 0
    assert main(["report", "--episodes", str(episodes), "--config",
                 str(ROOT / "config" / "config.yaml"), "--tables", str(out),
                 "--figures", str(out / "figures"), "--out", str(out / "index.html")]) == 0
    capsys.readouterr()
    acp = pl.read_csv(out / "acpbench.csv")
    assert acp.height == 3 * 3 and acp.columns == ["form", "type", FLAWED, ORACLE]
    assert acp[ORACLE].str.contains(r"\(100\.0%\)").all()
    assert pl.read_csv(out / "main.csv").height == 0  # header only: no offline/online rows
    assert pl.read_csv(out / "outcomes.csv").height == 0
    assert ink(out / "figures" / "acpbench.png") > 0.05
    page = (out / "index.html").read_text()
    assert 'src="figures/acpbench.png"' in page and 'id="table-acpbench"' in page
    assert "<p>0 episodes (none)" in page  # the design: no offline or online episode
