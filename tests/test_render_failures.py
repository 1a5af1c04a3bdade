"""What the model is told about a failed condition is the condition in the brief's words,
or the episode ends as a named error: never a vague "a required condition"."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from planaudit.formal import load_task
from planaudit.offline.run import feedback
from planaudit.suite.brief import Renderer, RenderFailed, load_templates

ROOT = Path(__file__).resolve().parents[1]
LB = ROOT / "domains" / "loadbalancing"


REPLY = ("```\n(power-on s1)\n(start-service web s1)\n(assign-bucket b1 s1 eu web)\n"
         "(power-off s1)\n```\n")


def _lb():
    """The task and a renderer of its own templates (a test may delete one: the loaded
    templates are cached and shared)."""
    task = load_task(LB / "domain.pddl", LB / "problems" / "p01.pddl")
    return task, Renderer(copy.deepcopy(load_templates(LB / "nl.yaml")))


def test_numeric_preconditions_are_rendered_in_the_feedback():
    task, renderer = _lb()
    reply = REPLY
    text = feedback(task, renderer, reply, frozenset(task.domain.actions))
    assert text is not None and "action 4" in text
    assert "a required condition" not in text
    # both numeric conditions of power-off, each in the templates' words
    load = renderer.function("load", ("s1",))
    services = renderer.function("services", ("s1",))
    assert load in text and services in text
    assert "(load s1)" not in text  # no PDDL reaches the model


def test_a_condition_without_a_template_is_a_named_failure():
    task, renderer = _lb()
    del renderer.t.functions["load"]
    reply = REPLY
    with pytest.raises(RenderFailed, match="no template for function 'load'"):
        feedback(task, renderer, reply, frozenset(task.domain.actions))


def _gated_env(renderer):
    from planaudit.online.environment import Environment

    task = load_task(LB / "domain.pddl", LB / "problems" / "p01.pddl")
    env = Environment(task, {}, renderer, budget=20, gated=True)
    for a in ("(power-on s1)", "(start-service web s1)", "(assign-bucket b1 s1 eu web)"):
        assert env.call("act", {"action": a}).ok
    return env


def test_a_blocked_action_names_its_numeric_conditions_online():
    _, renderer = _lb()
    obs = _gated_env(renderer).call("act", {"action": "(power-off s1)"})
    assert obs.kind == "blocked"
    assert renderer.function("load", ("s1",)) in obs.text
    assert "a required condition" not in obs.text


def test_online_a_condition_without_a_template_is_a_named_failure():
    _, renderer = _lb()
    env = _gated_env(renderer)
    del renderer.t.functions["services"]
    with pytest.raises(RenderFailed, match="no template for function 'services'"):
        env.call("act", {"action": "(power-off s1)"})
    del renderer.t.predicates["powered"]
    with pytest.raises(RenderFailed, match="no template for predicate 'powered'"):
        env.call("query_state", {"predicate": "powered"})


def _modulo(folder, tmp, monkeypatch):
    """A scripted model behind the real litellm path answers a modulo episode."""
    from tests.fake_openai import FakeOpenAI, reply
    from tests.test_offline import episode

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI([reply(REPLY)] * 12) as srv:
        row, _ = episode("openai/test", "modulo", folder, "loadbalancing/p01", tmp,
                         api_base=srv.api_base, params={"max_tokens": 256})
    return row, srv.requests


def test_modulo_tells_the_model_the_numeric_conditions(tmp_path, monkeypatch):
    from tests.test_reference import task_dir

    folder = task_dir("loadbalancing/p01", str(tmp_path / "suite"))
    row, requests = _modulo(folder, tmp_path, monkeypatch)
    told = [m["content"] for r in requests for m in r["messages"]
            if "A validator rejected" in str(m.get("content"))]
    assert told and all("a required condition" not in t for t in told)
    assert "the number of buckets on server s1" in told[0]
    assert row["outcome"] == "inapplicable-action" and row["error"] is None


def test_a_feedback_that_cannot_be_rendered_ends_the_episode_as_a_named_error(
        tmp_path, monkeypatch):
    import yaml

    from tests.test_reference import task_dir

    folder = task_dir("loadbalancing/p01", str(tmp_path / "suite"))
    brief = json.loads((folder / "brief.json").read_text())
    nl = yaml.safe_load(Path(brief["source"]).read_text())
    del nl["functions"]["load"]
    broken = tmp_path / "nl.yaml"
    broken.write_text(yaml.safe_dump(nl))
    (folder / "brief.json").write_text(json.dumps({**brief, "source": str(broken)}))
    row, requests = _modulo(folder, tmp_path, monkeypatch)
    assert row["outcome"] == "error" and "no template for function 'load'" in row["error"]
    assert len(requests) == 1  # nothing vaguer than the brief was sent to the model


def test_a_curriculum_gold_answer_never_falls_back_to_pddl():
    from planaudit.curriculum.generate import Builder
    from planaudit.curriculum.world import CurriculumError, World

    bw = ROOT / "domains" / "blocksworld"
    templates = copy.deepcopy(load_templates(bw / "nl.yaml"))
    builder = Builder(World(bw / "domain.pddl", templates), [], "blocksworld")
    said = builder.sentence("(not (clear b))")
    assert "(clear" not in said and said.startswith("it is not the case that")
    del templates.predicates["clear"]
    with pytest.raises(CurriculumError, match=r"\(clear b\) cannot be put in words"):
        builder.sentence("(clear b)")
