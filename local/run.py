"""`make run-local`: a real model on this machine's CPU, from install to report.

    python local/run.py [--config config/local.yaml] [--cores 2] [-- SNAKEMAKE ARGS...]

Installs the server venv (`local/server.sh install`; seconds once built), finds the
model, starts the server (`planaudit.llm.server.local_server`), runs the workflow on
`--config` with the model's `api_base` pointed at the server, stops the server, and
prints where the report is, the outcomes and the time of each stage. Exits with
Snakemake's status.

A script here rather than a `planaudit` subcommand: it drives the whole workflow
(Snakemake, results folder, server), a layer above the library whose rules are thin
shells over the CLI; and `llm/` owns starting and stopping the server, not the workflow.

The server's URL reaches Snakemake as a config file laid over `--config`
(`<results>/server.yaml`: the models list with the served model's api_base filled in;
lists are replaced whole when configs are laid, so it holds every entry). The port asked
for is the one in the config's api_base, so that when it is free the entry, the reply
cache's keys and Snakemake's record of finished jobs stay the same from run to run.
`--resources model_<name>=1` keeps the server to one job at a time; the entry's
max_concurrency (1) keeps that job to one request at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from planaudit import atomic
from planaudit.config import ConfigError, load_config
from planaudit.llm.preflight import resource_name
from planaudit.llm.server import ServerError, find_model, local_server, server_python

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LOCAL_HOSTS = ("127.0.0.1", "localhost")


def served(config: dict, names: list[str] | None) -> list[dict]:
    """The entries the local server answers for: those named, else every entry whose
    api_base is on this machine."""
    models = config.get("models") or []
    if names:
        missing = sorted(set(names) - {m["name"] for m in models})
        if missing:
            raise SystemExit(f"run.py: no model {', '.join(missing)} in the config")
        return [m for m in models if m["name"] in names]
    local = [m for m in models if urlsplit(m.get("api_base", "")).hostname in LOCAL_HOSTS]
    if not local:
        raise SystemExit("run.py: no model entry has an api_base on 127.0.0.1 (pass --model)")
    return local


def snakemake(args: list[str]) -> int:
    """Snakemake to its end. Ctrl-C reaches it too (same process group): it cancels its
    running jobs and exits. SIGTERM here (SystemExit) is passed on as SIGINT, for the same
    prompt stop (a SIGTERM would let it finish its running jobs first, minutes with a real
    model); the server stays up until Snakemake has exited."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.Popen([str(BIN / "snakemake"), *args], cwd=ROOT, env=env)
    try:
        return proc.wait()
    except BaseException:
        for stop, wait in ((signal.SIGINT, 60), (signal.SIGTERM, 10), (signal.SIGKILL, None)):
            if proc.poll() is not None:
                break
            proc.send_signal(stop)
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        raise


def outcomes(episodes: Path) -> str:
    """Regime x outcome counts of the run's rows."""
    if not episodes.is_file():
        return ""
    import polars as pl

    counts = (pl.read_parquet(episodes).group_by("regime", "outcome").len()
              .sort("regime", "len", descending=[False, True]))
    return "\n".join(f"  {r:<11} {o:<20} {n}" for r, o, n in counts.iter_rows())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="config/local.yaml")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--model", action="append",
                        help="a model entry the server answers for (default: every entry "
                             "with an api_base on 127.0.0.1)")
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--start-timeout", type=float, default=120.0)
    parser.add_argument("extra", nargs="*", help="more Snakemake arguments (after --)")
    args = parser.parse_args(argv)
    # Ctrl-C is KeyboardInterrupt here and in Snakemake, even when this process was started
    # with SIGINT ignored (in the background): an ignored signal stays ignored across exec
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(ROOT)
    times: dict[str, float] = {}

    t = time.perf_counter()
    if not args.skip_install:
        if subprocess.run([str(ROOT / "local" / "server.sh"), "install"]).returncode != 0:
            print("run.py: local/server.sh install failed", file=sys.stderr)
            return 1
    times["install"] = time.perf_counter() - t

    try:
        config = load_config(args.config)
    except ConfigError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    entries = served(config, args.model)
    results = Path(config.get("results", "results"))
    port = urlsplit(entries[0]["api_base"]).port if entries[0].get("api_base") else None

    t = time.perf_counter()
    try:
        model = find_model(server_python())
    except ServerError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    times["model"] = time.perf_counter() - t

    try:
        with local_server(results / "logs" / "server.log", model=model, port=port,
                          start_timeout=args.start_timeout) as server:
            times["server_start"] = server.start_seconds
            print(f"run.py: {model.name} at {server.url} (pid {server.pid}, started in "
                  f"{server.start_seconds:.1f} s, log {server.log})", file=sys.stderr)
            names = {e["name"] for e in entries}
            override = results / "server.yaml"
            atomic.write_text(override, yaml.safe_dump({"models": [
                dict(m, api_base=server.url) if m["name"] in names else m
                for m in config["models"]]}, sort_keys=False))
            t = time.perf_counter()
            status = snakemake(["--cores", args.cores, "--configfile", args.config,
                                str(override), "--resources",
                                *(f"{resource_name(n)}=1" for n in sorted(names)),
                                *args.extra])
            times["run"] = time.perf_counter() - t
    except ServerError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1
    times["total"] = sum(times.values())

    atomic.write_text(results / "timings.json", json.dumps(
        {k: round(v, 2) for k, v in times.items()}, indent=1) + "\n")
    print(f"\n{'snakemake failed' if status else 'done'} (exit {status}); "
          f"report: {results / 'report' / 'index.html'}")
    if table := outcomes(results / "episodes.parquet"):
        print(f"outcomes ({results / 'episodes.parquet'}):\n{table}")
    print("times: " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items())
          + f" ({results / 'timings.json'})")
    return status


if __name__ == "__main__":
    sys.exit(main())
