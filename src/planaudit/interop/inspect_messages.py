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


def merge(steps: list[dict]) -> list[tuple[dict, dict | None]]:
    """The transcript's messages once each, in order: (message, its call step or None).

    A call continues the earlier call whose messages are the longest prefix of its own
    (Self-Refine's second answer continues the first answer, not the critique that came
    between): what follows that prefix is new, but for the earlier call's reply, already
    added after that call."""
    bases: list[tuple[list[dict], dict]] = []  # every earlier call's messages and reply
    out: list[tuple[dict, dict | None]] = []
    for step in steps:
        if "call" not in step:
            continue
        messages, reply = step["messages"], _reply(step["call"])
        base = _longest_prefix(bases, messages)
        new = messages if base is None else messages[len(base[0]):]
        if base is not None and new and _same_reply(new[0], base[1]):
            new = new[1:]
        out += [(m, None) for m in new]
        out.append((reply, step))
        bases.append((messages, reply))
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


def to_inspect(steps: list[dict], model: str) -> list:
    """The merged transcript as Inspect chat messages (tool results name their function)."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )

    names: dict[str, str] = {}
    messages = []
    for m, step in merge(steps):
        role = m.get("role")
        text = _text(m.get("content"))
        if role == "system":
            messages.append(ChatMessageSystem(content=text))
        elif role == "user":
            messages.append(ChatMessageUser(content=text))
        elif role == "tool":
            call_id = str(m.get("tool_call_id") or "")
            messages.append(ChatMessageTool(content=text, tool_call_id=call_id,
                                            function=names.get(call_id)))
        else:
            calls = _tool_calls(m.get("tool_calls"))
            for tc in calls or []:
                names[tc.id] = tc.function
            meta = None
            if step is not None:
                meta = {"purpose": step.get("purpose"),
                        **{k: step["call"].get(k) for k in CALL_KEYS if k in step["call"]}}
            messages.append(ChatMessageAssistant(content=text, tool_calls=calls, model=model,
                                                 source="generate", metadata=meta))
    return messages


def first_user_text(steps: list[dict]) -> str:
    for step in steps:
        for m in step.get("messages") or []:
            if m.get("role") == "user":
                return _text(m.get("content"))
    return ""
