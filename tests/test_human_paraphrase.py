"""People's phase-1 plans read as people write them: the phrases declared beside the
domain (`paraphrases:` in nl.yaml), numbering, fillers, one-letter typos, "it", several
steps on a line; a line that cannot be read is marked on its own and the other lines keep
their steps; an ambiguous line is unreadable, never guessed. Over the texts of
tests/data/phase1_texts.yaml (written by hand, as people write) at least 90% of the steps
read right."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planaudit.contract import parse_action
from planaudit.formal.ground import Task
from planaudit.formal.load import domain_at, load_task
from planaudit.formal.syntax import Problem
from planaudit.human.paraphrase import (
    ParaphraseError,
    compile_patterns,
    declared,
    for_domain,
    within_one,
)
from planaudit.human.reading import read_text
from planaudit.paths import DOMAINS

ROOT = Path(__file__).resolve().parents[1]
PLANBENCH = ROOT.parent / "shared" / "planbench" / "plan-bench"
TEXTS = yaml.safe_load((ROOT / "tests/data/phase1_texts.yaml").read_text())["texts"]
HAS_PLANBENCH = (PLANBENCH / "configs" / "blocksworld.yaml").is_file()
needs_planbench = pytest.mark.skipif(not HAS_PLANBENCH, reason="PlanBench's material is not in ../shared")


def suite_task(name: str):
    domain, task = name.split("/")
    return load_task(DOMAINS / domain / "domain.pddl", DOMAINS / domain / "problems" / f"{task}.pddl")


P02 = suite_task("blocksworld/p02")


def steps(text: str, task=P02, planbench=None, paraphrases=None) -> list[str]:
    got = read_text(text, task, planbench, paraphrases)
    return [f"({a} {' '.join(args)})" for a, args in got.steps]


def where(entry: dict):
    """(task, PlanBench config or None) of a text of the data file."""
    key = entry["task"]
    if key.startswith("planbench:"):
        from planaudit.planbench.material import load_config

        config, _, n = key.removeprefix("planbench:").partition("/")
        cfg = load_config(PLANBENCH, config)
        return cfg.task(int(n)), cfg
    return suite_task(key), None


def test_the_data_file_holds_enough_texts_of_each_kind():
    ids = [t["id"] for t in TEXTS]
    assert len(ids) == len(set(ids)) and len(ids) >= 60
    assert sum(not t["task"].startswith("planbench:") for t in TEXTS) >= 40
    assert sum(t["task"].startswith("planbench:") for t in TEXTS) >= 20
    for t in TEXTS:  # expected steps in the contract's form
        assert all(parse_action(s, None) for s in t["steps"]), t["id"]


def test_at_least_90_percent_of_steps_read_right(capsys):
    """A step is right when the step read at its position is the expected one; a text
    counts max(expected, read) positions, so a step read that is not there costs too."""
    right = total = 0
    wrong = []
    for entry in TEXTS:
        if entry["task"].startswith("planbench:") and not HAS_PLANBENCH:
            continue
        task, cfg = where(entry)
        got = steps(entry["text"], task, cfg)
        want = [f"({a} {' '.join(args)})" for a, args in (parse_action(s, None) for s in entry["steps"])]
        hits = sum(g == w for g, w in zip(got, want, strict=False))
        right += hits
        total += max(len(got), len(want))
        if hits < max(len(got), len(want)):
            wrong.append(f"{entry['id']}: {hits}/{max(len(got), len(want))}")
    share = right / total
    with capsys.disabled():
        print(f"\nphase-1 texts: {right}/{total} steps read right ({share:.1%}); "
              f"short: {', '.join(wrong) or 'none'}")
    assert share >= 0.90, wrong


@needs_planbench
def test_every_planbench_text_is_checked():
    assert sum(t["task"].startswith("planbench:") for t in TEXTS) >= 20


def test_every_builtin_nl_yaml_declares_usable_paraphrases():
    with_them = []
    for folder in sorted(p for p in DOMAINS.iterdir() if (p / "nl.yaml").is_file()):
        found = declared(folder / "nl.yaml")
        compile_patterns(found, domain_at(folder / "domain.pddl"), str(folder / "nl.yaml"))
        with_them += [folder.name] if found else []
    assert {"blocksworld", "gripper", "logistics"} <= set(with_them)


def test_a_bad_paraphrase_names_its_action_and_pattern():
    domain = P02.domain
    with pytest.raises(ParaphraseError, match=r"stack: 'put \{0\} on top'.*each of \{0\}..\{1\}"):
        compile_patterns({"stack": ["put {0} on top"]}, domain, "x.yaml")
    with pytest.raises(ParaphraseError, match="'fly' is not an action"):
        compile_patterns({"fly": ["fly {0}"]}, domain, "x.yaml")


def test_numbering_fillers_case_and_punctuation():
    text = ("ok so first I'll take C off of A.\n2) Then put it on the table!\n- next: Pick B up\n"
            "* and finally put block B onto block C\nStep 5: grab A\n6. place a on top of b")
    assert steps(text) == ["(unstack c a)", "(put-down c)", "(pick-up b)", "(stack b c)",
                           "(pick-up a)", "(stack a b)"]


def test_the_longer_pattern_wins():
    # "put {0} on {1}" would need an object named table; "put {0} on the table" is longer
    assert steps("put c on the table") == ["(put-down c)"]
    assert steps("put c on b") == ["(stack c b)"]
    # with a block named "table", both match: the longer pattern still decides
    paraphrases = {"put-down": ["put {0} on the table"], "stack": ["put {0} on {1}"]}
    prob = P02.problem
    table = Problem(prob.name, prob.domain_name, {**prob.objects, "table": ("block",)},
                    prob.init_atoms, prob.init_values, prob.goal)
    task = Task(P02.domain, table)
    assert steps("put c on the table", task, paraphrases=paraphrases) == ["(put-down c)"]
    # "pick up {0} from {1}" (unstack) is longer than "pick up {0}" (pick-up)
    assert steps("pick up c from a") == ["(unstack c a)"]


def test_one_letter_typos_in_the_verb():
    assert steps("unstak c from a\npikc up b\nstakc b on c\nput a on the tabel") == [
        "(unstack c a)", "(pick-up b)", "(stack b c)", "(put-down a)"]
    # two letters off is not read; nor a word of three letters one letter off ("put")
    for text in ("unstk c from a", "pit c on b"):
        got = read_text(text, P02)
        assert got.kind == "malformed" and got.steps == [], got
    assert within_one("stack", "stakc") and within_one("table", "tabel")
    assert within_one("pick", "pik") and not within_one("stack", "sack up")


def test_a_line_is_marked_on_its_own_and_the_others_keep_their_steps():
    text = "Unstack C from A\nPut C on the table\n\nMove B onto C\nThis is prose.\npick up a\nstack a on b"
    got = read_text(text, P02)
    assert got.kind == "plan"
    assert steps(text) == ["(unstack c a)", "(put-down c)", "(pick-up a)", "(stack a b)"]
    marks = [(ln.number, ln.status) for ln in got.lines]
    assert marks == [(1, "step"), (2, "step"), (4, "unreadable"), (5, "prose"), (6, "step"),
                     (7, "step")]
    [bad] = got.unreadable
    assert bad.reason.startswith("line 4: 'Move B onto C'") and "1 unreadable line" in got.reason


def test_it_names_the_last_step_and_not_across_an_unreadable_line():
    assert steps("take c off a and put it down") == ["(unstack c a)", "(put-down c)"]
    got = read_text("unstack c from a\nshuffle c about a bit\nput it down", P02)
    assert got.steps == [("unstack", ("c", "a")), ("put-down", ("c",))]  # prose between
    got = read_text("unstack c from a\nmove c over b\nput it down", P02)
    assert got.steps == [("unstack", ("c", "a"))] and [ln.number for ln in got.unreadable] == [2, 3]
    assert "'it' with no step read before it" in got.unreadable[1].reason


def test_an_ambiguous_line_is_unreadable_not_guessed():
    # the same words declared for two actions: neither is taken
    paraphrases = {"pick-up": ["lift {0}"], "put-down": ["lift {0}"]}
    got = read_text("lift c", P02, paraphrases=paraphrases)
    assert got.kind == "malformed" and "is ambiguous: (pick-up c) or (put-down c)" in got.reason
    # a move is two actions in Blocksworld; several objects after one action
    for text in ("Move C onto B", "pick up b and c", "c on the table"):
        got = read_text(text, P02)
        assert got.kind == "malformed" and got.reason.startswith("line 1:"), (text, got)


def test_several_steps_on_one_line_and_trailing_commentary():
    assert steps("Unstack C from A, then put C down. Pick up B and stack it on C.") == [
        "(unstack c a)", "(put-down c)", "(pick-up b)", "(stack b c)"]
    assert steps("unstack c from a (so that a is clear)") == ["(unstack c a)"]
    assert steps("unstack c from a -> put c down") == ["(unstack c a)", "(put-down c)"]


def test_paraphrases_come_from_the_domain_with_the_same_actions():
    assert "stack" in for_domain(P02.domain)
    gripper = domain_at(DOMAINS / "gripper" / "domain.pddl")
    assert "move" in for_domain(gripper)
    # the suite's other domains read in their own words too
    task = suite_task("gripper/p02")
    assert steps("move from rooma to roomb", task) == ["(move rooma roomb)"]
    assert steps("pick up ball1 in rooma with the left gripper\ngo from rooma to roomb\n"
                 "drop it in roomb with left", task) == [
        "(pick ball1 rooma left)", "(move rooma roomb)", "(drop ball1 roomb left)"]
    task = suite_task("logistics/p02")
    truck, plane = "load p1 into t1 at l1a", "load p1 into a1 at ap1"
    assert steps(f"{truck}\n{plane}", task) == ["(load-truck p1 t1 l1a)", "(load-airplane p1 a1 ap1)"]


def test_fenced_blocks_are_read_by_the_contract_as_before():
    got = read_text("Here:\n```\n(unstack c a)\n(put-down c)\n```", P02)
    assert got.reader == "contract" and got.lines == []
    assert got.steps == [("unstack", ("c", "a")), ("put-down", ("c",))]


@needs_planbench
def test_planbench_instances_read_with_the_suites_blocksworld_phrases():
    from planaudit.planbench.material import load_config

    cfg = load_config(PLANBENCH, "blocksworld")
    task = cfg.task(2)
    assert for_domain(task.domain) == for_domain(P02.domain)  # same four actions
    assert steps("take the yellow block off the orange one\nset yellow down\n"
                 "2. grab orange\n3) put it on top of the red block", task, cfg) == [
        "(unstack d c)", "(put-down d)", "(pick-up c)", "(stack c a)"]
    # PlanBench's own phrasing reads as the strict reading reads it
    assert steps("unstack the yellow block from on top of the orange block", task, cfg) == [
        "(unstack d c)"]
