"""llama-cpp-python's server with one more chat format, `chatml-function-calling-results`.

    .venv-server/bin/python local/llama_server.py --model M.gguf --chat_format \
        chatml-function-calling-results ...     (every flag of `python -m llama_cpp.server`)

Why: llama-cpp-python 0.3.36's `chatml-function-calling` (the handler that turns OpenAI
`tools` into a grammar and its output into `tool_calls`) renders only system, user and
assistant messages: a `tool` message becomes an empty `<|im_start|>tool` line, so the model
never sees a tool's result. An online agent served that way is blind: it calls get_task
and never reads the task. The format added here is that handler, with each `tool` message
rendered as a user turn naming the tool it answers ("Result of get_task:\n..."), the way
chatml models without a tool role are shown results. Nothing else changes: the request,
the grammar, the reply and the usage the server counts are the stock handler's.

Runs in the server venv (.venv-server): it imports llama_cpp, not planaudit.
"""

from __future__ import annotations

from llama_cpp import llama_chat_format
from llama_cpp.server.__main__ import main

NAME = "chatml-function-calling-results"


def with_results(messages: list[dict]) -> list[dict]:
    """`tool` messages as user turns that name the tool whose call they answer."""
    names: dict[str, str] = {}
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            names[call.get("id", "")] = (call.get("function") or {}).get("name", "a tool")
        if m.get("role") == "tool":
            name = names.get(m.get("tool_call_id", ""), "a tool")
            out.append({"role": "user", "content": f"Result of {name}:\n{m.get('content') or ''}"})
        else:
            out.append(m)
    return out


@llama_chat_format.register_chat_completion_handler(NAME)
def chatml_function_calling_results(llama, messages, **kwargs):
    return llama_chat_format.chatml_function_calling(llama, with_results(messages), **kwargs)


if __name__ == "__main__":
    main()
