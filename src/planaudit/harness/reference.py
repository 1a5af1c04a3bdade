"""planaudit's reference models as an Inspect model provider: `--model planaudit/oracle`,
`--model planaudit/flawed`.

They are non-LLM calibrators, exactly the pipeline's `reference/oracle` and
`reference/flawed` (`reference.reply`): the oracle has privileged access to the hidden
model and answers with an optimal plan, the true answer, or an optimal agent's next tool
call; the flawed model injects seeded faults at the default config's rates. What a
reference needs to know about the call (the task folder, the purpose, the protocol, a
case's answer) the task's solver has put in the sample's `store()` (`bridge.CALL`);
every reply says in its `model` field that no LLM wrote it.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from planaudit.harness.bridge import CALL, REFERENCE_LABEL, to_planaudit

VARIANTS = ("oracle", "flawed")


class ReferenceError(RuntimeError):
    """A reference model called outside a planaudit task (it has no task to answer from)."""


@modelapi(name="planaudit")
class ReferenceAPI(ModelAPI):
    """`planaudit/<variant>`: a reference model answered in process, at no cost."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key,
                         config=config or GenerateConfig())
        if model_name not in VARIANTS:
            raise ValueError(f"planaudit/{model_name}: the reference models are "
                             + ", ".join(f"planaudit/{v}" for v in VARIANTS))
        from planaudit.experiment import ModelEntry
        from planaudit.harness.suite import reference_entry

        self.meta = ModelEntry.from_dict(reference_entry(model_name)).reference or {}

    def max_connections(self) -> int:
        return 16

    async def generate(self, input: list, tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        from inspect_ai.util import store

        from planaudit.reference import reply

        meta = store().get(CALL)
        if not meta:
            raise ReferenceError(f"planaudit/{self.model_name} answers only planaudit's tasks "
                                 "(planaudit/offline, online, curriculum, acpbench): no call "
                                 "metadata in the sample's store")
        text, calls, tin, tout = reply(self.model_name, to_planaudit(input),
                                       {**self.meta, **meta})
        message = ChatMessageAssistant(
            content=text or "", model=self.label,
            tool_calls=[ToolCall(id=c["id"], function=c["function"]["name"],
                                 arguments=_json(c["function"]["arguments"])) for c in calls]
            or None)
        return ModelOutput(model=self.label, choices=[ChatCompletionChoice(
            message=message, stop_reason="tool_calls" if calls else "stop")],
            usage=ModelUsage(input_tokens=tin, output_tokens=tout, total_tokens=tin + tout))

    @property
    def label(self) -> str:
        return f"planaudit/{self.model_name} ({REFERENCE_LABEL})"


def _json(raw: str) -> dict:
    import json

    return json.loads(raw or "{}")
