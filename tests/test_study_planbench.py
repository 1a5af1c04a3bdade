"""A study on PlanBench's own instances: task folders in PlanBench's words with truth proven
by formal/, a recorded model's plan as the suggestion judged as the replay judges it, and
clear errors on bad input. Real files from ../shared/planbench."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from planaudit.formal import load_task
from planaudit.formal.search import breadth_first
from planaudit.planbench.generate import cases
from planaudit.planbench.material import load_config
from planaudit.planbench.replay import Context, default_dialect, load_results, score_instance
from planaudit.planbench.world import goal_atoms
from planaudit.study.materials import Material
from planaudit.study.planbench_source import planbench_suggestion, prepare_planbench
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "planbench"
PB = SHARED / "plan-bench"
T1 = PB / "results" / "blocksworld" / "gpt-4_chat" / "task_1_plan_generation.json"
# read through a translation into PDDL steps (raw_translation): another of replay's dialects
T1_TRANSLATED = (SHARED / "llm_planning_analysis" / "results" / "blocksworld" / "llama-3.1-405b_aws"
                 / "task_1_plan_generation_zero_shot.json")
pytestmark = pytest.mark.skipif(not SHARED.exists() and not os.environ.get("CI"),
                                reason="../shared/planbench not present")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict[int, Path]:
    out = tmp_path_factory.mktemp("planbench")
    return {i: prepare_planbench(PB, "blocksworld", i, out / f"blocksworld-{i}") for i in (2, 7)}


@pytest.mark.parametrize("iid", [2, 7])
def test_brief_in_planbench_words(prepared, iid):
    folder = prepared[iid]
    brief = json.loads((folder / "brief.json").read_text())
    cfg = load_config(PB, "blocksworld")
    task = cfg.task(iid)
    assert brief["source"] == "planbench" and brief["preamble"]
    prompt = cases(PB, "blocksworld", "t1", [str(iid)], shots=0, planner="formal")[0].prompt
    assert prompt.startswith(brief["domain"] + "\n")  # PlanBench's own description, as its prompt
    assert "[STATEMENT]\n" + brief["instance"] + "\n\nWhat is the plan" in prompt  # its t1 statement
    assert "Unstack a block from on top of another block" in brief["domain"]
    init, _, goal = brief["instance"].partition("\nMy goal is to have that ")
    assert init.startswith("As initial conditions I have that, ")
    for obj in task.problem.objects:
        assert cfg.object_text(obj) in init  # "red block", ...
        assert brief["objects"][obj] == cfg.object_text(obj)
    for atom in goal_atoms(task):
        assert cfg.fact_text(atom) in goal  # "the orange block is on top of the red block"
    assert "the hand is empty" in init
    assert "[PLAN" not in brief["instance"] and "What is the plan" not in brief["instance"]
    assert (folder / "domain.pddl").read_bytes() == cfg.domain_path.read_bytes()
    assert (folder / "problem.pddl").read_bytes() == cfg.instance_path(iid).read_bytes()


@pytest.mark.parametrize("iid", [2, 7])
def test_truth_proven_by_formal(prepared, iid):
    folder = prepared[iid]
    truth = json.loads((folder / "truth.json").read_text())
    cfg = load_config(PB, "blocksworld")
    proof = breadth_first(load_task(cfg.domain_path, cfg.instance_path(iid)))
    assert proof.status == "solved"
    assert truth["solvable"] is True and truth["optimal_length"] == proof.length
    assert (truth["domain"], truth["task"]) == ("blocksworld", str(iid))
    check = Material(f"planbench/blocksworld/{iid}", folder).check(truth["plan"])
    assert check.valid and check.optimal and check.length == truth["optimal_length"]


def test_idempotent(tmp_path):
    folder = prepare_planbench(PB, "blocksworld", "3", tmp_path / "t")
    files = sorted(folder.iterdir())
    stamps = {p.name: p.stat().st_mtime_ns for p in files}
    assert prepare_planbench(PB, "blocksworld", 3, folder) == folder
    assert {p.name: p.stat().st_mtime_ns for p in sorted(folder.iterdir())} == stamps
    (folder / "truth.json").unlink()  # a folder left incomplete is completed
    prepare_planbench(PB, "blocksworld", 3, folder)
    assert json.loads((folder / "truth.json").read_text())["optimal_length"] > 0
    with pytest.raises(ValueError, match="not blocksworld instance 4"):
        prepare_planbench(PB, "blocksworld", 4, folder)


@pytest.mark.parametrize("results", [T1, T1_TRANSLATED], ids=["gpt-4", "llama-translated"])
def test_suggestion_judged_as_replay_judges_it(tmp_path, results):
    res = load_results(results)
    ctx = Context(res)
    dialect = default_dialect(res)
    verdicts = set()
    for inst in res.instances[:16]:
        iid = inst["instance_id"]
        replayed = score_instance(ctx, inst, dialect)
        if replayed.correct is None:  # no response: PlanBench leaves it out
            with pytest.raises(ValueError, match=re.escape(results.name) + f".*instance {iid}:"):
                planbench_suggestion(results, iid)
            continue
        try:
            plan = planbench_suggestion(results, iid)
        except ValueError as e:
            assert not replayed.correct and str(results) in str(e)
            continue
        assert all(s.startswith("(") and s.endswith(")") for s in plan)
        m = Material(f"planbench/blocksworld/{iid}",
                     prepare_planbench(res.root, "blocksworld", iid, tmp_path / str(iid)))
        assert m.check(plan).valid == replayed.correct, (iid, plan, replayed.why)
        verdicts.add(replayed.correct)
    assert verdicts == {True, False}  # both kinds seen


def test_recorded_plan_in_object_names():
    # GPT-4's recorded response on instance 3 begins "unstack the blue block from on top of the orange block"
    plan = planbench_suggestion(T1, 3)
    assert plan[0] == "(unstack b c)" and plan[1] == "(put-down b)"


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="nowhere"):
        prepare_planbench(tmp_path / "nowhere", "blocksworld", 2, tmp_path / "a")
    with pytest.raises(ValueError, match="sokoban_9"):
        prepare_planbench(PB, "sokoban_9", 2, tmp_path / "b")
    with pytest.raises(ValueError, match=r"instance-9999\.pddl.*instance 9999"):
        prepare_planbench(PB, "blocksworld", 9999, tmp_path / "c")
    with pytest.raises(ValueError, match="'two'"):
        prepare_planbench(PB, "blocksworld", "two", tmp_path / "d")
    assert not any((tmp_path / x).exists() for x in "abcd")
    with pytest.raises(ValueError, match="no instance 9999"):
        planbench_suggestion(T1, 9999)
    with pytest.raises(ValueError, match=re.escape("missing.json")):
        planbench_suggestion(tmp_path / "missing.json", 2, root=PB)
    t3 = T1.with_name("task_3_plan_verification.json")
    with pytest.raises(ValueError, match=re.escape("task_3_plan_verification.json: a t3 file")):
        planbench_suggestion(t3, 2)
    data = json.loads(T1.read_text())
    inst = next(i for i in data["instances"] if i["instance_id"] == 2)
    bad = tmp_path / "task_1_plan_generation.json"
    bad.write_text(json.dumps({**data, "instances": [dict(inst, llm_raw_response="I cannot find a plan.")]}))
    with pytest.raises(ValueError, match=re.escape(f"{bad}: instance 2: the response reads as no plan")):
        planbench_suggestion(bad, 2, root=PB)


def test_a_study_on_planbench_instances_with_a_recorded_suggestion(tmp_path):
    """The paper's setting as a study config: PlanBench's instances in its words, a recorded
    model's plan as the suggestion (GPT-4's, valid on instance 2, wrong at step 1 on 4), and
    the letters of the action list explained on the page."""
    import yaml
    from fastapi.testclient import TestClient

    from planaudit.study.app import create_app
    from planaudit.study.materials import resolve
    from planaudit.study.settings import load_study
    from planaudit.study.store import Store

    cfg = tmp_path / "study.yaml"
    cfg.write_text(yaml.safe_dump({
        "study": "pb", "results": str(tmp_path / "study"), "planbench_root": str(PB),
        "instances": ["planbench:blocksworld/2", "planbench:blocksworld/4"],
        "example": {"task": "planbench:blocksworld/3"},
        "arms": [{"name": "suggested", "suggestion": {"planbench": str(T1)}}]}))
    study = load_study(cfg)
    materials = resolve(study)
    sug = materials.suggestions["suggested"]
    assert sug["planbench:blocksworld/2"]["check"]["valid"] is True
    wrong = sug["planbench:blocksworld/4"]["check"]
    assert (wrong["valid"], wrong["failure_step"]) == (False, 1)
    store = Store(study.database_url())
    store.migrate()
    client = TestClient(create_app(study, materials, store))
    r = client.get("/?PROLIFIC_PID=pb1&STUDY_ID=s&SESSION_ID=x")
    for _ in range(3):
        key = re.search(r'name="key" value="([0-9a-f]{32})"', r.text).group(1)
        r = client.post(str(r.url), data={"key": key, "agree": "yes"})
    assert r.url.path.endswith("/phase1")
    assert "My goal is to have that the orange block is on top of the red block." in r.text
    assert "is the red block" not in r.text, "no legend of letters: no letter is shown"
    # a recorded answer with no plan cannot be a suggestion: named before the study opens
    bad = yaml.safe_load(cfg.read_text())
    bad["instances"] = ["planbench:blocksworld/12"]
    cfg.write_text(yaml.safe_dump(bad))
    with pytest.raises(Exception, match=r"study.yaml:\d+: arms\[0\].suggestion.planbench: .*instance 12"):
        resolve(load_study(cfg))


# instance 2's plan as a person writes it, in PlanBench's words and their paraphrases
PHASE1 = ("1. unstack the yellow block from on top of the orange block\n2. put the yellow block "
          "down\n3. then pick up the orange block\n4. put the orange block on the red block")
# what a page in PlanBench's words must not show: an action or a fact in PDDL, a block by
# its letter, the action names' hyphens
PDDL = re.compile(r"\((?:pick-up|put-down|stack|unstack|on|clear|ontable|holding|handempty)\b"
                  r"|\bblock [a-l]\b|\b[a-l] is the \w+ block|pick-up|put-down")


@pytest.mark.skipif(not shutil.which("chromium") and not os.environ.get("CI"),
                    reason="chromium not installed")
def test_every_page_in_planbench_words_in_a_real_browser(tmp_path):
    """The PlanBench paper's setting in headless Chromium: every page a participant sees
    (consent to completion, with step feedback and the state shown) uses PlanBench's words,
    the picker and the plan included, and no PDDL or letter name; underneath, each pick is
    the grounded action, and the plan built is judged valid."""
    import yaml
    from playwright.sync_api import expect, sync_playwright

    from planaudit.study.materials import resolve
    from planaudit.study.settings import load_study
    from tests.study_server import Server, entry

    cfg = tmp_path / "study.yaml"
    cfg.write_text(yaml.safe_dump({
        "study": "pbwords", "results": str(tmp_path / "study"), "planbench_root": str(PB),
        "instances": ["planbench:blocksworld/2"], "example": {"task": "planbench:blocksworld/3"},
        "arms": [{"name": "suggested", "feedback": "step", "show_state": True,
                  "suggestion": {"planbench": str(T1)}}],
        "completion": {"code": "PBWORDS"}}))
    materials = resolve(load_study(cfg))
    m = materials.instances["planbench:blocksworld/2"]
    words = materials.suggestions["suggested"]["planbench:blocksworld/2"]["words"]
    shots = os.environ.get("PLANAUDIT_STUDY_SCREENSHOTS")
    server = Server(cfg)
    seen: dict[str, str] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium") or None,
                                         args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1000, "height": 800})

            def look(name: str) -> None:
                body = page.inner_text("body")
                assert not PDDL.search(body), f"{name}: {PDDL.search(body).group(0)!r} in\n{body}"
                seen[name] = body
                if shots:
                    Path(shots).mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=f"{shots}/planbench-{name}.png", full_page=True)

            def press(name: str) -> None:
                page.get_by_role("button", name=name, exact=True).click()

            page.goto(entry(server.url, "pbwords-1"))
            look("consent")
            page.get_by_label("I agree to take part").check()
            press("Continue")
            look("instructions")
            press("I have read this: show me the example")
            look("example")
            press("Go to my task")
            look("phase1")
            page.locator("#text").fill(PHASE1)
            press("Save and go on")
            look("phase2")
            for step in m.plan:  # each step picked on its line, objects by their words
                name, *args = step.strip("()").split()
                line = page.locator(f'form.pick[data-action="{name}"]')
                for k, obj in enumerate(args, 1):
                    line.locator(f'select[name="arg{k}"]').select_option(
                        label=m.brief["objects"][obj])
                line.get_by_role("button").click()
                expect(page.locator("#feedback")).to_be_visible()
            expect(page.locator("#plan > li > span.step")).to_have_text([m.words(s)
                                                                          for s in m.plan])
            look("phase2-built")
            press("Submit my plan")
            look("suggestion")
            page.get_by_label("Yes, it is correct").check()
            press("Save and go on")
            for k in ("mental", "physical", "temporal", "performance", "effort", "frustration"):
                page.locator(f"#scale-{k} input[value='50']").check()
            look("tlx")
            press("Finish")
            look("done")
            browser.close()
    finally:
        server.stop()
    # PlanBench's words were there: its domain intro, its instance, the model's own words
    assert "I am playing with a set of blocks" in seen["instructions"]
    assert "My goal is to have that the orange block is on top of the red block." in seen["phase1"]
    assert words and words.splitlines()[0].strip() in seen["phase1"]
    assert "unstack the" in seen["phase2"] and "from on top of the" in seen["phase2"]
    assert "The goal holds after the last step" in seen["phase2-built"]
    assert "PBWORDS" in seen["done"]
    # the export judges it on a copy of PlanBench's config of its own: relocatable
    import polars as pl

    from tests.study_server import PLANAUDIT

    out = tmp_path / "export"
    r = subprocess.run([PLANAUDIT, "study", "export", "--config", str(cfg), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for f in out.rglob("*"):
        assert not f.is_file() or str(PB).encode() not in f.read_bytes(), f
    row = pl.read_parquet(out / "rows.parquet").row(0, named=True)
    assert (row["outcome"], row["suggestion_valid"]) == ("success", True)
    assert (row["text_outcome"], row["text_length"]) == ("success", 4), row["text_detail"]


def test_an_assistants_plan_in_planbench_words_is_read_and_judged(prepared):
    """A live assistant on a PlanBench instance answers in the words it was told the task
    in; its plan is read in those words (and in PDDL too) and judged on the hidden model."""
    from planaudit.study.assistant import read_reply

    folder = prepared[2]
    m = Material("planbench:blocksworld/2", folder)
    plan = json.loads((folder / "truth.json").read_text())["plan"]
    said = "Here is a plan:\n" + "\n".join(m.words(s) for s in plan)
    assert said.count("(") == 0  # words, not PDDL
    right = read_reply(m, said, PB)
    assert right["proposal"] == plan and right["verdict"]["valid"] is True
    short = read_reply(m, "Try this:\n" + "\n".join(m.words(s) for s in plan[1:]), PB)
    assert short["proposal"] == plan[1:] and short["verdict"]["valid"] is False
    assert read_reply(m, "```\n" + "\n".join(plan) + "\n```", PB)["proposal"] == plan
    assert read_reply(m, "I am not sure what to do.", PB)["proposal"] is None
