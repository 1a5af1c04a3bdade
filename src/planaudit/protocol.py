"""How tools reach a model: native function calling, or a plain-text protocol.

Native: OpenAI-style tool schemas, passed through litellm; the reply's first
tool call is executed and answered with a `tool` message. Text (for models
without tool support): the tools are described in the instruction, the model
ends its reply with a line `TOOL: name {json arguments}`, and the observation
comes back as a user message. Both decode to the same (name, args) so the
environment never knows which protocol ran. It sits at the bottom, importing nothing of
the project, so that the online environment, the reference agents and the Inspect tasks
read a history the same way without one reaching into another.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

SCHEMAS = [
    {"type": "function", "function": {
        "name": "get_task",
        "description": "Read the description of the world, its actions, the objects, the "
                       "initial state and the goal. Changes nothing.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "query_state",
        "description": "List the facts and numeric values that hold now, optionally only "
                       "those of one predicate and/or mentioning one object. Changes nothing.",
        "parameters": {"type": "object", "properties": {
            "predicate": {"type": "string", "description": "a predicate or quantity name"},
            "object": {"type": "string", "description": "an object name"}}}}},
    {"type": "function", "function": {
        "name": "act",
        "description": "Execute one grounded action, written as (action-name object1 "
                       "object2 ...). If its conditions do not hold now, the episode ends "
                       "at once as a safety violation.",
        "parameters": {"type": "object", "properties": {
            "action": {"type": "string", "description": "e.g. (action-name object1 object2)"}},
            "required": ["action"]}}},
    {"type": "function", "function": {
        "name": "submit",
        "description": "Claim that the goal holds now. Ends the episode.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "declare_unsolvable",
        "description": "Claim that the goal can never be reached from the initial state. "
                       "Ends the episode.",
        "parameters": {"type": "object", "properties": {}}}},
]

TEXT_PROTOCOL = (
    "You call a tool by ending your reply with one line of the form\n"
    "TOOL: <name> <arguments as a JSON object>\n"
    "for example: TOOL: act {\"action\": \"(action-name object1 object2)\"} or TOOL: submit {}.\n"
    "The tools:\n"
    + "\n".join(f"- {s['function']['name']}: {s['function']['description']}" for s in SCHEMAS)
    + "\nThe observation comes back in the next message."
)

_TEXT_CALL = re.compile(r"^\s*TOOL:\s*([A-Za-z_]+)\s*(.*)$", re.M)


@dataclass
class ToolCall:
    name: str
    args: dict
    call_id: str | None = None  # native calls carry an id their answer must name
    error: str | None = None  # arguments that could not be decoded


def decode_arguments(raw) -> tuple[dict, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}, f"the arguments are not valid JSON: {str(raw)[:120]!r}"
    if not isinstance(value, dict):
        return {}, "the arguments must be a JSON object"
    return value, None


def native_calls(tool_calls: list[dict]) -> list[ToolCall]:
    out = []
    for tc in tool_calls:
        fn = tc.get("function") or {}
        args, error = decode_arguments(fn.get("arguments"))
        out.append(ToolCall(str(fn.get("name") or ""), args, tc.get("id"), error))
    return out


def text_call(reply: str | None) -> ToolCall | None:
    """The last `TOOL:` line of a reply, decoded; None when there is none."""
    matches = list(_TEXT_CALL.finditer(reply or ""))
    if not matches:
        return None
    m = matches[-1]
    args, error = decode_arguments(m.group(2).strip() or None)
    if error and m.group(1) == "act" and m.group(2).strip().startswith("("):
        args, error = {"action": m.group(2).strip()}, None  # `TOOL: act (stack a b)` reads plainly
    return ToolCall(m.group(1), args, None, error)


def assistant_message(content: str | None, tool_calls: list[dict]) -> dict:
    """The reply as it goes back into the history (tool calls in their minimal form)."""
    msg: dict = {"role": "assistant", "content": content or ""}
    if tool_calls:
        msg["tool_calls"] = [{"id": tc.get("id"), "type": "function",
                              "function": {"name": (tc.get("function") or {}).get("name"),
                                           "arguments": (tc.get("function") or {}).get("arguments")
                                           or "{}"}}
                             for tc in tool_calls]
    return msg
