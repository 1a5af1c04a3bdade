"""The default pipeline never imports inspect_ai or every_eval_ever (issue 24, item 5): the
CLI paths the workflow runs (`--help`, an offline and an online shard of the oracle,
`collect`, `tables`) leave both out of sys.modules; `export eee` in the same process then
brings every_eval_ever in, so the check sees an import when there is one."""

from __future__ import annotations

import json
import subprocess
import sys

from planaudit.formal.truth import Limits
from planaudit.suite.catalog import find_entry
from planaudit.suite.prepare import prepare
from planaudit.suite.records import make_truth
from tests.conftest import ROOT

WATCHED = ("inspect_ai", "every_eval_ever")
SCRIPT = """
import json, sys
from planaudit.cli import main

def loaded():
    return sorted(m for m in {watched!r} if m in sys.modules)

seen = {{}}
for name, argv in json.loads(sys.argv[1]):
    try:
        code = main(argv)
    except SystemExit as e:  # --help exits
        code = e.code
    assert code in (0, None), (name, code)
    seen[name] = loaded()
print(json.dumps(seen))
"""


def test_the_pipeline_imports_neither_inspect_nor_every_eval_ever(tmp_path):
    entry = find_entry({"source": "builtin", "root": str(ROOT / "domains")}, "gripper", "p03")
    task = tmp_path / "suite" / "gripper" / "p03"
    prepare(entry, task, obfuscate=False, seed=0)
    make_truth(entry, task, Limits(external=False))
    spec = json.dumps({"models": [{"name": "oracle", "model": "reference/oracle"}],
                       "cache": str(tmp_path / "cache"),
                       "offline": {"methods": ["direct"], "params": {"direct": {}}},
                       "online": {"methods": ["react"], "budget": 30, "params": {"react": {}}}})
    res = tmp_path / "results"

    def shard(regime: str, method: str) -> list[str]:
        return [regime, "shard", "--spec", spec, "--model", "oracle", "--method", method,
                "--domain", "gripper", "--suite", str(tmp_path / "suite"),
                "--out", str(res / "episodes" / regime / "{domain}.parquet"),
                "--transcripts", str(res / "transcripts" / regime / "{domain}")]

    steps = [
        ("help", ["--help"]),
        ("offline shard", shard("offline", "direct")),
        ("online shard", shard("online", "react")),
        ("collect", ["collect", str(res / "episodes" / "offline" / "gripper.parquet"),
                     str(res / "episodes" / "online" / "gripper.parquet"),
                     "--out", str(res / "episodes.parquet")]),
        ("tables", ["tables", "--episodes", str(res / "episodes.parquet"),
                    "--out", str(res / "report"), "--bootstrap", "200"]),
        ("export eee", ["export", "eee", "--results", str(res), "--out", str(tmp_path / "eee")]),
    ]
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(watched=WATCHED),
                           json.dumps(steps)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, _ in steps[:-1]:
        assert seen[name] == [], (name, seen[name])
    assert seen["export eee"] == ["every_eval_ever"]  # the check does see an import
    assert (res / "report" / "main.csv").is_file()
