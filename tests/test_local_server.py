"""`planaudit.llm.server.local_server` without the real server: a fake server venv whose
`python` is a small script, so that every way the block can end is checked in seconds.
The process is always gone afterwards: after an exception, a process that ignores SIGTERM,
a SIGTERM to the process holding the block; a server that dies or never answers is an
error carrying its log. tests/test_live_model.py runs the real one."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from planaudit.llm.server import ServerError, free_port, local_server
from tests.processes import gone

FAKE = """#!{python}
import http.server, os, signal, sys, time
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
mode = os.environ.get("FAKE_SERVER", "serve")
print("fake server starting", mode, flush=True)
if mode == "die":
    print("boom: cannot load the model", flush=True)
    sys.exit(3)
if mode == "mute":
    time.sleep(600)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, lambda *_: print("SIGTERM ignored", flush=True))

class Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{{"object": "list", "data": []}}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
"""


@pytest.fixture
def venv(tmp_path):
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE.format(python=sys.executable))
    python.chmod(0o755)
    return tmp_path / "venv"


def test_yields_the_url_and_stops_the_server_after_an_exception(venv, tmp_path):
    log = tmp_path / "logs" / "server.log"
    with pytest.raises(RuntimeError, match="inside the block"):
        with local_server(log, model=tmp_path / "m.gguf", venv=venv) as server:
            assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
            assert server.start_seconds > 0 and not gone(server.pid)
            pid = server.pid
            raise RuntimeError("inside the block")
    assert gone(pid)
    assert "fake server starting serve" in log.read_text()


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace(venv, tmp_path, monkeypatch):
    """The server was asked to stop, ignored it, and is gone all the same: it was killed.
    How long the grace takes is measured by benchmarks/timings.py, not asserted here."""
    monkeypatch.setenv("FAKE_SERVER", "stubborn")
    log = tmp_path / "s.log"
    with local_server(log, model=tmp_path / "m.gguf", venv=venv, grace=0.5) as server:
        pid = server.pid
    assert "SIGTERM ignored" in log.read_text()
    assert gone(pid)


def test_a_server_that_dies_is_an_error_with_its_log(venv, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SERVER", "die")
    with pytest.raises(ServerError, match="exited with status 3") as err:
        with local_server(tmp_path / "s.log", model=tmp_path / "m.gguf", venv=venv):
            pytest.fail("the block ran")
    assert "boom: cannot load the model" in str(err.value)


def test_a_server_that_never_answers_is_an_error_and_is_stopped(venv, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SERVER", "mute")
    with pytest.raises(ServerError, match=r"did not answer .* within 1 s") as err:
        with local_server(tmp_path / "s.log", model=tmp_path / "m.gguf", venv=venv,
                          start_timeout=1):
            pytest.fail("the block ran")
    assert "fake server starting mute" in str(err.value)
    left = subprocess.run(["pgrep", "-f", f"{venv}/bin/python"], capture_output=True, text=True)
    assert left.stdout == ""


def test_sigterm_to_the_holder_stops_the_server(venv, tmp_path):
    holder = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from planaudit.llm.server import local_server
        with local_server(Path({str(tmp_path / 's.log')!r}), model=Path("m.gguf"),
                          venv=Path({str(venv)!r})) as s:
            print(s.pid, flush=True)
            time.sleep(600)
        """)
    proc = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    assert not gone(pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 128 + signal.SIGTERM
    assert gone(pid)


def test_the_preferred_port_unless_it_is_taken():
    import socket

    port = free_port()
    assert free_port(preferred=port) == port
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        assert free_port(preferred=port) != port
