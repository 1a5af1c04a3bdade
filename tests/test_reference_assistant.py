"""The reference models as a study's chat assistant (purpose "assistant", issue 49),
through `llm/`'s client on prepared suite tasks: the oracle proposes the proven optimum,
responsive is wrong by one dropped step on turn 1 and corrects itself on turn 2, flawed
proposes its configured faults, an unsolvable task gets UNSOLVABLE, and every reply is
what `assistant.proposal` predicts, the same on every call."""

from __future__ import annotations

import asyncio
import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from planaudit.contract import extract
from planaudit.formal import load_task, validate
from planaudit.formal.plan import format_step
from planaudit.formal.truth import Limits
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.reference import assistant, responsive
from planaudit.suite.catalog import find_entry
from planaudit.suite.prepare import prepare
from planaudit.suite.records import make_truth

SUITE = {"source": "builtin", "root": str(Path(__file__).resolve().parents[1] / "domains")}
SOLVABLE, UNSOLVABLE = "blocksworld/p02", "blocksworld/p09"  # 6 steps; a cyclic goal


@cache
def task_dir(name: str, root: str) -> Path:
    d, t = name.split("/")
    out = Path(root) / d / t
    entry = find_entry(SUITE, d, t)
    prepare(entry, out, obfuscate=True, seed=0)
    make_truth(entry, out, Limits(external=False))
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict[str, Path]:
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in (SOLVABLE, UNSOLVABLE)}


def truth_of(folder: Path) -> dict:
    return json.loads((folder / "truth.json").read_text())


def meta_of(name: str, folder: Path, turn: int, **extra) -> dict:
    return {"purpose": "assistant", "task_dir": str(folder), "task": name, "turn": turn,
            "faults": {}, **extra}


def chat(model: str, name: str, folder: Path, turn: int, cache_dir: Path, **extra) -> str:
    """The assistant's reply to the participant's `turn`-th message, through the client."""
    messages = [{"role": "system", "content": "You help a person plan the task."}]
    for n in range(1, turn + 1):
        messages.append({"role": "user", "content": f"message {n}: what should I do?"})
        if n < turn:
            messages.append({"role": "assistant", "content": "(an earlier reply)"})
    client = Client(ModelConfig(model, model), Cache(cache_dir))
    call = asyncio.run(client.complete(messages, metadata=meta_of(name, folder, turn, **extra)))
    assert call.error is None and call.cost_usd == 0.0 and call.input_tokens > 0
    return call.content


def judged(folder: Path, reply: str) -> tuple[list[str], bool]:
    """The reply's plan read by the contract and its validity on the hidden model."""
    ex = extract(reply)
    assert ex.kind == "plan", reply
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    return [format_step(s) for s in ex.steps], validate(task, ex.steps).valid


def test_oracle_proposes_the_proven_optimum_every_turn(prepared, tmp_path):
    folder = prepared[SOLVABLE]
    for turn in (1, 3):
        reply = chat("reference/oracle", SOLVABLE, folder, turn, tmp_path / "c")
        steps, valid = judged(folder, reply)
        assert valid and steps == truth_of(folder)["plan"]
        assert steps == assistant.proposal("oracle", meta_of(SOLVABLE, folder, turn))
        assert reply.count("```") == 2 and not reply.startswith("```")  # a sentence first


def test_responsive_drops_one_step_then_corrects(prepared, tmp_path):
    folder = prepared[SOLVABLE]
    optimum = truth_of(folder)["plan"]
    first = chat("reference/responsive", SOLVABLE, folder, 1, tmp_path / "c")
    steps, valid = judged(folder, first)
    assert not valid and len(steps) == len(optimum) - 1
    assert any(optimum[:i] + optimum[i + 1:] == steps for i in range(len(optimum)))
    assert steps == assistant.proposal("responsive", meta_of(SOLVABLE, folder, 1))
    # asked again on turn 1 (no cache between), the same wrong plan
    assert chat("reference/responsive", SOLVABLE, folder, 1, tmp_path / "other") == first
    second = chat("reference/responsive", SOLVABLE, folder, 2, tmp_path / "c")
    steps, valid = judged(folder, second)
    assert valid and steps == optimum and "correct" in second.splitlines()[0]


def test_flawed_proposes_its_faults_seeded_per_task_and_turn(prepared, tmp_path):
    folder = prepared[SOLVABLE]
    optimum = truth_of(folder)["plan"]
    faults = {"drop_action": 1.0}
    for turn in (1, 2):
        reply = chat("reference/flawed", SOLVABLE, folder, turn, tmp_path / "c", faults=faults)
        steps, valid = judged(folder, reply)
        assert not valid and len(steps) == len(optimum) - 1
        meta = meta_of(SOLVABLE, folder, turn, faults=faults)
        assert steps == assistant.proposal("flawed", meta)
        assert chat("reference/flawed", SOLVABLE, folder, turn, tmp_path / f"again{turn}",
                    faults=faults) == reply
    # no faults configured: the flawed assistant is the oracle
    assert assistant.proposal("flawed", meta_of(SOLVABLE, folder, 1)) == optimum


def test_an_unsolvable_task(prepared, tmp_path):
    folder = prepared[UNSOLVABLE]
    assert truth_of(folder)["solvable"] is False
    for model in ("reference/oracle", "reference/flawed"):
        reply = chat(model, UNSOLVABLE, folder, 1, tmp_path / "c")
        assert extract(reply).kind == "unsolvable" and "```" not in reply
        assert "UNSOLVABLE" in reply.splitlines()
    # responsive: three random grounded actions on turn 1, then UNSOLVABLE
    first = chat("reference/responsive", UNSOLVABLE, folder, 1, tmp_path / "c")
    steps, valid = judged(folder, first)
    assert not valid and len(steps) == 3
    assert steps == assistant.proposal("responsive", meta_of(UNSOLVABLE, folder, 1))
    assert chat("reference/responsive", UNSOLVABLE, folder, 1, tmp_path / "other") == first
    second = chat("reference/responsive", UNSOLVABLE, folder, 2, tmp_path / "c")
    assert extract(second).kind == "unsolvable" and "```" not in second
    assert assistant.proposal("responsive", meta_of(UNSOLVABLE, folder, 2)) is None
    # the flawed assistant's plan_on_unsolvable fault proposes a plan
    flawed = chat("reference/flawed", UNSOLVABLE, folder, 1, tmp_path / "c",
                  faults={"plan_on_unsolvable": 1.0})
    assert extract(flawed).kind == "plan"


def test_a_one_step_optimum_is_repeated_not_emptied(prepared, tmp_path):
    folder = tmp_path / "one"
    shutil.copytree(prepared[SOLVABLE], folder)
    truth = truth_of(folder)
    truth["plan"] = truth["plan"][:1]
    (folder / "truth.json").write_text(json.dumps(truth))
    steps = assistant.proposal("responsive", meta_of(SOLVABLE, folder, 1))
    assert steps == truth["plan"] * 2


def test_responsive_reply_is_not_reached_and_turn_defaults_to_the_user_messages(
        prepared, tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("responsive.reply reached for an assistant call")

    monkeypatch.setattr(responsive, "reply", refuse)
    folder = prepared[SOLVABLE]
    reply = chat("reference/responsive", SOLVABLE, folder, 2, tmp_path / "c")
    meta = meta_of(SOLVABLE, folder, 2)
    del meta["turn"]
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    assert assistant.reply("responsive", meta, messages) == reply
