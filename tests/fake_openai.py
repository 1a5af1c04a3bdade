"""A scripted OpenAI-compatible HTTP server on loopback, for driving the real litellm path.

Each request to /chat/completions takes the next scripted step: a reply text,
or an HTTP status with headers, or a delay longer than the client's timeout.
Every request is recorded, so a test can count what reached the server.

With a `Responder` instead of a script, the server answers deterministically from
the prompt itself (so an interrupted and an uninterrupted run get the same replies)
and may inject provider faults on a schedule that is itself a function of the prompt
and of how often that prompt has been asked (`fault_plan`): a test can compute which
requests must fail. With a `log` path every request is appended to a JSON-lines file
(its prompt key, attempt, fault, phase, and whether the reply was fully written).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import struct
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


def streamed(text: str, pieces: list[str] | None = None, gap: float = 0.0, usage: bool = True,
             break_after: int | None = None, **counts) -> dict:
    """A reply that a request with `stream: true` gets as server-sent events: `pieces` (by
    default the text in three parts) one chunk each, `gap` seconds apart, then the usage
    chunk (when the request asked for it with stream_options and `usage` is true) and
    `[DONE]`; `break_after`: the connection reset after that many pieces. Without
    `stream` the request gets the same reply whole."""
    if pieces is None:
        third = max(len(text) // 3, 1)
        pieces = [text[i:i + third] for i in range(0, len(text), third)]
    assert "".join(pieces) == text
    return {**reply(text, **counts), "stream": {"pieces": pieces, "gap": gap, "usage": usage,
                                                "break_after": break_after}}


def thought(text: str, reasoning: str, reasoning_tokens: int, prompt_tokens: int = 10,
            completion_tokens: int = 50) -> dict:
    """A reasoning model's reply: its reasoning text beside the answer (`reasoning_content`,
    as DeepSeek's and vLLM's servers send it) and the reasoning tokens among the completion
    tokens (`completion_tokens_details.reasoning_tokens`, as OpenAI's o-series report them)."""
    step = reply(text, prompt_tokens, completion_tokens)
    step["body"]["choices"][0]["message"]["reasoning_content"] = reasoning
    step["body"]["usage"]["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return step


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


FAULTS = ("429", "429-retry-after", "500", "502", "503", "timeout", "reset", "truncated",
          "invalid-json", "empty-choices")
ANSWERS = ("UNSOLVABLE", "```\n(no-such-action x y)\n```", "I would rather not say.",
           "```\n```")
INSTANCE = re.compile(r"\[instance-id ([\w-]+)\]")


def prompt_key(body: dict) -> str:
    """What decides a reply, as the server sees it (the client's cache key also covers the
    sample index and metadata, which are not sent)."""
    decisive = {k: body.get(k) for k in ("model", "messages", "tools", "temperature",
                                        "max_tokens")}
    blob = json.dumps(decisive, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def fault_plan(key: str, rates: dict[str, float], seed: int, limit: int) -> list[str]:
    """The faults served to the first attempts of one prompt, in order; attempt
    len(plan) and later are answered. Each attempt faults with probability sum(rates)
    (the kind drawn by rate), independently, until the first answered one; at most
    `limit` faults (so max_retries + 1 exhausts a client's retries)."""
    rng = random.Random(f"{seed}:{key}")
    total = sum(rates.values())
    plan: list[str] = []
    kinds = sorted(rates)
    while len(plan) < limit and total > 0 and rng.random() < total:
        plan.append(rng.choices(kinds, weights=[rates[k] for k in kinds])[0])
    return plan


class Responder:
    """A deterministic model: the reply is a function of the prompt (a fixed answer
    chosen by its hash, prefixed by `ref <key>` so that a reply can be traced to its
    request), faults as `fault_plan` says. `broken_tool_args`: the rate of tool calls
    whose arguments are not valid JSON (a model's fault, answered with status 200)."""

    def __init__(self, faults: dict[str, float] | None = None, seed: int = 0, limit: int = 0,
                 timeout_delay: float = 2.0, latency: float = 0.0,
                 broken_tool_args: float = 0.0):
        self.faults, self.seed, self.limit = faults or {}, seed, limit
        self.timeout_delay, self.latency = timeout_delay, latency
        self.broken_tool_args = broken_tool_args
        self.seen: dict[str, int] = {}

    def step(self, body: dict) -> tuple[dict, dict]:
        """(step, record) for one request; called under the server's lock."""
        key = prompt_key(body)
        attempt = self.seen.get(key, 0)
        self.seen[key] = attempt + 1
        plan = fault_plan(key, self.faults, self.seed, self.limit)
        text = json.dumps(body.get("messages"))
        instance = INSTANCE.search(text)
        record = {"key": key, "attempt": attempt, "planned_faults": len(plan),
                  "instance": instance.group(1) if instance else None}
        if attempt < len(plan):
            kind = plan[attempt]
            record["fault"] = kind
            return self.fault(kind), record
        h = int(key, 16)
        record["fault"] = None
        if body.get("tools"):
            names = [t["function"]["name"] for t in body["tools"]]
            name = names[h % len(names)]
            args = {"act": {"action": "(no-such-action x)"},
                    "query_state": {"predicate": "on"}}.get(name, {})
            broken = random.Random(f"args:{key}").random() < self.broken_tool_args
            record["broken_tool_args"] = broken
            step = tool_call(name, '{"action": "(stack' if broken else args,
                             call_id=f"call_{key[:8]}", text=f"ref {key}")
        else:
            step = reply(f"ref {key}\n{ANSWERS[h % len(ANSWERS)]}")
        if self.latency:
            step["delay"] = self.latency
        return step, record

    def fault(self, kind: str) -> dict:
        if kind == "429":
            return status(429)
        if kind == "429-retry-after":
            return status(429, {"Retry-After": "1"})
        if kind in ("500", "502", "503"):
            return status(int(kind))
        if kind == "timeout":  # past the deadline the server hangs up: a client whose
            # timer fired late (a busy event loop) must not read the answer as a success
            return {**delay(self.timeout_delay), "reset": True}
        if kind == "reset":
            return {"reset": True}
        if kind == "truncated":
            return {**reply("cut short"), "truncate": True}
        if kind == "invalid-json":
            return {"status": 200, "raw": '{"id": "chatcmpl-test", "choices": [{"inde'}
        if kind == "empty-choices":
            step = reply("")
            step["body"]["choices"] = []
            return step
        raise ValueError(kind)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog (5) drops connections a shard opens at once
    daemon_threads = True

    def handle_error(self, request, client_address):
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client killed or gone
            super().handle_error(request, client_address)


class FakeOpenAI:
    def __init__(self, script: list[dict] | None = None, responder: Responder | None = None,
                 log: str | None = None):
        self.script = list(script or [])
        self.responder = responder
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.log = open(log, "a") if log else None
        self.phase = ""
        self.seq = 0
        self.open = 0  # requests received and not yet logged (a time-out fault still asleep)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs serve
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stall

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/_phase"):  # the test names what runs next
                    with server.lock:
                        server.phase = body.get("phase", "")
                    self._send(200, b"{}", {})
                    return
                if self.path.endswith("/_open"):  # how many requests are still unlogged
                    with server.lock:
                        open_ = server.open
                    self._send(200, json.dumps({"open": open_}).encode(), {})
                    return
                record: dict = {}
                with server.lock:
                    server.open += 1
                    server.requests.append(body)
                    if server.responder is not None:
                        step, record = server.responder.step(body)
                    else:
                        step = server.script.pop(0) if server.script else reply("(default)")
                    server.seq += 1
                    record.update(seq=server.seq, phase=server.phase, t_recv=time.time())
                delivered = False
                try:
                    if step.get("delay"):
                        time.sleep(step["delay"])
                    if step.get("reset"):  # an RST instead of an answer
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                   struct.pack("ii", 1, 0))
                        self.close_connection = True
                        return
                    if body.get("stream") and step.get("status") == 200 and "body" in step:
                        delivered = self._stream(step, body)
                        return
                    data = step["raw"].encode() if "raw" in step else json.dumps(
                        step["body"]).encode()
                    if step.get("truncate"):  # promise the whole body, send half, hang up
                        self._send(step["status"], data[:len(data) // 2], step.get("headers", {}),
                                   length=len(data))
                        self.close_connection = True
                        return
                    self._send(step["status"], data, step.get("headers", {}))
                    delivered = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout, a kill): nothing to answer
                finally:
                    if server.log is not None:
                        record.update(status=step.get("status"), delivered=delivered,
                                      t_sent=time.time())
                        with server.lock:
                            server.log.write(json.dumps(record) + "\n")
                            server.log.flush()
                    with server.lock:
                        server.open -= 1

            def _stream(self, step: dict, body: dict) -> bool:
                """The step's reply as OpenAI streams it: server-sent events in chunked
                transfer encoding; True when it was sent to the end."""
                spec = step.get("stream") or {"pieces": [step["body"]["choices"][0]["message"]
                                                          .get("content") or ""],
                                              "gap": 0.0, "usage": True, "break_after": None}
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()

                def event(data: dict | str) -> None:
                    text = data if isinstance(data, str) else json.dumps(data)
                    raw = f"data: {text}\n\n".encode()
                    self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
                    self.wfile.flush()

                head = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                        "model": "test"}
                choice = step["body"]["choices"][0]
                event({**head, "choices": [{"index": 0, "finish_reason": None,
                                            "delta": {"role": "assistant", "content": ""}}]})
                for i, piece in enumerate(spec["pieces"]):
                    if spec["break_after"] is not None and i == spec["break_after"]:
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                   struct.pack("ii", 1, 0))
                        self.close_connection = True
                        return False
                    if i and spec["gap"]:
                        time.sleep(spec["gap"])
                    event({**head, "choices": [{"index": 0, "finish_reason": None,
                                                "delta": {"content": piece}}]})
                event({**head, "choices": [{"index": 0, "finish_reason": choice["finish_reason"],
                                            "delta": {}}]})
                if spec["usage"] and (body.get("stream_options") or {}).get("include_usage"):
                    event({**head, "choices": [], "usage": step["body"]["usage"]})
                event("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return True

            def _send(self, code: int, data: bytes, headers: dict, length: int | None = None):
                self.send_response(code)
                self.send_header("content-type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

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
        if self.log is not None:
            self.log.close()


def serve_in_subprocess(script: list[dict], responder: dict | None = None,
                        log: str | None = None):
    """Start the server in a process of its own (so that it does not compete with the
    client for the interpreter lock, as a remote API would not); returns (process,
    api_base). `responder`: the keyword arguments of a `Responder` (instead of a
    script). Stop it with `process.terminate()`."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "tests.fake_openai"], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps({"script": script, "responder": responder, "log": log}) + "\n")
    proc.stdin.flush()
    return proc, proc.stdout.readline().strip()


def _control(api_base: str, path: str, body: dict) -> dict:
    """POST to one of the server's own endpoints (`/_phase`, `/_open`); its JSON answer."""
    import urllib.request

    req = urllib.request.Request(f"{api_base}/{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=10).read())


def set_phase(api_base: str, phase: str) -> None:
    """Tag the requests that arrive from now on (the server's log says which run sent them)."""
    _control(api_base, "_phase", {"phase": phase})


def wait_until_logged(api_base: str, timeout: float, quiet: float = 1.0) -> None:
    """Return once every request the server has received is in its log and none has
    arrived for `quiet` seconds (a time-out fault sleeps past the client's time-out, and
    an abandoned request may still be read late); at most `timeout` seconds."""
    end = time.monotonic() + timeout
    since = None
    while time.monotonic() < end:
        if _control(api_base, "_open", {})["open"]:
            since = None
        elif since is None:
            since = time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.05)


if __name__ == "__main__":  # the subprocess side: read the script, print the address, serve
    import sys

    spec = json.loads(sys.stdin.readline())
    if isinstance(spec, list):  # a bare script
        spec = {"script": spec}
    responder = Responder(**spec["responder"]) if spec.get("responder") else None
    with FakeOpenAI(spec.get("script"), responder, spec.get("log")) as srv:
        print(srv.api_base, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin or ends us
