"""Reference models: non-LLM calibrators that take exactly the path real models take.

`reference/oracle` has privileged access to the hidden model (the task folder named in
the call's metadata) and answers with an optimal plan, `UNSOLVABLE`, a case's true
answer or an agent's optimal next step; `reference/flawed` answers as the oracle, then
injects seeded faults at configured rates (`answers.py`, `agent.py`); `reference/responsive`
injects faults too, and corrects them when a method's mechanism (a validator's feedback, a
critic, a gate, a reflection, a self-critique) meets them, at configured rates
(`responsive.py`, `faults.py`; `expected.py` computes what each method should score); as a
study's chat assistant (purpose "assistant") each proposes plans known in advance
(`assistant.py`). They are an
in-process provider of `llm/` (`llm/local.py` names `reply`), so their calls take the
client's cache, retries, pricing (zero) and transcripts, and a process that runs only
references never imports litellm. Their replies are never an LLM's: tables label them.
"""

from __future__ import annotations

import json

from planaudit.reference import assistant, responsive
from planaudit.reference.agent import _history, online_text, online_turn
from planaudit.reference.answers import FAULTS, answer, curriculum_answer, flawed_plan

PROVIDER = "reference"
__all__ = ["FAULTS", "PROVIDER", "answer", "curriculum_answer", "flawed_plan", "online_turn",
           "reply"]


def reply(variant: str, messages: list[dict], meta: dict) -> tuple[str, list[dict], int, int]:
    """One reference call: (text, tool calls, prompt tokens, completion tokens), in the
    shape `llm/client.py` makes of a provider's reply. Tokens are counted as gpt-4o's
    tokenizer would count the same conversation (`llm/tokens.py`)."""
    from planaudit.llm.tokens import count_messages, count_text

    tool_calls: list[dict] = []
    if meta.get("purpose") == "act":
        if variant == "responsive":
            name, args = responsive.online_turn(responsive.calibrator(meta), messages)
            said = ""
        else:
            name, args = online_turn(variant, meta, messages)
            said = online_text(variant, meta, messages)
        if meta.get("protocol") == "text":
            text = (said + "\n" if said else "") + f"TOOL: {name} {json.dumps(args)}"
        else:
            text = said
            turn = len(_history(messages)) + 1
            tool_calls = [{"id": f"call_{turn}", "type": "function",
                           "function": {"name": name, "arguments": json.dumps(args)}}]
    elif meta.get("purpose") == "assistant":  # a study's chat, every variant
        text = assistant.reply(variant, meta, messages)
    elif variant == "responsive":
        text = responsive.reply(meta, messages)
    else:
        text = answer(variant, meta)
    completion = count_text(text) + sum(count_text(c["function"]["arguments"]) for c in tool_calls)
    return text, tool_calls, count_messages(messages), completion
