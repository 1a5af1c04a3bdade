"""Formalizer episodes through the real litellm path, against a scripted OpenAI-compatible
server of the tests' own: the files read from the replies, judged by the hidden model, and
the feedback rounds told only what a user's own tools would say."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from planaudit.formal.truth import Limits, solve
from planaudit.formalize.run import messages, run_episode
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from tests.conftest import DOMAINS
from tests.fake_openai import FakeOpenAI, reply

BW = DOMAINS / "blocksworld"
P02 = (BW / "problems" / "p02.pddl").read_text()
BROKEN = P02.replace("(ontable a)", "(ontable a")  # unbalanced
FORGOT = P02.replace("(ontable a)\n", "")  # the example: well formed, unsolvable
OWN = Limits(external=False)


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Path:
    """A prepared task folder as the suite stage writes one (a brief of our own words)."""
    folder = tmp_path_factory.mktemp("blocksworld-p02")
    shutil.copy(BW / "domain.pddl", folder / "domain.pddl")
    (folder / "problem.pddl").write_text(P02)
    truth = solve(str(folder / "domain.pddl"), str(folder / "problem.pddl"), OWN)
    truth.pop("certificate_data", None)
    (folder / "truth.json").write_text(json.dumps(truth))
    (folder / "brief.json").write_text(json.dumps({
        "preamble": "-", "domain": "Blocks on a table; one arm moves one clear block at a time.",
        "instance": "Block c is on block a; a and b are on the table; the arm is empty. "
                    "Goal: a on b and b on c."}))
    return folder


def _episode(srv: FakeOpenAI, tmp: Path, task: Path, method: str, params: dict):
    cfg = ModelConfig(name="fake", model="openai/fake", api_base=srv.api_base,
                      api_key_env="none", max_concurrency=1, max_retries=0)
    client = Client(cfg, Cache(tmp / "cache"))
    return asyncio.run(run_episode(client, method, params, task, task_name="blocksworld/p02",
                                   limits=OWN))


def _fenced(*texts: str) -> str:
    return "Here is the PDDL.\n" + "\n".join(f"```pddl\n{t}\n```" for t in texts)


def test_a_right_problem_file_succeeds_and_is_equivalent(task, tmp_path):
    with FakeOpenAI([reply(_fenced(P02), 900, 120)]) as srv:
        row, transcript = _episode(srv, tmp_path, task, "problem", {})
    assert row["outcome"] == "success" and row["equivalence"] == "equivalent"
    assert row["parses"] and row["well_formed"] and row["plan_length"] == 6
    assert row["executable"] is True and row["efficiency"] == 1.0
    assert row["first_faulty"] is False and row["first_failure_kind"] is None
    assert (row["n_calls"], row["input_tokens"], row["output_tokens"]) == (1, 900, 120)
    # the problem method gives the domain file; the prompt holds the brief's words
    sent = srv.requests[0]["messages"][0]["content"]
    assert "(define (domain blocksworld)" in sent and "Block c is on block a" in sent
    assert "(define (problem" not in sent  # never the hidden problem
    assert transcript[0]["judgement"]["equivalence"]["verdict"] == "equivalent"


def test_feedback_rounds_say_what_the_users_tools_say_until_the_files_are_right(task, tmp_path):
    script = [reply(_fenced(BROKEN)), reply(_fenced(FORGOT)), reply(_fenced(P02))]
    with FakeOpenAI(script) as srv:
        row, transcript = _episode(srv, tmp_path, task, "problem", {"rounds": 3})
    assert row["outcome"] == "success" and row["rounds"] == 3 == len(srv.requests)
    second = srv.requests[1]["messages"][-1]["content"]
    third = srv.requests[2]["messages"][-1]["content"]
    assert second.startswith("Your PDDL does not parse: problem.pddl:")  # no scratch path
    assert third.startswith("The planner proved your task unsolvable")
    for said in (second, third):  # nothing of the hidden model reaches the model
        assert "hidden" not in said and "pick-up a" not in said and str(task) not in said
    assert [t["judgement"]["outcome"] for t in transcript if "judgement" in t] == [
        "malformed", "false-abstention", "success"]
    assert transcript[-1]["ending"] == "success"
    # the first answer's files were unlike the hidden model; a model of no reference: no
    # seeded fault to expect
    assert row["first_faulty"] is True and row["fault_seeded"] is None


def test_without_rounds_the_first_files_are_judged_and_the_difference_named(task, tmp_path):
    with FakeOpenAI([reply(_fenced(FORGOT))]) as srv:
        row, _ = _episode(srv, tmp_path, task, "problem", {})
    assert row["outcome"] == "false-abstention" and row["model_task_solvable"] is False
    assert row["equivalence"] == "different"
    assert row["distinguishing"] == "(unstack c a) (put-down c) (pick-up a)"
    assert row["distinguishing_words"].endswith("the hidden model allows (pick-up a) and yours does not")
    assert row["equivalence_bound"] is None  # found within the bound: the shortest


def test_both_files_are_read_and_a_reply_without_them_breaks_the_contract(task, tmp_path):
    domain = (BW / "domain.pddl").read_text()
    with FakeOpenAI([reply(_fenced(domain, P02)), reply("I would need more information.")]) as srv:
        both, _ = _episode(srv, tmp_path / "a", task, "domain-and-problem", {})
        none, _ = _episode(srv, tmp_path / "b", task, "domain-and-problem", {})
    assert both["outcome"] == "success" and both["equivalence"] == "equivalent"
    assert "(define (domain" not in srv.requests[0]["messages"][0]["content"]  # brief only
    assert none["outcome"] == "malformed" and none["contract_breach"] == "no fenced block"
    assert none["equivalence"] is None


def test_a_server_that_fails_ends_the_episode_as_error_not_as_the_models_failure(task, tmp_path):
    from tests.fake_openai import status

    with FakeOpenAI([status(500)]) as srv:
        row, _ = _episode(srv, tmp_path, task, "problem", {})
    assert row["outcome"] == "error" and row["error"] and row["equivalence"] is None


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown formalize method 'plan'"):
        messages("plan", {"domain": "-", "instance": "-"}, "")


@pytest.mark.parametrize(("variant", "method", "faults", "verdict"), [
    ("oracle", "problem", {}, "equivalent"),
    ("oracle", "domain-and-problem", {}, "equivalent"),
    ("flawed", "problem", {"init_dropped": 1.0}, "different"),
    ("flawed", "problem", {"type_wrong": 1.0}, None),  # blocksworld has one type: no place
    ("flawed", "domain-and-problem", {"precondition_dropped": 1.0}, "different"),
    # the problem method writes no domain: a domain fault has nowhere to go
    ("flawed", "problem", {"precondition_dropped": 1.0, "effect_swapped": 1.0}, "equivalent"),
])
def test_the_reference_formalizers_write_the_hidden_files_or_seeded_faults(
        task, tmp_path, variant, method, faults, verdict):
    cfg = ModelConfig(name=variant, model=f"reference/{variant}")
    client = Client(cfg, Cache(tmp_path / "cache"))
    row, _ = asyncio.run(run_episode(
        client, method, {}, task, task_name="blocksworld/p02", limits=OWN,
        reference_meta={"faults": faults, "seed": 0}))
    assert row["reference"] is True and row["cost_usd"] == 0
    if verdict is None:  # nothing seeded: the hidden files, as the oracle writes them
        verdict = "equivalent"
    assert row["equivalence"] == verdict, row["distinguishing_words"]
    if verdict == "equivalent":
        assert row["outcome"] == "success"
    if "init_dropped" in faults:  # found at once: the fact an applicable action needs
        assert len(row["distinguishing"].split(") (")) == 1


@pytest.fixture(scope="module")
def gripper(tmp_path_factory) -> Path:
    """Gripper p01 prepared (three types: an object can be given a wrong one)."""
    folder = tmp_path_factory.mktemp("gripper-p01")
    gr = DOMAINS / "gripper"
    shutil.copy(gr / "domain.pddl", folder / "domain.pddl")
    shutil.copy(gr / "problems" / "p01.pddl", folder / "problem.pddl")
    truth = solve(str(folder / "domain.pddl"), str(folder / "problem.pddl"), OWN)
    truth.pop("certificate_data", None)
    (folder / "truth.json").write_text(json.dumps(truth))
    (folder / "brief.json").write_text(json.dumps({"preamble": "-", "domain": "Gripper.",
                                                   "instance": "Move the balls."}))
    return folder


@pytest.mark.parametrize(("repair", "rounds", "outcome", "verdict"), [
    (1.0, 2, "success", "equivalent"),  # told its types are wrong, it writes them right
    (0.0, 3, "malformed", None),  # it never repairs: every round the same files
])
def test_the_responsive_formalizer_repairs_what_the_users_tools_report_at_its_rate(
        gripper, tmp_path, repair, rounds, outcome, verdict):
    cfg = ModelConfig(name="responsive", model="reference/responsive")
    client = Client(cfg, Cache(tmp_path / "cache"))
    row, transcript = asyncio.run(run_episode(
        client, "feedback", {"of": "problem", "rounds": 2}, gripper,
        task_name="gripper/p01", limits=OWN,
        reference_meta={"faults": {"type_wrong": 1.0}, "responses": {"repair": repair},
                        "seed": 0}))
    # expected from the seeded draw, found by the judge in the first answer
    assert row["fault_seeded"] == "type-wrong" and row["first_faulty"] is True
    assert row["rounds"] == rounds and row["outcome"] == outcome
    assert row["equivalence"] == verdict
    said = transcript[1]["messages"][-1]["content"]
    assert said.startswith("Your PDDL is not well formed:") and "hidden" not in said


def test_a_clean_answer_of_the_flawed_formalizer_says_none_was_seeded(gripper, tmp_path):
    cfg = ModelConfig(name="flawed", model="reference/flawed")
    client = Client(cfg, Cache(tmp_path / "cache"))
    row, _ = asyncio.run(run_episode(client, "problem", {}, gripper, task_name="gripper/p01",
                                     limits=OWN, reference_meta={"faults": {}, "seed": 0}))
    assert row["fault_seeded"] == "none" and row["first_faulty"] is False
    assert row["equivalence"] == "equivalent" and row["equivalence_pairs"] == 0


def test_the_estimate_counts_the_first_prompt_and_feedback_at_its_upper_bound(gripper, tmp_path):
    from planaudit.experiment import Experiment
    from planaudit.formalize.regime import estimate
    from planaudit.llm.tokens import count_messages

    suite = tmp_path / "suite"
    shutil.copytree(gripper, suite / "gripper" / "p01")
    exp = Experiment.from_dict({
        "models": [{"name": "oracle", "model": "reference/oracle"}],
        "formalize": {"methods": ["problem", "feedback"],
                      "params": {"feedback": {"of": "domain-and-problem", "rounds": 2}}}})
    rows = {r.method: r for r in estimate(exp, exp.model("oracle"), suite, {"formalize": 300},
                                          count_messages)}
    first = count_messages(messages("problem", json.loads((gripper / "brief.json").read_text()),
                                    (gripper / "domain.pddl").read_text()))
    assert (rows["problem"].calls, rows["problem"].input_tokens) == (1, first)
    assert rows["problem"].output_tokens == 300
    # feedback: three calls, each prompt the whole history so far (the brief only, no domain)
    assert (rows["feedback"].calls, rows["feedback"].output_tokens) == (3, 900)
    brief_only = count_messages(messages("domain-and-problem", json.loads(
        (gripper / "brief.json").read_text()), ""))
    assert rows["feedback"].waves == 3 and rows["feedback"].input_tokens > 3 * brief_only
