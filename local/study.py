"""`make study-local`: a study whose assistant arm is a real model on this machine's CPU.

    python local/study.py [--study config/study-local.yaml]
                          [--counts config/study-local-counts.yaml] [--skip-install]

Installs the server venv (`local/server.sh install`), starts SmolLM2 behind it
(`planaudit.llm.server.local_server`), writes the study's experiment config with the
model entry's `api_base` pointed at the server (`<out>/experiment.yaml`, and the study
config naming it, `<out>/study.yaml`), then scripts, serves, simulates, exports and
analyses the study as `make study-demo` does (`demo/study_demo.py`'s `study_run`), and
stops the server. The participants are SIMULATED (scripts in Chromium); the assistant's
replies are SmolLM2's own, through `llm/` (cache, prices, preflight), each proposal judged
on the hidden model. Prints where each reply and its verdict are.

A script beside `local/run.py`, for the same reason: it drives a server, a browser and
the study's commands, a layer above the library.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from planaudit.llm.server import ServerError, find_model, local_server, server_python

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
OUT = Path("results/study-local")


def _study_run():
    """`study_run` of demo/study_demo.py (a script, not a module of the package)."""
    spec = importlib.util.spec_from_file_location("study_demo", ROOT / "demo" / "study_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.study_run


def pointed(study: Path, url: str, out: Path) -> Path:
    """The study config with its experiment's local model entries served at `url`."""
    cfg = yaml.safe_load(study.read_text())
    experiment = yaml.safe_load((ROOT / cfg.get("experiment", "config/config.yaml")).read_text())
    served = [m for m in experiment.get("models", [])
              if urlsplit(m.get("api_base", "")).hostname in ("127.0.0.1", "localhost")]
    if not served:
        raise SystemExit(f"study.py: no model entry of {cfg.get('experiment')} is served on "
                         "this machine (an api_base on 127.0.0.1)")
    for m in served:
        m["api_base"] = url
    (out / "experiment.yaml").write_text(yaml.safe_dump(experiment, sort_keys=False))
    cfg["experiment"] = str(out / "experiment.yaml")
    (out / "study.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return out / "study.yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", default="config/study-local.yaml")
    ap.add_argument("--counts", default="config/study-local-counts.yaml")
    ap.add_argument("--skip-install", action="store_true")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    os.environ.setdefault("PLANAUDIT_STUDY_ADMIN_TOKEN", secrets.token_hex(16))
    if not args.skip_install and subprocess.run([str(ROOT / "local" / "server.sh"),
                                                 "install"]).returncode != 0:
        print("study.py: local/server.sh install failed", file=sys.stderr)
        return 1
    out = ROOT / OUT
    shutil.rmtree(out, ignore_errors=True)  # a demo starts from no records
    out.mkdir(parents=True)
    times: list[tuple[str, float]] = []
    started = time.monotonic()
    try:
        with local_server(out / "server.log", model=find_model(server_python())) as server:
            print(f"study.py: SmolLM2 at {server.url}", file=sys.stderr)
            study = pointed(ROOT / args.study, server.url, out)
            _study_run()(str(BIN / "planaudit"), str(study), args.counts, OUT, "2", times, [])
    except ServerError as e:
        print(f"study.py: {e}", file=sys.stderr)
        return 1
    print("\nstudy-local: SIMULATED participants (scripted, not people); the assistant is "
          "SmolLM2-135M-Instruct on this CPU", file=sys.stderr)
    for stage, seconds in times:
        print(f"  {stage:<28} {seconds:7.1f} s", file=sys.stderr)
    print(f"  {'in all':<28} {time.monotonic() - started:7.1f} s", file=sys.stderr)
    print(f"each reply, its proposal and its verdict: {OUT}/export/records.jsonl "
          f"(answers.phase2.chat); rows: {OUT}/export/rows.parquet; statistics: "
          f"{OUT}/analysis/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
