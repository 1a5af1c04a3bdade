"""Does `inspect view` open an exported run? Serves a folder of exported logs with
`inspect view`, drives headless Chromium over the DevTools protocol (real time, so the
viewer's own fetches finish), and for the log list and one sample's messages prints what
rendered (the page's text holds the expected names) and every console error; screenshots
go to <prefix>list.png, <prefix>sample.png (its messages), <prefix>transcript.png (its
events).

    .venv/bin/planaudit export inspect --results results --out /tmp/inspect-default
    .venv/bin/python benchmarks/inspect_view.py --log-dir /tmp/inspect-default

Not a test: it needs Chromium and a free port, and it reads a finished run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import aiohttp

import record

BIN = Path(sys.executable).parent
PROBE = "/api/flow"


def wait_port(port: int, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port} after {seconds} s")


class Page:
    """One Chromium tab over the DevTools protocol: console errors collected as they come."""

    def __init__(self, ws):
        self.ws, self.n, self.errors = ws, 0, []
        self.waiting: dict[int, asyncio.Future] = {}

    async def pump(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data.get("result", {}))
            method = data.get("method")
            params = data.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                self.errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                            for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                self.errors.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                self.errors.append(f"{params['entry'].get('text')} {params['entry'].get('url', '')}")

    async def send(self, method: str, **params) -> dict:
        self.n += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.n] = future
        await self.ws.send_str(json.dumps({"id": self.n, "method": method, "params": params}))
        return await asyncio.wait_for(future, 60)

    async def text(self) -> str:
        found = await self.send("Runtime.evaluate", expression="document.body.innerText")
        return found.get("result", {}).get("value", "")

    async def visit(self, url: str, expect: list[str], shot: Path, seconds: float) -> dict:
        """Load `url`, wait until every `expect` string is on the page (or time runs out)."""
        before = len(self.errors)
        await self.send("Page.navigate", url=url)
        end = time.monotonic() + seconds
        text = ""
        while time.monotonic() < end:
            await asyncio.sleep(0.5)
            text = await self.text()
            if all(e in text for e in expect):
                break
        await asyncio.sleep(1.0)  # let late errors arrive
        png = await self.send("Page.captureScreenshot", format="png")
        shot.write_bytes(base64.b64decode(png["data"]))
        return {"url": url, "rendered": {e: e in text for e in expect},
                "console_errors": self.errors[before:], "screenshot": str(shot)}


async def drive(port: int, pages: list[tuple[str, list[str], Path]], seconds: float) -> list:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/json/list") as r:
            target = next(t for t in await r.json() if t["type"] == "page")
        async with http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            page = Page(ws)
            pump = asyncio.create_task(page.pump())
            for domain in ("Runtime", "Log", "Page"):
                await page.send(f"{domain}.enable")
            out = [await page.visit(url, expect, shot, seconds) for url, expect, shot in pages]
            pump.cancel()
            return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log-dir", default="/tmp/inspect-default")
    ap.add_argument("--log", default="planaudit_online_oracle_react_none.eval",
                    help="the log whose sample is opened")
    ap.add_argument("--sample", default="blocksworld/p01", help="its sample id")
    ap.add_argument("--port", type=int, default=7575)
    ap.add_argument("--shots", default="/tmp/inspect-view-", help="screenshot path prefix")
    ap.add_argument("--seconds", type=float, default=30.0, help="wait for a page at most")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("chromium is not installed", file=sys.stderr)
        return 2
    view = subprocess.Popen([str(BIN / "inspect"), "view", "--log-dir", args.log_dir,
                             "--port", str(args.port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as profile:
        debug = args.port + 1
        browser = subprocess.Popen([chromium, "--headless=new", "--disable-gpu", "--no-sandbox",
                                    f"--user-data-dir={profile}", f"--remote-debugging-port={debug}",
                                    "--window-size=1400,1000", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(args.port, 30)
            wait_port(debug, 30)
            base = f"http://127.0.0.1:{args.port}/#/logs/"
            logs = sorted(p.name for p in Path(args.log_dir).glob("*.eval"))
            sample = (f"{base}{args.log}/samples/sample/{quote(args.sample, safe='')}/1/messages")
            pages = [(base, [f"{len(logs)} items", "planaudit_", "planaudit/oracle"],
                      Path(f"{args.shots}list.png")),
                     (sample, ["get_task", "act", "Begin."], Path(f"{args.shots}sample.png")),
                     (sample.removesuffix("messages") + "transcript", ["get_task", "act"],
                      Path(f"{args.shots}transcript.png"))]
            results = asyncio.run(drive(debug, pages, args.seconds))
        finally:
            browser.terminate()
            view.terminate()
            browser.wait(10)
            view.wait(10)
    print(json.dumps(results, indent=1))
    # the viewer asks for an optional Inspect Flow file of the log folder (404 when there is
    # none, whatever the logs): named apart, not counted as an error of the logs
    errors = [e for r in results for e in r["console_errors"] if PROBE not in e]
    probes = sum(PROBE in e for r in results for e in r["console_errors"])
    ok = all(all(r["rendered"].values()) for r in results) and not errors
    print("inspect view: " + ("rendered, no console errors" if ok else "NOT clean")
          + (f" (besides {probes} 404 of the viewer's own {PROBE} probe)" if probes else ""))
    record.write("inspect_view", {
        "rendered": record.figure("yes" if ok else "no", "", "every page rendered its expected "
                                                          "text, no console error"),
        "console_errors": record.figure(len(errors), "errors", f"besides {probes} 404 of the "
                                                               f"viewer's own {PROBE} probe"),
    }, tables={"pages": record.table(["page", "rendered"], [
        (r.get("url", "?"), ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in r["rendered"].items()))
        for r in results], "What rendered")})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
