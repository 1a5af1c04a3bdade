"""ACPBench's questions generated on the built-in suite (the eight types in three forms),
their gold answers checked against an independent proof, the reading and judging rules,
ACPBench's own files as a source, and the regime in the pipeline (shard, schema, config,
workflow, estimate, `acpbench show`, the real litellm path)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import polars as pl
import pytest
import yaml

from planaudit.acpbench.generate import (
    Skipped,
    StateQuestions,
    draw_state,
    load_world,
    questions,
)
from planaudit.acpbench.gold import gold
from planaudit.acpbench.items import Item
from planaudit.acpbench.questions import FORMS, TYPES, Question
from planaudit.acpbench.read import Unreadable, read_bool, read_choice
from planaudit.acpbench.score import judge
from planaudit.curriculum.world import load_instances
from planaudit.formal import write
from planaudit.formal.reachable import explore
from tests.conftest import ROOT, SUITE_DOMAINS, blocksworld_config, snakemake
from tests.cut_suite import cut_suite_config
from tests.test_curriculum import suite  # noqa: F401 - the prepared p01-p04 fixture

ACPBENCH = ROOT.parent / "shared" / "acpbench" / "dataset"
needs_acpbench = pytest.mark.skipif(not ACPBENCH.is_dir(), reason="needs ../shared/acpbench")


@pytest.fixture(scope="module")
def posed(suite):  # noqa: F811
    out, skipped = {}, Skipped()
    for domain in SUITE_DOMAINS:
        out[domain] = questions(suite, domain, TYPES, FORMS, tasks=2, states=2, seed=0,
                                skipped=skipped)
    return out, skipped


def test_every_type_and_form_is_posed_on_every_builtin_domain(posed):
    found, skipped = posed
    assert not skipped.counts, skipped.counts
    for domain, qs in found.items():
        kinds = collections.Counter((q.type, q.form) for q in qs)
        # 2 tasks x 2 states, each asked every type in every form
        assert kinds == {(t, f): 4 for t in TYPES for f in FORMS}, domain
        assert {q.source for q in qs} == {"suite"}


def test_the_oracle_answer_scores_full_marks_and_the_wrong_one_does_not(posed):
    for qs in posed[0].values():
        for q in qs:
            assert judge(q, q.oracle).correct, (q.id, q.type, q.form, judge(q, q.oracle))
            j = judge(q, q.wrong)
            assert not j.correct and j.verdict == "wrong", (q.id, q.type, q.form, j)


def test_prompts_show_obfuscated_names_and_no_pddl(posed, suite):  # noqa: F811
    for domain in ("blocksworld", "gripper", "logistics"):  # obfuscated by the default config
        hidden = set()
        for names in (suite / domain).glob("*/names.json"):
            hidden |= {k for k, v in json.loads(names.read_text()).items() if k != v}
        for q in posed[0][domain]:
            assert "(define" not in q.prompt and ":precondition" not in q.prompt
            objects = q.prompt.split("\nObjects:\n")[1].split("\n\n")[0]
            shown = {w.strip(",") for line in objects.splitlines() for w in line.split()[2:]}
            asked = q.prompt.split("The goal (all of these")[1]  # the question and choices
            shown |= {w for g in re.findall(r"\(([^()]*)\)", asked) for w in g.split()[1:]}
            assert hidden and not shown & hidden, (q.id, shown & hidden)


def _state_of(inst, k: int):
    """State k of a task as `questions` draws it (each avoiding the ones before)."""
    drawn: set = set()
    for n in range(k + 1):
        state = draw_state(inst, n, 0, frozenset(drawn))
        drawn.add(state)
    return state


def _state_item(sq: StateQuestions, question: str = "") -> Item:
    """The question's state as an ACPBench item: the problem with that state as :init."""
    problem = write.problem(sq.world.state_problem(sq.task, sq.state))
    domain = write.domain(sq.task.domain)
    return Item("x", "app", question, domain, problem, None)


# gold.py explores plain STRIPS only (hospital has disjunctive preconditions, loadbalancing
# numbers: their answers have the state graph alone)
STRIPS = ("blocksworld", "gripper", "logistics")


@pytest.mark.parametrize("domain", STRIPS)
def test_gold_answers_agree_with_the_independent_bitset_proof(suite, domain):  # noqa: F811
    """The state-graph answers (formal/reachable.py) against gold.py's searches
    (formal/space.py: bitset breadth-first search, A* with LM-cut), on the same states."""
    from planaudit.acpbench import gold as g

    checked = 0
    for inst in load_instances(suite, domain)[:2]:
        world, brief = load_world(inst)
        drawn: set = set()
        for k in range(2):
            state = draw_state(inst, k, 0, frozenset(drawn))
            drawn.add(state)
            sq = StateQuestions(world, inst, f"s{k}", state, explore(inst.task, state), 0, brief)
            item = _state_item(sq)
            task = item.planning_task()
            mine = {t: sq.pose(t, "gen").truth for t in ("app", "reach", "areach", "land",
                                                          "nexta")}
            assert sorted(mine["app"]["gold"]) == g.app(item, task).answer
            assert sorted(mine["reach"]["gold"]) == sorted(
                f"({a})" for a in g.reach(item, task).answer)
            assert sorted(mine["areach"]["gold"]) == g.areach(item, task).answer
            assert sorted(mine["land"]["gold"]) == sorted(g.land(item, task).answer["yes"])
            nexta = g.nexta(item, task).answer
            assert sorted(mine["nexta"]["gold"]) == sorted(nexta["yes"])
            assert int(nexta["opt"]) == sq.graph.distance[0]
            checked += 1
    assert checked == 4


def test_past_the_graphs_limit_the_exact_searches_give_the_same_answers(suite):  # noqa: F811
    """A state graph stopped at its limit: plain-STRIPS tasks get their exhaustive types
    from gold.py's searches (the same answers as the complete graph's); others are not
    asked those types, and say why."""
    for domain in ("gripper", "logistics"):
        cut = questions(suite, domain, TYPES, FORMS, tasks=2, states=2, max_states=10)
        whole = {(q.id, q.type, q.form): q for q in questions(suite, domain, TYPES, FORMS,
                                                              tasks=2, states=2)}
        assert len(cut) == len(whole)
        for q in cut:
            assert judge(q, q.oracle).correct and not judge(q, q.wrong).correct, q.id
            if q.form == "gen" and q.type in ("reach", "areach", "land", "nexta"):
                assert sorted(q.truth["gold"]) == sorted(whole[q.id, q.type, q.form].truth["gold"])
    skipped = Skipped()
    cut = questions(suite, "hospital", TYPES, FORMS, tasks=2, states=2, max_states=3,
                    skipped=skipped)
    assert {q.type for q in cut} == {"app", "val", "prog"}
    assert all("not plain STRIPS" in why for (_, t, _, why) in skipped.counts)


def test_multiple_choice_has_exactly_one_right_choice_by_simulation(posed, suite):  # noqa: F811
    """app and prog choices checked by applying the actions, apart from the generator."""
    for domain, qs in posed[0].items():
        instances = load_instances(suite, domain)
        for q in qs:
            if q.form != "mcq" or q.type not in ("app", "prog"):
                continue
            assert 2 <= len(q.truth["choices"]) <= 4
            inst = next(i for i in instances if i.id == q.task)
            state = _state_of(inst, int(q.state[1:]))
            task = inst.task
            right = []
            for label, text in q.truth["choices"].items():
                if text == "none of the other choices":
                    continue
                if q.type == "app":
                    words = text.strip("()").split()
                    ok = task.operator(words[0], tuple(words[1:])).applicable(state)
                else:
                    action = q.prompt.split("Suppose the action ")[1].split(" is performed")[0]
                    words = action.strip("()").split()
                    after = task.operator(words[0], tuple(words[1:])).apply(state)
                    ok = any(load_world(inst)[0].atom_sentence(*task.atoms[i]) == text
                             for i in range(len(task.atoms)) if after[0] >> i & 1)
                if ok:
                    right.append(label)
            if not right:  # "none of the other choices" is the right one
                assert q.truth["choices"][q.truth["answer"]] == "none of the other choices"
            else:
                assert right == [q.truth["answer"]], (q.id, q.type, right)


def test_a_domain_described_from_pddl_alone_gets_its_questions_in_generic_words(tmp_path):
    """suite.description: generic (or a user's domain without nl.yaml): the questions are
    rendered from the PDDL alone, as its briefs are."""
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import load_domain_tasks
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth
    from tests.conftest import DOMAINS

    for entry in load_domain_tasks(DOMAINS, "gripper"):
        if entry.id in ("p01", "p02"):
            folder = tmp_path / "gripper" / entry.id
            prepare(entry, folder, True, 0, description="generic")
            make_truth(entry, folder, Limits(bfs_states=10_000, astar_seconds=5, external=False))
    qs = questions(tmp_path, "gripper", TYPES, FORMS, tasks=2, states=1)
    assert len(qs) == 2 * 8 * 3
    assert all("the robot is in room" not in q.prompt for q in qs)  # no nl.yaml sentence
    assert all("the relation carry holds for ?b and ?g, in this order" in q.prompt for q in qs)
    assert all(judge(q, q.oracle).correct and not judge(q, q.wrong).correct for q in qs)


def test_same_seed_same_questions_another_seed_others(suite):  # noqa: F811
    a = questions(suite, "gripper", ["val", "just"], ["gen"], 2, 2, seed=0)
    b = questions(suite, "gripper", ["val", "just"], ["gen"], 2, 2, seed=0)
    c = questions(suite, "gripper", ["val", "just"], ["gen"], 2, 2, seed=1)
    assert [q.prompt for q in a] == [q.prompt for q in b]
    assert [q.prompt for q in a] != [q.prompt for q in c]
    # a task's states are drawn apart where it has others: s0 and s1 of every task differ
    for task in ("p01", "p02"):
        s0, s1 = (next(q for q in a if q.task == task and q.state == k) for k in ("s0", "s1"))
        state = [q.prompt.split("The current state")[1].split("The goal")[0] for q in (s0, s1)]
        assert state[0] != state[1], task


def test_reading_rules_for_yes_no_and_choices():
    assert read_bool("Let me think. Yes, it applies.\nAnswer: Yes") == "yes"
    assert read_bool("**Answer:** no.") == "no"
    assert read_bool(" yes ") == "yes"  # a reply that is nothing but yes
    for bad in ("I believe yes, the action applies.", "Answer: maybe", ""):
        with pytest.raises(Unreadable):
            read_bool(bad)
    choices = {"A": "(pick b1 r1 g1)", "B": "(drop b1 r2 g1)"}
    assert read_choice("Answer: B", choices) == "B"
    assert read_choice("answer: (a)", choices) == "A"
    assert read_choice("Answer: (Drop b1  r2 g1)", choices) == "B"  # by its text
    for bad in ("B", "Answer: E", "Answer: (move r1 r2)"):
        with pytest.raises(Unreadable):
            read_choice(bad, choices)


def test_a_hedged_answer_line_is_unreadable_never_its_first_word():
    """Finding 6 of issue 37: an answer line counts only when, formatting stripped, it is
    exactly one choice or one yes/no."""
    choices = {"A": "(pick b1 r1 g1)", "B": "(drop b1 r2 g1)", "C": "(move r1 r2)"}
    for hedged in ("Answer: A or B", "Answer: B is wrong, C is right", "Answer: A, B",
                   "Answer: B. (pick b1 r1 g1)"):  # a letter with another choice's text
        with pytest.raises(Unreadable):
            read_choice(hedged, choices)
    for hedged in ("Answer: yes or no", "Answer: no idea", "Answer: No. Actually yes.",
                   "Answer: Yes, it applies", "Answer: yes/no"):
        with pytest.raises(Unreadable):
            read_bool(hedged)
    # formatting stripped: bold, quotes, a trailing stop, parentheses
    for plain in ("Answer: **B**", 'Answer: "B"', "Answer: (B).", "**Answer: (b)**",
                  "Answer: B. (drop b1 r2 g1)", "Answer: [B]"):
        assert read_choice(plain, choices) == "B", plain
    for plain in ("Answer: **No**", "Answer: 'no'.", "Answer: (no)", "> **Answer:** no!"):
        assert read_bool(plain) == "no", plain


def _val(steps: int, first: int) -> Question:
    """A val question's truth as generate.py writes it (first: 0-based, -1 every step applies)."""
    return Question("val", "gen", "suite", "gripper", "p01", "s0", "",
                    {"kind": "index", "gold": first, "steps": steps})


def test_val_steps_are_read_as_the_prompt_numbers_them_from_one(posed):
    """Finding 7 of issue 37: "0" or "step 0" is no step (never "none"); "3." is step 3."""
    q = _gen(posed, "val")
    assert "\n1. (" in q.prompt and "(the first step is 1)" in q.prompt  # numbered from 1
    every = _val(4, -1)  # every action applies: only "none" is right
    for zero in ("0", "step 0", "Step 0.", "```\n0\n```"):
        j = judge(every, f"```\n{zero}\n```" if "`" not in zero else zero)
        assert j.verdict == "wrong" and "numbered from 1" in j.detail, (zero, j)
    assert judge(every, "```\nnone\n```").correct
    assert judge(_val(4, 0), "```\n0\n```").verdict == "wrong"  # not 0-based either
    third = _val(5, 2)
    for three in ("3", "3.", "3)", "step 3", "Step 3.", "**3.**", "- 3"):
        assert judge(third, f"```\n{three}\n```").correct, three
    assert judge(third, "```\n6\n```").detail == "said step 6; the steps are numbered from 1 to 5"
    assert judge(third, "```\n3. (move r1 r2)\n```").verdict == "unreadable"


def _false_fixed_sentence(suite, q: Question) -> str:  # noqa: F811
    """A fact of `q`'s task that no action changes and that is false (so never holds)."""
    from planaudit.formal.space import ground_atoms

    inst = next(i for i in load_instances(suite, q.domain) if i.id == q.task)
    world, _ = load_world(inst)
    task = inst.task
    pred, args = next((p, a) for p, a in ground_atoms(task, fluent_only=False)
                      if p not in world.dynamic_predicates and not task.init[0] >> task.atom(p, a) & 1)
    return world.atom_sentence(pred, args)


def test_reach_asks_for_a_fact_that_can_change_as_its_gold_holds(posed, suite):  # noqa: F811
    """Finding 8 of issue 37: the state lists fixed facts, the gold holds only facts some
    action changes; the question now says so, and a fixed fact named is judged wrong for
    that reason, not taken for a malformed reply."""
    logistics = next(q for q in posed[0]["logistics"]
                     if q.type == "reach" and q.form == "gen" and q.task == "p02")
    assert "Only facts of these kinds can change: " in logistics.prompt
    fixed = _false_fixed_sentence(suite, logistics)
    assert " is in city " in fixed and f"- {fixed}" not in logistics.prompt  # false: never holds
    j = judge(logistics, f"```\n{fixed}\n```")
    assert j.verdict == "wrong" and "no action changes" in j.detail, j
    # every changeable fact can hold (the gold is empty) while a false fixed fact exists:
    # the question asks for a changeable one, so none is the one right answer
    gripper = next(q for q in posed[0]["gripper"] if q.type == "reach" and q.form == "gen")
    assert gripper.truth["gold"] == []
    locked = _false_fixed_sentence(suite, gripper)
    kinds = gripper.prompt.split("Only facts of these kinds can change: ")[1].split(". A fact")[0]
    assert locked.split()[-1] not in kinds  # its kind is not among those asked about
    assert "answer none if every fact of these kinds can hold" in gripper.prompt
    assert judge(gripper, "```\nnone\n```").correct
    assert judge(gripper, f"```\n{locked}\n```").verdict == "wrong"


def _gen(posed, qtype, domain="gripper") -> Question:
    return next(q for q in posed[0][domain] if q.type == qtype and q.form == "gen")


def test_generative_answers_are_judged_by_semantics_not_string(posed):
    app = _gen(posed, "app")
    shuffled = "```\n" + "\n".join(reversed(app.truth["gold"])) + "\n```"
    assert judge(app, shuffled).correct  # a set: order carries no meaning
    bare = "```\n" + "\n".join(a.strip("()") for a in app.truth["gold"]) + "\n```"
    assert judge(app, bare).correct  # actions in any form the plan contract reads
    land = next(q for qs in posed[0].values() for q in qs
                if q.type == "land" and q.form == "gen" and len(q.truth["gold"]) > 1)
    for name in land.truth["gold"]:  # any landmark counts, as its PDDL atom or its sentence
        assert judge(land, f"```\n{name}\n```").correct
    nexta = _gen(posed, "nexta")
    assert judge(nexta, "```\nnone\n```").verdict == "wrong"  # the goal is ahead
    prog = _gen(posed, "prog")
    assert judge(prog, "```\nbecomes: something\n```").verdict == "unreadable"
    assert judge(prog, "```\nadded: the moon is blue\n```").verdict == "unreadable"
    just = _gen(posed, "just")
    plan = just.truth["plan"]
    assert judge(just, "```\n" + "\n".join(plan) + "\n```").detail == \
        "the plan was given back unshortened"
    val = _gen(posed, "val")
    assert judge(val, "```\nstep one\n```").verdict == "unreadable"


@needs_acpbench
def test_acpbench_files_are_asked_with_gold_by_proof_never_the_files_answer(tmp_path):
    from planaudit.acpbench.files import item_questions

    # the same items with every answer replaced: the questions and truths do not change
    src = json.loads((ACPBENCH / "land" / "dev.gen.json").read_text())
    (tmp_path / "land").mkdir()
    (tmp_path / "land" / "dev.gen.json").write_text(json.dumps(
        [{**it, "answer": {"yes": [], "no": []}} for it in src]))
    skipped: dict = {}
    theirs = item_questions({"root": str(ACPBENCH), "split": "dev"}, "land", 8, skipped)
    blanked = item_questions({"root": str(tmp_path), "split": "dev"}, "land", 8, {})
    assert [q.truth for q in theirs] == [q.truth for q in blanked] and len(theirs) == 8
    for q in theirs:
        assert q.source == "acpbench" and q.form == "gen" and judge(q, q.oracle).correct
        assert not judge(q, q.wrong).correct
    item = next(Item(str(it["id"]), "land", it["question"], it["PDDL_domain"],
                     it["PDDL_problem"], None) for it in src if str(it["id"]) == theirs[0].task)
    assert sorted(theirs[0].truth["gold"]) == sorted(gold(item).answer["yes"])


def _config(tmp_path, **acp) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["acpbench"] = {"types": list(TYPES), "forms": list(FORMS), "tasks": 1, "states": 2,
                          **acp}
    return config


def test_shard_rows_pass_the_schema_the_oracle_scores_all_and_flawed_less(suite, tmp_path):  # noqa: F811
    from planaudit.acpbench.shard import run_acpbench_shard
    from planaudit.analysis.collect import collect, default_schema, load_schema
    from planaudit.experiment import Experiment

    config = _config(tmp_path, domains=["gripper", "loadbalancing"])
    exp = Experiment.from_dict(config)
    shards = []
    for model in ("oracle", "flawed"):
        for qtype in ("app", "just", "nexta"):
            out = tmp_path / model / f"{qtype}.parquet"
            run_acpbench_shard(exp, exp.model(model), qtype, suite, str(out),
                               str(tmp_path / "tr" / model))
            shards.append(out)
    frame = collect(shards, load_schema(default_schema()))
    # 2 models x 3 types x 2 domains x 1 task x 2 states x 3 forms
    assert frame.height == 72 and set(frame["regime"]) == {"acpbench"}
    assert set(frame["form"]) == set(FORMS) and frame["reference"].all()
    oracle = frame.filter(pl.col("model") == "oracle")
    flawed = frame.filter(pl.col("model") == "flawed")
    assert oracle["success"].all() and set(oracle["verdict"]) == {"correct"}
    assert 0 < flawed["success"].sum() < flawed.height
    assert set(flawed.filter(~pl.col("success"))["outcome"]) == {"wrong-answer"}
    assert len(list((tmp_path / "tr" / "oracle" / "gripper").glob("*.jsonl"))) == 18


def test_a_real_models_replies_through_litellm_are_read_and_a_cut_is_flagged(suite, tmp_path):  # noqa: F811
    from planaudit.acpbench.shard import run_acpbench_shard
    from planaudit.experiment import Experiment
    from tests.fake_openai import FakeOpenAI, reply

    cut = reply("Let me check each action in turn. The first", 200, 16)
    cut["body"]["choices"][0]["finish_reason"] = "length"
    config = _config(tmp_path, domains=["gripper"], forms=["bool"], states=1)
    with FakeOpenAI([cut, reply("**Answer:** yes")]) as srv:
        config["models"] = [{"name": "fake", "model": "openai/fake", "api_base": srv.api_base,
                             "api_key_env": "none", "max_concurrency": 1}]
        exp = Experiment.from_dict(config)
        frame, _ = run_acpbench_shard(exp, exp.model("fake"), "app", suite,
                                      str(tmp_path / "r.parquet"), str(tmp_path / "tr"))
    assert frame.height == 1
    row = frame.to_dicts()[0]
    assert row["outcome"] == "malformed" and row["truncated"] is True
    assert "Answer: yes" in row["contract_breach"] and row["reference"] is False


def test_bad_acpbench_config_is_refused_naming_the_field(tmp_path):
    from planaudit.config import ConfigError, load_config

    for body, field in {"types: [apps]": "acpbench.types",
                        "types: [app]\n  forms: [yesno]": "acpbench.forms",
                        "types: [app]\n  domains: [{split: dev}]": "acpbench.domains",
                        "types: [app]\n  states: 0": "acpbench.states"}.items():
        path = tmp_path / "bad.yaml"
        path.write_text(f"acpbench:\n  {body}\n")
        with pytest.raises(ConfigError) as err:
            load_config(path)
        assert field in str(err.value) and "bad.yaml" in str(err.value), (body, err.value)


def test_estimate_counts_one_call_per_question(suite, tmp_path):  # noqa: F811
    from planaudit.estimate import estimate
    from planaudit.experiment import Experiment

    config = _config(tmp_path, domains=["gripper"], types=["app", "land"])
    config.update(offline={"methods": []}, online={"methods": []}, curriculum={},
                  formalize={"methods": []})
    rows = estimate(Experiment.from_dict(config), suite)
    assert [(r.model, r.regime, r.method, r.calls) for r in rows] == [
        (m, "acpbench", t, 6) for m in ("oracle", "flawed", "responsive") for t in ("app", "land")]
    assert all(r.input_tokens > 0 and r.usd == 0.0 for r in rows)


def test_acpbench_show_prints_one_question_its_truth_and_a_full_marks_answer(
        tmp_path, capsys):
    """The real path: `show` prepares and proves the domain it is asked about (a copy of
    gripper cut to p01-p02, our own search) into the config's results, then asks."""
    from planaudit.cli import main

    config = cut_suite_config(tmp_path, "gripper", ("p01", "p02"))
    show = ["acpbench", "show", "app", "gripper/p02", "--form", "mcq", "--config", str(config)]
    assert main(show) == 0
    assert (tmp_path / "results" / "suite" / "gripper" / "p02" / "truth.json").is_file()
    out = capsys.readouterr().out
    assert "== app mcq gripper/p02/s0 (seed 0) ==" in out and "A. (" in out
    assert '"kind": "mcq"' in out and "Answer: " in out.split("full marks ==")[1]
    assert main(["acpbench", "show", "app", "gripper/p77", "--config", str(config)]) == 2
    assert "no solvable prepared task 'p77'" in capsys.readouterr().err


def _workflow_config(tmp: Path, **acp) -> Path:
    return blocksworld_config(
        tmp, {"p01": "solvable", "p02": "solvable"}, curriculum={"tests": []},
        acpbench={"types": ["app", "land"], "tasks": 1, "states": 1, **acp})


def test_workflow_runs_one_job_per_model_and_type_and_refuses_an_unknown_domain(tmp_path):
    cfg = _workflow_config(tmp_path)
    res = tmp_path / "results"
    shards = [str(res / "episodes" / "acpbench" / "oracle" / f"{t}.parquet") for t in ("app", "land")]
    done = snakemake(cfg, *shards, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (done.stdout + done.stderr).count("rule acpbench_oracle:") == 2
    rows = pl.concat([pl.read_parquet(s) for s in shards])
    assert rows.height == 6 and rows["success"].all()  # 2 types x 1 state x 3 forms
    again = snakemake(cfg, "-n", *shards, timeout=600)
    assert "rule acpbench_oracle" not in again.stdout + again.stderr
    _workflow_config(tmp_path, domains=["gripper"])
    dry = snakemake(cfg, "-n", timeout=600)
    assert dry.returncode != 0
    assert "acpbench.domains: 'gripper' is not a domain of the suite" in dry.stderr + dry.stdout
    # an ACPBench root without the files its types need fails before any job starts
    (tmp_path / "acp" / "app").mkdir(parents=True)
    (tmp_path / "acp" / "app" / "dev.gen.json").write_text("[]")
    _workflow_config(tmp_path, domains=[{"root": str(tmp_path / "acp"), "split": "dev"}])
    dry = snakemake(cfg, "-n", timeout=600)
    assert dry.returncode != 0
    assert f"{tmp_path / 'acp'} has no land/dev.gen.json" in dry.stderr + dry.stdout


def test_acpbench_config_runs_acpbench_alone_and_the_paying_configs_never_do(tmp_path):
    """config/acpbench.yaml: ACPBench's jobs and nothing of the other regimes; the configs
    that name real models (paper, planbench) and the disguise config switch ACPBench off,
    so laying them over the default never bills its questions."""
    from planaudit.config import load_config

    for name in ("paper", "planbench", "disguise"):
        assert load_config(ROOT / "config" / f"{name}.yaml")["acpbench"]["types"] == [], name
    acp = load_config(ROOT / "config" / "acpbench.yaml")
    assert acp["acpbench"]["types"] == list(TYPES) and acp["acpbench"]["forms"] == list(FORMS)
    if not ACPBENCH.is_dir():  # the config names ../shared/acpbench: the dry run needs it
        return
    dry = snakemake(ROOT / "config" / "acpbench.yaml", "-n", timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout.split("Job stats:")[1], re.M))
    assert {k: v for k, v in jobs.items() if k.startswith("acpbench_")} == {
        f"acpbench_{m}": "8" for m in ("oracle", "flawed", "responsive")}
    assert not [k for k in jobs
                if k.split("_")[0] in ("offline", "online", "curriculum", "formalize")]


def test_each_models_transcripts_land_in_its_own_folder(tmp_path):
    """One job per model: each writes its transcripts under its own model's folder (a
    late-bound loop variable once sent every model's to the last one's, overwriting them)."""
    import json

    models = [{"name": n, "model": f"reference/{n}", "family": "reference", "tier": "reference"}
              for n in ("oracle", "flawed")]
    cfg = blocksworld_config(tmp_path, {"p01": "solvable"}, curriculum={"tests": []},
                             acpbench={"types": ["app"], "tasks": 1, "states": 1}, models=models)
    res = tmp_path / "results"
    shards = [str(res / "episodes" / "acpbench" / m["name"] / "app.parquet") for m in models]
    done = snakemake(cfg, *shards, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for m in models:
        files = sorted((res / "transcripts" / "acpbench" / m["name"] / "app").rglob("*.jsonl"))
        assert len(files) == pl.read_parquet(res / "episodes" / "acpbench" / m["name"]
                                             / "app.parquet").height == 3
        last = [json.loads(f.read_text().splitlines()[-1])["row"]["model"] for f in files]
        assert set(last) == {m["name"]}, (m["name"], files)
