"""What the study tests share: a small study over the built-in Blocksworld with plain
names (two arms; the suggestion arm's plans given, one valid and one wrong), a real
`planaudit study serve` process on a free port, and a fresh PostgreSQL database from
tests/study/postgres.sh (CI starts it; elsewhere the PostgreSQL tests skip without it)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
POSTGRES = ROOT / "tests" / "study" / "postgres.sh"
PLANAUDIT = str(Path(sys.executable).with_name("planaudit"))

# p02 (Sussman): c on a, a and b on the table; goal a on b on c. p03: reverse a-b-c-d.
RIGHT_P02 = ["(unstack c a)", "(put-down c)", "(pick-up b)", "(stack b c)", "(pick-up a)",
             "(stack a b)"]
WRONG_P03 = ["(unstack a b)", "(put-down a)", "(unstack b c)", "(stack b a)", "(pick-up d)"]
# the researchers' token every test server starts with unless a test gives its own: the
# simulator asks it which arm a participant got (no page names an arm)
ADMIN_TOKEN = "researchers-token-of-the-tests"
KEY = re.compile(r'name="key" value="([0-9a-f]{32})"')
# the system Chromium the simulated participants drive; CI installs it (.ci/run): there a
# missing browser is a failure, not a skip
CHROMIUM = os.environ.get("PLANAUDIT_CHROMIUM") or shutil.which("chromium")
needs_chromium = pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"),
                                    reason="chromium not installed")


def experiment(tmp: Path) -> Path:
    """The default experiment with the suite cut to plain-named Blocksworld under `tmp`."""
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["results"] = str(tmp / "results")
    cfg["cache"] = str(tmp / "cache")
    cfg["suite"] = {**cfg["suite"], "root": str(ROOT / "domains"), "domains": ["blocksworld"],
                    "obfuscate": []}
    cfg["truth"] = {**cfg["truth"], "external": False}
    path = tmp / "experiment.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def study_config(tmp: Path, **over) -> Path:
    """A study config under `tmp` (its sections replaced by `over`)."""
    cfg = {
        "study": "teststudy",
        "experiment": str(experiment(tmp)),
        "results": str(tmp / "study"),
        "instances": ["blocksworld/p02", "blocksworld/p03"],
        "example": {"task": "blocksworld/p01"},
        "arms": [{"name": "unassisted", "feedback": "none"},
                 {"name": "suggested", "feedback": "none",
                  "suggestion": {"plans": {"blocksworld/p02": RIGHT_P02,
                                           "blocksworld/p03": WRONG_P03}}}],
        "assignment": "balanced",
        "pay": {"base": 0.5, "valid_bonus": 1.0, "invalid_deduction": 0.5},
        "completion": {"code": "TESTCODE", "redirect": "https://platform.example/done?cc={code}"},
        **over,
    }
    path = tmp / "study.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_url(name: str) -> str:
    """A fresh database `name`; skips (fails under CI) when no PostgreSQL is up."""
    ok = subprocess.run([str(POSTGRES), "status"], capture_output=True, text=True).returncode == 0
    if not ok:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not up (CI starts it: tests/study/postgres.sh up)")
        pytest.skip("PostgreSQL is not up (tests/study/postgres.sh up)")
    out = subprocess.run([str(POSTGRES), "createdb", name], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


class Server:
    """`planaudit study serve` in its own process, up when the constructor returns."""

    def __init__(self, config: Path, db: str | None = None, port: int | None = None,
                 env: dict | None = None, workers: int = 1):
        self.config, self.db, self.port = config, db, port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "PLANAUDIT_STUDY_ADMIN_TOKEN": ADMIN_TOKEN, **(env or {})}
        self.workers = workers
        self.log = config.with_name(f"server-{self.port}.log")
        self.start()

    def start(self, timeout: float = 120) -> None:
        cmd = [PLANAUDIT, "study", "serve", "--config", str(self.config), "--port", str(self.port)]
        if self.db:
            cmd += ["--db", self.db]
        if self.workers > 1:
            cmd += ["--workers", str(self.workers)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log.open("a"),
                                     env=self.env, cwd=ROOT)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the study server exited {self.proc.returncode}: "
                                   + self.log.read_text()[-2000:])
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the study server did not come up: " + self.log.read_text()[-2000:])

    def kill(self) -> None:
        """kill -9: no shutdown, no flush."""
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def entry(url: str, pid: str) -> str:
    return f"{url}/?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=x{pid}"


def form_key(html: str) -> str:
    m = KEY.search(html)
    assert m, "the page has no form key"
    return m.group(1)


def form_post(client, r, **data):
    """Post the form of page `r` (an in-process TestClient's response) with its key."""
    return client.post(str(r.url).split("#")[0], data={"key": form_key(r.text), **data})


def to_phase2(client, pid: str, text: str = "move the blocks"):
    """A participant entered, consenting, through the instructions, the example and
    phase 1 (`text`): the phase-2 page."""
    r = client.get(f"/?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x")
    r = form_post(client, form_post(client, form_post(client, r, agree="yes")))
    return form_post(client, r, text=text)
