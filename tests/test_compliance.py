"""Plan compliance: the metrics' worked examples, every phase label on hand-built
trajectories and on transcripts of scripted-server runs, the plan settings in the prompt,
the reference agents' compliance, scoring external sequences, the analysis tables and the
phase-flow figure."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from planaudit.cli import main
from planaudit.compliance.graph import trajectory_graph
from planaudit.compliance.metrics import longest_increasing, score
from planaudit.compliance.phases import (
    LABELS,
    decode,
    encode,
    label,
    order_names,
    runs_named,
)
from planaudit.compliance.settings import SettingError, load_settings
from planaudit.config import load_config
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.online.run import run_episode
from tests.conftest import CONFORMANCE
from tests.fake_openai import FakeOpenAI, reply, tool_call
from tests.test_planbench import needs_shared
from tests.test_reference import task_dir

ROOT = Path(__file__).resolve().parents[1]
PLANBENCH = ROOT.parent / "shared" / "planbench"
SETTINGS_FILE = ROOT / "config" / "plan_settings.yaml"
TASK, UNSOLVABLE = "blocksworld/p04", "blocksworld/p09"
ACTIONS = ("pick-up", "put-down", "stack", "unstack")
WORKED = [("NRRPVVVPV", (1.0, 1.0, 1.0, 1.0, True)),
          ("RRRRNNNPPVV", (1.0, 0.75, 1.0, 0.909, False)),
          ("NNNP", (0.5, 0.5, 1.0, 0.630, False))]


# -- the metrics --------------------------------------------------------------------------

@pytest.mark.parametrize("seq,want", WORKED)
def test_worked_examples(seq, want):
    c = score(list(seq), list("NRPV"))
    assert (round(c.ppc, 3), round(c.poc, 3), round(c.ppf, 3), round(c.pc, 3), c.strict) == want


def test_out_of_plan_phases_lower_fidelity_and_any_zero_gives_zero():
    c = score(list("UXSPAYVZX"), list("USPAV"))
    assert c.ppf == 5 / (5 + 3) and c.ppc == 1 and not c.strict  # X, Y, Z: three types
    assert score(list("XY"), list("USPAV")).pc == 0.0
    assert score([], list("UA")).pc == 0.0
    assert longest_increasing([4, 0, 7, 9]) == 3 and longest_increasing([]) == 0


def test_run_length_encoding_round_trips():
    seq = ["read", "sense", "sense", "plan", "act", "act", "act", "verify"]
    assert encode(seq) == ["read_1", "sense_2", "plan_1", "act_3", "verify_1"]
    assert decode(encode(seq)) == seq
    assert decode(["U_1", "S_2", "L_navigate_3", "P"]) == ["U", "S", "S", *["L_navigate"] * 3, "P"]
    assert encode([]) == []


# -- labels on hand-built trajectories ------------------------------------------------------

def turn(tool=None, text="", mark="", **args):
    return {"text": text, "tool": tool, "args": args, "mark": mark}


PLAN = "My plan:\n1. (unstack a b)\n2. (put-down a)\n3. (pick-up b)"
SUMMARY = ("I read the task, sensed the state, wrote a plan, executed all of its actions one by "
           "one and confirmed that the goal holds now.")


@pytest.mark.parametrize("turns,want", [
    ([turn("get_task")], "read"),
    ([turn("act", action="(pick-up a)"), turn("get_task")], "act reread"),
    ([turn("query_state")], "sense"),
    ([turn("act", action="(pick-up a)"), turn("query_state")], "act verify"),
    ([turn(None, PLAN)], "plan"),
    ([turn("act", action="(pick-up a)"), turn(None, PLAN)], "act replan"),
    ([turn("act", action="(pick-up a)", mark="blocked")], "act"),
    ([turn("act", action="(pick-up a)"), turn("submit", SUMMARY)], "act summary"),
    ([turn("submit", "Done.")], ""),
    ([turn("declare_unsolvable", PLAN)], "plan"),  # a plan text is still a plan; the end: none
    ([turn("get_task"), turn("submit"), turn("get_task")], "read"),  # the end ends the sequence
    ([turn("bogus_tool"), turn(None, "Let me think about (stack a b).")], ""),
    ([turn(None, "I will (unstack a b), then (put-down a), then stack.")], "plan"),  # inline
    ([turn("act", PLAN, action="(unstack a b)")], "plan act"),  # a turn's text before its call
])
def test_every_label_on_hand_built_trajectories(turns, want):
    assert " ".join(s.phase for s in label(turns, ACTIONS)) == want


def test_blocked_and_rejected_acts_are_labelled_and_marked():
    steps = label([turn("act", mark="blocked", action="(x)"), turn("act", mark="rejected")], ACTIONS)
    assert [(s.phase, s.mark) for s in steps] == [("act", "blocked"), ("act", "rejected")]


# -- phase names: none reads as one of the paper's letters ----------------------------------

PAPER_LETTERS = {"N", "R", "P", "V", "S", "G"}  # navigation, reproduction, patch, validation,
# summary; G marks its regression variants (R_G, V_G)


def test_phase_names_cannot_be_read_as_the_papers_letters(tmp_path):
    assert all(len(name) > 1 for name in LABELS) and not PAPER_LETTERS & set(LABELS)
    orders = {k: v.phases for k, v in load_settings(SETTINGS_FILE).items()}
    assert orders["standard"] == ["read", "sense", "plan", "act", "verify"]
    assert all(set(o) <= set(LABELS) for o in orders.values())
    # an old settings file's letters are refused, with their translation
    old = tmp_path / "old.yaml"
    old.write_text("x:\n  steps: [a]\n  order: USPAV\n")
    with pytest.raises(SettingError, match=r"old.yaml: x.order: 'USPAV': .*renamed; write "
                                           r"\[read, sense, plan, act, verify\]"):
        load_settings(old)


# -- plans, narration and one-step plans in real model text ---------------------------------

def _reply(path: str, instance: int) -> str:
    """A model's recorded reply in PlanBench's results (../shared/planbench)."""
    data = json.loads((PLANBENCH / path).read_text())
    return next(i["llm_raw_response"] for i in data["instances"] if i["instance_id"] == instance)


def _actions(domain: str) -> list[str]:
    """The action names of a conformance domain (its PDDL file)."""
    import re

    return re.findall(r"\(:action\s+([\w-]+)", (CONFORMANCE / domain / "domain.pddl").read_text())


def _phases(text: str, actions, acted: bool) -> list[str]:
    """The labels of `text` as the turn before a first act (acted: after one)."""
    turns = ([turn("act", action="(x)")] if acted else []) + [turn("act", text, action="(x)")]
    return [s.phase for s in label([turn("get_task"), *turns], actions)]


MYSTERY_4O = "llm_planning_analysis/results/mystery_blocksworld/gpt-4o_chat/task_1_plan_generation.json"


@needs_shared
def test_narration_of_progress_is_not_a_replan():
    actions = _actions("mystery_blocksworld")
    assert sorted(actions) == ["attack", "feast", "overcome", "succumb"]
    # GPT-4o going back over its steps: "After Step 1 (Attack object d): Pain object d, ..."
    # names three actions, every one as done: a report of progress, not a plan
    verification = next(p for p in _reply(MYSTERY_4O, 188).split("\n\n")
                        if p.startswith("### Verification"))
    assert verification.count("After Step") == 3
    assert _phases(verification, actions, acted=True) == ["read", "act", "act"]
    assert _phases(verification, actions, acted=False) == ["read", "act"]
    # the previous action named as done, and the single next action: narration too
    step = next(p for p in _reply(MYSTERY_4O, 6).split("\n\n")
                if "The previous action (Attack object d)" in p)
    assert step.startswith("2. **Succumb object d**")
    assert _phases(step, actions, acted=True) == ["read", "act", "act"]
    # the brief's shape, and a remaining plan beside it (still a replan)
    assert _phases("Done with (pick-up a); next (stack a b).", ACTIONS, True) == ["read", "act", "act"]
    assert _phases("Done with (pick-up a). Remaining: (stack a b), then (pick-up c).", ACTIONS,
                   True) == ["read", "act", "replan", "act"]


@needs_shared
def test_a_one_step_plan_is_a_plan_and_a_lone_mention_is_not():
    # GPT-4 reusing a plan whose whole remainder is one action (PlanBench t4, instance 31)
    reuse = _reply("plan-bench/results/blocksworld/gpt-4_chat/task_4_plan_reuse.json", 31)
    assert reuse.strip() == "unstack the blue block from on top of the yellow block\n[PLAN END]"
    assert _phases(reuse, ACTIONS, acted=False) == ["read", "plan", "act"]
    assert _phases(reuse, ACTIONS, acted=True) == ["read", "act", "replan", "act"]
    # Llama-3.1-405B: "[PLAN]\novercome object a from object d\n[PLAN END]" ... "The goal is
    # achieved with a single action." (mystery blocksworld, instance 172)
    llama = _reply("llm_planning_analysis/results/mystery_blocksworld/llama-3.1-405b_aws/"
                   "task_1_plan_generation.json", 172)
    assert "[PLAN]\novercome object a from object d\n[PLAN END]" in llama
    assert _phases(llama, _actions("mystery_blocksworld"), acted=False) == ["read", "plan", "act"]
    # a first list item or a stated plan of one step, written by hand the same way
    assert _phases("My plan:\n1. (stack a b)", ACTIONS, True) == ["read", "act", "replan", "act"]
    assert _phases("New plan: (stack a b).", ACTIONS, True) == ["read", "act", "replan", "act"]
    # the action about to be taken, mentioned alone, is no plan
    for lone in ("Now (pick-up a).", "(pick-up a)", "Let me think about (stack a b).",
                 "3. (stack a b)"):
        assert _phases(lone, ACTIONS, True) == ["read", "act", "act"], lone


def test_rows_written_before_the_rename_are_read_with_the_names():
    old = ["U_1", "S_1", "P_1", "A_7", "V_1"]
    assert runs_named(old) == ["read_1", "sense_1", "plan_1", "act_7", "verify_1"]
    assert runs_named(["read_1", "act_2"]) == ["read_1", "act_2"]  # today's rows unchanged
    assert order_names("USPAV") == ["read", "sense", "plan", "act", "verify"]
    assert order_names("read,plan,act") == ["read", "plan", "act"] and order_names("") == []
    from jsonschema import Draft202012Validator, ValidationError

    from planaudit.analysis.collect import default_schema, load_schema
    from planaudit.analysis.compliance import compliance_rows

    props = load_schema(default_schema())["properties"]
    for column, value in (("phases", old), ("phases", runs_named(old)), ("plan_order", "USPAV"),
                          ("plan_order", "read,sense,plan,act,verify")):
        Draft202012Validator(props[column]).validate(value)
    with pytest.raises(ValidationError):
        Draft202012Validator(props["phases"]).validate(["P_1", "patch_1"])
    rows = pl.DataFrame({"regime": ["online"] * 2, "model": ["m"] * 2, "reference": [False] * 2,
                         "outcome": ["success"] * 2, "plan_setting": ["standard"] * 2,
                         "plan_order": ["USPAV", "read,sense,plan,act,verify"],
                         "phases": [old, runs_named(old)], "ppc": [1.0] * 2, "poc": [1.0] * 2,
                         "ppf": [1.0] * 2, "pc": [1.0] * 2, "strict_compliance": [True] * 2,
                         "nodes": [9] * 2, "temporal_edges": [8] * 2, "loops": [0] * 2})
    read = compliance_rows(rows)
    assert read["phases"].to_list() == [runs_named(old)] * 2
    assert read["plan_order"].to_list() == ["read,sense,plan,act,verify"] * 2


# -- trajectory graphs -------------------------------------------------------------------

def test_graph_counts_nodes_edges_and_loops():
    calls = [("get_task", {}), ("act", {"action": "(Stack A B)"}), ("act", {"action": "stack a b"}),
             ("query_state", {"predicate": "On"}), ("act", {"action": "(stack a b)"})]
    g = trajectory_graph(calls)
    # act (stack a b) is one node however written; its self-loop and the cycle via query_state
    assert (g.nodes, g.temporal_edges, g.loops, g.bounded) == (3, 4, 2, False)
    assert trajectory_graph([]).nodes == 0 and trajectory_graph([("get_task", {})]).loops == 0


def test_graph_cycle_count_is_bounded_and_says_so():
    # a complete digraph on 8 nodes has far more than 50 simple cycles
    names = [f"(a o{i})" for i in range(8)]
    seq = []
    for i in range(8):
        for j in range(8):
            seq += [names[i], names[j]]
    g = trajectory_graph([("act", {"action": a}) for a in seq], max_loops=50)
    assert g.loops == 50 and g.bounded


# -- settings ------------------------------------------------------------------------------

def test_settings_file_holds_the_seven_settings_and_configs_name_them():
    s = load_settings(SETTINGS_FILE)
    assert {k: v.order for k, v in s.items()} == {
        "none": "", "standard": "read,sense,plan,act,verify", "no-sense": "read,plan,act,verify",
        "no-verify": "read,sense,plan,act", "summary": "read,sense,plan,act,verify,summary",
        "reordered": "read,plan,sense,act,verify", "reminded": "read,sense,plan,act,verify"}
    assert s["reminded"].remind_every == 5 and s["standard"].workflow().startswith("Follow")
    default = load_config(base=ROOT / "config" / "config.yaml")
    assert set(default["online"]["plan_settings"]) >= {"standard", "none"}
    paper = load_config(ROOT / "config" / "paper.yaml", base=ROOT / "config" / "config.yaml")
    assert set(paper["online"]["plan_settings"]) == set(s)


def test_a_bad_settings_file_is_named(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("x:\n  steps: [a]\n  order: UQ\n")
    with pytest.raises(SettingError, match=r"s.yaml: x.order: 'UQ'"):
        load_settings(bad)


# -- episodes: the reference agents under every setting -------------------------------------

@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("suite"))
    return {name: task_dir(name, root) for name in (TASK, UNSOLVABLE)}


def episode(model, method, folder, name, tmp, setting=None, api_base=None, **kw):
    params = {}
    if setting and setting != "none":
        params["plan_setting"] = load_settings(SETTINGS_FILE)[setting].to_json()
    client = Client(ModelConfig(model, model, api_base=api_base, max_retries=1),
                    Cache(tmp / "cache"))
    return asyncio.run(run_episode(client, method, params, folder, task_name=name, **kw))


ORDERED = ["standard", "no-sense", "no-verify", "summary", "reordered", "reminded"]


@pytest.mark.parametrize("method", ["react", "critic", "gated", "reflexion"])
@pytest.mark.parametrize("setting", ORDERED)
def test_oracle_follows_every_workflow_exactly(method, setting, folders, tmp_path):
    row, _ = episode("reference/oracle", method, folders[TASK], TASK, tmp_path, setting)
    assert row["outcome"] == "success" and row["plan_setting"] == setting
    assert row["pc"] == 1.0 and row["strict_compliance"] is True
    order = load_settings(SETTINGS_FILE)[setting].phases
    assert [p.rsplit("_", 1)[0] for p in row["phases"]] == order


@pytest.mark.parametrize("setting", ORDERED)
def test_flawed_agent_never_senses_and_complies_less(setting, folders, tmp_path):
    meta = {"faults": {}, "seed": 0}
    flawed, _ = episode("reference/flawed", "react", folders[TASK], TASK, tmp_path, setting,
                        reference_meta=meta)
    oracle, _ = episode("reference/oracle", "react", folders[TASK], TASK, tmp_path, setting)
    assert flawed["outcome"] == "success" and flawed["phases"][0] == "read_1"
    assert flawed["ppc"] < oracle["ppc"] and flawed["poc"] < oracle["poc"]
    assert flawed["pc"] < 1 and not flawed["strict_compliance"]


def test_without_a_setting_the_prompt_and_cache_key_are_unchanged(folders, tmp_path):
    row, transcript = episode("reference/oracle", "react", folders[TASK], TASK, tmp_path)
    assert row["plan_setting"] == "none" and row["pc"] is None and row["strict_compliance"] is None
    assert row["phases"][:2] == ["read_1", "sense_1"] and row["epoch"] == 0
    first = transcript[0]
    assert "workflow" not in first["messages"][0]["content"]
    assert "plan_setting" not in json.dumps(first["messages"])


def test_reminded_puts_the_workflow_before_every_kth_observation(folders, tmp_path):
    _, transcript = episode("reference/oracle", "react", folders[TASK], TASK, tmp_path, "reminded")
    last = [t for t in transcript if "messages" in t][-1]["messages"]
    tools = [m["content"] for m in last if m["role"] == "tool"]
    reminded = [i for i, c in enumerate(tools, 1) if c.startswith("Reminder (your workflow)")]
    assert reminded and all(i % 5 == 0 for i in reminded)
    assert "Follow this workflow" in last[0]["content"]


def test_repeats_are_distinct_samples(folders, tmp_path):
    meta = {"faults": {"drop_action": 0.5, "swap_adjacent": 0.5}, "seed": 0}
    plans = set()
    for epoch in range(4):
        row, tr = episode("reference/flawed", "react", folders[TASK], TASK, tmp_path,
                          reference_meta=meta, epoch=epoch)
        assert row["epoch"] == epoch
        plans.add(tuple(tr[-1]["applied"]))
    assert len(plans) > 1


# -- transcripts of a scripted server: the labels a reader would give -----------------------

def _plan(folder) -> list[str]:
    return json.loads((folder / "truth.json").read_text())["plan"]


def scripted(script, folders, tmp_path, monkeypatch, setting="standard"):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(script) as srv:
        row, _ = episode("openai/test", "react", folders[TASK], TASK, tmp_path, setting,
                         api_base=srv.api_base)
        prompt = srv.requests[0]["messages"][0]["content"]
    return row, prompt


def numbered(steps):
    return "My plan:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))


def test_scripted_agent_that_follows_the_workflow(folders, tmp_path, monkeypatch):
    plan = _plan(folders[TASK])
    script = [tool_call("get_task", call_id="c1"), tool_call("query_state", call_id="c2"),
              tool_call("act", {"action": plan[0]}, "c3", text=numbered(plan)),
              *[tool_call("act", {"action": a}, f"d{i}") for i, a in enumerate(plan[1:])],
              tool_call("query_state", call_id="c4"), tool_call("submit", call_id="c5")]
    row, prompt = scripted(script, folders, tmp_path, monkeypatch)
    assert "1. Read the task with get_task." in prompt  # the workflow is in the prompt
    assert row["phases"] == ["read_1", "sense_1", "plan_1", f"act_{len(plan)}", "verify_1"]
    assert row["pc"] == 1.0 and row["plan_order"] == "read,sense,plan,act,verify"


def test_scripted_agent_that_skips_sensing(folders, tmp_path, monkeypatch):
    plan = _plan(folders[TASK])
    script = [tool_call("get_task", call_id="c1"),
              *[tool_call("act", {"action": a}, f"d{i}", text=numbered(plan) if i == 0 else "")
                for i, a in enumerate(plan)], tool_call("submit", call_id="c5")]
    row, _ = scripted(script, folders, tmp_path, monkeypatch)
    assert row["phases"] == ["read_1", "plan_1", f"act_{len(plan)}"]
    assert row["ppc"] == 3 / 5 and row["poc"] == 3 / 5 and row["ppf"] == 1.0


def test_scripted_agent_that_replans_rereads_and_summarises(folders, tmp_path, monkeypatch):
    plan = _plan(folders[TASK])
    summary = ("I read the task, looked at the state, executed the first action, read the "
               "task again, replanned and executed the rest before checking the goal holds.")
    script = [tool_call("get_task", call_id="c1"), tool_call("query_state", call_id="c2"),
              tool_call("act", {"action": plan[0]}, "c3", text=numbered(plan)),
              tool_call("get_task", call_id="c4"),
              tool_call("act", {"action": plan[1]}, "c5", text="New plan:\n" + "\n".join(plan[1:])),
              *[tool_call("act", {"action": a}, f"d{i}") for i, a in enumerate(plan[2:])],
              tool_call("query_state", call_id="c6"),
              tool_call("submit", call_id="c7", text=summary)]
    row, _ = scripted(script, folders, tmp_path, monkeypatch, setting="summary")
    assert row["phases"] == ["read_1", "sense_1", "plan_1", "act_1", "reread_1", "replan_1",
                             f"act_{len(plan) - 1}", "verify_1", "summary_1"]
    assert row["ppc"] == 1.0 and row["ppf"] == 6 / 8 and not row["strict_compliance"]


def test_scripted_agent_without_a_workflow_is_labelled_not_scored(folders, tmp_path, monkeypatch):
    script = [reply("Let me think."), tool_call("get_task", call_id="c1"),
              tool_call("act", {"action": "(bogus x)"}, "c2"), tool_call("declare_unsolvable")]
    row, prompt = scripted(script, folders, tmp_path, monkeypatch, setting="none")
    assert "workflow" not in prompt
    assert row["phases"] == ["read_1", "act_1"] and row["pc"] is None and row["nodes"] == 3


# -- external sequences ----------------------------------------------------------------------

def test_compliance_score_reproduces_the_worked_examples(tmp_path, capsys):
    f = tmp_path / "seq.json"
    f.write_text(json.dumps([
        {"instance_id": "a", "resolution_status": "resolved",
         "languatory": ["N_1", "R_2", "P_1", "V_3", "P_1", "V_1"]},
        {"instance_id": "b", "resolution_status": "unresolved",
         "languatory": ["R_navigate_4", "N_3", "P_2", "V_2"]},
        {"instance_id": "c", "resolution_status": "unresolved",
         "languatory": ["N_search_2", "N_1", "P_1"]}]))
    assert main(["compliance", "score", str(f), "--expected", "N,R,P,V", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    got = {s["instance_id"]: (round(s["ppc"], 3), round(s["poc"], 3), round(s["ppf"], 3),
                              round(s["pc"], 3), s["strict"]) for s in out["sequences"]}
    assert got == {"a": WORKED[0][1], "b": WORKED[1][1], "c": WORKED[2][1]}
    assert out["means"]["unresolved"]["n"] == 2
    assert out["means"]["unresolved"]["pc"] == pytest.approx((0.9086 + 0.63) / 2, abs=1e-3)
    assert main(["compliance", "score", str(f), "--expected", "N,R,P,V"]) == 0
    assert "resolved" in capsys.readouterr().out


@pytest.mark.parametrize("content,expected,message", [
    ("not json", "N,R", "not JSON"),
    ('[{"instance_id": 1, "languatory": []}]', "N,R", "item 0: missing field 'resolution_status'"),
    ('[{"instance_id": 1, "resolution_status": "x", "languatory": "N_1"}]', "N,R",
     "field 'languatory' must be a list"),
    ("[]", "N,,R", "--expected"),
    ("[]", "N,N", "named twice"),
])
def test_compliance_score_names_bad_input(content, expected, message, tmp_path, capsys):
    f = tmp_path / "seq.json"
    f.write_text(content)
    assert main(["compliance", "score", str(f), "--expected", expected]) == 2
    err = capsys.readouterr().err
    assert message in err and (expected.count(",") != 1 or "seq.json" in err or "--expected" in err)


# -- analysis ----------------------------------------------------------------------------------

def _rows(folders, tmp_path) -> pl.DataFrame:
    rows = []
    for model, meta in (("reference/oracle", None),
                        ("reference/flawed", {"faults": {"drop_action": 0.5}, "seed": 0})):
        for setting in ("standard", "none", "no-sense"):
            for epoch in (0, 1):
                for name in (TASK, UNSOLVABLE):
                    row, _ = episode(model, "react", folders[name], name, tmp_path, setting,
                                     reference_meta=meta, epoch=epoch)
                    rows.append({**row, "model": model.split("/")[1]})
    return pl.DataFrame(rows, infer_schema_length=None)


def test_tables_and_phase_flow_figure_from_episodes(folders, tmp_path):
    from planaudit.analysis.figures import draw
    from planaudit.analysis.tables import build_tables

    ep = _rows(folders, tmp_path)
    tables = build_tables(ep, n_resamples=200)
    comp = tables["compliance"]
    oracle_std = comp.filter((pl.col("plan_setting") == "standard") & (pl.col("episodes") == "success")
                             & pl.col("model").str.starts_with("oracle"))
    assert oracle_std["pc"][0] == 1.0 and oracle_std["strict"][0] == 1.0
    assert comp.filter(pl.col("plan_setting") == "none")["pc"].null_count() == comp.filter(
        pl.col("plan_setting") == "none").height
    settings = tables["settings"]
    assert set(settings["plan_setting"]) == {"none", "no-sense"}
    assert settings["p_adj"].is_not_null().all()
    det = tables["determinism"]
    assert (det["epochs"] == 2).all()
    assert det.filter(pl.col("model").str.starts_with("oracle"))["deterministic"].to_list() == [2] * 3
    assert set(tables["main"]["method"]) == {"react", "react+standard", "react+no-sense"}
    assert tables["compliance_tests"].height == 2
    fig = draw("phase_flow", ep)
    assert len([a for a in fig.axes if a.get_visible()]) == 6


def test_compliance_does_not_import_litellm():
    code = ("import sys; import planaudit.compliance.assess, planaudit.compliance.external, "
            "planaudit.compliance.settings, planaudit.analysis.compliance; "
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_oracle_on_an_unsolvable_task_reads_senses_and_declares(folders, tmp_path):
    row, _ = episode("reference/oracle", "react", folders[UNSOLVABLE], UNSOLVABLE, tmp_path,
                     "standard")
    assert row["outcome"] == "detected" and row["phases"] == ["read_1", "sense_1"]
    assert row["ppc"] == 2 / 5 and not row["strict_compliance"]  # no plan to write or run


def test_a_shard_runs_its_setting_every_epoch(folders, tmp_path):
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard

    config = {"models": [{"name": "oracle", "model": "reference/oracle"}],
              "cache": str(tmp_path / "cache"),
              "online": {"methods": ["react"], "plan_settings": ["standard"], "epochs": 2,
                         "plan_settings_file": str(SETTINGS_FILE)}}
    suite = folders[TASK].parent.parent
    exp = Experiment.from_dict(config)
    frames = run_shard(exp, exp.model("oracle"), exp.method("online", "react", "standard"),
                       "blocksworld", suite, tmp_path / "out" / "{domain}.parquet",
                       tmp_path / "t" / "{domain}")
    rows = frames["blocksworld"].sort("task", "epoch")
    assert rows.select("task", "epoch").rows() == [("p04", 0), ("p04", 1), ("p09", 0), ("p09", 1)]
    assert set(rows["plan_setting"]) == {"standard"} and rows["pc"][0] == 1.0
    assert sorted(p.name for p in (tmp_path / "t" / "blocksworld").iterdir()) == [
        "p04.e1.jsonl", "p04.jsonl", "p09.e1.jsonl", "p09.jsonl"]
