"""The door between planaudit's calls and Inspect's model: messages both ways, one client.

planaudit's regimes speak OpenAI-style dicts through `llm.client.Client.complete`; under
Inspect the model is `get_model()`. `InspectClient` has the client's shape (`cfg`,
`complete` returning a `Call`), so the regimes' own episode code (strategies, rows) runs
unchanged, each call going through Inspect (its retries, its log). Before each call the
call's planaudit metadata (task folder, purpose, protocol, a reference's answer) is put
in the sample's `store()` under `CALL`: that is how `planaudit/oracle` and
`planaudit/flawed` (`reference.py`) learn what the pipeline's reference provider is told.
"""

from __future__ import annotations

import json
import time

from planaudit.llm.client import Call, ModelConfig

CALL = "planaudit:call"  # the store key of the active call's metadata
REFERENCE_LABEL = "non-LLM reference"


def model_config() -> ModelConfig:
    """The active Inspect model as planaudit names it: `planaudit/oracle` is the reference
    `reference/oracle` (so rows say `reference: true`), any other model keeps its name."""
    from inspect_ai.model import get_model

    name = str(get_model())
    if name.startswith("planaudit/"):
        variant = name.split("/", 1)[1]
        return ModelConfig(name=variant, model=f"reference/{variant}", family="reference",
                           tier="reference")
    return ModelConfig(name=name, model=name)


def to_inspect(messages: list[dict]) -> list:
    """planaudit's message dicts as Inspect chat messages."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall

    out: list = []
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = [ToolCall(id=tc.get("id") or f"call_{i}",
                              function=(tc.get("function") or {}).get("name") or "",
                              arguments=_arguments((tc.get("function") or {}).get("arguments")))
                     for i, tc in enumerate(m.get("tool_calls") or [])]
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            out.append(ChatMessageTool(content=content, tool_call_id=m.get("tool_call_id")))
        else:
            raise ValueError(f"a message with role {role!r}")
    return out


def _arguments(raw) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"raw": raw}


def to_planaudit(messages: list) -> list[dict]:
    """Inspect chat messages as planaudit's dicts (what a reference model reads)."""
    out: list[dict] = []
    for m in messages:
        d: dict = {"role": m.role, "content": m.text}
        if m.role == "assistant" and m.tool_calls:
            d["tool_calls"] = [{"id": tc.id, "type": "function",
                                "function": {"name": tc.function,
                                             "arguments": json.dumps(tc.arguments)}}
                               for tc in m.tool_calls]
        if m.role == "tool":
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


def out_of_context(out) -> str | None:
    """Inspect's word that the prompt did not fit the model's context (its providers turn
    the provider's context-length error into `stop_reason` "model_length"), as the error
    planaudit's rows read as `context-exhausted` (`llm.client.context_exhausted`); None
    for any other output."""
    if getattr(out, "stop_reason", None) != "model_length":
        return None
    said = (out.error or (out.completion if out.choices else "") or "")[:300]
    return f"ContextWindowExceededError (Inspect stop_reason model_length): {said}"


def output_call(out, reference: bool, latency: float) -> Call:
    """An Inspect model output as planaudit's call record: tokens, stop reason, and a
    prompt past the context as the failed call the regimes read as `context-exhausted`."""
    usage = out.usage
    full = out_of_context(out)
    return Call(None if full or not out.choices else out.completion, [],
                usage.input_tokens if usage else 0, usage.output_tokens if usage else 0,
                0.0 if reference else None, latency, False, 1,
                error=full or (out.error if out.choices else (out.error or "no reply")),
                finish_reason="length" if out.stop_reason == "max_tokens" else "stop",
                price_source="reference" if reference else None)


def set_call(meta: dict) -> None:
    from inspect_ai.util import store

    store().set(CALL, meta)


class InspectClient:
    """`llm.client.Client`'s shape over Inspect's active model; every call it made is kept
    (`calls`, `exchanges`) so the solver can put the conversation into the sample."""

    def __init__(self) -> None:
        self.cfg = model_config()
        self.exchanges: list[tuple[list[dict], Call]] = []
        self.output = None  # Inspect's output of the last call that answered

    @property
    def reference(self) -> bool:
        return self.cfg.model.startswith("reference/")

    async def complete(self, messages: list[dict], *, temperature: float = 0.0,
                       max_tokens: int = 4096, sample: int = 0, tools: list | None = None,
                       metadata: dict | None = None) -> Call:
        from inspect_ai.model import GenerateConfig, get_model

        if tools:
            raise ValueError("InspectClient sends no tools: the online task uses Inspect's own")
        set_call(dict(metadata or {}))
        start = time.perf_counter()
        try:
            out = await get_model().generate(to_inspect(messages), config=GenerateConfig(
                temperature=temperature, max_tokens=max_tokens))
        except Exception as e:  # Inspect has retried what it retries: the episode's error
            call = Call(None, attempts=1, error=f"{type(e).__name__}: {str(e)[:300]}")
        else:
            self.output = out
            call = output_call(out, self.reference, time.perf_counter() - start)
        self.exchanges.append((list(messages), call))
        return call

    def conversation(self) -> list:
        """The last call's messages and its reply, as the sample's messages."""
        from inspect_ai.model import ChatMessageAssistant

        if not self.exchanges:
            return []
        messages, call = self.exchanges[-1]
        if call.error is None and self.output is not None:
            return [*to_inspect(messages), self.output.message]
        return [*to_inspect(messages), ChatMessageAssistant(content=call.content or "")]
