"""PlanBench material: replay parity with the recorded verdicts, prompt equality with
the recorded queries, the oracle's score, and clear errors on bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "planbench"
FILES = sorted(SHARED.glob("*/results/*/*/*.json")) if SHARED.exists() else []
needs_shared = pytest.mark.skipif(not SHARED.exists() and not os.environ.get("CI"),
                                  reason="../shared/planbench not present")


def _name(path: Path) -> str:
    return str(path.relative_to(SHARED))


# -- replay ------------------------------------------------------------------------------


@needs_shared
def test_every_results_file_is_present():
    assert len(FILES) == 44  # 24 llm_planning_analysis + 20 plan-bench
    total = sum(len(json.loads(f.read_text())["instances"]) for f in FILES)
    assert total == 13_202


@needs_shared
@pytest.mark.parametrize("path", FILES, ids=_name)
def test_replay_agrees_with_recorded_verdicts(path):
    from planaudit.planbench.replay import replay

    s = replay(path)
    assert s["scored"] > 0
    best = max(d["agree"] for d in s["dialects"].values())
    assert s["scored"] - best <= 0.01 * s["scored"], s["dialects"]
    # the default dialect is the one that agrees best
    assert s["agree"] == best
    assert len(s["disagreements"]) == s["scored"] - s["agree"]
    assert not s["unreadable"]


@needs_shared
def test_replay_reproduces_the_readme_totals():
    from planaudit.planbench.replay import replay

    pb = SHARED / "plan-bench" / "results"
    want = {"task_1_plan_generation": (157, 49), "task_2_plan_optimality": (142, 56),
            "task_4_plan_reuse": (305, 87), "task_5_plan_generalization": (141, 30),
            "task_6_replanning": (235, 54), "task_7_plan_execution": (142, 49),
            "task_8_1_goal_shuffling": (383, 78), "task_8_2_full_to_partial": (432, 90),
            "task_8_3_partial_to_full": (291, 57)}
    for stem, (big, small) in want.items():
        assert replay(pb / "blocksworld" / "gpt-4_chat" / f"{stem}.json")["correct"] == big, stem
        assert replay(pb / "blocksworld_3" / "gpt-4_chat" / f"{stem}.json")["correct"] == small, stem
    t3 = replay(pb / "blocksworld" / "gpt-4_chat" / "task_3_plan_verification.json")
    assert (t3["correct_binary"], t3["correct_w_type"], t3["correct_w_expl"]) == (473, 360, 283)
    assert (t3["recorded_binary"], t3["recorded_w_type"], t3["recorded_w_expl"]) == (473, 360, 284)
    t3 = replay(pb / "blocksworld_3" / "gpt-4_chat" / "task_3_plan_verification.json")
    assert (t3["correct_binary"], t3["correct_w_type"], t3["correct_w_expl"]) == (97, 80, 68)


@needs_shared
def test_dialects_tell_the_versions_apart():
    from planaudit.planbench.replay import replay

    la = SHARED / "llm_planning_analysis" / "results"
    s = replay(la / "blocksworld" / "gpt-4o_chat" / "task_1_plan_generation.json")
    assert s["dialect"] == "2024" and s["agree"] == 500
    assert s["dialects"]["2025"]["agree"] < 460 and s["dialects"]["2023"]["agree"] < 430
    s = replay(la / "blocksworld" / "llama-3.1-405b_aws" / "task_1_plan_generation_zero_shot.json")
    assert s["dialect"] == "translated-early" and s["agree"] == 500 and s["correct"] == 309
    s = replay(SHARED / "plan-bench/results/blocksworld/gpt-4_chat/task_4_plan_reuse.json")
    assert s["dialects"]["2023"]["agree"] == 500 and s["dialects"]["2022"]["agree"] < 500
    s = replay(SHARED / "plan-bench/results/blocksworld/gpt-4_chat/task_7_plan_execution.json")
    assert s["dialects"]["2023"]["agree"] == 500 and s["dialects"]["published"]["agree"] == 498


@needs_shared
def test_cli_replay_json(capsys):
    from planaudit.cli import main

    path = SHARED / "plan-bench/results/blocksworld_3/gpt-4_chat/task_3_plan_verification.json"
    assert main(["planbench", "replay", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("task", "domain", "model", "dialect", "instances", "scored", "correct",
                "recorded_correct", "agree", "disagreements", "dialects", "correct_binary",
                "correct_w_type", "correct_w_expl"):
        assert key in out
    assert (out["task"], out["domain"], out["model"]) == ("t3", "blocksworld_3", "gpt-4_chat")


@needs_shared
def test_configs_load_or_say_why():
    from planaudit.planbench.material import check_config

    root = SHARED / "plan-bench"
    for name in ("blocksworld", "blocksworld_3", "mystery_blocksworld", "mystery_blocksworld_3",
                 "random_blocksworld", "random_blocksworld_3", "logistics"):
        assert check_config(root, name) is None, name
    for name in ("depots", "obfuscated_deceptive_logistics", "obfuscated_randomized_logistics"):
        assert "no domain file" in check_config(root, name)


# -- generation ---------------------------------------------------------------------------

def _fd_available() -> bool:
    from planaudit.planbench.fastdownward import available

    return available()


needs_fd = pytest.mark.skipif(not os.environ.get("CI") and not _fd_available(),
                              reason="up-fast-downward not installed")

# Results files (t1, t2, and t5, t8_2, t8_3, which draw nothing at random), the variant
# their queries were made in (`era`, None for today's configs) and the instances whose
# recorded query our prompt does not equal. Plans shown where the root records none
# (plan-bench, the mystery folders) are Fast Downward's, as PlanBench's were.
_LA = "llm_planning_analysis/results"
EXACT = [
    (f"{_LA}/{d}/{m}/task_1_plan_generation{z}.json", d, "t1", 0 if z else 1, None, [])
    for d in ("blocksworld", "blocksworld_3", "mystery_blocksworld", "mystery_blocksworld_3")
    for m in ("gpt-4o_chat", "llama-3.1-405b_aws") for z in ("", "_zero_shot")
] + [(f"{_LA}/{d}/gpt-4_chat/task_1_plan_generation{z}.json", d, "t1", 0 if z else 1, None, [])
     for d in ("mystery_blocksworld", "mystery_blocksworld_3") for z in ("", "_zero_shot")
] + [(f"plan-bench/results/{d}/gpt-4_chat/task_2_plan_optimality.json", d, "t2", 1, None, [])
     for d in ("blocksworld", "blocksworld_3")
] + [(f"plan-bench/results/{d}/gpt-4_chat/{stem}.json", d, t, 1, None, [])
     for d in ("blocksworld", "blocksworld_3")
     for t, stem in (("t8_2", "task_8_2_full_to_partial"), ("t8_3", "task_8_3_partial_to_full"))
] + [("plan-bench/results/blocksworld_3/gpt-4_chat/task_5_plan_generalization.json", "blocksworld_3",
      "t5", 1, None, [])
] + [  # GPT-4's 2023 t1 runs (the same queries in both roots); instance 12's recorded query
    # carries a stray GPT-4 response and plans after its [PLAN]: see test_2023_stray_query
    (f"{root}/{d}/gpt-4_chat/task_1_plan_generation.json", d, "t1", 1, "2023",
     [12] if d == "blocksworld" else [])
    for root in ("plan-bench/results", _LA) for d in ("blocksworld", "blocksworld_3")
]


@needs_shared
@needs_fd
@pytest.mark.parametrize(("rel", "config", "test", "shots", "era", "differ"), EXACT,
                         ids=[f"{e[0]}{'-era' + e[4] if e[4] else ''}" for e in EXACT])
def test_generated_prompts_equal_recorded_queries(rel, config, test, shots, era, differ):
    from planaudit.planbench.generate import cases

    path = SHARED / rel
    instances = json.loads(path.read_text())["instances"]
    got = cases(path.parents[3], config, test, [i["instance_id"] for i in instances], shots=shots,
                era=era)
    mismatched = [i["instance_id"] for c, i in zip(got, instances, strict=True) if c.prompt != i["query"]]
    assert mismatched == differ


@needs_shared
@needs_fd
def test_2023_stray_query():
    """The one 2023 t1 query no prompt can equal: after its [PLAN] PlanBench recorded a
    GPT-4 response and printed plans. Up to there it is the era-2023 prompt."""
    from planaudit.planbench.generate import cases

    path = SHARED / "plan-bench/results/blocksworld/gpt-4_chat/task_1_plan_generation.json"
    query = next(i["query"] for i in json.loads(path.read_text())["instances"] if i["instance_id"] == 12)
    prompt = cases(path.parents[3], "blocksworld", "t1", [12], era="2023")[0].prompt
    assert query.startswith(prompt) and query[len(prompt):].startswith("--------- GPT4 response ---------")


@needs_shared
def test_2023_zero_shot_queries_differ_by_a_space_and_a_newline():
    """GPT-4's zero-shot t1 queries name a config the material lacks ('blocksworld_zero_shot'):
    its intro had a space after LATER_LINE's full stop, and the query ends in a newline.
    Not a variant (one unexplained space is no general rule); otherwise the queries are ours."""
    from planaudit.planbench.generate import LATER_LINE, cases

    for d in ("blocksworld", "blocksworld_3"):
        path = SHARED / f"{_LA}/{d}/gpt-4_chat/task_1_plan_generation_zero_shot.json"
        data = json.loads(path.read_text())
        assert data["domain"].startswith("blocksworld_zero_shot")
        got = cases(path.parents[3], d, "t1", [i["instance_id"] for i in data["instances"]], shots=0)
        for c, i in zip(got, data["instances"], strict=True):
            assert i["query"] == c.prompt.replace(LATER_LINE, LATER_LINE[:-1] + " \n") + "\n"


def test_era_and_planner_are_checked(tiny_root):
    from planaudit.planbench.generate import cases

    with pytest.raises(ValueError, match="unknown era"):
        cases(tiny_root, "bw", "t1", 1, era="1999")
    with pytest.raises(ValueError, match="t1 variant"):
        cases(tiny_root, "bw", "t2", 1, era="2023")
    with pytest.raises(ValueError, match="unknown planner"):
        cases(tiny_root, "bw", "t1", 1, planner="magic")


@needs_shared
@needs_fd
def test_fast_downward_reproduces_planbench_recorded_plans():
    """PlanBench's planner is Fast Downward's astar(lmcut()): on every instance of
    generated_basic it returns the plan llm_planning_analysis' info.json records; formal/
    finds its plans valid and of optimal length."""
    from planaudit.planbench import fastdownward
    from planaudit.planbench.generate import _Instance
    from planaudit.planbench.material import load_config
    from planaudit.planbench.world import world_of

    root = SHARED / "llm_planning_analysis"
    info = json.loads((root / "instances/blocksworld/info.json").read_text())
    cfg = load_config(root, "blocksworld")
    paths = {n: cfg.instances_dir / "blocksworld/generated_basic" / n for n in info}
    got = fastdownward.plans(cfg.domain_path, list(paths.values()))
    assert len(info) == 501
    for name, entry in info.items():
        steps = [line.strip() for line in entry["plan"].split("\n") if line.strip()]
        assert ["(" + " ".join((a, *args)) + ")" for a, args in got[str(paths[name])]] == steps, name
    world = world_of(cfg)
    for iid in (1, 2, 131, 500):
        fd = _Instance(cfg, world, iid, planner="fast-downward").plan
        assert len(fd) == len(_Instance(cfg, world, iid, planner="formal").plan)


@needs_shared
@pytest.mark.parametrize("test", ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8_1", "t8_2", "t8_3"])
def test_oracle_scores_every_case(test):
    from planaudit.planbench.generate import cases, oracle_answer, score

    root = SHARED / "plan-bench"
    for config, n in (("blocksworld", 15), ("blocksworld_3", 15)):
        for shots in (1, 0):
            for case in cases(root, config, test, 5 if test == "t5" else n, shots=shots):
                assert case.source == "planbench" and case.test == test
                json.dumps(case.to_json())
                verdict = score(case, oracle_answer(case))
                assert verdict.correct, (case.instance, verdict)


@needs_shared
def test_score_finds_faults():
    from planaudit.planbench.generate import cases, score

    root = SHARED / "plan-bench"
    case = cases(root, "blocksworld", "t1", [2])[0]
    v = score(case, "put down the red block\n[PLAN END]")
    assert not v.correct and v.outcome == "inapplicable-action" and "precondition" in v.detail
    assert score(case, "[PLAN END]").outcome == "goal-not-reached"
    assert score(case, "unstack the banana").outcome == "unreadable"
    t2 = cases(root, "blocksworld", "t2", [2])[0]
    plan = t2.truth["optimal_plan"]
    assert len(plan) == t2.truth["optimal_length"]
    t7 = cases(root, "blocksworld", "t7", [2])[0]
    assert score(t7, "the hand is empty").outcome == "wrong-state"


# -- bad input ------------------------------------------------------------------------------

DOMAIN = """(define (domain bw) (:requirements :strips)
 (:predicates (clear ?x) (ontable ?x) (handempty) (holding ?x) (on ?x ?y))
 (:action pick-up :parameters (?x) :precondition (and (clear ?x) (ontable ?x) (handempty))
  :effect (and (holding ?x) (not (clear ?x)) (not (ontable ?x)) (not (handempty))))
 (:action put-down :parameters (?x) :precondition (holding ?x)
  :effect (and (clear ?x) (handempty) (ontable ?x) (not (holding ?x))))
 (:action stack :parameters (?x ?y) :precondition (and (clear ?y) (holding ?x))
  :effect (and (handempty) (clear ?x) (on ?x ?y) (not (clear ?y)) (not (holding ?x))))
 (:action unstack :parameters (?x ?y) :precondition (and (on ?x ?y) (clear ?x) (handempty))
  :effect (and (holding ?x) (clear ?y) (not (on ?x ?y)) (not (clear ?x)) (not (handempty)))))"""
PROBLEM = """(define (problem p) (:domain bw) (:objects a b)
 (:init (handempty) (ontable a) (ontable b) (clear a) (clear b)) (:goal (and (on a b))))"""
CONFIG = """instance_dir: bw/basic
domain_file: bw/domain.pddl
instances_template: instance-{}.pddl
domain_intro: |
   Blocks.
actions: {pick-up: "pick up the {}", put-down: "put down the {}",
  stack: "stack the {} on top of the {}", unstack: "unstack the {} from on top of the {}"}
predicates: {ontable: "the {} is on the table", clear: "the {} is clear",
  handempty: "the hand is empty", holding: "the hand is currently holding {}",
  "on": "the {} is on top of the {}"}
encoded_objects: {"a": "red block", "b": "blue block"}
"""
QUERY = ("Blocks.\n\n[STATEMENT]\nAs initial conditions I have that, the red block is clear, the blue "
         "block is clear, the hand is empty, the red block is on the table and the blue block is on "
         "the table.\nMy goal is to have that the red block is on top of the blue block.\n\n"
         "My plan is as follows:\n\n[PLAN]")


@pytest.fixture
def tiny_root(tmp_path):
    root = tmp_path / "root"
    (root / "configs").mkdir(parents=True)
    (root / "instances" / "bw" / "basic").mkdir(parents=True)
    (root / "instances" / "bw" / "domain.pddl").write_text(DOMAIN)
    (root / "instances" / "bw" / "basic" / "instance-1.pddl").write_text(PROBLEM)
    (root / "configs" / "bw.yaml").write_text(CONFIG)
    (root / "results" / "bw" / "m").mkdir(parents=True)
    return root


def _results(root: Path, instances: list[dict], **extra) -> Path:
    path = root / "results" / "bw" / "m" / "task_1_plan_generation.json"
    path.write_text(json.dumps({"task": "t1", "engine": "m", **extra, "instances": instances}))
    return path


def _inst(iid=1, response="pick up the red block\nstack the red block on top of the blue block", **kw):
    return {"instance_id": iid, "query": QUERY, "llm_raw_response": response, "llm_correct": True, **kw}


def test_tiny_root_replays(tiny_root):
    from planaudit.planbench.replay import replay

    s = replay(_results(tiny_root, [_inst(), _inst(response=""), _inst(response="put down the red block")]))
    assert (s["scored"], s["correct"], s["agree"]) == (2, 1, 1)
    assert s["disagreements"][0]["why"].startswith("step 1 (put-down a)")


def test_missing_field_names_the_file_and_field(tiny_root):
    from planaudit.planbench.replay import ResultsError, replay

    path = tiny_root / "results" / "bw" / "m" / "bad.json"
    path.write_text(json.dumps({"engine": "m", "instances": []}))
    with pytest.raises(ResultsError, match=r"bad\.json: missing field 'task'"):
        replay(path)
    s = replay(_results(tiny_root, [{"instance_id": 1, "llm_raw_response": "x", "llm_correct": False}]))
    assert s["unreadable"][0]["why"].endswith("an instance has no field 'query'")
    # no response is no answer: counted apart, neither scored nor unreadable
    s = replay(_results(tiny_root, [{"instance_id": 1, "query": QUERY, "llm_correct": False}]))
    assert (s["scored"], s["no_response"], s["unreadable"]) == (0, 1, [])


def test_instance_without_file_is_unreadable_not_a_crash(tiny_root):
    from planaudit.planbench.replay import replay

    s = replay(_results(tiny_root, [_inst(iid=7), _inst()]))
    assert s["scored"] == 2 and s["correct"] == 1
    assert s["unreadable"][0]["instance_id"] == 7
    assert "instance 7" in s["unreadable"][0]["why"] and "instance-7.pddl" in s["unreadable"][0]["why"]


def test_config_without_a_predicate_template(tiny_root):
    from planaudit.planbench.material import check_config
    from planaudit.planbench.replay import replay

    cfg = tiny_root / "configs" / "bw.yaml"
    cfg.write_text(CONFIG.replace('  handempty: "the hand is empty", ', "  "))
    assert "no template for 'handempty'" in check_config(tiny_root, "bw")
    s = replay(_results(tiny_root, [_inst()]))
    assert "handempty" in s["unreadable"][0]["why"] or "the hand is empty" in s["unreadable"][0]["why"]


def test_unexpected_encodings(tiny_root):
    from planaudit.planbench.replay import ResultsError, replay

    path = tiny_root / "results" / "bw" / "m" / "latin1.json"
    path.write_bytes(json.dumps({"task": "t1", "instances": [_inst(response="é")]}).encode()
                     .replace(b"\\u00e9", "é".encode("latin-1")))
    with pytest.raises(ResultsError, match=r"latin1\.json: not UTF-8"):
        replay(path)
    s = replay(_results(tiny_root, [_inst(response=42), _inst()]))
    assert s["unreadable"][0]["instance_id"] == 1
    assert "'llm_raw_response' is not text" in s["unreadable"][0]["why"]


def test_cli_bad_input_exits_2(tiny_root, capsys):
    from planaudit.cli import main

    path = tiny_root / "results" / "bw" / "m" / "x.json"
    path.write_text("{not json")
    assert main(["planbench", "replay", str(path)]) == 2
    assert "x.json: not JSON" in capsys.readouterr().err


@needs_shared
def test_formal_plans_differ_only_in_the_example_plan():
    """With formal/'s breadth-first plans (planner="formal") instead of Fast Downward's,
    where PlanBench's planner chose another optimal plan the prompts differ only inside
    the example's [PLAN] block, by plans of equal length."""
    import re

    from planaudit.planbench.generate import cases

    path = SHARED / "plan-bench/results/blocksworld/gpt-4_chat/task_2_plan_optimality.json"
    instances = json.loads(path.read_text())["instances"][:120]
    got = cases(path.parents[3], "blocksworld", "t2", [i["instance_id"] for i in instances],
                planner="formal")
    block = re.compile(r"\[PLAN\]\n(.*?)\[PLAN END\]", re.S)
    same = 0
    for c, i in zip(got, instances, strict=True):
        if c.prompt == i["query"]:
            same += 1
            continue
        ours, theirs = block.findall(c.prompt), block.findall(i["query"])
        assert len(ours) == len(theirs) == 1
        assert ours[0].count("\n") == theirs[0].count("\n")
        assert block.sub("", c.prompt) == block.sub("", i["query"])
    assert same >= 75  # 79 of these 120 (352 of all 500)


@needs_shared
def test_the_curriculum_regime_runs_a_planbench_root_through_the_client(tmp_path):
    """A `{root, config}` entry of `curriculum.domains` goes through `llm/` like a suite
    domain: the oracle answers every test case correctly, the flawed model does not, and
    the rows carry the PlanBench source."""
    import polars as pl
    import yaml

    from planaudit.analysis.collect import collect, default_schema, load_schema
    from planaudit.curriculum.shard import run_curriculum_shard
    from planaudit.experiment import Experiment
    from planaudit.planbench.cases import TESTS

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    entry = {"root": str(SHARED / "plan-bench"), "config": "blocksworld"}
    config["cache"] = str(tmp_path / "cache")
    config["curriculum"] = {"tests": list(TESTS), "domains": [entry], "instances": 3,
                            "shots": 1}
    exp = Experiment.from_dict(config)
    shards = []
    for model in ("oracle", "flawed"):
        for test in TESTS:
            out = tmp_path / model / test / "{domain}.parquet"
            run_curriculum_shard(exp, exp.model(model), test, ["planbench-blocksworld"], tmp_path,
                                 str(out), str(tmp_path / "tr" / model / test / "{domain}"))
            shards.append(Path(str(out).replace("{domain}", "planbench-blocksworld")))
    rows = collect(shards, load_schema(default_schema()))
    assert rows.height == 2 * len(TESTS) * 3
    assert set(rows["source"]) == {"planbench"} and set(rows["regime"]) == {"curriculum"}
    oracle = rows.filter(pl.col("model") == "oracle")
    assert oracle["success"].all(), oracle.filter(~pl.col("success")).select(
        "method", "task", "verdict_detail").rows()
    flawed = rows.filter(pl.col("model") == "flawed")
    assert 0 < flawed["success"].sum() < flawed.height
    assert set(flawed.filter(~pl.col("success"))["outcome"]) <= {
        "goal-not-reached", "inapplicable-action", "malformed", "wrong-answer"}


@needs_fd
def test_fast_downward_plans_are_judged_by_formal(tiny_root):
    """planner="fast-downward" shows Fast Downward's plan, which formal/ finds optimal;
    every planner gives the same optimal length and the oracle scores full marks."""
    from planaudit.planbench.generate import PLANNERS, cases, oracle_answer, score

    lengths = set()
    for planner in PLANNERS:
        for test in ("t1", "t4", "t7", "t8_2"):
            case = cases(tiny_root, "bw", test, 1, planner=planner)[0]
            assert score(case, oracle_answer(case)).correct, (planner, test)
        lengths.add(cases(tiny_root, "bw", "t1", 1, planner=planner)[0].truth["optimal_length"])
    assert len(lengths) == 1
