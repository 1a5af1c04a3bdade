"""Providers answered in process, by the prefix of their model strings.

A model string `reference/oracle` (or `planner/lama`) names no remote API: `reference`
(`planner`) is answered by a function of the project's, imported by name when a client first needs it, so that
`llm/` (the door to every model) imports nothing that knows plans, tools or agents.
A handler takes (model name after the prefix, messages, metadata) and returns (text,
tool calls, prompt tokens, completion tokens), the shape the client makes of a reply.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

Reply = tuple[str | None, list[dict], int, int]
Handler = Callable[[str, list[dict], dict], Reply]

PROVIDERS = {"reference": "planaudit.reference:reply",
             # classical planners as subjects (`planner/lama`, `planner/astar`): no model call
             "planner": "planaudit.formal.planners:reply"}
# what an in-process provider's call costs, said in the row's price_source
PRICE_SOURCES = {"reference": "reference", "planner": "planner (no model call)"}


def prefix(model: str) -> str | None:
    """The in-process provider a model string names, or None (a litellm model)."""
    head = model.split("/", 1)[0]
    return head if "/" in model and head in PROVIDERS else None


def handler(name: str) -> Handler:
    module, _, function = PROVIDERS[name].partition(":")
    return getattr(importlib.import_module(module), function)
