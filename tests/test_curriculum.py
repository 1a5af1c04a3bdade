"""The curriculum regime on the built-in suite: every test case's generator and scorer,
the reference models on them, determinism, the t5 families and t6 events, the config
section and the workflow rules."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml

from planaudit.curriculum.families import FAMILIES, member
from planaudit.curriculum.generate import cases
from planaudit.curriculum.score import normal, oracle_answer, score, wrong_verdict
from planaudit.curriculum.world import load_instances, run
from planaudit.formal.ground import Task
from planaudit.formal.load import domain_at
from planaudit.formal.plan import parse_plan
from planaudit.formal.search import breadth_first
from planaudit.formal.syntax import parse_problem
from planaudit.planbench.cases import TESTS, Case
from tests.conftest import DOMAINS, ROOT, SUITE_DOMAINS, blocksworld_config, snakemake

OBFUSCATED = ("blocksworld", "gripper", "logistics")
PLAN_TESTS = ("t1", "t2", "t4", "t5", "t6", "t8_1", "t8_2", "t8_3")
OPTIMAL_PLAN_TESTS = ("t1", "t2", "t5", "t6", "t8_1", "t8_2")


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """p01-p04 of every built-in domain, prepared as the suite rules do (obfuscated where
    the default config says) and proven by our own search (no external planner: fast)."""
    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import load_domain_tasks
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth

    out = tmp_path_factory.mktemp("suite")
    limits = Limits(bfs_states=300_000, astar_seconds=30, external=False)
    for domain in SUITE_DOMAINS:
        for entry in load_domain_tasks(DOMAINS, domain):
            if entry.id in ("p01", "p02", "p03", "p04") and entry.label == "solvable":
                folder = out / domain / entry.id
                prepare(entry, folder, domain in OBFUSCATED, 0)
                make_truth(entry, folder, limits)
    return out


@pytest.fixture(scope="module")
def all_cases(suite) -> dict[tuple[str, str], list[Case]]:
    return {(d, t): cases(suite, d, t, 2, seed=0, shots=1) for d in SUITE_DOMAINS for t in TESTS}


def test_oracle_scores_full_marks_on_every_test_case_and_domain(all_cases):
    for (domain, test), found in all_cases.items():
        assert len(found) == 2, (domain, test)
        for case in found:
            assert case.test == test and case.source == "suite" and case.domain == domain
            v = score(case, oracle_answer(case))
            assert v.correct and v.outcome == "success", (domain, test, case.instance, v)
            if test == "t3":
                assert v.scores == {"binary": True, "type": True, "explanation": True}


def test_prompts_hide_the_model_and_name_only_shown_objects(all_cases, suite):
    for (domain, _test), found in all_cases.items():
        for case in found:
            assert "(define" not in case.prompt and ":precondition" not in case.prompt
            assert "[Your task]" in case.prompt
            if domain in OBFUSCATED:  # no original object name of a suite task leaks
                hidden = set()
                for names in (suite / domain).glob("*/names.json"):
                    hidden |= {k for k, v in json.loads(names.read_text()).items() if k != v}
                groups = {w for g in re.findall(r"\(([^()]*)\)", case.prompt)
                          for w in g.split()[1:]}  # the objects of every action shown
                assert hidden and not groups & hidden, (domain, case.test)


def test_cost_optimal_prompt_states_costs_and_rejects_a_dearer_valid_plan(all_cases):
    bw = all_cases[("blocksworld", "t2")][0]
    assert "Every action costs 1" in bw.prompt
    assert "Here every action costs 1" in all_cases[("gripper", "t2")][0].prompt
    task = Task(domain_at(bw.truth["domain_file"]),
                parse_problem(bw.truth["problem"], domain_at(bw.truth["domain_file"])))
    block = next(a[0] for p, a in task.problem.init_atoms if p == "ontable"
                 and ("clear", a) in task.problem.init_atoms)
    detour = [f"(pick-up {block})", f"(put-down {block})", *bw.truth["plan"]]
    v = score(bw, "```\n" + "\n".join(detour) + "\n```")
    assert not v.correct and v.outcome == "wrong-answer" and "optimum" in v.detail
    t1 = next(c for c in [all_cases[("blocksworld", "t1")][0]])
    assert score(t1, "```\n" + "\n".join(detour) + "\n```").correct  # t1 takes any valid plan


def _flawed(case: Case, faults: dict, seed: int = 0) -> str:
    from planaudit.curriculum.shard import oracle_text
    from planaudit.reference import answer

    text, kind, wrong = oracle_text(case)
    meta = {"purpose": "curriculum", "task": f"{case.test}:{case.domain}/{case.instance}",
            "answer": text, "answer_kind": kind, "wrong": wrong, "faults": faults, "seed": seed}
    return answer("flawed", meta)


def test_reference_oracle_answers_through_answer_and_flawed_faults_land_where_expected(all_cases):
    from planaudit.reference import answer

    for (domain, test), found in all_cases.items():
        for case in found:
            from planaudit.curriculum.shard import oracle_text

            text, kind, wrong = oracle_text(case)
            said = answer("oracle", {"purpose": "curriculum", "answer": text,
                                     "answer_kind": kind, "wrong": wrong})
            assert score(case, said).correct
            if test in PLAN_TESTS:  # an unknown object: the plan cannot be read as the domain's
                v = score(case, _flawed(case, {"unknown_object": 1.0}))
                assert not v.correct and v.outcome == "malformed", (domain, test, v)
                v = score(case, _flawed(case, {"unsolvable_on_solvable": 1.0}))
                assert v.outcome == "malformed" and "UNSOLVABLE" in v.detail
            if test in OPTIMAL_PLAN_TESTS and len(case.truth["plan"]) > 0:
                # an optimal plan less one action is never valid
                v = score(case, _flawed(case, {"drop_action": 1.0}))
                assert v.outcome in ("goal-not-reached", "inapplicable-action"), (domain, test)
            if test == "t7":
                v = score(case, _flawed(case, {"drop_fact": 1.0}))
                assert v.outcome == "wrong-answer" and len(v.scores["missed"]) == 1
                assert not v.scores["extra"]
            if test == "t3":
                v = score(case, _flawed(case, {"flip_verdict": 1.0}))
                assert not v.correct and v.scores["binary"] is False
            # no fault configured: the flawed model says what the oracle says
            assert score(case, _flawed(case, {})).correct


def test_flawed_with_the_default_rates_scores_less_than_the_oracle(all_cases):
    faults = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["models"][1]["faults"]
    right = total = 0
    wrong_tests = set()
    for (_domain, test), found in all_cases.items():
        for case in found:
            v = score(case, _flawed(case, faults))
            right += v.correct
            total += 1
            if not v.correct:
                wrong_tests.add(test)
    assert 0 < right < total
    assert {"t3", "t7"} & wrong_tests and set(PLAN_TESTS) & wrong_tests


def test_same_seed_same_cases_other_seed_other_cases(suite):
    for test in TESTS:
        a = cases(suite, "gripper", test, 2, seed=3, shots=1)
        b = cases(suite, "gripper", test, 2, seed=3, shots=1)
        assert [c.to_json() for c in a] == [c.to_json() for c in b]
        assert all(Case.from_json(c.to_json()) == c for c in a)
    differ = [test for test in TESTS
              if [c.prompt for c in cases(suite, "blocksworld", test, 2, seed=0, shots=1)]
              != [c.prompt for c in cases(suite, "blocksworld", test, 2, seed=1, shots=1)]]
    assert len(differ) >= 5, differ


@pytest.mark.parametrize("domain", SUITE_DOMAINS)
def test_t5_family_plans_follow_one_pattern_grow_and_are_optimal(domain):
    dom = domain_at(DOMAINS / domain / "domain.pddl")
    fam = FAMILIES[domain]
    lengths = []
    for size in (1, 2, 3):
        m = member(domain, dom, size, seed=0)
        names = [s.strip("()").split()[0] for s in m.plan]
        assert names == fam.names(size)  # head + unit * n + tail
        best = breadth_first(Task(dom, parse_problem(m.problem_pddl, dom)), 300_000)
        assert best.status == "solved" and best.length == len(m.plan)  # the pattern is optimal
        lengths.append(len(m.plan))
    steps = {b - a for a, b in itertools.pairwise(lengths)}
    assert steps == {len(fam.unit)} and lengths[0] > 0
    # a larger member in the prompt than in its examples
    case = cases_for_t5(domain)
    assert case.truth["family"]["size"] >= 3


def cases_for_t5(domain):
    """t5 needs no prepared task beyond the domain: a one-task suite folder is enough."""
    import tempfile

    from planaudit.formal.truth import Limits
    from planaudit.suite.catalog import find_task
    from planaudit.suite.prepare import prepare
    from planaudit.suite.records import make_truth

    tmp = Path(tempfile.mkdtemp())
    entry = find_task(DOMAINS, domain, "p01")
    prepare(entry, tmp / domain / "p01", False, 0)
    make_truth(entry, tmp / domain / "p01", Limits(external=False))
    return cases(tmp, domain, "t5", 1, seed=0, shots=2)[0]


def test_t6_event_is_an_applicable_action_of_the_domain_after_the_prefix(all_cases, suite):
    from planaudit.curriculum.generate import EVENTS

    for domain in SUITE_DOMAINS:
        instances = {i.id: i for i in load_instances(suite, domain)}
        for case in all_cases[(domain, "t6")]:
            inst = instances[case.instance]
            k, action = case.truth["event"]["after_step"], case.truth["event"]["action"]
            assert 1 <= k < len(inst.plan)
            state = run(inst.task, inst.steps[:k])
            op = inst.task.operator(*parse_plan(action)[0])
            assert op.applicable(state) and action != inst.plan[k]
            assert op.action in EVENTS[domain]
            after = op.apply(state)
            # the case's problem starts where the event left the world
            shown = Task(inst.task.domain, parse_problem(case.truth["problem"], inst.task.domain))
            assert shown.init_atom_set == frozenset(inst.task.atoms[i] for i in range(
                len(inst.task.atoms)) if after[0] >> i & 1)
            assert f"The first {k} action(s)" in case.prompt


def test_t3_three_scores(all_cases):
    found = [c for d in SUITE_DOMAINS for c in all_cases[(d, "t3")]]
    shown = {c.truth["shown"] for c in found}
    assert len(shown) >= 2  # the seed picks valid, goal-missing and inapplicable plans
    for case in found:
        for ex in ("verdict: valid", "error: goal-not-reached", "error: inapplicable-action"):
            assert ex in case.prompt  # the three examples
    inapplicable = next(c for c in found if c.truth["error"] == "inapplicable-action")
    t = inapplicable.truth
    assert t["step"] >= 1 and t["unmet"]
    ok = oracle_answer(inapplicable)
    assert score(inapplicable, ok).scores == {"binary": True, "type": True, "explanation": True}
    kind_wrong = ok.replace("error: inapplicable-action", "error: goal-not-reached")
    assert score(inapplicable, kind_wrong).scores == {"binary": True, "type": False,
                                                      "explanation": False}
    step_wrong = ok.replace(f"step: {t['step']}", f"step: {t['step'] + 1}")
    assert score(inapplicable, step_wrong).scores == {"binary": True, "type": True,
                                                      "explanation": False}
    facts_wrong = "```\nverdict: invalid\nerror: inapplicable-action\nstep: " + \
        f"{t['step']}\nunmet:\n- the moon is made of cheese\n```"
    assert score(inapplicable, facts_wrong).scores["explanation"] is False
    # bullets, case and full stops do not matter; the facts' order does not either
    loose = ("Answer:\n```\nVerdict: INVALID\nerror: inapplicable-action\nstep: "
             f"{t['step']}\nunmet:\n" + "\n".join(f"* {u.upper()}." for u in reversed(t["unmet"]))
             + "\n```")
    assert score(inapplicable, loose).scores["explanation"] is True
    assert score(inapplicable, wrong_verdict(inapplicable)).scores["binary"] is False
    v = score(inapplicable, "I think it is fine.")
    assert v.outcome == "malformed" and not any(v.scores.values())
    goal = next(c for c in found if c.truth["error"] == "goal-not-reached")
    assert score(goal, oracle_answer(goal)).scores["explanation"]
    assert not score(goal, "```\nverdict: invalid\nerror: goal-not-reached\nunmet:\n```"
                     ).scores["explanation"] or not goal.truth["unmet"]


def test_t7_state_is_set_equal_and_reading_is_documented(all_cases):
    case = all_cases[("loadbalancing", "t7")][0]
    facts = case.truth["facts"]
    assert any(" is " in f and f.split()[-1].isdigit() for f in facts)  # numeric values too
    shuffled = "```\n" + "\n".join(f"- {f}." for f in reversed(facts)) + "\n```"
    assert score(case, shuffled).correct
    extra = "```\n" + "\n".join([*facts, "server zz is powered on"]) + "\n```"
    v = score(case, extra)
    assert not v.correct and v.scores["extra"] == [normal("server zz is powered on")]
    assert score(case, "").outcome == "malformed"


def test_t4_and_t8_goals(all_cases):
    for domain in SUITE_DOMAINS:
        t4 = all_cases[(domain, "t4")][0]
        assert "Now the goal changes" in t4.prompt
        assert 1 <= len(t4.truth["plan"])
        t81 = all_cases[(domain, "t8_1")]
        assert all(sorted(c.truth["goal_order"]) == list(range(len(c.truth["goal_order"])))
                   for c in t81)
        full = all_cases[(domain, "t8_3")][0]
        orig = all_cases[(domain, "t8_2")][0]
        goal_lines = lambda p: p.rsplit("[Your task]", 1)[1].split("Goal (")[1]  # noqa: E731
        assert goal_lines(full.prompt).count("\n- ") > goal_lines(orig.prompt).count("\n- ")


def test_unknown_test_and_task_are_errors(suite):
    from planaudit.curriculum.world import CurriculumError

    with pytest.raises(CurriculumError, match="no test case 't9'"):
        cases(suite, "gripper", "t9", 1)
    with pytest.raises(CurriculumError, match="no solvable prepared task 'p77'"):
        cases(suite, "gripper", "t1", 1, only="p77")
    with pytest.raises(CurriculumError, match="no prepared tasks"):
        cases(suite, "nowhere", "t1", 1)


def test_bad_curriculum_config_is_refused_naming_the_field(tmp_path):
    from planaudit.config import ConfigError, load_config

    cases_ = {
        "tests: [t9]": "curriculum.tests",
        "tests: [t1]\n  instances: 0": "curriculum.instances",
        "tests: [t1]\n  domains: [{root: x}]": "curriculum.domains",
        "tests: [t1]\n  shots_: 1": "curriculum",
        "tests: [t1]\n  params: {t6: {instances: two}}": "curriculum.params",
    }
    for body, field in cases_.items():
        path = tmp_path / "bad.yaml"
        path.write_text(f"curriculum:\n  {body}\n")
        with pytest.raises(ConfigError) as err:
            load_config(path)
        assert field in str(err.value) and "bad.yaml" in str(err.value), (body, err.value)


def test_shard_rows_pass_the_row_schema_and_fill_the_table(suite, tmp_path):
    from planaudit.analysis.collect import collect, default_schema, load_schema
    from planaudit.analysis.tables import regime_tables
    from planaudit.curriculum.shard import run_curriculum_shard
    from planaudit.experiment import Experiment

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["curriculum"] = {"tests": ["t3", "t7"], "instances": 2, "shots": 1}
    exp = Experiment.from_dict(config)
    shards = []
    for model in ("oracle", "flawed"):
        for test in ("t3", "t7"):
            out = tmp_path / model / test / "{domain}.parquet"
            run_curriculum_shard(exp, exp.model(model), test, ["gripper", "hospital"], suite, str(out),
                                 str(tmp_path / "tr" / model / test / "{domain}"))
            shards += [Path(str(out).replace("{domain}", d)) for d in ("gripper", "hospital")]
    frame = collect(shards, load_schema(default_schema()))
    assert frame.height == 2 * 2 * 2 * 2 and set(frame["regime"]) == {"curriculum"}
    oracle = frame.filter(pl.col("model") == "oracle")
    assert oracle["success"].all() and oracle.filter(pl.col("method") == "t3")[
        "score_explanation"].all()
    table = regime_tables(frame, seed=0, n_resamples=200)["curriculum"]  # as the stage builds it
    assert table["test"].to_list() == ["t3", "t3 (type)", "t3 (explanation)", "t7"]
    col = "oracle (reference, not an LLM)"
    assert table[col].to_list()[0].startswith("4/4 (100.0%)")
    transcript = tmp_path / "tr" / "oracle" / "t7" / "gripper"
    assert len(list(transcript.glob("*.jsonl"))) == 2


# -- the workflow ------------------------------------------------------------------------



def _workflow_config(tmp: Path, t6: dict | None = None) -> Path:
    return blocksworld_config(
        tmp, {"p01": "solvable", "p02": "solvable", "p03": "solvable"},
        curriculum={"tests": ["t1", "t6", "t7"], "instances": 1, "shots": 1,
                    "params": {"t6": t6 or {}}},
        acpbench={"types": []}, formalize={"methods": []})


def _snakemake(cfg: Path, *extra: str) -> subprocess.CompletedProcess:
    return snakemake(cfg, *extra, timeout=600)


def test_workflow_runs_curriculum_jobs_and_reruns_only_a_changed_test_case(tmp_path):
    cfg = _workflow_config(tmp_path)
    dry = _snakemake(cfg, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert (dry.stdout + dry.stderr).count("rule curriculum_oracle:") == 3  # t1, t6, t7
    res = tmp_path / "results"
    shards = [str(res / "episodes" / "curriculum" / "oracle" / t / "blocksworld.parquet")
              for t in ("t1", "t6", "t7")]
    done = _snakemake(cfg, *shards)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pl.concat([pl.read_parquet(s) for s in shards])
    assert rows["success"].all() and rows["regime"].unique().to_list() == ["curriculum"]
    again = _snakemake(cfg, "-n", *shards)
    assert "rule curriculum_oracle" not in again.stdout + again.stderr  # nothing to do
    _workflow_config(tmp_path, t6={"instances": 2})
    changed = _snakemake(cfg, "-n", *shards)
    assert changed.returncode == 0, changed.stderr[-3000:]
    said = changed.stdout + changed.stderr
    assert said.count("rule curriculum_oracle:") == 1
    # the one rule file of every regime names the wildcard `job` (a test case here)
    assert "job=t6" in said and "job=t1" not in said and "job=t7" not in said


def test_workflow_refuses_a_curriculum_domain_outside_the_suite(tmp_path):
    cfg = _workflow_config(tmp_path)
    data = yaml.safe_load(cfg.read_text())
    data["curriculum"]["domains"] = ["gripper"]
    cfg.write_text(yaml.safe_dump(data))
    dry = _snakemake(cfg, "-n")
    assert dry.returncode != 0
    assert "curriculum.domains: 'gripper' is not a domain of the suite" in dry.stderr + dry.stdout


def test_planbench_show_prints_the_prompt_truth_and_a_full_marks_answer(tmp_path, capsys):
    """The real path: `show` prepares and proves the domain it is asked about (gripper
    cut to p01-p02) into the config's results, then renders the case."""
    from planaudit.cli import main
    from tests.cut_suite import cut_suite_config

    config = str(cut_suite_config(tmp_path, "gripper", ("p01", "p02")))
    assert main(["planbench", "show", "t7", "gripper/2", "--config", config]) == 0  # p02
    assert (tmp_path / "results" / "suite" / "gripper" / "p02" / "truth.json").is_file()
    out = capsys.readouterr().out
    assert "== t7 suite gripper/p02 (seed 0, shots 1) ==" in out
    assert "[Your task]" in out and '"kind": "state"' in out
    assert "== an answer that scores full marks ==" in out and "(define" not in out
    assert main(["planbench", "show", "t9", "gripper/p02", "--config", config]) == 2
    assert "no test case 't9'" in capsys.readouterr().err


def test_estimate_counts_one_call_per_curriculum_case(suite):
    from planaudit.estimate import estimate
    from planaudit.experiment import Experiment

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config.update(offline={"methods": []}, online={"methods": []}, acpbench={},
                  formalize={"methods": []},
                  curriculum={"tests": ["t1", "t3"], "domains": ["gripper", "hospital"],
                              "instances": 2})
    rows = estimate(Experiment.from_dict(config), suite)
    assert [(r.model, r.regime, r.method, r.calls) for r in rows] == [
        (m, "curriculum", t, 4) for m in ("oracle", "flawed", "responsive") for t in ("t1", "t3")]
    t1, t3 = rows[0], rows[1]
    assert t3.input_tokens > t1.input_tokens > 0 and t1.usd == 0.0  # t3 shows three examples


def test_a_real_models_unreadable_reply_names_its_breach_and_its_cut(suite, tmp_path,
                                                                    monkeypatch):
    """Curriculum rows fill contract_breach as offline rows do, and flag a reply cut at
    max_tokens (through the real litellm path, against a scripted local server)."""
    from planaudit.curriculum.shard import run_curriculum_shard
    from planaudit.experiment import Experiment
    from tests.fake_openai import FakeOpenAI, reply

    cut = reply("I will now list the plan step by step: first", 200, 16)
    cut["body"]["choices"][0]["finish_reason"] = "length"
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["curriculum"] = {"tests": ["t1"], "instances": 2, "shots": 1}
    with FakeOpenAI([cut, reply("Sure! Here is what I think.")]) as srv:
        config["models"] = [{"name": "fake", "model": "openai/fake", "api_base": srv.api_base,
                             "api_key_env": "none", "max_concurrency": 1}]
        out = tmp_path / "{domain}.parquet"
        exp = Experiment.from_dict(config)
        frames = run_curriculum_shard(exp, exp.model("fake"), "t1", ["gripper"], suite, str(out),
                                      str(tmp_path / "tr" / "{domain}"))
    rows = frames["gripper"].sort("truncated", descending=True).to_dicts()
    assert [r["outcome"] for r in rows] == ["malformed", "malformed"]
    assert all(r["contract_breach"] and "fenced" in r["contract_breach"] for r in rows)
    assert [r["truncated"] for r in rows] == [True, False]
    assert all(r["cost_usd"] is None for r in rows)  # openai/fake has no known price
