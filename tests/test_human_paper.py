"""The PlanBench paper's two studies with people, replayed by simulated cohorts scripted to
its counts, end to end: real `planaudit study serve` processes, cohorts written by
`planaudit study cohort`, played in headless Chromium by `planaudit study simulate`,
exported, judged by the workflow's `planaudit human shard`, collected beside nothing
else, and turned into tables, the figure and the report. The report must show the paper's
percentages (39/50 valid, 35 of them optimal; 17/23 against 18/22 valid; 4 of 22 calling
a wrong suggestion correct, 2 submitting it), labelled as simulated, and every statistic
must equal scipy's on the same numbers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml
from scipy import stats as sps

from tests.study_server import (
    ADMIN_TOKEN,
    PLANAUDIT,
    RIGHT_P02,
    WRONG_P03,
    Server,
    needs_chromium,
    study_config,
)

pytestmark = needs_chromium

ROOT = Path(__file__).resolve().parents[1]
WRONG_P02 = [*RIGHT_P02[:3], "(stack a b)", *RIGHT_P02[3:]]  # fails at step 4
BASELINE = {"unassisted": {"optimal": 35, "suboptimal": 4, "invalid_step": 8,
                           "goal_not_reached": 3}}
HITL = {"unassisted": {"optimal": 14, "suboptimal": 3, "invalid_step": 4, "goal_not_reached": 2},
        "suggested": {"optimal": 15, "suboptimal": 3, "invalid_step": 2, "verbatim": 2,
                      "called_correct": 4}}


def run(*args: str) -> str:
    r = subprocess.run([PLANAUDIT, *args], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PLANAUDIT_STUDY_ADMIN_TOKEN": ADMIN_TOKEN})
    assert r.returncode == 0, f"planaudit {' '.join(args)}:\n{r.stderr[-3000:]}"
    return r.stdout


def simulated_study(tmp: Path, name: str, arms: list[dict], counts: dict) -> Path:
    """A study served, its scripted cohort played in Chromium, its records exported."""
    tmp.mkdir(parents=True)
    config = study_config(tmp, study=name, arms=arms, assignment={"seed": 1})
    (tmp / "counts.yaml").write_text(yaml.safe_dump({"seed": 0, "arms": counts}))
    run("study", "cohort", "--config", str(config), "--counts", str(tmp / "counts.yaml"),
        "--out", str(tmp / "cohort.yaml"))
    server = Server(config)
    try:
        run("study", "simulate", "--cohort", str(tmp / "cohort.yaml"), "--url", server.url + "/",
            "--concurrency", "4", "--out", str(tmp / "simulate.json"))
    finally:
        server.kill()
    summary = json.loads((tmp / "simulate.json").read_text())
    picks = ("called_correct", "unreadable_text")  # chosen among the scripts, not added
    assert summary["finished"] == sum(n for c in counts.values() for k, n in c.items()
                                      if k not in picks)
    run("study", "export", "--config", str(config), "--out", str(tmp / "export"))
    return tmp / "export"


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paper")
    baseline = simulated_study(tmp / "baseline", "baseline",
                               [{"name": "unassisted", "feedback": "none"}], BASELINE)
    hitl = simulated_study(  # seed 1's sequence gives 45 entries the paper's 23 and 22
        tmp / "hitl", "hitl",
        [{"name": "unassisted", "feedback": "none"},
         {"name": "suggested", "feedback": "none", "suggestion": {
             "plans": {"blocksworld/p02": WRONG_P02, "blocksworld/p03": WRONG_P03},
             "label": "A plan suggested by an AI model. It is not perfect and can make mistakes."}}],
        HITL)
    shards = []
    for export in (baseline, hitl):
        name = json.loads((export / "study.json").read_text())["study"]
        shard = tmp / "episodes" / "human" / "people" / f"{name}.parquet"
        run("human", "shard", "--records", str(export), "--out", str(shard))
        shards.append(str(shard))
    episodes = tmp / "episodes.parquet"
    run("collect", "--out", str(episodes), *shards)
    report = tmp / "report"
    run("tables", "--episodes", str(episodes), "--out", str(report))
    run("figures", "--episodes", str(episodes), "--out", str(report / "figures"),
        "--regime", "human")
    # the paper's hypotheses, unassisted arm first: validity less, workload greater; time
    # left to `alternative`; intervals at the level alpha 0.1 gives
    spec = {"study": {"records": [str(baseline), str(hitl)], "alternative": "greater",
                      "alternatives": {"valid": "less"}}, "analysis": {"alpha": 0.1}}
    run("report", "--episodes", str(episodes), "--spec", json.dumps(spec), "--tables",
        str(report), "--figures", str(report / "figures"), "--out", str(report / "index.html"))
    return pl.read_parquet(episodes), report


def test_the_report_shows_the_papers_percentages_labelled_simulated(paper):
    rows, report = paper
    page = (report / "index.html").read_text()
    people = page[page.index('<h2 id="people">'):]
    assert "Simulated participants" in people
    assert "39 valid (78.0%" in people and "35 of them optimal (89.7%)" in people
    assert "17 valid (73.9%" in people and "18 valid (81.8%" in people
    assert "called it correct 4" in people and "submitted it verbatim 2" in people
    # intervals say their level; each measure is read under its own alternative, and the
    # power under validity's
    assert "90% CI" in people and "95% CI" not in people
    assert "valid <code>less</code>" in people and "time_s <code>greater</code>" in people
    assert "valid, suggested against unassisted: Fisher exact (less)" in people
    assert "raw NASA-TLX, suggested against unassisted: Welch t (greater)" in people
    assert "raw NASA-TLX, suggested against unassisted: Welch t (less)" not in people
    from planaudit.human.stats import sample_size

    # per instance beside the pooled rate, with each instance's suggestion verdict
    per = pl.read_csv(report / "human_instances.csv").filter(pl.col("study") == "hitl")
    done = rows.filter((pl.col("study") == "hitl") & (pl.col("outcome") != "error"))
    apart = done.group_by("method", "domain", "task").agg(
        pl.col("success").sum().alias("valid"), pl.len().alias("finished"))
    for r in per.iter_rows(named=True):
        domain, task = r["instance"].split("/")
        want = apart.filter((pl.col("method") == r["arm"]) & (pl.col("domain") == domain)
                            & (pl.col("task") == task)).row(0, named=True)
        assert (r["valid"], r["finished"]) == (want["valid"], want["finished"])
    assert per.filter(pl.col("arm") == "suggested")["valid"].sum() == 18
    assert set(per.filter(pl.col("arm") == "suggested")["suggestion_valid"]) == {False}
    assert per.filter(pl.col("arm") == "unassisted")["suggestion_valid"].is_null().all()
    assert 'id="per-instance"' in people and "(its suggestion invalid)" in people
    need = sample_size(0.74, 0.82, 0.8, 0.1, "less")
    assert f"at α = 0.1 (less) takes {need['exact_fisher']} participants per arm" in people
    assert '<img src="figures/human.png"' in people
    assert (report / "figures" / "human.png").stat().st_size > 10_000
    assert set(rows["model"]) == {"simulated participants (scripted, not people)"}
    assert rows["simulated"].all()


def test_the_statistics_equal_scipys_on_the_same_numbers(paper):
    rows, report = paper
    tests = pl.read_csv(report / "human_tests.csv")
    hitl = tests.filter((pl.col("study") == "hitl") & (pl.col("measure") == "valid"))

    def p(test: str, alternative: str) -> float:
        return hitl.filter((pl.col("test") == test) & (pl.col("alternative") == alternative))["p"][0]

    table = [[17, 23 - 17], [18, 22 - 18]]
    assert p("Fisher exact", "two-sided") == pytest.approx(sps.fisher_exact(table).pvalue, abs=1e-12)
    assert round(p("Fisher exact", "two-sided"), 2) == 0.72
    for alt in ("less", "greater"):
        assert p("Fisher exact", alt) == pytest.approx(
            sps.fisher_exact(table, alternative=alt).pvalue, abs=1e-12)
    assert p("Boschloo exact", "two-sided") == pytest.approx(
        sps.boschloo_exact([[17, 18], [6, 4]]).pvalue, abs=1e-9)
    people = rows.filter((pl.col("study") == "hitl") & (pl.col("outcome") != "error"))
    x = people.filter(pl.col("method") == "unassisted")["tlx_raw"].to_list()
    y = people.filter(pl.col("method") == "suggested")["tlx_raw"].to_list()
    load = tests.filter((pl.col("study") == "hitl") & (pl.col("measure") == "raw NASA-TLX")
                        & (pl.col("alternative") == "greater"))
    welch = sps.ttest_ind(x, y, equal_var=False, alternative="greater")
    got = load.filter(pl.col("test") == "Welch t").row(0, named=True)
    assert got["statistic"] == pytest.approx(welch.statistic) and got["p"] == pytest.approx(welch.pvalue)
    mw = sps.mannwhitneyu(x, y, alternative="greater")
    got = load.filter(pl.col("test") == "Mann-Whitney U").row(0, named=True)
    assert got["statistic"] == pytest.approx(mw.statistic) and got["p"] == pytest.approx(mw.pvalue)


def test_the_human_table_counts_every_arm(paper):
    _rows, report = paper
    human = pl.read_csv(report / "human.csv")
    got = {(r["study"], r["arm"]): (r["finished"], r["valid"], r["optimal"])
           for r in human.iter_rows(named=True)}
    assert got[("baseline", "unassisted")] == (50, 39, 35)
    assert got[("hitl", "unassisted")][:2] == (23, 17)
    assert got[("hitl", "suggested")][:2] == (22, 18)
    sug = human.filter((pl.col("study") == "hitl") & (pl.col("arm") == "suggested")).row(0, named=True)
    assert (sug["wrong_suggestion_shown"], sug["called_wrong_correct"], sug["wrong_verbatim"]) == (22, 4, 2)
