"""PlanBench replay on disguised domains (t3, t7 read back through the predicate
templates when a config has no `predicate_mapping`) and results files with
instances that carry no response or no recorded verdict.

No PlanBench results file for t3/t7 on a disguised domain is in ../shared, so the
mystery files are built here from GPT-4's real Blocksworld t3/t7 answers: every
Blocksworld action and fact phrase rewritten as Mystery Blocksworld's (the
correspondence the mystery config's own comments give: pick-up/attack,
put-down/succumb, stack/overcome, unstack/feast; ontable/planet, clear/province,
handempty/harmony, holding/pain, on/craves), objects by `encoded_objects`, the
recorded verdicts kept. Nothing is copied into the project: the files live in a
tmp root whose configs/ and instances/ link to ../shared.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.test_planbench import SHARED, needs_shared

PB = SHARED / "plan-bench"
BW = PB / "results" / "blocksworld" / "gpt-4_chat"
STEMS = ("task_3_plan_verification", "task_7_plan_execution")
ACTIONS = {"pick-up": "attack", "put-down": "succumb", "stack": "overcome", "unstack": "feast"}
PREDICATES = {"ontable": "planet", "clear": "province", "handempty": "harmony", "holding": "pain",
              "on": "craves"}


class Encoder:
    """Blocksworld text rewritten in Mystery Blocksworld's words, mechanically:
    (1) whole action and fact templates, an object written "(the) red (block)";
    (2) the remaining Blocksworld action phrases and `predicate_mapping` phrases, as
    the mystery action and predicate words; (3) every remaining colour as its object."""

    def __init__(self, root: Path, suffix: str = ""):
        import yaml

        bw = yaml.safe_load((root / "configs" / f"blocksworld{suffix}.yaml").read_text())
        my = yaml.safe_load((root / "configs" / f"mystery_blocksworld{suffix}.yaml").read_text())
        self.intro = (bw["domain_intro"], my["domain_intro"])
        colour = {v.split()[0]: k for k, v in bw["encoded_objects"].items()}
        self.names = {c: my["encoded_objects"][k] for c, k in colour.items()}
        obj = r"(?:the )?(" + "|".join(colour) + r")(?: block)?"
        rules = []
        for table, mine, names in ((bw["actions"], my["actions"], ACTIONS),
                                   (bw["predicates"], my["predicates"], PREDICATES)):
            for name, template in table.items():
                pattern = re.escape(template.lower().replace("the {}", "{}")).replace(r"\{\}", obj)
                rules.append((len(template), re.compile(r"\b" + pattern + r"\b", re.I),
                              mine[names[name]]))
        self.templates = [(p, t) for _, p, t in sorted(rules, key=lambda r: -r[0])]
        words = {**{k.replace("-", " "): v for k, v in ACTIONS.items()},
                 **{bw["predicate_mapping"][k]: v for k, v in PREDICATES.items()}}
        self.words = [(re.compile(r"\b" + re.escape(w) + r"\b", re.I), v)
                      for w, v in sorted(words.items(), key=lambda kv: -len(kv[0]))]
        self.colours = re.compile(r"\b(?:the )?(" + "|".join(colour) + r")(?: blocks?)?\b", re.I)

    def __call__(self, text: str) -> str:
        bw_intro, my_intro = self.intro
        if text.startswith(bw_intro):
            text = my_intro + text[len(bw_intro):]
        for pattern, template in self.templates:
            text = pattern.sub(lambda m, t=template: t.format(
                *(self.names[c.lower()] for c in m.groups())), text)
        for pattern, word in self.words:
            text = pattern.sub(word, text)
        return self.colours.sub(lambda m: self.names[m.group(1).lower()], text)


@pytest.fixture(scope="module")
def mystery_root(tmp_path_factory):
    """A root laid out as PlanBench lays it out, its configs/ and instances/ linked to
    ../shared, with the re-encoded GPT-4 t3 and t7 files (Blocksworld and its
    three-block variant) under results/mystery_blocksworld{,_3}/gpt-4_chat/."""
    root = tmp_path_factory.mktemp("mystery") / "plan-bench"
    (root / "results").mkdir(parents=True)
    (root / "configs").symlink_to(PB / "configs")
    (root / "instances").symlink_to(PB / "instances")
    for suffix in ("", "_3"):
        enc = Encoder(PB, suffix)
        out = root / "results" / f"mystery_blocksworld{suffix}" / "gpt-4_chat"
        out.mkdir(parents=True)
        for stem in STEMS:
            data = json.loads((_original(suffix, stem)).read_text())
            data["domain"] = f"mystery_blocksworld{suffix}"
            for inst in data["instances"]:
                for key in ("query", "llm_raw_response", "ground_truth_plan"):
                    if isinstance(inst.get(key), str):
                        inst[key] = enc(inst[key])
            (out / f"{stem}.json").write_text(json.dumps(data))
    return root


def _original(suffix: str, stem: str) -> Path:
    return PB / "results" / f"blocksworld{suffix}" / "gpt-4_chat" / f"{stem}.json"


@needs_shared
def test_the_encoder_writes_mystery_prompts():
    """The re-encoded queries read as PlanBench's own mystery queries do: the same
    intro, facts and actions in the mystery config's templates, no Blocksworld word."""
    enc = Encoder(PB)
    real = json.loads((SHARED / "llm_planning_analysis/results/mystery_blocksworld/gpt-4_chat/"
                       "task_1_plan_generation.json").read_text())["instances"][0]["query"]
    t7 = json.loads((BW / "task_7_plan_execution.json").read_text())["instances"][0]
    ours = enc(t7["query"])
    assert ours.split("[STATEMENT]")[0] == real.split("[STATEMENT]")[0]
    assert "feast object d from object c\n[ACTION SEQUENCE END]" in ours
    assert "province object a" in ours and "object b craves object c" in ours
    assert not re.search(r"\b(block|red|table|clear|hand)\b", ours.split("[STATEMENT]", 1)[1])
    assert enc("the hand is holding the yellow block") == "the hand is pain object d"
    assert enc(t7["llm_raw_response"]).startswith(
        "province object a, object d is being held, province object b, pain object d, "
        "object a craves object b")


def _verdicts(path: Path, dialect: str) -> list[tuple]:
    from planaudit.planbench.replay import Context, load_results, score_instance

    ctx = Context(load_results(path))
    return [(o.instance_id, o.correct, tuple(sorted(o.scores.items())))
            for o in (score_instance(ctx, i, dialect) for i in ctx.res.instances)]


@needs_shared
@pytest.mark.parametrize("suffix", ["", "_3"])
@pytest.mark.parametrize("stem", STEMS)
def test_mystery_t3_t7_replay_as_the_blocksworld_originals(mystery_root, stem, suffix):
    """Defect: a disguised config has no `predicate_mapping`, and every answer was
    refused as unreadable and counted wrong. Read through the predicate templates,
    the re-encoded answers get the verdicts the Blocksworld originals get, instance
    by instance (t3: all three scores)."""
    from planaudit.planbench.replay import replay

    mine = mystery_root / "results" / f"mystery_blocksworld{suffix}" / "gpt-4_chat" / f"{stem}.json"
    original = _original(suffix, stem)
    bw, my = replay(original), replay(mine)
    assert my["domain"] == f"mystery_blocksworld{suffix}" and not my["unreadable"]
    assert (my["scored"], my["correct"], my["agree"]) == (bw["scored"], bw["correct"], bw["agree"])
    assert my["agree"] == (500 if suffix == "" else 100)
    for dialect in [d for d in bw["dialects"] if d != "strict"]:
        ours, theirs = _verdicts(mine, dialect), _verdicts(original, dialect)
        differ = [(a[0], dict(a[2]), dict(b[2])) for a, b in zip(ours, theirs, strict=True) if a != b]
        if stem.startswith("task_7") or suffix:
            assert not differ, dialect
            continue
        # t3 instance 80 states its unmet goal as an action, "stack the red block on top
        # of the orange block": Blocksworld's action wording holds the fact phrase "on top
        # of", so it reads as the true unmet fact; "overcome object a from object c" holds
        # no fact phrase (mystery's action and fact words differ). Only w_expl changes.
        assert [(i, {k for k in a if a[k] != b[k]}) for i, a, b in differ] == [(80, {"w_expl"})]
    if stem.startswith("task_3"):
        assert (my["correct_binary"], my["correct_w_type"], my["correct_w_expl"]) == (
            bw["correct_binary"], bw["correct_w_type"], bw["correct_w_expl"] - (suffix == ""))
    # `strict` takes only exact template phrases; the re-encoding writes paraphrases
    # ("the hand is holding the yellow block") as the mystery template ("pain object d"),
    # so strict finds more answers exact on the mystery side, never fewer
    assert my["dialects"]["strict"]["correct"] >= bw["dialects"]["strict"]["correct"]


@needs_shared
def test_random_blocksworld_reads_states_by_its_templates():
    """random_blocksworld (no `predicate_mapping`, random predicate words) reads a state
    rendered with its own templates back exactly."""
    from planaudit.planbench.execution import read_state_2023
    from planaudit.planbench.language import facts_text
    from planaudit.planbench.material import load_config

    cfg = load_config(PB, "random_blocksworld")
    state = [("on", ("a", "b")), ("on", ("c", "a")), ("clear", ("c",)), ("ontable", ("b",)),
             ("holding", ("d",))]
    text = facts_text(cfg, state)
    assert "object c 4dmf1cmtyxgsp94g object a" in text
    assert sorted(read_state_2023(cfg, text, split_and=True)) == sorted(state)


@needs_shared
@pytest.mark.parametrize("config", ["mystery_blocksworld", "random_blocksworld"])
def test_generated_disguised_cases_score_in_planbench_readings(config):
    """Generated t3/t7 cases on a disguised config: the oracle's answer (the config's own
    phrases) is right in PlanBench's readings too, as on Blocksworld; t7's `2023` splits
    on commas only, so the fact joined by " and " is lost there, as on Blocksworld."""
    from planaudit.planbench.generate import cases, oracle_answer, score

    for test, dialect in (("t3", "2023"), ("t7", "published"), ("t7", "2023")):
        for case in cases(PB, config, test, 6, planner="formal"):
            verdict = score(case, oracle_answer(case), dialect)
            assert verdict.outcome != "unreadable", verdict
            assert verdict.correct == (dialect != "2023" or test == "t3"), (case.instance, verdict)


def _tiny_root(tmp_path: Path, config: str) -> Path:
    from tests.test_planbench import DOMAIN, PROBLEM

    root = tmp_path / "root"
    (root / "configs").mkdir(parents=True)
    (root / "instances" / "bw" / "basic").mkdir(parents=True)
    (root / "instances" / "bw" / "domain.pddl").write_text(DOMAIN)
    (root / "instances" / "bw" / "basic" / "instance-1.pddl").write_text(PROBLEM)
    (root / "configs" / "bw.yaml").write_text(config)
    return root


def test_a_phrase_inside_another_is_tried_after_it(tmp_path):
    """Templates in the config's order, except that a phrase another one holds ("is on"
    of `{} is on {}`, inside "is on the table") is tried after the rest: otherwise every
    "on the table" fact would read as an `on` fact without its second object, dropped."""
    from planaudit.planbench.execution import fact_phrases, read_state_2023
    from planaudit.planbench.material import load_config
    from tests.test_planbench import CONFIG

    cfg = re.sub(r"predicates: \{.*?\}\n", 'predicates: {"on": "{} is on {}", ontable: "{} is on the '
                 'table", clear: "{} is clear", handempty: "the hand is empty", holding: "the hand '
                 'holds {}"}\n', CONFIG, flags=re.S)
    cfg = load_config(_tiny_root(tmp_path, cfg), "bw")
    assert [p.pred for p in fact_phrases(cfg)] == ["ontable", "clear", "handempty", "holding", "on"]
    said = read_state_2023(cfg, "blue block is on the table, red block is on blue block, red block "
                                "is clear, the hand is empty", split_and=True)
    assert said == [("ontable", ("b",)), ("on", ("a", "b")), ("clear", ("a",)), ("handempty", ())]


def test_a_config_that_cannot_read_states_is_an_error_naming_file_and_field(tmp_path):
    """Only a config that truly lacks what reading needs gets an error, and it is the
    file's error (exit 2), not every answer counted wrong."""
    from planaudit.planbench.replay import ResultsError, replay
    from tests.test_planbench import CONFIG

    # three templates are a bare placeholder: no words to find their facts by
    root = _tiny_root(tmp_path, re.sub(r'(ontable|clear|holding): "[^"]*"', r'\1: "{}"', CONFIG))
    query = ("Blocks.\n\n[STATEMENT]\nAs initial conditions I have that, the hand is empty.\n"
             " I have executed the following action sequence:\n\n[ACTION SEQUENCE]\n"
             "[ACTION SEQUENCE END]\n[RESULTING STATE]\n")
    out = root / "results" / "bw" / "m"
    out.mkdir(parents=True)
    path = out / "task_7_plan_execution.json"
    path.write_text(json.dumps({"task": "task_7_plan_execution", "instances": [
        {"instance_id": 1, "query": query, "llm_raw_response": "the hand is empty",
         "llm_correct": True}]}))
    with pytest.raises(ResultsError, match=r"task_7_plan_execution\.json: .*bw\.yaml: field "
                                           r"'predicates': the template for '(ontable|clear)'"):
        replay(path)


@needs_shared
def test_logistics_objects_by_template_are_the_files_error(copy_root):
    """Logistics names objects by template (`package_{}`): reading its states needs each
    instance's own objects, which replay does not build; the file is refused, naming
    the field, rather than every answer counted wrong."""
    from planaudit.planbench.replay import ResultsError, replay

    out = copy_root / "results" / "logistics" / "gpt-4_chat"
    out.mkdir(parents=True)
    path = out / "task_7_plan_execution.json"
    path.write_text(json.dumps({"task": "task_7_plan_execution", "instances": [
        {"instance_id": 1, "query": "[STATEMENT]\n", "llm_raw_response": "truck_0 is at location_0_0",
         "llm_correct": False}]}))
    with pytest.raises(ResultsError, match=r"task_7_plan_execution\.json: .*logistics\.yaml: field "
                                           r"'encoded_objects' names objects by template"):
        replay(path)


# -- instances without a response or a verdict ---------------------------------------------

def _strip(src: Path, dst: Path, keep: int | None = None, drop_verdicts=()) -> dict:
    data = json.loads(src.read_text())
    for n, inst in enumerate(data["instances"]):
        if keep is not None and n != keep:
            if n % 2:
                del inst["llm_raw_response"]
            else:
                inst["llm_raw_response"] = None
            for key in [k for k in inst if k.startswith("llm_correct") or k == "extracted_llm_plan"]:
                del inst[key]
        if n in drop_verdicts:
            for key in [k for k in inst if k.startswith("llm_correct")]:
                del inst[key]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(data))
    return data


@pytest.fixture
def copy_root(tmp_path):
    root = tmp_path / "plan-bench"
    (root / "results" / "blocksworld" / "gpt-4_chat").mkdir(parents=True)
    (root / "configs").symlink_to(PB / "configs")
    (root / "instances").symlink_to(PB / "instances")
    return root


@needs_shared
@pytest.mark.parametrize("stem", ["task_1_plan_generation", "task_7_plan_execution",
                                  "task_3_plan_verification"])
def test_a_partial_run_scores_only_the_instances_with_a_response(copy_root, stem):
    """Defect: responses missing for 499 of 500 instances reported `scored 500, agree 1`.
    Instances without a response (field missing or null) are counted apart, not scored."""
    from planaudit.planbench.replay import replay

    path = copy_root / "results" / "blocksworld" / "gpt-4_chat" / f"{stem}.json"
    data = _strip(BW / f"{stem}.json", path, keep=3)
    s = replay(path)
    kept = data["instances"][3]
    assert (s["instances"], s["scored"]) == (500, 1)
    assert (s["no_response"], s["no_verdict"]) == (499, 0)
    assert s["agree"] == 1 and not s["unreadable"] and not s["disagreements"]
    key = "llm_correct_binary" if stem.startswith("task_3") else "llm_correct"
    assert s["correct"] == s["recorded_correct"] == int(kept[key])
    assert all(d["scored"] == 1 for d in s["dialects"].values())


@needs_shared
def test_instances_without_a_verdict_are_counted_apart(copy_root, capsys):
    """Responses whose verdict fields were deleted are neither scored nor disagreements;
    the text report and --json say how many."""
    from planaudit.cli import main
    from planaudit.planbench.replay import replay

    stem = "task_7_plan_execution"
    full = replay(BW / f"{stem}.json")
    path = copy_root / "results" / "blocksworld" / "gpt-4_chat" / f"{stem}.json"
    gone = range(0, 500, 5)
    data = _strip(BW / f"{stem}.json", path, drop_verdicts=gone)
    s = replay(path)
    assert s["scored"] == 400 == s["dialects"]["2023"]["scored"]
    assert (s["no_response"], s["no_verdict"]) == (0, 100)
    kept = [i for n, i in enumerate(data["instances"]) if n not in gone]
    assert s["recorded_correct"] == sum(i["llm_correct"] for i in kept)
    assert s["agree"] == 400 and not s["disagreements"]
    assert s["correct"] < full["correct"]
    assert main(["planbench", "replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "400 scored of 500" in out and "100 without a recorded verdict" in out
    assert main(["planbench", "replay", str(path), "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert (js["scored"], js["no_response"], js["no_verdict"]) == (400, 0, 100)
