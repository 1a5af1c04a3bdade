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
    assert second.startswith("Your PDDL does not parse:") and "problem.pddl:" in second
    assert third.startswith("The planner proved your task unsolvable")
    for said in (second, third):  # nothing of the hidden model reaches the model
        assert "hidden" not in said and "pick-up a" not in said and str(task) not in said
    assert [t["judgement"]["outcome"] for t in transcript] == [
        "malformed", "false-abstention", "success"]


def test_without_rounds_the_first_files_are_judged_and_the_difference_named(task, tmp_path):
    with FakeOpenAI([reply(_fenced(FORGOT))]) as srv:
        row, _ = _episode(srv, tmp_path, task, "problem", {})
    assert row["outcome"] == "false-abstention" and row["model_task_solvable"] is False
    assert row["equivalence"] == "different"
    assert row["distinguishing"] == "(unstack c a) (put-down c) (pick-up a)"
    assert row["distinguishing_words"].endswith("the hidden model allows (pick-up a) and yours does not")


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
    ("flawed", "problem", {"init-dropped": 1.0}, "different"),
    ("flawed", "problem", {"type-wrong": 1.0}, None),  # blocksworld has one type: no place
    ("flawed", "domain-and-problem", {"precondition-dropped": 1.0}, "different"),
    # the problem method writes no domain: a domain fault has nowhere to go
    ("flawed", "problem", {"precondition-dropped": 1.0, "effect-swapped": 1.0}, "equivalent"),
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
    if "init-dropped" in faults:  # found at once: the fact an applicable action needs
        assert len(row["distinguishing"].split(") (")) == 1
