"""Checks made before the first call of a run, in seconds, so that a run that cannot
succeed fails at once instead of after every shard has filled with `error` rows.

For each model: litellm knows its provider; its credentials are in the environment
(the variable named by `api_key_env`, or the ones litellm itself reads for the
provider); a configured `api_base` answers. Nothing here sends a prompt: the only
request is a GET to a server the config names.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping

import planaudit.llm  # noqa: F401  (sets the local price map before litellm loads)

REFERENCE_MODELS = ("reference/oracle", "reference/flawed", "reference/responsive")
# classical planners as subjects (formal/planners.py PLANNERS; llm/ names them, imports nothing)
PLANNER_MODELS = ("planner/lama", "planner/astar")
NO_KEY = "none"  # api_key_env: none — a local server that needs no key
# providers whose batches planaudit sends (llm/batch.py, through litellm's batch functions):
# litellm 1.110.2's create_batch covers openai, azure, vertex_ai, bedrock, mistral, xai, but
# only OpenAI's takes the request lines as planaudit writes them (the others need a
# deployment, a bucket or a format of their own, none tested here), and it has no create
# for Anthropic's message batches at all
BATCH_PROVIDERS = ("openai",)
NO_BATCH_API = (404, 405, 501)  # what a server without /batches answers


def resource_name(model_name: str) -> str:
    """The Snakemake resource that caps a model's concurrent jobs: a valid identifier for
    any model name (`gpt-4o` → `model_gpt_4o`)."""
    return "model_" + re.sub(r"\W", "_", model_name)


def answers(url: str, timeout: float) -> str | None:
    """None when a server answers at `url` (any HTTP status counts), else why not."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # it answered, if only to refuse
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        return f"{type(reason).__name__}: {reason}"


def _missing_keys(model: str, api_base: str | None, environ: Mapping[str, str]) -> list[str]:
    import litellm

    missing = litellm.validate_environment(model=model, api_base=api_base)["missing_keys"]
    # a configured api_base stands in for a provider's *_API_BASE variable
    missing = [m for m in missing if not (api_base and m.endswith("_API_BASE"))]
    # some providers accept any one of several variables (GEMINI_API_KEY or GOOGLE_API_KEY)
    return [] if any(environ.get(m) for m in missing) else missing


def check_model(entry: dict, timeout: float = 3.0,
                environ: Mapping[str, str] | None = None) -> list[str]:
    """What stops this model from answering, one line each; empty when nothing does."""
    environ = os.environ if environ is None else environ
    name, model, base = entry["name"], entry["model"], entry.get("api_base")
    who = f"model '{name}' ({model})"
    if model.startswith("planner/"):
        if model not in PLANNER_MODELS:
            return [f"{who}: no such planner (have: {', '.join(PLANNER_MODELS)})"]
        if entry.get("batch"):
            return [f"{who}: batch: true, but a planner runs in process; remove `batch`"]
        return []
    if model.startswith("reference/"):
        if model not in REFERENCE_MODELS:
            return [f"{who}: no such reference model (have: {', '.join(REFERENCE_MODELS)})"]
        if "responses" in entry and model != "reference/responsive":
            return [f"{who}: responses are read by reference/responsive only"]
        if entry.get("batch"):
            return [f"{who}: batch: true, but a reference model is answered in process, with "
                    "no provider to batch for; remove `batch` from its entry"]
        return []
    import litellm

    try:
        _, provider, _, _ = litellm.get_llm_provider(model, api_base=base)
    except Exception:
        return [f"{who}: litellm knows no provider for '{model}'; write provider/model, such as "
                "openai/gpt-4o, gemini/gemini-2.0-flash, ollama_chat/qwen2.5, or openai/<name> "
                "with api_base for an OpenAI-compatible server"]
    problems = []
    var = entry.get("api_key_env")
    if var is not None:
        if var.lower() != NO_KEY and not environ.get(var):
            problems.append(f"{who}: its key is missing: set {var} in the environment "
                            "(named by api_key_env)")
    elif missing := _missing_keys(model, base, environ):
        hint = " or ".join(missing)
        if base:
            hint += ", or add `api_key_env: none` to its entry if the server needs no key"
        problems.append(f"{who}: its credentials are missing: set {hint}")
    if base and (why := answers(base.rstrip("/") + "/models", timeout)):
        problems.append(f"{who}: nothing answers at api_base {base} ({why})")
    elif entry.get("batch") and (why := _no_batches(provider, base, timeout)):
        problems.append(f"{who}: batch: true, but {why}; remove `batch` from its entry")
    return problems


def _no_batches(provider: str, base: str | None, timeout: float) -> str | None:
    """Why this model's calls cannot go in a batch, or None: its provider is not one whose
    batches planaudit sends, or the server at `api_base` has no batch endpoint."""
    if provider == "anthropic":
        return ("planaudit sends batches through litellm, whose create_batch (1.110.2) has "
                "no Anthropic message batches")
    if provider not in BATCH_PROVIDERS:
        return (f"planaudit sends batches for {', '.join(BATCH_PROVIDERS)} only, not "
                f"{provider}")
    if base:
        try:
            with urllib.request.urlopen(base.rstrip("/") + "/batches", timeout=timeout):
                return None
        except urllib.error.HTTPError as e:
            if e.code in NO_BATCH_API:
                return f"the server at api_base {base} has no batch endpoint (GET /batches: {e.code})"
        except (urllib.error.URLError, OSError, ValueError) as e:
            return f"the server at api_base {base} did not answer GET /batches ({e})"
    return None


def server_tools(entry: dict, timeout: float = 3.0) -> str | None:
    """What a local server says of its tool support, where it says anything: llama.cpp's
    `/props` names its chat template's capabilities. A note, not a failure: offline and
    curriculum jobs need no tools, and a shard that gets none stops itself (DeadTools)."""
    base = entry.get("api_base")
    if not base or entry.get("tool_protocol", "native") != "native":
        return None
    root = re.sub(r"/v1/?$", "", base.rstrip("/"))
    try:
        with urllib.request.urlopen(root + "/props", timeout=timeout) as resp:
            props = json.loads(resp.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError):
        return None  # the server does not say (llama-cpp-python, vLLM, Ollama)
    caps = props.get("chat_template_caps") if isinstance(props, dict) else None
    if isinstance(caps, dict) and caps.get("supports_tools") is False:
        return (f"model '{entry['name']}': the server at {base} says its chat template takes no "
                "tools (llama.cpp /props: supports_tools false): online agents would get no "
                "tool; start llama-server with --jinja and a tool-aware template, or give the "
                "model `tool_protocol: text`")
    return None


def check_models(entries: list[dict], timeout: float = 3.0,
                 environ: Mapping[str, str] | None = None) -> list[str]:
    return [p for e in entries for p in check_model(e, timeout, environ)]


def require_models(entries: list[dict]) -> None:
    """Refuse to start when a model cannot answer: before any call, in seconds."""
    from planaudit.commandline import InputError

    if problems := check_models(entries):
        raise InputError("cannot start, nothing was sent:\n  " + "\n  ".join(problems))
