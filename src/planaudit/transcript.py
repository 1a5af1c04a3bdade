"""An episode's transcript as a person reads it (`planaudit episode`).

Every message is printed whole (the brief included), once: a call that extends
the previous call's conversation prints only what is new. With `cut`, a long
message is shortened visibly, saying how much was left out. The end names the
outcome and, for a failure, the action and the conditions that did not hold.
"""

from __future__ import annotations

import json


def _text(content, cut: int | None) -> str:
    if content is None:
        return ""
    text = content if isinstance(content, str) else json.dumps(content)
    if cut and len(text) > cut:
        return text[:cut] + f" [... {len(text) - cut} more characters cut; --cut 0 prints all]"
    return text


def _message(m: dict, cut: int | None) -> list[str]:
    lines = [f">>> [{m.get('role', '?')}] {_text(m.get('content'), cut)}"]
    for tc in m.get("tool_calls") or []:
        fn = tc.get("function") or {}
        lines.append(f">>> [{m.get('role', '?')} tool call] {fn.get('name')} {fn.get('arguments')}")
    return lines


def failure_line(row: dict) -> str | None:
    if row.get("outcome") == "error":
        return f"error: {row.get('error') or 'the model could not be reached'}"
    if not row.get("first_failure_kind") and not row.get("first_failure_detail"):
        return None
    where = f"step {row['first_failure_step']}" if row.get("first_failure_step") is not None else "end"
    action = f", {row['first_failure_action']}" if row.get("first_failure_action") else ""
    kind = row.get("first_failure_kind") or "output contract"
    return f"first failure ({kind}) at {where}{action}: {row.get('first_failure_detail') or ''}"


def render(transcript: list[dict], row: dict, cut: int | None = None) -> str:
    out: list[str] = []
    previous: list[dict] = []
    n = 0
    for step in transcript:
        if "call" not in step:
            out.append(f"--- ended: {json.dumps(step)}")
            continue
        n += 1
        call, messages = step["call"], step["messages"]
        error = f", ERROR {call['error']}" if call.get("error") else ""
        out.append(f"--- call {n} ({step['purpose']}): {call['input_tokens']} tokens in, "
                   f"{call['output_tokens']} out, cache hit {call['cache_hit']}{error}")
        if previous and messages[:len(previous)] == previous:
            new = messages[len(previous):]
            if new and new[0].get("role") == "assistant":  # the reply printed just above
                new = new[1:]
        else:
            new = messages
            if previous:
                out.append(f"    (a conversation of its own: {len(messages)} messages)")
        for m in new:
            out += _message(m, cut)
        out.append(f"<<< {_text(call.get('content'), cut)}")
        for tc in call.get("tool_calls") or []:
            fn = tc.get("function") or {}
            out.append(f"<<< tool call {fn.get('name')} {fn.get('arguments')}")
        previous = messages
    out.append(f"=== outcome: {row.get('outcome')}")
    if line := failure_line(row):
        out.append(f"=== {line}")
    out.append(json.dumps(row, indent=1))
    return "\n".join(out)
