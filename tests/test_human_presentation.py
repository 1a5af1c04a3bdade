"""People beside models only on the same presentation: a study on plain names is not set
beside a run whose models saw obfuscated names, and the report says so naming both."""

from __future__ import annotations

import polars as pl

from planaudit.human.report import _presentation
from planaudit.study.settings import load_study
from tests.study_server import study_config


def test_a_study_says_how_it_shows_each_instance(tmp_path):
    plain = load_study(study_config(tmp_path, suite={"obfuscate": []}))
    assert plain.presentation("blocksworld/p02") == "plain names"
    hidden = load_study(study_config(tmp_path, suite={"obfuscate": ["blocksworld"], "seed": 3}))
    assert hidden.presentation("blocksworld/p02") == "obfuscated names (seed 3)"
    assert hidden.presentation("planbench:blocksworld/2") == "PlanBench's words"


def test_the_report_refuses_people_beside_models_shown_otherwise():
    people = pl.DataFrame({"domain": ["blocksworld", "blocksworld"],
                           "presentation": ["plain names", "plain names"]})
    said = _presentation(people, {"suite": {"obfuscate": ["blocksworld"], "seed": 0}})
    assert 'id="presentation-refused"' in said
    assert "people saw plain names, this run&#x27;s models obfuscated names (seed 0)" in said
    assert _presentation(people, {"suite": {"obfuscate": []}}) == ""
    words = pl.DataFrame({"domain": ["blocksworld"], "presentation": ["PlanBench's words"]})
    assert _presentation(words, {"suite": {"obfuscate": ["blocksworld"]}}) == ""
