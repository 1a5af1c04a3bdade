"""Every ACPBench gold computation runs within a memory and time bound (issue 37, finding
16): a real item or suite state past it is not asked, and is counted and named, while the
process that asked keeps its memory. The bounds here are tiny (8 MB that a real proof
adds, half a second), so no test can take the machine."""

from __future__ import annotations

import json
import resource

import pytest
import yaml

from planaudit.cli import main
from tests.conftest import ROOT
from tests.test_curriculum import suite  # noqa: F401 - the prepared p01-p04 fixture

DATASET = ROOT.parent / "shared" / "acpbench" / "dataset"
needs_acpbench = pytest.mark.skipif(not DATASET.is_dir(), reason="needs ../shared/acpbench")

# rover, nexta: its proof adds about 20 MB and takes seconds (benchmarks/acpbench_gold.py);
# the blocksworld reach item adds under 1 MB in a fraction of a second
BIG = ("nexta", "3815455930421006423")
SMALL = ("reach", None)  # the file's first item


def _items(tmp_path, *picks) -> str:
    """A gen file holding the picked items of the dev split (first item where id is None)."""
    rows = []
    for qtype, item_id in picks:
        src = json.loads((DATASET / qtype / "dev.gen.json").read_text())
        rows.append(src[0] if item_id is None else next(r for r in src if str(r["id"]) == item_id))
    path = tmp_path / "items.gen.json"
    path.write_text(json.dumps(rows))
    return str(path)


def _gold(capsys, path: str, *flags: str) -> dict:
    assert main(["acpbench", "gold", path, "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


@needs_acpbench
def test_an_item_past_its_memory_bound_is_not_answered_and_is_named(tmp_path, capsys):
    path = _items(tmp_path, SMALL, BIG)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = _gold(capsys, path, "--max-memory-mb", "8")
    assert out["past_bound"] == [{"id": BIG[1], "task": "nexta",
                                  "reason": "past its memory bound (8 MB)"}]
    assert out["summary"]["nexta"]["past_bound"] == 1 and out["summary"]["reach"]["past_bound"] == 0
    small, big = out["items"]
    assert small["answer"] is not None and big["answer"] is None  # the small one answered
    # the proof grew in its own process: this one's peak did not move by the bound's excess
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 8 * 1024
    # with room enough the same item is answered: it was the bound that stopped it
    roomy = _gold(capsys, path, "--max-memory-mb", "200")
    assert roomy["past_bound"] == [] and roomy["items"][1]["answer"]["yes"]
    # the text report counts and names it
    assert main(["acpbench", "gold", path, "--max-memory-mb", "8"]) == 0
    text = capsys.readouterr().out
    assert "nexta: 0/1 agree, 0 with a limit hit, 1 past the bound (8 MB, 300 s)" in text
    assert f"nexta {BIG[1]}: not answered: past its memory bound (8 MB)" in text


@needs_acpbench
def test_an_item_past_its_time_bound_is_not_answered_and_is_named(tmp_path, capsys):
    out = _gold(capsys, _items(tmp_path, BIG), "--max-seconds", "0.5")
    assert out["past_bound"] == [{"id": BIG[1], "task": "nexta",
                                  "reason": "past its time bound (0.5 s)"}]


def test_a_suite_state_past_the_bound_is_not_posed_and_the_job_names_it(suite, tmp_path, capsys):  # noqa: F811
    """The acpbench regime's job: logistics p04's proof adds about 16 MB, p01-p03's under
    1 MB; under an 8 MB bound p04's questions are not posed, and the log and the job's
    `<type>.not_posed.json` name it."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["acpbench"] = {"types": ["land"], "forms": ["gen", "bool"], "domains": ["logistics"],
                          "tasks": 4, "states": 1, "gold_bound": {"memory_mb": 8}}
    config["results"] = str(tmp_path / "results")
    out = tmp_path / "results" / "episodes" / "acpbench" / "oracle" / "land.parquet"  # as the rule
    assert main(["acpbench", "shard", "--spec", json.dumps(config), "--model", "oracle",
                 "--type", "land", "--suite", str(suite), "--out", str(out),
                 "--transcripts", str(tmp_path / "tr")]) == 0
    log = capsys.readouterr().err
    why = "gold past its memory bound (8 MB) (p04/s0)"
    assert f"not posed: logistics land gen: 1 ({why})" in log
    assert "2 questions not asked: their gold ran past its bound" in log
    import polars as pl

    rows = pl.read_parquet(out)
    assert sorted(set(rows["task"])) == ["p01/s0", "p02/s0", "p03/s0"] and rows["success"].all()
    past = [r for r in json.loads((out.parent / "land.not_posed.json").read_text())
            if r["past_bound"]]
    assert past == [{"domain": "logistics", "type": "land", "form": f, "reason": why,
                     "questions": 1, "past_bound": True} for f in ("bool", "gen")]
    # the report's design section names them, as the job wrote them
    from planaudit.analysis.report import design_html

    page = design_html(rows, config, {"oracle"})
    assert ("ACPBench questions not asked, their gold past its bound (counted over every "
            "model's jobs): 2 in all: logistics land bool: 1 (gold past its memory bound "
            "(8 MB) (p04/s0)); logistics land gen: 1") in page, page


def test_the_bound_is_a_field_of_the_acpbench_section_checked_by_its_schema(tmp_path):
    from planaudit.acpbench.bound import Bound
    from planaudit.config import ConfigError, load_config

    assert Bound.of({}) == Bound(4096, 300.0)  # the default: a few GB, five minutes
    assert Bound.of({"gold_bound": {"memory_mb": 512, "seconds": None}}) == Bound(512, None)
    mine = tmp_path / "mine.yaml"
    mine.write_text("acpbench:\n  types: [app]\n  gold_bound:\n    memory_mb: lots\n")
    with pytest.raises(ConfigError, match=r"mine.yaml:4: acpbench.gold_bound.memory_mb"):
        load_config(mine, base=ROOT / "config" / "config.yaml")
    mine.write_text("acpbench:\n  types: [app]\n  gold_bound: {memory_mb: 512, seconds: 60}\n")
    assert load_config(mine, base=ROOT / "config" / "config.yaml")["acpbench"]["gold_bound"] == \
        {"memory_mb": 512, "seconds": 60}


def _batch_item(item, carry):
    """A computation for `bounded_each`: its process id, and the items done before it."""
    import os
    import time

    if item == "big":
        block = bytearray(64 << 20)  # 64 MB, every page written
        for i in range(0, len(block), 4096):
            block[i] = 1
    elif item == "slow":
        time.sleep(5)
    elif item == "bad":
        raise ValueError("a bad item")
    return (item, os.getpid(), carry), [*carry, item]


def test_one_child_proves_a_batch_each_item_within_the_bound():
    """`bounded_each` forks once for a batch: the items share a child until one passes its
    bound; that one alone is not answered (named as `bounded` names it), a new child takes
    the rest with what the last finished item carried, and an item's own exception is
    given back with it while the child goes on."""
    from planaudit.acpbench.bound import Bound, PastBound, bounded_each

    items = ["a", "b", "bad", "c", "big", "d", "slow", "e"]
    got = list(bounded_each(_batch_item, items, Bound(memory_mb=32, seconds=1.5), []))
    assert [g[0] for g in got] == items
    value = {item: v for item, v, _, _ in got}
    error = {item: e for item, _, e, _ in got}
    assert isinstance(error["bad"], ValueError) and str(error["bad"]) == "a bad item"
    assert isinstance(error["big"], PastBound) and error["big"].kind == "memory"
    assert isinstance(error["slow"], PastBound) and error["slow"].kind == "time"
    assert str(error["slow"]) == "past its time bound (1.5 s)"
    assert [i for i in items if error[i] is None] == ["a", "b", "c", "d", "e"]
    pid = {i: value[i][1] for i in "abcde"}
    assert pid["a"] == pid["b"] == pid["c"] != pid["d"] != pid["e"]  # a new child past a bound
    assert value["c"][2] == ["a", "b"] and value["d"][2] == ["a", "b", "c"]
    assert value["e"][2] == ["a", "b", "c", "d"]  # the carry of the last item that finished
    # each item measured from its own start: the small ones added little
    assert all(u.peak_mb is not None and u.peak_mb < 32 for i, _, e, u in got if e is None)
