"""Figures and the standalone report from the synthetic episode fixture: every figure
exists and is not blank, reruns are byte-identical, reference models are labelled,
and index.html holds every table and figure and loads cleanly in headless Chromium."""

from __future__ import annotations

import csv
import html
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.image import imread
from matplotlib.text import Text

from planaudit.analysis import figures
from planaudit.analysis.report import BADGE, TABLE_CAPTIONS, TABLE_ORDER, build
from planaudit.analysis.tables import write_tables
from planaudit.cli import main
from planaudit.experiment import load_config
from tests.conftest import ROOT
from tests.episodes_fixture import make_episodes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ONLINE_COLUMNS = ("n_epistemic", "n_ontic", "sensing_ratio", "sensed_before_first_act", "steps",
                  "states_revisited", "critic_rejections", "reflections", "blocked_actions",
                  "recovered")


@pytest.fixture(scope="module")
def built(tmp_path_factory, episode_figures) -> Path:
    """Tables (helper module), figures and index.html of the fixture, built once."""
    folder = tmp_path_factory.mktemp("report")
    frame = make_episodes()
    write_tables(frame, folder, seed=0, n_resamples=50)
    shutil.copytree(episode_figures[0], folder / "figures")  # figures.draw_all(frame, ...)
    build(frame, load_config(ROOT / "config" / "config.yaml"), folder, folder / "figures",
          folder / "index.html")
    return folder


def ink(png: Path) -> float:
    """Share of pixels that differ from the background (the top-left pixel)."""
    pixels = imread(png)[..., :3]
    return float(np.any(np.abs(pixels - pixels[0, 0]) > 0.02, axis=-1).mean())


def texts(fig) -> str:
    FigureCanvasAgg(fig).draw()  # tick labels exist only once drawn
    return "\n".join(t.get_text() for t in fig.findobj(Text))


# -- figures --------------------------------------------------------------------------


def test_every_figure_is_written_as_png_and_svg_and_is_not_blank(built):
    folder = built / "figures"
    for name in figures.FIGURES:
        png, svg = folder / f"{name}.png", folder / f"{name}.svg"
        assert png.is_file() and svg.is_file(), name
        assert ink(png) > 0.02, f"{name}.png is (nearly) blank"
        assert float(imread(png).std()) > 0.05, name
        assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()[:2000]


def test_reruns_write_the_same_bytes(tmp_path, episode_figures):
    first = episode_figures[1]  # the same rows, drawn earlier in this process
    second = figures.draw_all(make_episodes(), tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    assert len(first) == 2 * len(figures.FIGURES)
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_reference_models_are_labelled_in_every_figure():
    frame = make_episodes()
    for name in figures.FIGURES:
        assert "oracle (reference" in texts(figures.draw(name, frame)), name


def test_figures_the_rows_cannot_support_are_placeholders_with_a_note(tmp_path):
    offline = make_episodes().filter(pl.col("regime") == "offline").drop(ONLINE_COLUMNS)
    notes: list[str] = []
    written = figures.draw_all(offline, tmp_path, notes)
    assert len(written) == 2 * len(figures.FIGURES)  # the workflow's outputs always exist
    assert notes == ["sensing: not drawn (no online episodes in these rows)",
                     "online_offline: not drawn (no model has both offline and online episodes)",
                     "phase_flow: not drawn (no online episodes with phase labels in these rows)"]
    assert "no online episodes" in texts(figures.placeholder("sensing", "no online episodes"))
    assert ink(tmp_path / "outcomes.png") > 0.02


def test_pareto_front_keeps_the_points_nothing_beats():
    # (cost, score): the second is beaten by the first (dearer, worse), the last ties none
    points = [(1.0, 0.5), (2.0, 0.4), (0.5, 0.2), (3.0, 0.9), (3.0, 0.8)]
    assert figures.pareto_front(points) == [2, 0, 3]


def test_score_and_success_leave_errors_out():
    frame = make_episodes().filter((pl.col("model") == "model-a") & (pl.col("method") == "direct")
                                   & (pl.col("regime") == "offline"))
    row = figures.summary(frame).row(0, named=True)
    counted = frame.filter(pl.col("outcome") != "error")
    assert row["counted"] == counted.height < frame.height  # the fixture has an error here
    assert row["score"] == pytest.approx(
        (counted["success"] | counted["detected"]).mean())


def test_figures_agree_with_the_main_table():
    from planaudit.analysis.tables import main_table

    frame = make_episodes()
    table = main_table(frame, n_resamples=10).select(
        "regime", pl.col("model").str.replace(r" \(reference, not an LLM\)$", ""), "method",
        table_success="success", table_score="score", table_cost="mean_cost_usd")
    both = figures.summary(frame).join(table, on=["regime", "model", "method"])
    assert both.height == table.height == 18
    for column in ("success", "score", "cost"):
        assert (both[column] - both[f"table_{column}"]).abs().max() < 1e-12, column


# -- index.html -----------------------------------------------------------------------


def test_index_has_every_table_figure_and_the_design(built):
    page = (built / "index.html").read_text()
    for name in TABLE_ORDER:
        assert f'id="table-{name}"' in page, name
        assert html.escape(TABLE_CAPTIONS[name]) in page
    order = [page.index(f'id="table-{name}"') for name in TABLE_ORDER]
    assert order == sorted(order)
    for name in figures.FIGURES:
        assert f'id="figure-{name}"' in page
        assert f'src="figures/{name}.png"' in page
        assert (built / "figures" / f"{name}.png").is_file()
    assert "planaudit</dt><dd>0.1.0" in page or "<dd>0.1.0</dd>" in page
    assert "<td>blocksworld</td><td class=\"num\">10</td><td class=\"num\">8</td>" in page
    assert "<code>reference/oracle</code>" in page
    assert "suite.seed" in page and "models[flawed].seed" in page
    assert "percentage points" in page  # the power of the design, in words


def test_every_reference_row_carries_the_badge(built):
    page = (built / "index.html").read_text()
    main_rows = list(csv.DictReader((built / "main.csv").open()))
    references = sum(r["reference"] == "true" for r in main_rows)
    section = page[page.index('id="table-main"'):page.index('id="table-comparisons"')]
    rows = re.findall(r'<tr class="reference">(.*?)</tr>', section)
    assert references and len(rows) == references
    assert all(BADGE in row for row in rows)
    assert not re.search(r"<t[dh]>[^<]*oracle(?!<span class=\"badge\">)", page)
    assert "reference model, not an LLM" in page


def test_index_needs_no_network(built):
    page = (built / "index.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page and "<script" not in page


def test_index_renders_whatever_tables_exist(tmp_path):
    (tmp_path / "power.csv").write_text("table,regime,n_tasks,comparisons,min_difference_pp\n"
                                        "comparisons,offline,30,4,26.7\n")
    (tmp_path / "main.csv").write_text("regime,model,reference,method,success\n"
                                       "offline,oracle,true,direct,1.0\n")
    frame = make_episodes()
    out = build(frame, {}, tmp_path, tmp_path / "figures", tmp_path / "index.html")
    page = out.read_text()
    assert page.index('id="table-main"') < page.index('id="table-power"')
    assert 'id="table-comparisons"' not in page
    assert "<td>oracle" + BADGE in page  # a bare reference name in a model column
    assert "is missing" in page  # figures not drawn yet: a note, not a broken image
    assert "<img" not in page


def test_the_report_says_how_often_val_disagreed_and_warns_on_the_unexplained(tmp_path):
    header = ("regime,model,reference,method,plans,val_judged,agree,disagree,tolerance,"
              "extra_argument,undefined_order,equal_timestamps,unexplained,val_no_verdict\n")
    (tmp_path / "witness.csv").write_text(header + "offline,m,false,direct,10,9,7,2,1,0,0,0,1,1\n"
                                          "offline,m,false,cot,5,5,5,0,0,0,0,0,0,0\n")
    page = build(make_episodes(), {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert ("VAL also judged 14 of 15 final plans: it agreed with planaudit on 12 and disagreed "
            "on 2 (1 tolerance; 1 unexplained).") in text
    assert "An unexplained disagreement is a bug" in text and "no verdict on 1" in text
    (tmp_path / "witness.csv").write_text(header + "offline,m,false,cot,5,5,5,0,0,0,0,0,0,0\n")
    page = build(make_episodes(), {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    assert "disagreed on <b>0</b>." in page and "unexplained disagreement is" not in page


def test_captions_for_snakemake_report_match_the_report():
    from planaudit.regime import regimes

    folder = ROOT / "workflow" / "report"
    drawn = {name: d.caption for r in regimes().values() for name, d in r.drawings.items()}
    for kind, captions in (("figure", figures.CAPTIONS), ("figure", drawn),
                           ("table", TABLE_CAPTIONS)):
        for name, text in captions.items():
            path = folder / f"{kind}-{name}.rst"
            assert " ".join(path.read_text().split()) == text, path.name
    assert len(list(folder.glob("*.rst"))) == (len(figures.CAPTIONS) + len(drawn)
                                               + len(TABLE_CAPTIONS) + 1)
    assert "reference" in (folder / "workflow.rst").read_text()


# -- the command line -----------------------------------------------------------------


def test_cli_figures_and_report(tmp_path, capsys):
    episodes = tmp_path / "episodes.parquet"
    make_episodes().filter(pl.col("regime") == "offline").write_parquet(episodes)
    assert main(["figures", "--episodes", str(episodes), "--out", str(tmp_path / "figures")]) == 0
    err = capsys.readouterr().err
    assert "sensing: not drawn" in err and f"{2 * len(figures.FIGURES)} files" in err
    assert main(["report", "--episodes", str(episodes), "--config",
                 str(ROOT / "config" / "config.yaml"), "--tables", str(tmp_path),
                 "--figures", str(tmp_path / "figures"), "--out", str(tmp_path / "index.html")]) == 0
    page = (tmp_path / "index.html").read_text()
    assert "not drawn: no online episodes in these rows" in page
    assert main(["report", "--episodes", str(episodes), "--spec", "{not json",
                 "--out", str(tmp_path / "x.html")]) == 2


def test_cli_names_bad_episode_files(tmp_path, capsys):
    assert main(["figures", "--episodes", str(tmp_path / "none.parquet")]) == 2
    assert "no such episodes file" in capsys.readouterr().err
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    assert main(["figures", "--episodes", str(bad), "--out", str(tmp_path)]) == 2
    assert "not a Parquet file" in capsys.readouterr().err
    pl.DataFrame({"regime": ["offline"]}).write_parquet(bad)
    assert main(["report", "--episodes", str(bad)]) == 2
    assert "missing column(s) model" in capsys.readouterr().err


# -- headless Chromium ----------------------------------------------------------------

# Sets data-images on <body> once the page has loaded: "N:ok", or "N:broken <src>,...".
PROBE = textwrap.dedent("""
    <script>
    window.addEventListener('load', () => {
      const imgs = Array.from(document.images);
      const bad = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
      document.body.dataset.images = imgs.length + ':' + (bad.length ? 'broken ' + bad.join(',') : 'ok');
    });
    </script>
    """)


def open_in_chromium(page: Path, profile: Path) -> tuple[str, list[str]]:
    """Load a test-only copy of `page` (beside it, so relative paths hold) with the probe;
    return the probe's verdict and every console message Chromium logged."""
    probe = page.with_name(page.stem + ".chromium-test.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom",
         probe.as_uri()], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict = re.search(r'<body[^>]*data-images="([^"]*)"', proc.stdout)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return (verdict.group(1) if verdict else "no verdict: the probe did not run"), console


# CI installs chromium (.ci/run): there a missing browser is a failure, not a skip.
needs_chromium = pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"),
                                    reason="chromium not installed")


@needs_chromium
def test_index_loads_in_headless_chromium(built, tmp_path):
    assert CHROMIUM, "chromium is not installed (CI installs it in .ci/run)"
    verdict, console = open_in_chromium(built / "index.html", tmp_path / "profile")
    assert verdict == f"{len(figures.FIGURES)}:ok"
    assert console == []


@needs_chromium
def test_the_chromium_probe_sees_broken_images_and_errors(tmp_path):
    assert CHROMIUM, "chromium is not installed (CI installs it in .ci/run)"
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
                    '<img src="missing.png"><script>undefinedFunction();</script></body></html>')
    verdict, console = open_in_chromium(page, tmp_path / "profile")
    assert verdict == "1:broken missing.png"
    assert any("undefinedFunction" in line for line in console)



def test_the_report_says_how_many_replies_were_cut_and_which_models_are_unpriced(tmp_path):
    episodes = make_episodes()
    page = build(episodes, {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    assert "Replies and prices" not in page  # nothing cut, everything priced: nothing to say
    first = episodes.filter(pl.col("outcome") == "malformed").row(0, named=True)
    marked = episodes.with_columns(
        truncated=(pl.col("model") == first["model"]) & (pl.col("outcome") == "malformed"),
        cost_usd=pl.when(pl.col("model") == first["model"]).then(None)
        .otherwise(pl.col("cost_usd")))
    cut = marked["truncated"].sum()
    page = build(marked, {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert f"{cut} of {marked.height} episodes were decided by a reply cut at max_tokens" in text
    assert f"No price is known for {first['model']}: their cost is shown as – (unpriced" in text


def test_an_unpriced_model_is_never_drawn_as_free():
    frame = make_episodes()
    model = frame.filter(~pl.col("reference"))["model"][0]
    unpriced = frame.with_columns(cost_usd=pl.when(pl.col("model") == model).then(None)
                                  .otherwise(pl.col("cost_usd")))
    stats = figures.summary(unpriced)
    assert stats.filter(pl.col("model") == model)["cost"].null_count() == stats.filter(
        pl.col("model") == model).height
    assert "unpriced" in texts(figures.draw("outcomes", unpriced))
    assert f"not drawn, no known price: {model}" in texts(figures.draw("success_cost", unpriced))
    assert "no known price" not in texts(figures.draw("success_cost", frame))


def test_a_large_table_shows_its_first_rows_and_columns_and_links_the_csv(tmp_path, monkeypatch):
    """Past MAX_ROWS rows or MAX_COLUMNS columns the page shows the first ones and says how
    many there are, linking to the whole csv (a page of 10^6 episodes stays readable)."""
    from planaudit.analysis import report

    monkeypatch.setattr(report, "MAX_ROWS", 3)
    monkeypatch.setattr(report, "MAX_COLUMNS", 2)
    path = tmp_path / "tables" / "wide.csv"
    path.parent.mkdir()
    pl.DataFrame({"a": range(5), "b": range(5), "c": range(5)}).write_csv(path)
    page = report.render_table(path, set(), tmp_path / "page" / "index.html")
    assert page.count("<tr>") == 1 + 3  # the header and three rows
    assert "<th>c</th>" not in page
    assert "the first 3 of 5 rows and 2 of 3 columns" in page
    assert '<a href="../tables/wide.csv">wide.csv</a>' in page
    small = tmp_path / "tables" / "small.csv"
    pl.DataFrame({"a": [1, 2]}).write_csv(small)
    assert "Showing" not in report.render_table(small, set(), tmp_path / "index.html")


def test_figures_past_their_configurations_draw_the_first_models_and_say_so():
    rows = pl.DataFrame({"model": ["m1"] * 3 + ["m2"] * 3 + ["m3"] * 2,
                         "regime": ["offline"] * 8,
                         "method": ["a", "b", "c", "a", "b", "c", "a", "b"]})
    shown, cut = figures.first_models(rows, 6)
    assert shown["model"].unique().sort().to_list() == ["m1", "m2"]
    assert "the first 2 of 3 models drawn (6 of 8 configurations" in cut
    same, none = figures.first_models(rows, 8)
    assert same.equals(rows) and none == ""
    one, _ = figures.first_models(rows, 1)  # a model larger than the cap is still drawn
    assert one["model"].unique().to_list() == ["m1"]
    panels, cut = figures.first_models(rows, 2, by_model=True)
    assert panels["model"].unique().sort().to_list() == ["m1", "m2"] and "2 of 3 models" in cut


def test_a_configuration_that_solves_nothing_has_no_cost_per_solve_on_the_figure():
    frame = make_episodes()
    model, method = frame.filter(~pl.col("reference") & (pl.col("regime") == "offline")).select(
        "model", "method").row(0)
    mine = (pl.col("model") == model) & (pl.col("method") == method) & (
        pl.col("regime") == "offline")
    nil = frame.with_columns(success=pl.when(mine).then(False).otherwise(pl.col("success")),
                             detected=pl.when(mine).then(False).otherwise(pl.col("detected")))
    per = figures.cost_per_solved(nil)
    assert per[("offline", model, method)] is None
    drawn = texts(figures.draw("success_cost", nil))
    assert "nothing solved (no cost per solved task)" in drawn and f"{model} · {method}" in drawn
    assert "cost per solved task" in drawn
    # elsewhere the point is the whole cost over the solved, its interval about it
    other = next(k for k, v in per.items() if v is not None and v[0] > 0)
    value, low, high = per[other]
    assert low <= value <= high
