"""`make study-demo`: a study with SIMULATED participants, from server to report.

    python demo/study_demo.py [--study config/study.yaml] [--counts config/study-demo.yaml]
                              [--run config/study-demo-run.yaml] [--cores 2]
                              [--assistant-study config/study-demo-assistant.yaml]
                              [--assistant-counts config/study-demo-assistant-counts.yaml]

Serves the study (`planaudit study serve`, its records in a database of the demo's own,
`results/study-demo/study.sqlite`, so that no simulated record mixes with a pilot's
real ones), scripts a cohort to the counts (`planaudit study cohort`), plays it in
headless Chromium against the server (`planaudit study simulate`: platform ids
`SIMULATED-…`), stops the server, exports and judges the records (`planaudit study
export`), prints the study's statistics (`planaudit study analyze`), then runs the
workflow with the export named (`--run`: `study: {records: [...]}`), so the report
gains its People section beside the models. Every participant is a script, not a
person: the export, the rows, the tables, the figure and the report say so.

Then a second, small study (`--assistant-study`, issue 49): one arm with an assistant
beside phase 2, served by the reference model `responsive` (a calibrator, not an AI
model: its first plan is wrong by one dropped step, its later ones optimal), whose
simulated participants ask it, accept a plan and reject one (`--assistant-counts`). It
is a study of its own, in its own database (`results/study-demo/assistant/`), because
a third arm in the pilot would change the seeded assignment's sequence and with it the
paper's counts replayed there. It is served, simulated, exported and analysed as the
pilot is; the workflow's report reads the pilot's export only.

A script rather than a `planaudit` subcommand, as `local/run.py` is: it drives a server,
a browser and the whole workflow, a layer above the library.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
OUT = Path("results/study-demo")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(stage: str, cmd: list[str], times: list) -> None:
    print(f"study-demo: {stage}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    start = time.monotonic()
    code = subprocess.run(cmd, cwd=ROOT).returncode
    times.append((stage, time.monotonic() - start))
    if code != 0:
        raise SystemExit(f"study-demo: {stage} failed (exit {code})")


def serve(study: str, db: str, port: int, log: Path) -> subprocess.Popen:
    proc = subprocess.Popen([str(BIN / "planaudit"), "study", "serve", "--config", study,
                             "--db", db, "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    end = time.monotonic() + 300
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"study-demo: the server exited {proc.returncode}:\n"
                             + log.read_text()[-2000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("study-demo: the server did not come up:\n" + log.read_text()[-2000:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", default="config/study.yaml")
    ap.add_argument("--counts", default="config/study-demo.yaml")
    ap.add_argument("--run", default="config/study-demo-run.yaml")
    ap.add_argument("--assistant-study", default="config/study-demo-assistant.yaml",
                    help="the assistant demo's study ('' to skip it)")
    ap.add_argument("--assistant-counts", default="config/study-demo-assistant-counts.yaml")
    ap.add_argument("--cores", default="2")
    ap.add_argument("--concurrency", default="4")
    args = ap.parse_args(argv)
    chromium = os.environ.get("PLANAUDIT_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).is_file():
        raise SystemExit(f"study-demo: the simulated participants drive Chromium, and there is "
                         f"none at {chromium}: apt-get install chromium (or set "
                         "PLANAUDIT_CHROMIUM to a Chromium binary)")
    # the server's researchers' view, which the simulator asks for each participant's arm
    # (no page names an arm); one token for this demo's server, unless one is set
    os.environ.setdefault("PLANAUDIT_STUDY_ADMIN_TOKEN", secrets.token_hex(16))
    out = ROOT / OUT
    shutil.rmtree(out, ignore_errors=True)  # a demo starts from no records
    out.mkdir(parents=True)
    planaudit = str(BIN / "planaudit")
    times: list[tuple[str, float]] = []
    started = time.monotonic()
    study_run(planaudit, args.study, args.counts, OUT, args.concurrency, times,
              ["--alternative", "greater"])
    if args.assistant_study:
        (out / "assistant").mkdir()
        study_run(planaudit, args.assistant_study, args.assistant_counts, OUT / "assistant",
                  args.concurrency, times, [], "assistant: ")
    run("workflow", [str(BIN / "snakemake"), "--cores", args.cores, "--configfile", args.run],
        times)
    print("\nstudy-demo: SIMULATED participants (scripted, not people)", file=sys.stderr)
    for stage, seconds in times:
        print(f"  {stage:<28} {seconds:7.1f} s", file=sys.stderr)
    print(f"  {'in all':<28} {time.monotonic() - started:7.1f} s", file=sys.stderr)
    print(f"report: results/report/index.html#people; the study's own analysis: "
          f"{OUT}/analysis/", file=sys.stderr)
    if args.assistant_study:
        print(f"the assistant demo (reference model responsive, not an AI model): "
              f"{OUT}/assistant/export/records.jsonl (each reply's proposal and its verdict), "
              f"{OUT}/assistant/analysis/", file=sys.stderr)
    return 0


def study_run(planaudit: str, study: str, counts: str, here: Path, concurrency: str,
              times: list, analyze: list[str], stage: str = "") -> None:
    """One study's cohort scripted, served, simulated, exported and analysed under `here`."""
    db = f"sqlite:///{ROOT / here / 'study.sqlite'}"
    run(f"{stage}cohort", [planaudit, "study", "cohort", "--config", study, "--counts", counts,
                           "--out", str(here / "cohort.yaml")], times)
    port = free_port()
    t0 = time.monotonic()
    server = serve(study, db, port, ROOT / here / "server.log")
    times.append((f"{stage}serve (prepare and listen)", time.monotonic() - t0))
    try:
        run(f"{stage}simulate", [planaudit, "study", "simulate", "--cohort",
                                 str(here / "cohort.yaml"), "--url", f"http://127.0.0.1:{port}/",
                                 "--concurrency", concurrency, "--out",
                                 str(here / "simulate.json")], times)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    run(f"{stage}export", [planaudit, "study", "export", "--config", study, "--db", db,
                           "--out", str(here / "export")], times)
    run(f"{stage}analyze", [planaudit, "study", "analyze", "--records", str(here / "export"),
                            "--out", str(here / "analysis"), *analyze], times)


if __name__ == "__main__":
    sys.exit(main())
