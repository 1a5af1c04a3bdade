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


class FakeOpenAI:
    def __init__(self, script: list[dict] | None = None):
        self.script = list(script or [])
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
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

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
