"""People judged like models: a real `planaudit study serve` takes a small scripted cohort
over HTTP (valid plans, a plan invalid at step k, a plan that misses the goal, unreadable
and readable free text, a suggestion submitted verbatim, someone who stops); `planaudit
study export` writes the rows, and every verdict agrees with `planaudit validate` (and VAL,
where installed) on the same plan; the workflow's `planaudit human shard` judges the
export to the same rows; `collect` takes them under the row contract."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import httpx
import polars as pl
import pytest

from planaudit.formal import witness
from planaudit.study.tlx import KEYS
from tests.study_server import (
    ADMIN_TOKEN,
    PLANAUDIT,
    RIGHT_P02,
    WRONG_P03,
    Server,
    entry,
    form_key,
    study_config,
)

TAG = re.compile(r'data-instance="([0-9a-f]*)"')
TASKS = {hashlib.sha256(f"blocksworld/{t}".encode()).hexdigest()[:12]: t for t in ("p02", "p03")}
ROOT = Path(__file__).resolve().parents[1]

# p03 (reverse a-b-c-d: a on b on c on d; goal d on c on b on a), its proven optimum
RIGHT_P03 = ["(unstack a b)", "(put-down a)", "(unstack b c)", "(stack b a)", "(unstack c d)",
             "(stack c b)", "(pick-up d)", "(stack d c)"]
# what each scripted person does on each task: phase-1 text, phase-2 plan, answer on the
# suggestion (suggestion arm only), where they stop (None: they finish)
SCRIPTS = [
    {"p02": RIGHT_P02, "p03": RIGHT_P03, "text": "plan"},            # valid, text agrees
    {"p02": [*RIGHT_P02[:3], "(stack a b)", *RIGHT_P02[3:]], "p03": WRONG_P03,
     "text": "Shuffle the blocks about until the tower stands."},  # invalid at step k; prose
    {"p02": RIGHT_P02[:-1], "p03": RIGHT_P03[:-1], "text": "plan"},  # goal not reached
    {"p02": "suggestion", "p03": "suggestion", "text": "plan", "correct": "yes"},  # verbatim
    {"p02": RIGHT_P02, "p03": RIGHT_P03, "text": "words", "stop": "phase2"},  # stops
    {"p02": RIGHT_P02, "p03": RIGHT_P03, "text": "words", "correct": "no"},  # text in words
]
SUGGESTED = {"p02": RIGHT_P02, "p03": WRONG_P03}


def words(plan: list[str]) -> str:
    """A plan as people write it in words ("unstack c from a")."""
    out = []
    for n, step in enumerate(plan, 1):
        name, *args = step.strip("()").split()
        joiner = {"stack": " on ", "unstack": " from "}.get(name, " ")
        out.append(f"{n}. {name.replace('-', ' ')} {joiner.join(args)}")
    return "\n".join(out)


class Walker:
    """One scripted person over HTTP, following the server's redirects."""

    def __init__(self, url: str, pid: str):
        self.http = httpx.Client(base_url=url, timeout=60)
        r = self.http.get(entry(url, pid))
        assert r.status_code == 303, r.text
        self.tok, self.step = r.headers["location"].split("/")[2:]
        # no page names the arm: the researchers' view says which one the server gave
        who = self.http.get("/admin/whois", params={"participant": pid},
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert who.status_code == 200, who.text
        self.arm = who.json()["arm"]

    def page(self) -> str:
        r = self.http.get(f"/s/{self.tok}/{self.step}", follow_redirects=True)
        assert r.status_code == 200, r.text
        self.step = r.url.path.rsplit("/", 1)[1]
        return r.text

    def post(self, data: dict) -> None:
        html = self.page()
        r = self.http.post(f"/s/{self.tok}/{self.step}", data={"key": form_key(html), **data})
        assert r.status_code == 303, r.text
        self.step = r.headers["location"].rsplit("/", 1)[1]

    def run(self, script: dict) -> dict:
        """Walk to the end (or to `stop`); the task is read from the page's opaque tag."""
        while self.step != "done":
            html = self.page()
            task = TASKS[TAG.search(html).group(1)]
            plan = script[task] if script[task] != "suggestion" else SUGGESTED[task]
            arm = self.arm
            if self.step == script.get("stop"):
                return {"task": task, "arm": arm, "plan": None}
            if self.step == "phase1":
                text = {"plan": "\n".join(plan), "words": words(plan)}.get(script["text"],
                                                                           script["text"])
                self.post({"text": text})
            elif self.step == "phase2":
                for action in plan:
                    self.post({"op": "add", "action": action})
                self.post({"op": "submit"})
            else:
                self.post({"consent": {"agree": "yes"},
                           "suggestion": {"correct": script.get("correct", "no")},
                           "tlx": dict.fromkeys(KEYS, "40")}.get(self.step, {}))
        return {"task": task, "arm": arm, "plan": plan,
                "correct": script.get("correct", "no") == "yes"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("human")
    config = study_config(tmp)
    server = Server(config)
    walked = []
    try:
        for n, script in enumerate(SCRIPTS * 2):  # each script in both arms (balanced)
            walked.append(Walker(server.url, f"P{n:03d}").run(script))
    finally:
        server.kill()
    out = tmp / "export"
    r = subprocess.run([PLANAUDIT, "study", "export", "--config", str(config), "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out, pl.read_parquet(out / "rows.parquet"), walked


def validate_cli(folder: Path, plan: list[str], tmp: Path) -> dict:
    path = tmp / "plan.txt"
    path.write_text("\n".join(plan) + "\n")
    r = subprocess.run([PLANAUDIT, "validate", str(folder / "domain.pddl"),
                        str(folder / "problem.pddl"), str(path), "--json"],
                       capture_output=True, text=True)
    return json.loads(r.stdout)


def test_every_verdict_agrees_with_planaudit_validate(exported, tmp_path):
    out, rows, _walked = exported
    meta = json.loads((out / "study.json").read_text())
    assert rows.height == len(SCRIPTS) * 2
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    by_pseudonym = {r["participant"]: r for r in records}
    judged = 0
    kinds = set()
    for row in rows.iter_rows(named=True):
        rec = by_pseudonym[row["participant"]]
        if row["outcome"] == "error":
            assert not row["finished"] and row["error"].startswith("did not finish")
            continue
        plan = rec["answers"]["phase2"]["plan"]
        folder = out / meta["instances"][rec["instance"]]["folder"]
        v = validate_cli(folder, plan, tmp_path)
        assert row["success"] == v["valid"], (row, v)
        assert row["plan_length"] == len(plan)
        failure = v.get("failure") or {}
        assert row["first_failure_step"] == failure.get("step"), (row, v)
        assert row["first_failure_kind"] == failure.get("kind"), (row, v)
        kinds.add(row["outcome"])
        if witness.available():
            assert row["val_valid"] == v["valid"], row["val_detail"]
        judged += 1
    assert kinds == {"success", "inapplicable-action", "goal-not-reached"}
    assert judged == rows.filter(pl.col("finished")).height == 10


def test_phase_one_text_is_read_as_a_models_reply(exported):
    _out, rows, _walked = exported
    done = rows.filter(pl.col("finished"))
    prose = done.filter(pl.col("text_detail").fill_null("").str.contains("no line reads"))
    assert prose.height == 2 and set(prose["text_outcome"]) == {"malformed"}
    readable = done.filter(pl.col("text_outcome") != "malformed")
    assert readable.height == 8
    # the text states the submitted plan (PDDL lines or words): it agrees, and its verdict is
    # the phase-2 verdict
    assert readable["text_agrees"].all(), readable.select("task", "method", "text_detail")
    assert (readable["text_outcome"] == readable["outcome"]).all()


def test_suggestion_columns(exported):
    _out, rows, walked = exported
    sug = rows.filter((pl.col("method") == "suggested") & pl.col("finished"))
    assert sug["suggested"].all()
    assert rows.filter(pl.col("method") == "unassisted")["suggested"].not_().all()
    # the suggestion's own verdict: valid on p02, wrong on p03
    assert dict(zip(sug["task"], sug["suggestion_valid"], strict=True)) == {"p02": True, "p03": False}
    verbatim = sug.filter(pl.col("suggestion_verbatim"))
    assert verbatim.height >= 1
    assert (verbatim["suggestion_distance"] == 0).all()
    assert verbatim["suggestion_left_at"].is_null().all()
    # the wrong suggestion (p03) submitted verbatim, called correct as scripted
    wrong = verbatim.filter(pl.col("task") == "p03")
    expected = sorted(w["correct"] for w in walked if w["arm"] == "suggested"
                      and w["task"] == "p03" and w["plan"] == WRONG_P03)
    assert wrong.height == len(expected) >= 1 and not wrong["success"].any()
    assert sorted(wrong["suggestion_called_correct"]) == expected
    other = sug.filter(~pl.col("suggestion_verbatim"))
    assert (other["suggestion_distance"] > 0).all() and other["suggestion_left_at"].is_not_null().all()


def test_rows_are_pseudonymised_timed_and_pass_the_row_contract(exported, tmp_path):
    out, rows, _walked = exported
    text = (out / "records.jsonl").read_text() + (out / "study.json").read_text()
    assert "P000" not in text and "PROLIFIC" not in text  # platform ids never leave the ledger
    assert set(rows["regime"]) == {"human"} and set(rows["model"]) == {"people"}
    assert not rows["simulated"].any()
    done = rows.filter(pl.col("finished"))
    assert done["time_s"].is_not_null().all() and (done["time_s"] >= 0).all()
    assert (done["tlx_raw"] == 40).all()
    events = pl.read_parquet(out / "events.parquet")
    assert set(events["participant"]) == set(rows["participant"])
    assert {"enrol", "view", "submit", "add"} <= set(events["kind"])
    # the workflow's job judges the export to the same rows; collect takes them
    shard = tmp_path / "people" / "teststudy.parquet"
    r = subprocess.run([PLANAUDIT, "human", "shard", "--records", str(out), "--out", str(shard)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    again = pl.read_parquet(shard)
    cols = [c for c in rows.columns if c != "val_detail"]  # VAL's line carries its seconds
    assert again.select(cols).equals(rows.select(cols))
    collected = tmp_path / "episodes.parquet"
    r = subprocess.run([PLANAUDIT, "collect", "--out", str(collected), str(shard)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert pl.read_parquet(collected).filter(pl.col("regime") == "human").height == rows.height


def test_the_export_names_no_local_path(exported):
    """Relocatable: no file of the export (parquet included, as bytes) holds the machine's
    absolute paths: not the export's folder, the study's, nor the project's."""
    out = exported[0]
    local = [str(out.parent).encode(), str(ROOT).encode(), b"/tmp/pytest"]
    files = [f for f in out.rglob("*") if f.is_file()]
    assert len(files) >= 5
    for f in files:
        data = f.read_bytes()
        assert not [x for x in local if x in data], f"{f.relative_to(out)} holds a local path"


def test_a_bad_export_folder_is_named(tmp_path):
    r = subprocess.run([PLANAUDIT, "human", "shard", "--records", str(tmp_path), "--out",
                        str(tmp_path / "x.parquet")], capture_output=True, text=True)
    assert r.returncode != 0 and f"{tmp_path}/study.json: no such file" in r.stderr


def test_the_workflow_lays_people_beside_models_and_reruns_on_new_records(exported, tmp_path):
    """A config naming the export: `snakemake` judges it (human_people), collects people
    beside the oracle's offline rows, writes the People section, `same_tasks` and the
    study's analysis; new records rerun exactly the people's side; a missing folder is
    named by the config's file and line before any job."""
    import os
    import shutil

    import yaml

    out, rows, _walked = exported
    records = tmp_path / "export"
    shutil.copytree(out, records)
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg.update({
        "results": str(tmp_path / "results"), "cache": str(tmp_path / "cache"),
        "suite": {**cfg["suite"], "root": str(ROOT / "domains"), "domains": ["blocksworld"],
                  "obfuscate": [], "disguise": ["none"]},
        "truth": {**cfg["truth"], "external": False},
        "models": [{"name": "oracle", "model": "reference/oracle", "tier": "reference"}],
        "offline": {"methods": ["direct"]}, "online": {"methods": []},
        "curriculum": {"tests": []}, "acpbench": {"types": []}, "formalize": {"methods": []},
        "study": {"records": [str(records)], "alternative": "greater"}})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = dict(os.environ, PATH=f"{Path(PLANAUDIT).parent}{os.pathsep}{os.environ['PATH']}")

    def snakemake(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(Path(PLANAUDIT).with_name("snakemake")), "--cores", "2",
                               "--nolock", "--configfile", str(path), *extra], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=900)

    proc = snakemake()
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = tmp_path / "results"
    episodes = pl.read_parquet(results / "episodes.parquet")
    people = episodes.filter(pl.col("regime") == "human")
    assert people.height == rows.height
    same = pl.read_csv(results / "report" / "same_tasks.csv")
    assert set(same["regime"]) == {"offline", "human"}
    assert same.filter(pl.col("regime") == "offline")["n_tasks"].to_list() == [2]  # p02, p03
    page = (results / "report" / "index.html").read_text()
    assert '<h2 id="people">People</h2>' in page and '<a href="#people">People</a>' in page
    analysis = json.loads((results / "study" / "analysis" / "analysis.json").read_text())
    assert analysis["alternative"] == "greater" and analysis["arms"]
    # new records (Snakemake compares contents, not only times): the people's side
    # reruns, nothing of the models'
    with (records / "records.jsonl").open("a") as f:
        f.write("\n")  # a blank line: the same participants, another file
    dry = snakemake("-n")
    assert dry.returncode == 0, dry.stderr[-2000:]
    for job in ("human_people", "collect", "tables", "report", "study_analysis"):
        assert re.search(rf"\n{job}\s+1\n", dry.stdout), (job, dry.stdout)
    assert "offline_oracle" not in dry.stdout and "suite_blocksworld" not in dry.stdout
    cfg["study"]["records"] = [str(tmp_path / "nowhere")]
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    bad = snakemake("-n")
    said = bad.stdout + bad.stderr
    assert bad.returncode != 0
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "nowhere" in text)
    assert f"{path}:{line}: study.records[0]: " in said, said[-2000:]
    assert "nowhere/study.json: no such file" in said


def test_study_plan_prints_the_papers_design():
    r = subprocess.run([PLANAUDIT, "study", "plan"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "443 participants per arm (Fisher's exact test" in r.stdout
    assert "418 by the normal approximation" in r.stdout
    bad = subprocess.run([PLANAUDIT, "study", "plan", "--rates", "0.8", "0.8"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "two different rates" in bad.stderr
