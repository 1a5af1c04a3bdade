"""An episode's transcript as one Inspect conversation.

A transcript records every call with the whole conversation it was sent (OpenAI-style
messages) and its reply. An Inspect sample holds one list of messages, so the calls are
merged: a call whose messages extend an earlier call's (the same conversation, grown by
that call's reply and the tool results since) adds only what is new (after the longest
such earlier conversation); a call that extends
none (a critic's own prompt, a Reflexion reflection, a Self-Refine critique) starts a new
conversation, appended in order with its own system message; a call sent the very same
messages again (Tree of Thoughts' proposals and scores on one prompt) adds only its reply.
Each reply carries its call's purpose, tokens and cache hit in the message's metadata, so
nothing a reader of the transcript sees is lost; only the tool result of an episode's
last call (it ended the episode: `submit`, a fatal action) is absent, as in the
transcript itself, whose ending line says what it did.
"""

from __future__ import annotations

import json

STOPS = {"stop": "stop", "length": "max_tokens", "tool_calls": "tool_calls",
         "function_call": "tool_calls", "content_filter": "content_filter"}
CALL_KEYS = ("input_tokens", "output_tokens", "cost_usd", "latency_s", "cache_hit", "attempts",
             "error", "finish_reason")


def _text(content) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content)


def _tool_calls(calls: list[dict] | None):
    from inspect_ai.tool import ToolCall

    out = []
    for tc in calls or []:
        fn = tc.get("function") or {}
        raw = fn.get("arguments")
        error = None
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except json.JSONDecodeError as e:
            args, error = {}, f"arguments are not JSON ({e}): {raw}"
        if not isinstance(args, dict):
            args, error = {}, f"arguments are not a JSON object: {raw}"
        out.append(ToolCall(id=str(tc.get("id") or ""), function=str(fn.get("name") or ""),
                            arguments=args, parse_error=error))
    return out or None


def _reply(call: dict) -> dict:
    """The reply as the next call of its conversation would hold it."""
    reply = {"role": "assistant", "content": call.get("content") or ""}
    if call.get("tool_calls"):
        reply["tool_calls"] = call["tool_calls"]
    return reply


def merge(steps: list[dict]) -> list[tuple[dict, dict | None, list[int] | None]]:
    """The transcript's messages once each, in order: (message, its call step, the
    positions of the messages that call was sent), the last two None but for replies.

    A call continues the earlier call whose messages are the longest prefix of its own
    (Self-Refine's second answer continues the first answer, not the critique that came
    between): what follows that prefix is new, but for the earlier call's reply, already
    added after that call."""
    bases: list[tuple[list[dict], dict, list[int], int]] = []  # messages, reply, positions
    out: list[tuple[dict, dict | None, list[int] | None]] = []
    for step in steps:
        if "call" not in step:
            continue
        messages, reply = step["messages"], _reply(step["call"])
        base = _longest_prefix(bases, messages)
        new = messages if base is None else messages[len(base[0]):]
        sent = [] if base is None else list(base[2])
        if base is not None and new and _same_reply(new[0], base[1]):
            new = new[1:]
            sent.append(base[3])
        sent += range(len(out), len(out) + len(new))
        out += [(m, None, None) for m in new]
        out.append((reply, step, sent))
        bases.append((messages, reply, sent, len(out) - 1))
    return out


def _longest_prefix(bases: list[tuple[list[dict], dict]], messages: list[dict]):
    """The base with the longest messages that begin `messages` (its last message is
    compared first: most bases of a long agent episode fail there, cheaply)."""
    best = None
    for base in bases:
        n = len(base[0])
        if (n <= len(messages) and (best is None or n > len(best[0]))
                and (n == 0 or messages[n - 1] == base[0][-1]) and messages[:n] == base[0]):
            best = base
    return best


def _same_reply(message: dict, reply: dict) -> bool:
    return (message.get("role") == "assistant"
            and (message.get("content") or "") == reply["content"]
            and (message.get("tool_calls") or None) == reply.get("tool_calls"))


def to_inspect(steps: list[dict], model: str) -> tuple[list, list]:
    """The merged transcript as Inspect chat messages (tool results name their function),
    and as Inspect events: a model event per call (its input the very message objects of
    the conversation, so the log's writer pools them instead of repeating them) and a tool
    event per tool result, which `inspect view`'s Transcript tab shows."""
    from inspect_ai.event import ModelEvent, ToolEvent
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        ModelOutput,
        ModelUsage,
    )

    calls: dict[str, object] = {}
    messages, events = [], []
    for m, step, sent in merge(steps):
        role = m.get("role")
        text = _text(m.get("content"))
        if role == "system":
            messages.append(ChatMessageSystem(content=text))
        elif role == "user":
            messages.append(ChatMessageUser(content=text))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            tc = calls.get(call_id)
            messages.append(ChatMessageTool(content=text, tool_call_id=call_id,
                                            function=tc.function if tc else None))
            if tc is not None:
                events.append(ToolEvent(id=call_id, function=tc.function,
                                        arguments=tc.arguments, result=text))
        else:
            tool_calls = _tool_calls(m.get("tool_calls"))
            calls.update({tc.id: tc for tc in tool_calls or []})
            meta = None
            if step is not None:
                meta = {"purpose": step.get("purpose"),
                        **{k: step["call"].get(k) for k in CALL_KEYS if k in step["call"]}}
            reply = ChatMessageAssistant(content=text, tool_calls=tool_calls, model=model,
                                         source="generate", metadata=meta)
            messages.append(reply)
            if step is not None:
                call = step["call"]
                usage = ModelUsage(input_tokens=call.get("input_tokens") or 0,
                                   output_tokens=call.get("output_tokens") or 0)
                usage.total_tokens = usage.input_tokens + usage.output_tokens
                stop = STOPS.get(call.get("finish_reason") or "", "unknown")
                events.append(ModelEvent(
                    model=model, input=[messages[i] for i in sent or []], tools=[],
                    tool_choice="auto" if tool_calls else "none", config=GenerateConfig(),
                    output=ModelOutput(model=model, usage=usage, error=call.get("error"),
                                       choices=[ChatCompletionChoice(message=reply,
                                                                     stop_reason=stop)]),
                    cache="read" if call.get("cache_hit") else None,
                    working_time=call.get("latency_s"),
                    error=call.get("error")))
    return messages, events


def first_user_text(steps: list[dict]) -> str:
    for step in steps:
        for m in step.get("messages") or []:
            if m.get("role") == "user":
                return _text(m.get("content"))
    return ""
