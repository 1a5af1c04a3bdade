"""PlanBench's translator-scored files, LPG's own repair distance, and Fast Downward's
failures: each read or run for real (the shared PlanBench material, the up-lpg and
up-fast-downward binaries); what is absent here is skipped, saying so."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import DOMAINS, ROOT

SHARED = ROOT.parent / "shared" / "planbench"
LA = SHARED / "llm_planning_analysis"
LLAMA = LA / "results" / "blocksworld" / "llama-3.1-405b_aws" / "task_1_plan_generation_zero_shot.json"
needs_shared = pytest.mark.skipif(not SHARED.exists() and not os.environ.get("CI"),
                                  reason="../shared/planbench not present")


def _fd() -> bool:
    from planaudit.planbench.fastdownward import available

    return available()


def _lpg() -> bool:
    from planaudit.formal.repair import available

    return available()


needs_fd = pytest.mark.skipif(not os.environ.get("CI") and not _fd(), reason="up-fast-downward not installed")
needs_lpg = pytest.mark.skipif(not _lpg(), reason="LPG not installed (up-lpg: Linux x86_64 only)")


# -- translated files --------------------------------------------------------------------

_STEP = re.compile(r"^\((pick-up|put-down|stack|unstack)((?: [a-z]+)+)\)$")


def _steps(translation: str) -> list[tuple[str, list[str]]]:
    """The PDDL lines of a real llama translation: (action, colour words)."""
    body = translation.split("[PDDL PLAN]")[-1].split("[PDDL PLAN END]")[0]
    return [(m.group(1), m.group(2).split()) for ln in body.splitlines()
            if (m := _STEP.match(ln.strip()))]


def _prose(action: str, objs: list[str]) -> str:
    a = objs[0]
    return {"unstack": f"Unstack the {a} block from the {objs[-1]} block",
            "stack": f"Stack the {a} block on top of the {objs[-1]} block",
            "pick-up": f"Pick up the {a} block", "put-down": f"Put down the {a} block"}[action]


def _alias(action: str, sep: str) -> str:
    return action.replace("-", sep) if action in ("pick-up", "put-down") else action


# How translations look in the o1 files, written over a real llama plan (the instance of
# karthikv792/LLMs-Planning's o1-preview_chat blocksworld_3 zero-shot file each follows).
FORMATS = {
    # 14: numbered in brackets, capitalised, no brackets round the step
    "numbered": lambda s: "".join(f"({n}) {a.capitalize()} {' '.join(o)}  \n"
                                  for n, (a, o) in enumerate(s, 1)) + "[PDDL PLAN END]",
    # 5, 68, 75, 95: pickup / putdown
    "joined": lambda s: "".join(f"({_alias(a, '')} {' '.join(o)})\n" for a, o in s) + "[PDDL PLAN END]",
    # 28: an answer list before [PDDL PLAN], pick_up / put_down
    "underscore": lambda s: "**Answer:**\n\n" + "".join(f"- {_alias(a, '_')}({', '.join(o)})\n"
                                                       for a, o in s)
    + "\n[PDDL PLAN]\n" + "".join(f"({_alias(a, '_')} {' '.join(o)})\n" for a, o in s) + "[PDDL PLAN END]",
    # 2, 24, 96: a "(PDDL PLAN)" line; 2: objects as "red block", "on" between them
    "blocks": lambda s: "(PDDL PLAN)\n" + "".join(
        f"({a} {' on '.join(x + ' block' for x in o)})\n" for a, o in s) + "[PDDL PLAN END]",
    # 21, 59, 76: numbered prose, then the PDDL fenced under bold headers without brackets
    "prose": lambda s: "Here is the PDDL plan:\n\n**Plan of Actions:**\n\n" + "".join(
        f"{n}. {_prose(a, o)}\n" for n, (a, o) in enumerate(s, 1))
    + "\n**PDDL PLAN:**\n```\n" + "".join(f"({a} {' '.join(o)})\n" for a, o in s)
    + "```\n**PDDL PLAN END**",
    # 63, 82, 98: a lisp fence round the plan and its end marker
    "fenced": lambda s: "```lisp\n" + "".join(f"({a} {' '.join(o)})\n" for a, o in s)
    + "[PDDL PLAN END]\n```\n",
}


def _o1_formats_file(tmp_path: Path) -> tuple[Path, int]:
    """A translated results file: real llama instances recorded correct, their real
    translations rewritten in the o1 files' formats (six of each), the recorded reading
    (`extracted_llm_plan`) and verdict kept, since the plan is the same."""
    from planaudit.planbench.material import load_config

    letter = {v: k for k, v in load_config(LA, "blocksworld").data["encoded_objects_compact"].items()}
    data = json.loads(LLAMA.read_text())
    good = [i for i in data["instances"] if i["llm_correct"] and len(_steps(i["raw_translation"])) >= 4
            and any(a in ("pick-up", "put-down") for a, _ in _steps(i["raw_translation"]))]
    out = []
    for k, (name, fmt) in enumerate(FORMATS.items()):
        for inst in good[6 * k:6 * k + 6]:
            steps = _steps(inst["raw_translation"])
            want = "\n".join(f"({a} {' '.join(letter[x] for x in o)})" for a, o in steps)
            assert want == inst["extracted_llm_plan"].strip(), inst["instance_id"]
            out.append({**inst, "raw_translation": fmt(steps), "format": name})
    data = {**data, "engine": "o1-formats", "instances": out}
    path = tmp_path / "results" / "blocksworld" / "o1-formats" / "task_1_plan_generation_zero_shot.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path, len(out)


@needs_shared
def test_o1_translation_formats_are_read_as_planbench_read_them(tmp_path):
    """The o1 files' translations (numbered steps, pickup/put_down, "red block", prose
    before a fenced plan) read as PlanBench read them: every recorded reading and
    verdict reproduced; the other two readings each miss some."""
    from planaudit.planbench.dialects import READERS
    from planaudit.planbench.material import load_config
    from planaudit.planbench.replay import replay

    path, n = _o1_formats_file(tmp_path)
    s = replay(path, LA)
    assert s["dialect"] == "translated"
    assert s["scored"] == n == 36 and s["agree"] == n and s["correct"] == n, s["disagreements"]
    assert s["dialects"]["translated-early"]["agree"] == n - 6  # "(1) Unstack red orange"
    assert s["dialects"]["translated-published"]["agree"] < n  # the prose read as steps too
    cfg = load_config(LA, "blocksworld")
    for inst in json.loads(path.read_text())["instances"]:
        steps = READERS["translated"](cfg, inst["raw_translation"])
        got = "\n".join("(" + " ".join((a, *o)) + ")" for a, o in steps)
        assert got == inst["extracted_llm_plan"].strip(), inst["format"]


@needs_shared
def test_the_llama_file_was_read_before_digits_were_deleted():
    """The llama-3.1-405b file's recorded readings are `translated-early`'s, all 500: its
    three translations numbered inside the brackets ("(1) (unstack yellow red)",
    "(1. unstack red yellow)") were read as no plan, where `translated` reads them."""
    from planaudit.planbench.dialects import READERS, best_translated
    from planaudit.planbench.material import load_config

    cfg = load_config(LA, "blocksworld")
    insts = json.loads(LLAMA.read_text())["instances"]
    assert best_translated(cfg, insts) == "translated-early"
    differ = {}
    for name in ("translated", "translated-early"):
        differ[name] = [i["instance_id"] for i in insts if "\n".join(
            "(" + " ".join((a, *o)) + ")" for a, o in READERS[name](cfg, i["raw_translation"]))
            != i["extracted_llm_plan"].strip()]
    assert differ == {"translated": [267, 354, 424], "translated-early": []}
    from planaudit.planbench.replay import dialects_for, load_results

    assert dialects_for(load_results(LLAMA)) == ["translated-early", "translated", "translated-published",
                                                 "2023", "2024", "2025", "strict"]


@needs_shared
def test_translated_objects_and_arity_fail_as_they_failed_val():
    """Objects are the compact colour names a word contains ("red_block" is red); a word
    that contains none is dropped, so "(stack a b)" keeps no object and the plan fails,
    as VAL failed it; "no plan possible" is no step."""
    from planaudit.planbench.dialects import READERS
    from planaudit.planbench.material import load_config
    from planaudit.planbench.world import world_of

    cfg = load_config(LA, "blocksworld")
    text = "[PDDL PLAN]\n(unstack red_block blue_block)\n(put-down red)\nno plan possible\n[PDDL PLAN END]"
    assert READERS["translated"](cfg, text) == [("unstack", ("a", "b")), ("put-down", ("a",))]
    steps = READERS["translated"](cfg, "(unstack a b)\n(pick-up red blue)")
    assert steps == [("unstack", ()), ("pick-up", ("a", "b"))]
    world = world_of(cfg)
    assert world.run(0, steps).failed_at == 1
    # Mystery Blocksworld: PDDL steps over letters, object_ and numbering deleted
    mystery = load_config(LA, "mystery_blocksworld")
    text = ("[PDDL PLAN]\n1. (attack object_a)\n**(feast b c)**\n(PDDL PLAN)\nno plan possible\n"
            "[PDDL PLAN END]")
    assert READERS["translated"](mystery, text) == [("attack", ("a",)), ("feast", ("b", "c")),
                                                    ("no", ("plan", "possible"))]


@needs_shared
def test_published_reading_reads_numbered_prose_before_the_plan():
    """`translated-published` (the code as published, the o1-mini files) reads every line:
    a numbered "Unstack ..."/"Stack ..." line before the PDDL is a step too ("Put down",
    "Pick up" are not: their first word is no action), so the plan is read twice over;
    `translated` reads only the PDDL lines."""
    from planaudit.planbench.dialects import READERS
    from planaudit.planbench.material import load_config

    cfg = load_config(LA, "blocksworld")
    text = ("**Plan of Actions:**\n1. Unstack blue from orange.\n2. Put down blue.\n"
            "3. Stack orange on red.\n\n**PDDL PLAN:**\n(unstack blue orange)\n(put-down blue)\n"
            "(pick-up orange)\n(stack orange red)\n[PDDL PLAN END]")
    pddl = [("unstack", ("b", "c")), ("put-down", ("b",)), ("pick-up", ("c",)), ("stack", ("c", "a"))]
    assert READERS["translated"](cfg, text) == pddl
    assert READERS["translated-published"](cfg, text) == [("unstack", ("b", "c")), ("stack", ("c", "a")),
                                                          *pddl]


# -- Fast Downward: a crash is not "no plan" -------------------------------------------------

BW = """(define (domain bw) (:requirements :strips)
  (:predicates (clear ?x) (ontable ?x) (handempty) (holding ?x) (on ?x ?y))
  (:action pick-up :parameters (?x) :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (holding ?x) (not (clear ?x)) (not (ontable ?x)) (not (handempty))))
  (:action stack :parameters (?x ?y) :precondition (and (holding ?x) (clear ?y))
    :effect (and (on ?x ?y) (clear ?x) (handempty) (not (holding ?x)) (not (clear ?y)))))"""
INIT = "(:objects a b) (:init (handempty) (ontable a) (ontable b) (clear a) (clear b))"
PROBLEMS = {
    "solvable": f"(define (problem p) (:domain bw) {INIT} (:goal (on a b)))",
    "unsolvable": f"(define (problem p) (:domain bw) {INIT} (:goal (and (on a b) (on b a))))",
    "undefined": f"(define (problem p) (:domain bw) {INIT} (:goal (on a z)))",
    "unbalanced": "(define (problem p) (:domain bw) (:objects a b) (:init (handempty)",
}


@needs_fd
def test_fast_downward_translator_failure_is_an_error_not_no_plan(tmp_path):
    """The translator rejecting a problem (an undefined object, a missing bracket) is a
    TranslatorError naming the file and the translator's reason; only a search that
    proves the task unsolvable gives None; the rest of the batch is still planned."""
    from planaudit.planbench import fastdownward as fd

    (tmp_path / "domain.pddl").write_text(BW)
    paths = {}
    for name, text in PROBLEMS.items():
        paths[name] = tmp_path / f"{name}.pddl"
        paths[name].write_text(text)
    with pytest.raises(fd.TranslatorError) as err:
        fd.plans(tmp_path / "domain.pddl", list(paths.values()))
    e = err.value
    assert set(e.failures) == {str(paths["undefined"]), str(paths["unbalanced"])}
    assert "Undefined object" in e.failures[str(paths["undefined"])]
    assert "Missing ')'" in e.failures[str(paths["unbalanced"])]
    assert "translator failed on 2 problem(s)" in str(e) and str(paths["undefined"]) in str(e)
    assert e.plans == {str(paths["solvable"]): [("pick-up", ("a",)), ("stack", ("a", "b"))],
                       str(paths["unsolvable"]): None}
    assert fd.plan(tmp_path / "domain.pddl", paths["unsolvable"]) is None
    with pytest.raises(fd.TranslatorError, match="Undefined object"):
        fd.plan(tmp_path / "domain.pddl", paths["undefined"])


@needs_fd
def test_fast_downward_search_out_of_time_is_an_error_not_no_plan(tmp_path):
    """A search that does not answer in time is a SearchError, and is tried again later."""
    from planaudit.planbench import fastdownward as fd

    (tmp_path / "domain.pddl").write_text(BW)
    problem = tmp_path / "p.pddl"
    problem.write_text(PROBLEMS["solvable"].replace("(problem p)", "(problem slow)"))
    with pytest.raises(fd.SearchError, match="no answer within"):
        fd.plans(tmp_path / "domain.pddl", [problem], timeout=0.0001)
    assert fd.plan(tmp_path / "domain.pddl", problem) == [("pick-up", ("a",)), ("stack", ("a", "b"))]


# -- heuristic mode: the distance is to LPG's own plan ---------------------------------------

LOGISTICS = DOMAINS / "logistics"


@needs_lpg
def test_repair_distance_is_to_lpgs_own_plan(tmp_path):
    """Logistics p03: the optimal 12-step plan as the seed comes back from LPG as the same
    actions scheduled otherwise, 2 edits away; reordered towards the seed it is 0 away.
    The main figure (RepairResult.steps, the row's repair_distance) is LPG's own output's
    distance; the reordered one is reported beside it."""
    from planaudit.formal import load_task, validate
    from planaudit.formal import repair as R
    from planaudit.formal.heuristics import lmcut
    from planaudit.formal.search import astar
    from planaudit.offline.run import repair_columns

    domain, problem = LOGISTICS / "domain.pddl", LOGISTICS / "problems" / "p03.pddl"
    task = load_task(domain, problem)
    seed = [(op.action, op.args) for op in astar(task, lmcut(task), "astar-lmcut").plan]
    status, lpg, _, _ = R.run_lpg(domain, problem, seed, seed=0)
    assert status == "repaired" and validate(task, lpg).valid
    r = R.repair(task, domain, problem, seed, seed=0)
    assert r.steps == lpg
    own, reordered = R.levenshtein(seed, lpg), R.levenshtein(seed, r.reordered)
    assert own > reordered == 0 and sorted(r.reordered) == sorted(lpg)
    folder = tmp_path / "task"
    folder.mkdir()
    os.symlink(domain, folder / "domain.pddl")
    os.symlink(problem, folder / "problem.pddl")
    row = repair_columns(task, folder, seed, True, True, {"only_invalid": False, "seed": 0})
    assert row["repair_distance"] == own and row["repair_distance_reordered"] == 0
    assert row["repair_valid"] is True and row["repair_length"] == len(lpg)


@needs_lpg
@needs_shared
def test_planbench_repair_text_names_both_distances(tmp_path, capsys):
    """`planaudit planbench repair` (text) gives the distance to LPG's plans as returned and,
    beside it, the reordered one; the JSON has both."""
    from planaudit.cli import main

    root = SHARED / "plan-bench"
    source = root / "results" / "blocksworld_3" / "gpt-4_chat" / "task_1_plan_generation.json"
    data = json.loads(source.read_text())
    data["instances"] = [i for i in data["instances"] if not i["llm_correct"]][:2]
    path = tmp_path / "results" / "blocksworld_3" / "gpt-4_chat" / "task_1_plan_generation.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    assert main(["planbench", "repair", str(path), "--root", str(root), "--seed", "0"]) == 0
    text = capsys.readouterr().out
    assert "actions to LPG's plans as returned (" in text and "reordered towards the model's)" in text
    assert main(["planbench", "repair", str(path), "--root", str(root), "--seed", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_distance"] >= out["mean_distance_reordered"] > 0
