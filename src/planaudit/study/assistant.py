"""A live assistant beside phase 2 (an arm with `assistant:`): what it is told, how a
participant's message becomes a call, and how its reply is read and judged.

Every call goes through `llm/` (the cache, the retries, the prices, the preflight), as a
model regime's calls do; the call itself, with its tokens and cost, is kept in the reply's
record, which is the transcript. Every plan the assistant proposes is read by the
models' reader (`contract.extract`) and validated on the hidden model when it is made, so
a wrong proposal is known wrong at the time it was shown. A provider's failure is a
reply with an error: the participant is told the assistant is unavailable and goes on.

The budget holds before a request leaves: the prompt is counted (gpt-4o's tokenizer, as
the estimate counts it) and the reply's max_tokens is what is left of the participant's
tokens, at most `reply_tokens`; a call that would have nothing left is not sent."""

from __future__ import annotations

import re
from dataclasses import dataclass

from planaudit.contract import extract
from planaudit.formal.plan import format_step
from planaudit.llm.cache import Cache
from planaudit.llm.client import Call, Client, OnText
from planaudit.llm.tokens import count_messages
from planaudit.study.materials import Material
from planaudit.study.settings import Arm, Study

PURPOSE = "assistant"
UNAVAILABLE = ("The assistant is unavailable just now, so this message got no answer. "
               "Please go on without it; you can try again later.")


# the reply recorded for a message whose answer never came (the server stopped between the
# message and its reply): so the participant may ask again, and the record says why
NO_REPLY = "no reply: the server stopped before the reply came"


def unanswered(at: str) -> dict:
    """The record standing for a reply that never came to a message sent at `at`."""
    return {"role": "assistant", "text": None, "error": NO_REPLY, "input_tokens": 0,
            "output_tokens": 0, "cost_usd": 0.0, "price_source": None, "cache_hit": False,
            "latency_s": 0.0, "attempts": 0, "finish_reason": None, "proposal": None,
            "unsolvable": False, "verdict": None, "asked_at": at}


class BudgetSpent(Exception):
    """The participant's messages or tokens are used up: nothing is sent."""


@dataclass(frozen=True)
class Budget:
    turns_used: int
    tokens_used: int
    turns: int
    tokens: int

    @property
    def turns_left(self) -> int:
        return max(self.turns - self.turns_used, 0)


def budget(arm: Arm, chat: list[dict]) -> Budget:
    """What a participant has used: messages sent (a message the provider failed to answer
    is not counted: it bought nothing) and the tokens the provider billed."""
    a = arm.assistant
    assert a is not None
    replies = [m for m in chat if m["role"] == "assistant"]
    turns = sum(1 for m in replies if m.get("error") is None)
    tokens = sum(int(m.get("input_tokens") or 0) + int(m.get("output_tokens") or 0) for m in replies)
    return Budget(turns, tokens, a.turns, a.tokens)


def task_text(study: Study, m: Material) -> str:
    """The task as the assistant reads it: the domain and the instance as people read them."""
    return (m.brief.get("domain", "").rstrip() + "\n\n"
            + m.instance_text(study.instructions["minimise"]).rstrip())


def plan_text(m: Material, plan: list[str]) -> str:
    return "\n".join(plan) if plan else "(no step yet)"


def messages(study: Study, arm: Arm, m: Material, chat: list[dict]) -> list[dict]:
    """The conversation as the model is sent it: the study's system prompt and the task,
    then each message; with `sees_plan`, a message carries the plan it was sent beside."""
    a = arm.assistant
    assert a is not None
    out = [{"role": "system", "content": a.system_prompt.rstrip() + "\n\n# The task\n\n"
            + task_text(study, m)}]
    for msg in chat:
        if msg["role"] == "user":
            text = msg["text"]
            if a.sees_plan:
                text = f"My plan so far:\n{plan_text(m, msg.get('plan') or [])}\n\n{text}"
            out.append({"role": "user", "content": text})
        elif msg.get("text"):  # a failed call left nothing the model said
            out.append({"role": "assistant", "content": msg["text"]})
    return out


def max_tokens(arm: Arm, sent: list[dict], used: Budget) -> int:
    """The reply's max_tokens within the budget; BudgetSpent when nothing is left."""
    a = arm.assistant
    assert a is not None
    if used.turns_used >= a.turns:
        raise BudgetSpent(f"You have used all {a.turns} messages to the assistant.")
    left = a.tokens - used.tokens_used - count_messages(sent)
    if left < 1:
        raise BudgetSpent("The assistant has no more room for your conversation: its "
                          "budget for you is used up.")
    return min(a.reply_tokens, left)


def read_reply(m: Material, text: str | None, planbench_root=None) -> dict:
    """A reply's proposal and its verdict: a plan (every step judged on the hidden model),
    a claim that the task cannot be done (right when it is proven unsolvable), or none.
    Read as a model's plan is (`contract.extract`); on a PlanBench instance, told in
    PlanBench's words, a reply that reads as no plan so is read in those words too."""
    got = extract(text, frozenset(m.task.domain.actions))
    if got.kind == "unsolvable":
        return {"proposal": None, "unsolvable": True, "verdict": {"valid": not m.solvable}}
    plan = [format_step(s) for s in got.steps] if got.kind == "plan" else []
    if not plan and m.in_planbench_words and text:
        from planaudit.study.planbench_source import planbench_reply_steps

        plan = planbench_reply_steps(planbench_root, m.key, text) or []
    if not plan:
        return {"proposal": None, "unsolvable": False, "verdict": None}
    return {"proposal": plan, "unsolvable": False, "verdict": m.check(plan).to_json()}


def record(call: Call, m: Material, planbench_root=None) -> dict:
    """The reply's record: what it said, its proposal judged, and the call as `llm/` made it."""
    kept = {"role": "assistant", "text": call.content, "error": call.error,
            "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
            "cost_usd": call.cost_usd, "price_source": call.price_source,
            "cache_hit": call.cache_hit, "latency_s": round(call.latency_s, 3),
            "attempts": call.attempts, "finish_reason": call.finish_reason}
    if call.error is not None:
        return {**kept, "proposal": None, "unsolvable": False, "verdict": None}
    return {**kept, **read_reply(m, call.content, planbench_root)}


class Assistants:
    """One client per assistant arm, made when the server starts."""

    def __init__(self, study: Study):
        from planaudit.experiment import Experiment

        self.study = study
        experiment = Experiment.from_dict(study.experiment)
        self.clients: dict[str, Client] = {}
        self.reference: dict[str, dict] = {}
        cache = Cache(str(study.results / "cache"))
        for arm in study.arms:
            if arm.assistant is None:
                continue
            entry = experiment.model(arm.assistant.model)
            self.clients[arm.name] = Client(entry.client(), cache)
            self.reference[arm.name] = dict(entry.reference or {})

    def waits_at_most(self, arm: Arm) -> float:
        """The longest a reply can take (every attempt timed out, every backoff at its
        cap): a message older than that with no reply will get none (the server stopped)."""
        cfg = self.clients[arm.name].cfg
        return float(cfg.timeout) * (cfg.max_retries + 1) + cfg.backoff_cap * cfg.max_retries

    def metadata(self, arm: Arm, m: Material, participant: str, turn: int) -> dict:
        """What keys the call in the cache: the participant (no two people share a reply)
        and their turn; a reference model reads its task folder and its faults from it."""
        meta = {"purpose": PURPOSE, "task": m.key, "participant": participant, "turn": turn,
                "task_dir": str(m.folder)}
        return {**meta, **self.reference[arm.name]}

    async def answer(self, arm: Arm, m: Material, participant: str, chat: list[dict],
                     on_text: OnText | None = None) -> dict:
        """The reply to the last message of `chat` (already stored), as its record;
        `on_text`: its text as it arrives (`Client.complete`'s)."""
        sent = messages(self.study, arm, m, chat)
        used = budget(arm, chat)
        limit = max_tokens(arm, sent, used)
        turn = sum(1 for msg in chat if msg["role"] == "user")
        call = await self.clients[arm.name].complete(
            sent, max_tokens=limit, metadata=self.metadata(arm, m, participant, turn),
            on_text=on_text)
        return record(call, m, self.study.planbench_root)


@dataclass(frozen=True)
class Estimate:
    """The most one participant's conversation can be billed, and for `participants`."""

    arm: str
    model: str
    input_tokens: int
    output_tokens: int
    usd: float | None  # None: the model has no known price
    participants: int | None

    @property
    def total_usd(self) -> float | None:
        return None if self.usd is None or self.participants is None else self.usd * self.participants


def estimate(study: Study, participants: int | None = None) -> list[Estimate]:
    """Each assistant arm priced before the study opens: a participant's calls are held to
    `tokens` (input and output together), and their replies to `turns` × `reply_tokens`,
    so the most they can be billed is that many output tokens and the rest of the budget
    as input (at the dearer price first). Priced as `llm/` prices the calls it records;
    `participants` (default the enrolment cap) multiplies it."""
    from planaudit.experiment import Experiment

    experiment = Experiment.from_dict(study.experiment)
    n = participants if participants is not None else study.enrolment["cap"]
    out = []
    for arm in study.arms:
        a = arm.assistant
        if a is None:
            continue
        entry = experiment.model(a.model)
        client = Client(entry.client(), Cache(str(study.results / "cache")))
        most_out = min(a.turns * a.reply_tokens, a.tokens)
        # the most is at a corner: replies as long as allowed (output dearer), or none
        split = [(a.tokens - most_out, most_out), (a.tokens, 0)]
        priced = [client.priced(tin, tout)[0] for tin, tout in split]
        usd = None if any(p is None for p in priced) else max(priced)
        tin, tout = split[priced.index(usd)] if usd is not None else split[0]
        out.append(Estimate(arm.name, a.model, tin, tout, usd, n))
    return out


def render_estimate(rows: list[Estimate]) -> str:
    def money(x: float | None) -> str:
        return "unpriced" if x is None else f"${x:,.2f}"

    lines = []
    for r in rows:
        people = "participants: no cap set" if r.participants is None else f"{r.participants} participants"
        lines.append(f"assistant arm {r.arm} ({r.model}): at most {r.input_tokens:,} input + "
                     f"{r.output_tokens:,} output tokens, {money(r.usd)} a participant; "
                     f"{people}: {money(r.total_usd)}")
    return "\n".join(lines)


_FENCED = re.compile(r"```[^\n`]*\n?.*?```", re.S)


def prose(msg: dict) -> str:
    """A reply's text as the page shows it: with a proposal read out of it, its fenced block
    is left out (the page shows the plan below in the task's words, PlanBench's on a
    PlanBench instance, with the button that takes it), so the plan is not shown twice."""
    text = msg.get("text") or ""
    if not msg.get("proposal"):
        return text
    kept = _FENCED.sub("", text).strip()
    return kept or "Here is a plan."
