"""A new user's first hour: nothing is sent to a provider by mistake, a run that cannot
succeed fails before its first call, permanent failures are not retried, and the cache
never answers for another server. A local listener stands in for a provider's public
endpoint (litellm's OPENAI_BASE_URL points there), so a request that leaks is counted."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from planaudit.cli import main
from planaudit.config import ConfigError, load_config, merge
from planaudit.llm.cache import Cache, cache_key
from planaudit.llm.client import Client, ModelConfig
from planaudit.llm.preflight import check_model, resource_name
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI, reply, status

BIN = Path(sys.executable).parent
MESSAGES = [{"role": "user", "content": "Plan, please."}]


@pytest.fixture
def network(monkeypatch):
    """The 'public endpoint': any request litellm sends without an api_base lands here."""
    with FakeOpenAI([reply("leaked")] * 20) as listener:
        monkeypatch.setenv("OPENAI_BASE_URL", listener.api_base)
        monkeypatch.setenv("OPENAI_API_BASE", listener.api_base)
        yield listener


def _config(tmp_path: Path, model: dict, name: str = "my.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"models": [model], "cache": str(tmp_path / "cache"),
                                    "offline": {"methods": ["direct"]}}, sort_keys=False))
    return path


def test_the_listener_does_stand_in_for_the_network(network, tmp_path, monkeypatch):
    """The control: a model entry without api_base reaches the listener, so the tests
    below that count zero requests there would see a leak."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    c = Client(ModelConfig("x", "openai/gpt-4o", max_retries=0), Cache(tmp_path / "c"))
    assert asyncio.run(c.complete(MESSAGES)).content == "leaked"
    assert len(network.requests) == 1


@pytest.mark.parametrize("command", ["episode", "estimate", "shard"])
def test_a_misspelled_key_is_refused_before_any_request(command, network, tmp_path, capsys,
                                                        monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = FakeOpenAI()  # where the user meant to send it (never started: nothing may go)
    cfg = _config(tmp_path, {"name": "local", "model": "openai/qwen",
                             "api_bsae": server.api_base})
    args = {"episode": ["episode", "--model", "local", "--method", "direct", "--task",
                        "gripper/p01", "--results", str(tmp_path / "results")],
            "estimate": ["estimate", "--results", str(tmp_path / "results")],
            "shard": ["offline", "shard", "--model", "local", "--method", "direct", "--domain",
                      "gripper", "--out", str(tmp_path / "o.parquet"), "--transcripts",
                      str(tmp_path / "t")]}[command]
    assert main([*args, "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(cfg.read_text().splitlines(), 1) if "api_bsae" in t)
    assert f"{cfg}:{line}: models[0].api_bsae: unknown key 'api_bsae'" in err
    assert network.requests == [] and not (tmp_path / "results").exists()
    server.httpd.server_close()


def test_partial_config_is_laid_over_the_default_as_snakemake_does(tmp_path):
    cfg = tmp_path / "over.yaml"
    cfg.write_text("offline: {methods: [cot]}\nanalysis: {seed: 7}\n")
    config = load_config(cfg)
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert [m["name"] for m in config["models"]] == [m["name"] for m in base["models"]]
    assert config["offline"]["methods"] == ["cot"]  # lists are replaced whole
    assert config["offline"]["params"] == base["offline"]["params"]  # mappings merge
    assert config["analysis"] == {**base["analysis"], "seed": 7}
    assert merge({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2]}}) == {"a": {"b": 1, "c": [2]}}


def test_a_bad_value_names_its_file_line_and_field(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("models:\n  - name: a\n    model: openai/x\n    max_concurrency: 0\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(cfg))}:4: models\[0\]\.max_concurrency"):
        load_config(cfg)
    cfg.write_text("suite: [1, 2]\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(cfg))}:1: suite: "):
        load_config(cfg)


def test_a_missing_credential_fails_at_once_naming_the_variable(network, tmp_path, capsys,
                                                                  monkeypatch):
    for var in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    cfg = _config(tmp_path, {"name": "gpt", "model": "openai/gpt-4o"})
    assert main(["episode", "--config", str(cfg), "--model", "gpt", "--method", "direct",
                 "--task", "gripper/p01", "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert "nothing was sent" in err and "set OPENAI_API_KEY" in err
    assert network.requests == []
    monkeypatch.chdir(tmp_path)  # the config's cache (.cache/planaudit) is made here
    assert main(["check", "--config", str(ROOT / "config" / "paper.yaml")]) == 2
    out = capsys.readouterr().out
    assert "set OPENAI_API_KEY" in out and "GEMINI_API_KEY" in out
    assert "resource model_gpt_4o" in out  # the throttling name, printed


def test_a_run_of_the_paper_config_without_keys_fails_before_any_other_job(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    results = tmp_path / "results"
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", "1", "--nolock", "--configfile",
                           str(ROOT / "config" / "paper.yaml"), "--config",
                           f"results={results}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0
    # the first model checked stops the run, naming the variable to set
    assert re.search(r"cannot start, nothing was sent|its credentials are missing: set "
                     r"(OPENAI_API_KEY|GOOGLE_API_KEY or GEMINI_API_KEY)", proc.stderr), proc.stderr
    assert not (results / "suite").exists() and not (results / "episodes").exists()


def test_permanent_errors_are_not_retried_and_stop_later_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-refused")
    with FakeOpenAI([status(401), reply("never")]) as srv:
        c = Client(ModelConfig("x", "openai/m", api_base=srv.api_base, max_retries=5),
                   Cache(tmp_path / "c"))
        first = asyncio.run(c.complete(MESSAGES))
        second = asyncio.run(c.complete([*MESSAGES, {"role": "user", "content": "again"}]))
    assert first.attempts == 1 and first.error.startswith("not retried: AuthenticationError")
    assert second.error == first.error and second.attempts == 0
    assert len(srv.requests) == 1


def test_missing_credentials_for_a_local_server_are_not_retried(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI([reply("ok")]) as srv:
        c = Client(ModelConfig("x", "openai/m", api_base=srv.api_base, max_retries=5),
                   Cache(tmp_path / "c"))
        call = asyncio.run(c.complete(MESSAGES))
    assert call.error.startswith("not retried") and "credentials" in call.error.lower()
    assert call.attempts == 1 and srv.requests == [] and c.waits == []


def test_a_local_server_needs_no_invented_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI([reply("```\n(move a b)\n```")]) as srv:
        entry = {"name": "qwen", "model": "openai/qwen", "api_base": srv.api_base}
        assert "add `api_key_env: none`" in check_model(entry)[0]
        entry["api_key_env"] = "none"
        assert check_model(entry) == []
        c = Client(ModelConfig(**entry), Cache(tmp_path / "c"))
        assert asyncio.run(c.complete(MESSAGES)).content == "```\n(move a b)\n```"
        monkeypatch.setenv("MY_VLLM_KEY", "sk-mine")
        assert check_model({**entry, "api_key_env": "MY_VLLM_KEY"}) == []
        monkeypatch.delenv("MY_VLLM_KEY")
        assert "set MY_VLLM_KEY" in check_model({**entry, "api_key_env": "MY_VLLM_KEY"})[0]


def test_preflight_names_an_unknown_provider_and_a_silent_server():
    assert "knows no provider" in check_model({"name": "a", "model": "nosuch/model"})[0]
    assert "no such reference model" in check_model({"name": "r", "model": "reference/x"})[0]
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    problems = check_model({"name": "l", "model": "openai/m", "api_key_env": "none",
                            "api_base": f"http://127.0.0.1:{port}/v1"}, timeout=2)
    assert len(problems) == 1 and "nothing answers at api_base" in problems[0]


def test_two_servers_never_share_a_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI([reply("from A")]) as a, FakeOpenAI([reply("from B")]) as b:
        calls = [asyncio.run(Client(ModelConfig("m", "openai/same", api_base=srv.api_base),
                                    Cache(tmp_path / "c")).complete(MESSAGES)) for srv in (a, b)]
        again = asyncio.run(Client(ModelConfig("m", "openai/same", api_base=a.api_base),
                                   Cache(tmp_path / "c")).complete(MESSAGES))
    assert [c.content for c in calls] == ["from A", "from B"]
    assert not calls[1].cache_hit and len(b.requests) == 1
    assert again.cache_hit and again.content == "from A"
    base = {"model": "openai/same", "messages": MESSAGES}
    assert cache_key(base) == cache_key({**base, "api_base": None})  # old entries still found


def test_resource_names_are_valid_for_any_model_name():
    assert resource_name("gpt-4o") == "model_gpt_4o"
    assert resource_name("gemini-2.0-flash") == "model_gemini_2_0_flash"
    assert all(resource_name(n).isidentifier() for n in ("a.b-c", "x/y", "4o"))


def test_the_docs_throttling_example_works_with_the_paper_config():
    readme = (ROOT / "docs" / "explain" / "offline.md").read_text()
    example = re.search(r"snakemake --cores 8 --configfile config/paper.yaml --resources "
                        r"(model_\w+=\d)", readme)
    assert example, "docs/explain/offline.md's throttling example"
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([str(BIN / "snakemake"), "-n", "--cores", "8", "--nolock",
                           "--configfile", "config/paper.yaml", "--resources", example.group(1)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    name = example.group(1).split("=")[0]
    assert re.search(rf"resources: .*\b{name}=1\b", proc.stdout)


def test_a_shard_whose_episodes_all_fail_fails_with_the_reason(tmp_path, capsys, monkeypatch):
    from planaudit.config import load_config as load
    from planaudit.suite.prepare import prepare_task

    monkeypatch.setenv("OPENAI_API_KEY", "sk-refused")
    results = tmp_path / "results"
    config = load()
    for task in ("p01", "p02"):
        prepare_task(dict(config, suite={**config["suite"], "root": str(ROOT / "domains")}),
                     "gripper", task, results)
    with FakeOpenAI([status(401)] * 5) as srv:
        cfg = _config(tmp_path, {"name": "local", "model": "openai/m", "api_base": srv.api_base})
        out = tmp_path / "rows.parquet"
        code = main(["offline", "shard", "--config", str(cfg), "--model", "local", "--method",
                     "direct", "--domain", "gripper", "--suite", str(results / "suite"),
                     "--out", str(out), "--transcripts", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists()
    assert "all 2 episodes ended in error: not retried: AuthenticationError" in err
    # no retries: one request per episode at most (both were in flight before the first
    # refusal came back; test_permanent_errors_... shows later calls are not sent)
    assert len(srv.requests) <= 2
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["p01.jsonl", "p02.jsonl"]


@pytest.mark.parametrize("method", ["direct", "react"])
def test_episode_on_a_fresh_clone_prepares_its_task_and_names_the_failure(method, tmp_path,
                                                                           capsys):
    """The quick start's first command with no suite built: the task is prepared and
    proven on the spot; the printout, the transcript's last entry and the row all name
    the failing action and the condition that did not hold."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"cache: {tmp_path / 'cache'}\n")
    results = tmp_path / "results"
    assert main(["episode", "--config", str(cfg), "--model", "flawed", "--method", method,
                 "--task", "gripper/p01", "--results", str(results)]) == 0
    captured = capsys.readouterr()
    assert "not prepared yet" in captured.err
    assert (results / "suite" / "gripper" / "p01" / "truth.json").is_file()
    out = captured.out
    assert "=== outcome: inapplicable-action" in out
    failure = re.search(r"=== first failure \(precondition\) at step \d+, \(drop [^)]*\): "
                        r"precondition not satisfied; unsatisfied: \(at-robby \w+\)", out)
    assert failure, out[-2000:]
    assert "The robot moves from one room to another." in out  # the brief, whole
    row = __import__("json").loads(out[out.rindex("\n{") + 1:])
    assert row["first_failure_action"].startswith("(drop ")
    assert row["first_failure_detail"].startswith("precondition not satisfied; unsatisfied:")
    assert len(row["config_hash"]) == 12


def test_episode_names_an_unknown_task_and_method_with_the_choices(tmp_path, capsys):
    base = ["episode", "--model", "oracle", "--results", str(tmp_path)]
    assert main([*base, "--method", "direct", "--task", "gripper/p99"]) == 2
    assert "no task 'gripper/p99' (have: p01, p02" in capsys.readouterr().err
    assert main([*base, "--method", "direct", "--task", "nosuch/p01"]) == 2
    assert "no domain 'nosuch' (have: blocksworld, gripper" in capsys.readouterr().err
    assert main([*base, "--method", "nosuch", "--task", "gripper/p01"]) == 2
    assert "no method 'nosuch' in the config (offline: direct, cot" in capsys.readouterr().err


def test_every_subcommand_shows_its_defaults_and_an_example():
    import argparse

    from planaudit.cli import build_parser

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path, parser
        for action in subs:
            for name, sub in action.choices.items():
                yield from walk(sub, [*path, name])

    leaves = list(walk(build_parser(), []))
    assert len(leaves) >= 18
    for path, parser in leaves:
        text = parser.format_help()
        # its own example: the example runs the command it is shown under
        assert f"example:\n  planaudit {' '.join(path)} " in text, path
        for action in parser._actions:
            if action.option_strings and action.default not in (None, False, [], "==SUPPRESS=="):
                assert f"(default: {action.default})" in " ".join(text.split()), (path, action.dest)


def test_check_reads_what_a_llama_cpp_server_says_of_its_tools(capsys):
    """llama.cpp's /props names its template's capabilities: a server that takes no tools
    is named before the run (a note: offline jobs need none, and the shard alarm stops an
    online one); a server that says nothing (llama-cpp-python, vLLM) gets no note."""
    import json as _json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from planaudit.cli import main as cli
    from planaudit.llm.preflight import server_tools

    caps = {"supports_tools": False}

    class Props(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = (_json.dumps({"chat_template_caps": caps}) if self.path == "/props"
                    else '{"data": []}').encode()
            self.send_response(200 if self.path in ("/props", "/v1/models") else 404)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Props)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        entry = {"name": "l", "model": "openai/m", "api_key_env": "none",
                 "api_base": f"http://127.0.0.1:{srv.server_port}/v1"}
        assert "takes no tools" in server_tools(entry) and "--jinja" in server_tools(entry)
        assert server_tools({**entry, "tool_protocol": "text"}) is None
        assert cli(["check", "--spec", _json.dumps({"models": [entry]})]) == 0
        assert "note: model 'l': the server" in capsys.readouterr().out
        caps["supports_tools"] = True
        assert server_tools(entry) is None
    finally:
        srv.shutdown()
    assert server_tools({**entry, "api_base": "http://127.0.0.1:9/v1"}) is None  # says nothing
