"""Token counts for replies that no provider counted: the reference models'.

A reference model's reply costs nothing, but its tokens are counted as gpt-4o's
tokenizer would count the same conversation, so that token columns mean the same
for reference and real rows. The count follows OpenAI's chat accounting (three
tokens of framing per message, three to prime the reply), as litellm's own counter
does (`tests/test_reference.py` checks that they agree); the encoding is tiktoken's
o200k_base, read from the copy litellm ships: no download, and no litellm import
(seconds per process).
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache

PER_MESSAGE = 3  # <|start|>role ... <|end|>
PER_NAME = 1  # a message's `name` field
REPLY_PRIMING = 3  # <|start|>assistant<|message|>


@cache
def _encoding():
    if "TIKTOKEN_CACHE_DIR" not in os.environ:  # litellm's bundled copies of the BPE files
        spec = importlib.util.find_spec("litellm")
        if spec and spec.submodule_search_locations:
            os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(
                spec.submodule_search_locations[0], "litellm_core_utils", "tokenizers")
    import tiktoken

    return tiktoken.get_encoding("o200k_base")


def count_text(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def count_messages(messages: list[dict]) -> int:
    total = REPLY_PRIMING
    for message in messages:
        total += PER_MESSAGE
        for key, value in message.items():
            if key == "tool_calls":  # the arguments only: names are priced with the tools
                total += sum(count_text(str((call.get("function") or {}).get("arguments", "")))
                             for call in value or [])
            elif isinstance(value, str):
                total += count_text(value) + (PER_NAME if key == "name" else 0)
            elif key == "content" and isinstance(value, list):  # content parts: their text
                total += sum(count_text(part.get("text", "")) for part in value
                             if isinstance(part, dict))
    return total
