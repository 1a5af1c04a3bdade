"""An external suite's unsolvable task proven by one method while the other stops at its
limit, with no certificate (issue 37, finding 17: the seed paper's LoadBalancing p08,
proven by ENHSP while our A* stops at its state limit). Under `audit: warn` it is kept
and reported: kind `single-proof` in truth.json, audit.csv, the summary (its `audit`
column and console line), the report, and `truth_proofs` = 1 in its rows; under
`audit: strict` it fails the suite job, naming it.

The vault of test_certificate_limit.py, built as an external suite: our search is given
`--bfs-states 10` and `--astar-seconds 0`, so breadth-first search and A* both stop at
their limit on the first state past it, and only Fast Downward proves the task."""

from __future__ import annotations

import asyncio
import csv
import json

import polars as pl

from planaudit.cli import main
from tests.test_certificate_limit import vault_suite


def _build(root, out, audit: str) -> int:
    return main(["suite", "build", "--source", "external", "--root", str(root),
                 "--domain", "vault", "--suite-dir", str(out), "--bfs-states", "10",
                 "--astar-seconds", "0", "--external-seconds", "120", "--audit", audit])


ALONE = ("vault/p01: unsolvable, proven by fast-downward-opt alone (own stopped at its limit), "
         "and no certificate could be made")


def test_warn_keeps_a_task_proven_by_one_method_and_reports_it_everywhere(tmp_path, capsys):
    root, out = vault_suite(tmp_path), tmp_path / "results" / "suite"
    assert _build(root, out, "warn") == 0  # the suite job runs to the end
    log = capsys.readouterr().err
    assert f"audit: {ALONE}" in log
    truth = json.loads((out / "vault" / "p01" / "truth.json").read_text())
    assert truth["methods"]["own"]["status"] == "limit"  # the premise: our search stopped
    assert truth["solvable"] is False and truth["proven_by"] == ["fast-downward-opt"]
    assert [a["kind"] for a in truth["audit"]] == ["single-proof"]
    # the summary and audit.csv, as the workflow's summary rule writes them
    truths = [str(out / "vault" / t / "truth.json") for t in ("p01", "p02")]
    assert main(["suite", "summary", *truths, "--out", str(out / "summary.csv"),
                 "--audit-out", str(out / "audit.csv")]) == 0
    said = capsys.readouterr().err
    assert "kept on one proof under audit: warn: vault/p01" in said
    rows = list(csv.DictReader((out / "summary.csv").open()))
    first = rows[0]
    assert (first["task"], first["certificate"], first["methods_agreeing"], first["audit"]) \
        == ("p01", "missing", "fast-downward-opt", "single-proof")
    audit = list(csv.DictReader((out / "audit.csv").open()))
    assert [(a["task"], a["kind"]) for a in audit] == [("p01", "single-proof")]
    # the report's design section names it and its one proof
    from planaudit.analysis.report import design_html

    config = {"results": str(tmp_path / "results"),
              "suite": {"source": "external", "root": str(root), "audit": "warn"}}
    text = design_html(pl.DataFrame(), config, set())
    assert "vault/p01 (proven by fast-downward-opt alone: <code>single-proof</code>)" in text
    # its rows say how many proofs its truth rests on
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client, ModelConfig
    from planaudit.offline.run import run_episode

    client = Client(ModelConfig("oracle", "reference/oracle"), Cache(tmp_path / "cache"))
    row, _ = asyncio.run(run_episode(client, "direct", {}, out / "vault" / "p01",
                                     task_name="vault/p01"))
    assert row["outcome"] == "detected" and row["truth_proofs"] == 1
    row, _ = asyncio.run(run_episode(client, "direct", {}, out / "vault" / "p02",
                                     task_name="vault/p02"))
    assert row["truth_proofs"] == len(json.loads(
        (out / "vault" / "p02" / "truth.json").read_text())["proven_by"])


def test_strict_fails_on_the_same_task_naming_it(tmp_path, capsys):
    root, out = vault_suite(tmp_path), tmp_path / "suite"
    assert _build(root, out, "strict") == 2
    assert ALONE in capsys.readouterr().err
