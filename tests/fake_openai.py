"""A scripted OpenAI-compatible HTTP server on loopback, for driving the real litellm path.

Each request to /chat/completions takes the next scripted step: a reply text,
or an HTTP status with headers, or a delay longer than the client's timeout.
Every request is recorded, so a test can count what reached the server.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply(text: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> dict:
    return {"status": 200, "body": {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}}}


def tool_call(name: str, arguments: str | dict | None = None, call_id: str = "call_1",
              text: str = "") -> dict:
    """A reply that calls one tool natively; `arguments` may be a broken JSON string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    step = reply(text)
    step["body"]["choices"][0]["message"]["tool_calls"] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]
    step["body"]["choices"][0]["finish_reason"] = "tool_calls"
    return step


def status(code: int, headers: dict | None = None) -> dict:
    return {"status": code, "headers": headers or {},
            "body": {"error": {"message": f"scripted {code}", "type": "test", "code": code}}}


def delay(seconds: float) -> dict:
    return {"delay": seconds, **reply("too late")}


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) drops connections a shard opens at once
    daemon_threads = True


class FakeOpenAI:
    def __init__(self, script: list[dict] | None = None):
        self.script = list(script or [])
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs serve
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stall

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    step = server.script.pop(0) if server.script else reply("(default)")
                if step.get("delay"):
                    time.sleep(step["delay"])
                data = json.dumps(step["body"]).encode()
                try:
                    self.send_response(step["status"])
                    self.send_header("content-type", "application/json")
                    for k, v in step.get("headers", {}).items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout): nothing to answer

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve_in_subprocess(script: list[dict]):
    """Start the server in a process of its own (so that it does not compete with the
    client for the interpreter lock, as a remote API would not); returns (process,
    api_base). Stop it with `process.terminate()`."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "tests.fake_openai"], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(script) + "\n")
    proc.stdin.flush()
    return proc, proc.stdout.readline().strip()


if __name__ == "__main__":  # the subprocess side: read the script, print the address, serve
    import sys

    with FakeOpenAI(json.loads(sys.stdin.readline())) as srv:
        print(srv.api_base, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin or ends us
