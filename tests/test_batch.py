"""Batch mode through litellm's real batch path, against a scripted local server that
implements the subset of OpenAI's file and batch endpoints a batch job uses (upload,
create, retrieve, list, file content) beside chat completions (the ordinary calls a
request falls back to). Each batch the server is sent follows the next step of its
script: how many polls it stays in progress, how it ends (completed, expired, failed),
which of its requests fail. A killed job resumes by the batch id it kept on disk."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
import time
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI
from tests.test_reference import task_dir

TASKS = ["blocksworld/p04", "blocksworld/p09", "gripper/p03"]


def answer_text(body: dict) -> str:
    """The scripted model's reply: a function of the prompt, the same whether it is asked
    in a batch or by an ordinary call."""
    key = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()[:12]
    return f"ref {key}\nUNSOLVABLE"


def completion(body: dict) -> dict:
    return {"id": "chatcmpl-batch", "object": "chat.completion", "created": 0,
            "model": body.get("model", "test"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer_text(body)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client killed or gone
            super().handle_error(request, client_address)


class BatchServer:
    """OpenAI's /files, /batches and /chat/completions, scripted. `script`: one dict per
    batch created, in order (later batches take the last): `polls` (retrievals that find
    it in progress; default 1), `end` (completed, expired, failed, cancelled), `answer`
    (how many of its requests the output file answers before the end; default all),
    `fail` (how many of the answered ones come back as errors in the error file instead).
    `hold`: while set, every batch stays in progress (a job can be killed mid-poll);
    `lose`: how many batches are made but answered with a 500 (a reply lost in transit);
    `hold_files`: while set, an upload is held before it is stored (`uploads` counts the
    uploads that arrived, held ones included)."""

    def __init__(self, script: list[dict] | None = None):
        self.script = list(script or [{}])
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.plans: dict[str, dict] = {}
        self.polls: dict[str, int] = {}
        self.log: list[tuple[str, str]] = []  # (method, path) of every request
        self.chat: list[dict] = []  # bodies of ordinary calls
        self.hold = threading.Event()
        self.lose = 0  # batches made whose creation is answered 500
        self.hold_files = threading.Event()
        self.uploads = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, code: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, code: int, body: dict) -> None:
                self._send(code, json.dumps(body).encode())

            def do_GET(self):
                path = self.path.split("?", 1)[0].removeprefix("/v1")
                with server.lock:
                    server.log.append(("GET", path))
                    if path == "/models":
                        return self._json(200, {"object": "list", "data": []})
                    if path == "/batches":
                        data = sorted(server.batches.values(), key=lambda b: -b["created_at"])
                        return self._json(200, {"object": "list", "data": data,
                                                "has_more": False})
                    if path.startswith("/batches/"):
                        bid = path.split("/")[2]
                        if bid not in server.batches:
                            return self._json(404, {"error": {"message": "no such batch"}})
                        return self._json(200, server.advance(bid))
                    if path.startswith("/files/") and path.endswith("/content"):
                        return self._send(200, server.files[path.split("/")[2]],
                                          "application/octet-stream")
                self._json(404, {"error": {"message": f"no route {path}"}})

            def do_POST(self):
                path = self.path.split("?", 1)[0].removeprefix("/v1")
                data = self.rfile.read(int(self.headers.get("content-length", 0)))
                if path == "/files":
                    with server.lock:
                        server.uploads += 1
                    while server.hold_files.is_set():
                        time.sleep(0.02)
                with server.lock:
                    server.log.append(("POST", path))
                    if path == "/files":
                        raw = (f"content-type: {self.headers['content-type']}\r\n\r\n"
                               .encode() + data)
                        form = BytesParser(policy=email_policy).parsebytes(raw)
                        parts = {p.get_param("name", header="content-disposition"): p
                                 for p in form.iter_parts()}
                        fid = server.store(parts["file"].get_payload(decode=True))
                        return self._json(200, {"id": fid, "object": "file", "bytes": len(data),
                                                "created_at": 0, "filename": "in.jsonl",
                                                "purpose": "batch", "status": "processed"})
                    body = json.loads(data or b"{}")
                    if path == "/batches":
                        made = server.create(body)
                        if server.lose:  # made, but the answer is lost on the way
                            server.lose -= 1
                            return self._json(500, {"error": {"message": "scripted 500"}})
                        return self._json(200, made)
                    if path == "/chat/completions":
                        server.chat.append(body)
                        return self._json(200, completion(body))
                self._json(404, {"error": {"message": f"no route {path}"}})

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def store(self, content: bytes) -> str:
        fid = f"file-{len(self.files) + 1}"
        self.files[fid] = content
        return fid

    def create(self, body: dict) -> dict:
        bid = f"batch_{len(self.batches) + 1}"
        self.plans[bid] = self.script[min(len(self.batches), len(self.script) - 1)]
        lines = self.files[body["input_file_id"]].decode().splitlines()
        self.batches[bid] = {
            "id": bid, "object": "batch", "endpoint": body["endpoint"], "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"], "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": len(self.batches),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata")}
        self.polls[bid] = 0
        return self.batches[bid]

    def advance(self, bid: str) -> dict:
        """A retrieval: in progress for the plan's polls (or while held), then its end."""
        batch, plan = self.batches[bid], self.plans[bid]
        if batch["status"] not in ("validating", "in_progress"):
            return batch
        self.polls[bid] += 1
        if self.hold.is_set() or self.polls[bid] <= plan.get("polls", 1):
            batch["status"] = "in_progress"
            return batch
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].decode().splitlines()]
        end = plan.get("end", "completed")
        answered = lines[:plan.get("answer", len(lines))] if end != "failed" else []
        failing = answered[:plan.get("fail", 0)]
        out = [{"id": f"r{i}", "custom_id": x["custom_id"], "error": None,
                "response": {"status_code": 200, "request_id": f"q{i}",
                             "body": completion(x["body"])}}
               for i, x in enumerate(answered[len(failing):])]
        errors = [{"id": f"e{i}", "custom_id": x["custom_id"], "error": None,
                   "response": {"status_code": 500, "request_id": f"e{i}",
                                "body": {"error": {"message": "scripted 500"}}}}
                  for i, x in enumerate(failing)]
        errors += [{"id": f"x{i}", "custom_id": x["custom_id"], "response": None,
                    "error": {"code": "batch_expired", "message": "not answered in time"}}
                   for i, x in enumerate(lines[len(answered):]) if end == "expired"]
        if out:
            batch["output_file_id"] = self.store("".join(json.dumps(o) + "\n" for o in out)
                                                 .encode())
        if errors:
            batch["error_file_id"] = self.store("".join(json.dumps(e) + "\n" for e in errors)
                                                .encode())
        batch["status"] = end
        batch["request_counts"] = {"total": len(lines), "completed": len(out),
                                   "failed": len(lines) - len(out)}
        return batch

    def count(self, method: str, path: str) -> int:
        return sum(1 for m, p in self.log if (m, p) == (method, path))

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> BatchServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    for name in TASKS:
        task_dir(name, str(root))
    return root


def entry(api_base: str, **over) -> dict:
    return {"name": "m", "model": "openai/test-model", "api_base": api_base,
            "api_key_env": "none", "input_price": 2.0, "output_price": 8.0,
            "max_concurrency": 2, "max_retries": 1, "backoff_base": 0.01, "backoff_cap": 0.02,
            "batch": True, "batch_poll": 0.02, **over}


def shard(tmp: Path, suite: Path, model: dict, method: str = "direct",
          cache: str = "cache") -> pl.DataFrame:
    from planaudit.experiment import Experiment
    from planaudit.shard import run_shard

    config = {"models": [model], "offline": {"methods": [method], "witness": "none"},
              "cache": str(tmp / cache)}
    exp = Experiment.from_dict(config)
    frames = run_shard(exp, exp.model(model["name"]), exp.method("offline", method),
                       ["blocksworld", "gripper"], suite, tmp / f"rows-{cache}" / "{domain}.parquet",
                       tmp / f"transcripts-{cache}" / "{domain}", progress_every=600)
    return pl.concat(list(frames.values())).sort("domain", "task")


def records(tmp: Path, cache: str = "cache") -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((tmp / cache / "batches").glob("*.json"))]


def test_a_batch_job_runs_to_the_end_and_matches_ordinary_calls(suite, tmp_path):
    """Offline direct in batch mode: one upload, one batch, no ordinary call; the rows
    are those of the same job with ordinary calls, at half the cost."""
    with BatchServer() as srv:
        batched = shard(tmp_path, suite, entry(srv.api_base))
        assert (srv.count("POST", "/files"), srv.count("POST", "/batches"), len(srv.chat)) \
            == (1, 1, 0)
        ordinary = shard(tmp_path, suite, entry(srv.api_base, batch=False), cache="plain")
        assert len(srv.chat) == len(TASKS)
    assert batched["error"].is_null().all()
    # what differs: the price, the wall time, the calls the cache answered (all of them,
    # in batch mode) and the config hash (the entry says batch)
    differ = ("cost_usd", "latency_s", "cache_hits", "config_hash")
    keep = [c for c in batched.columns if c not in differ]
    assert batched.select(keep).equals(ordinary.select(keep))
    assert batched["cache_hits"].to_list() == [1] * len(TASKS)
    assert batched["cost_usd"].to_list() == pytest.approx([c / 2 for c in ordinary["cost_usd"]])
    [record] = records(tmp_path)
    assert record["outcome"] == "completed" and sorted(record["answered"]) == sorted(record["keys"])


def test_a_multi_call_strategy_sends_one_batch_a_wave(suite, tmp_path):
    """cot asks for its reasoning, then for the plan given the reasoning: two waves, two
    batches of one request per task each, and not one ordinary call."""
    with BatchServer() as srv:
        rows = shard(tmp_path, suite, entry(srv.api_base), method="cot")
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (2, 0)
    first, second = records(tmp_path)
    assert len(first["keys"]) == len(second["keys"]) == len(TASKS)
    assert not set(first["keys"]) & set(second["keys"])
    assert rows["error"].is_null().all() and rows["cache_hits"].to_list() == [2] * len(TASKS)


@pytest.mark.parametrize("first", [{"end": "expired", "answer": 1}, {"fail": 2}],
                         ids=["expired", "partly-failed"])
def test_what_a_batch_left_unanswered_goes_into_one_more_batch(suite, tmp_path, first):
    """A batch that expires with one answer, or comes back with two of its lines failed:
    the answers are kept, the other requests (and only they) go into a second batch."""
    with BatchServer([first, {}]) as srv:
        rows = shard(tmp_path, suite, entry(srv.api_base))
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (2, 0)
    one, two = records(tmp_path)
    assert one["outcome"] == first.get("end", "completed") and len(one["answered"]) == 1
    assert sorted(two["keys"]) == sorted(one["failed"]) and len(two["answered"]) == 2
    assert rows["error"].is_null().all()
    assert rows["cost_usd"].to_list() == pytest.approx([(100 * 2.0 + 20 * 8.0) / 1e6 / 2] * 3)


@pytest.mark.parametrize("end", ["expired", "failed"])
def test_after_two_batches_without_an_answer_a_request_is_an_ordinary_call(suite, tmp_path,
                                                                             end):
    with BatchServer([{"end": end, "answer": 0}]) as srv:
        rows = shard(tmp_path, suite, entry(srv.api_base))
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (2, len(TASKS))
    assert [r["outcome"] for r in records(tmp_path)] == [end, end]
    assert rows["error"].is_null().all()
    assert rows["cost_usd"].to_list() == pytest.approx([(100 * 2.0 + 20 * 8.0) / 1e6] * 3)


def test_a_job_killed_after_submitting_resumes_its_batch_and_never_submits_again(suite,
                                                                                  tmp_path):
    """The shard command is killed (SIGKILL) while its batch is in progress; the rerun polls
    the batch by the id kept on disk. A kill that fell between making the batch and keeping
    its id (the record says only which file it uploaded) is resumed as well: the batch made
    of that file is found among the provider's batches, not made again."""
    with BatchServer() as srv:
        srv.hold.set()  # the batch stays in progress until released
        model = entry(srv.api_base, batch_poll=0.2)
        config = {"models": [model], "offline": {"methods": ["direct"], "witness": "none"},
                  "cache": str(tmp_path / "cache")}
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "planaudit"), "offline", "shard",
             "--spec", json.dumps(config), "--model", "m", "--method", "direct",
             "--domain", "blocksworld", "--domain", "gripper", "--suite", str(suite),
             "--out", str(tmp_path / "killed" / "{domain}.parquet"),
             "--transcripts", str(tmp_path / "killed" / "{domain}")],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        while not any("batch" in r for r in _quiet_records(tmp_path)):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no batch was submitted"
            time.sleep(0.1)
        while srv.count("GET", "/batches/batch_1") < 2:  # polled in progress: then killed
            time.sleep(0.05)
        proc.kill()
        proc.wait()
        proc.stderr.close()
        [kept] = records(tmp_path)
        assert kept["batch"] == "batch_1" and "outcome" not in kept
        # the same state, as a kill between POST /batches and the record's write leaves it
        shutil.copytree(tmp_path / "cache", tmp_path / "window")
        [path] = (tmp_path / "window" / "batches").glob("*.json")
        path.write_text(json.dumps({k: v for k, v in kept.items() if k != "batch"}))

        srv.hold.clear()
        resumed = shard(tmp_path, suite, model)
        listed = srv.count("GET", "/batches")
        window = shard(tmp_path, suite, model, cache="window")
        assert srv.count("GET", "/batches") == listed + 1  # looked for the file's batch
        assert (srv.count("POST", "/files"), srv.count("POST", "/batches"), len(srv.chat)) \
            == (1, 1, 0)
    assert resumed["error"].is_null().all() and window["error"].is_null().all()
    assert [r["batch"] for r in records(tmp_path) + records(tmp_path, "window")] \
        == ["batch_1", "batch_1"]


def test_a_batch_made_whose_answer_was_lost_is_found_not_made_again(suite, tmp_path):
    """POST /batches makes the batch but answers 500: the retry looks among the provider's
    batches first, finds the one made from its file, and makes no second one."""
    with BatchServer() as srv:
        srv.lose = 1
        rows = shard(tmp_path, suite, entry(srv.api_base))
        assert (srv.count("POST", "/batches"), len(srv.batches), len(srv.chat)) == (1, 1, 0)
        assert srv.count("GET", "/batches") == 2  # before the lost try, and before the retry
    assert rows["error"].is_null().all() and records(tmp_path)[0]["batch"] == "batch_1"


def _quiet_records(tmp: Path) -> list[dict]:
    """The records on disk while another process may be replacing them."""
    try:
        return records(tmp)
    except (FileNotFoundError, json.JSONDecodeError):
        return []


def test_check_refuses_batch_mode_where_there_is_no_batch_api():
    from planaudit.llm.preflight import check_model

    keys = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    refused = {
        "reference": {"name": "o", "model": "reference/oracle", "batch": True},
        "anthropic": {"name": "c", "model": "anthropic/claude-sonnet-4-5", "batch": True},
        "gemini": {"name": "g", "model": "gemini/gemini-2.0-flash", "batch": True},
    }
    with FakeOpenAI() as plain, BatchServer() as srv:
        refused["no endpoint"] = entry(plain.api_base)
        found = {what: check_model(e, environ=keys | {"GEMINI_API_KEY": "k"})
                 for what, e in refused.items()}
        assert check_model(entry(srv.api_base), environ=keys) == []
        assert check_model(entry(plain.api_base, batch=False), environ=keys) == []
    for what, problems in found.items():
        assert len(problems) == 1 and "batch: true" in problems[0], (what, problems)
    assert "Anthropic message batches" in found["anthropic"][0]
    assert "no batch endpoint (GET /batches: 501)" in found["no endpoint"][0]


def test_estimate_prices_batched_calls_at_the_batch_rate(suite):
    from planaudit.estimate import estimate, render
    from planaudit.experiment import Experiment

    base = {"model": "openai/gpt-4o", "input_price": 2.5, "output_price": 10.0}
    config = {"models": [{"name": "plain", **base},
                         {"name": "batched", **base, "batch": True},
                         {"name": "cheaper", **base, "batch": True, "batch_rate": 0.4}],
              "offline": {"methods": ["direct", "cot"]}, "online": {"methods": []}}
    rows = {(r.model, r.method): r for r in estimate(Experiment.from_dict(config), suite)}
    for method in ("direct", "cot"):
        plain = rows[("plain", method)]
        assert plain.batch_rate is None and plain.usd > 0
        assert rows[("batched", method)].usd == pytest.approx(plain.usd / 2)
        assert rows[("cheaper", method)].usd == pytest.approx(plain.usd * 0.4)
    text = render(list(rows.values()))
    assert "batch x0.5" in text and "batch x0.4" in text and "priced at R times" in text


def test_a_curriculum_job_goes_in_one_batch(suite, tmp_path):
    """The curriculum's calls (one per case) go in one batch like offline direct's."""
    import yaml

    from planaudit.curriculum.shard import run_curriculum_shard
    from planaudit.experiment import Experiment

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["curriculum"] = {"tests": ["t1"], "instances": 2, "shots": 0}
    with BatchServer() as srv:
        config["models"] = [entry(srv.api_base)]
        exp = Experiment.from_dict(config)
        frames = run_curriculum_shard(exp, exp.model("m"), "t1", ["blocksworld", "gripper"], suite,
                                      str(tmp_path / "{domain}.parquet"),
                                      str(tmp_path / "tr" / "{domain}"))
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (1, 0)
    rows = pl.concat(list(frames.values()))
    [record] = records(tmp_path)
    assert rows.height == len(record["answered"]) == 2 and rows["error"].is_null().all()


def test_an_acpbench_job_goes_in_one_batch(suite, tmp_path):
    """ACPBench's questions (one call each) go in one batch too."""
    import yaml

    from planaudit.acpbench.shard import run_acpbench_shard
    from planaudit.experiment import Experiment

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["cache"] = str(tmp_path / "cache")
    config["acpbench"] = {"types": ["app"], "forms": ["bool", "mcq"], "tasks": 1, "states": 1,
                          "domains": ["gripper"]}
    with BatchServer() as srv:
        config["models"] = [entry(srv.api_base)]
        exp = Experiment.from_dict(config)
        frame, _ = run_acpbench_shard(exp, exp.model("m"), "app", suite, str(tmp_path / "r.parquet"),
                                      str(tmp_path / "tr"))
        assert (srv.count("POST", "/batches"), len(srv.chat)) == (1, 0)
    [record] = records(tmp_path)
    assert frame.height == len(record["answered"]) == 2 and frame["error"].is_null().all()
