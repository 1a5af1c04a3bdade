"""Prompting strategies, each a small function registered by name.

A strategy gets a `Context` (the briefs, an `ask` that goes through `llm/`, its
parameters from the config, and — for `modulo` only — a checker backed by the
hidden model) and returns the reply whose fenced block or `UNSOLVABLE` is the
answer. Every call names its purpose (`final`, `reasoning`, `critique`,
`score`), which transcripts record and reference models answer to.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from planaudit.contract import extract

Ask = Callable[..., Awaitable[str]]
Strategy = Callable[["Context"], Awaitable[str]]
STRATEGIES: dict[str, Strategy] = {}


def strategy(name: str) -> Callable[[Strategy], Strategy]:
    def register(fn: Strategy) -> Strategy:
        STRATEGIES[name] = fn
        return fn

    return register


@dataclass
class Context:
    brief: dict
    ask: Ask  # ask(messages, purpose=..., temperature=..., sample=...) -> reply text
    params: dict = field(default_factory=dict)
    check: Callable[[str], str | None] | None = None  # reply -> feedback, None when valid

    def task_messages(self, extra: str | None = None) -> list[dict]:
        user = self.brief["domain"] + "\n\n" + self.brief["instance"]
        if extra:
            user += "\n\n" + extra
        return [{"role": "system", "content": self.brief["preamble"]},
                {"role": "user", "content": user}]


FINAL = "Now give your answer in the required format: the plan in a single fenced block, " \
        "or UNSOLVABLE."


async def _two_step(ctx: Context, first: str) -> str:
    msgs = ctx.task_messages(first)
    trace = await ctx.ask(msgs, purpose="reasoning")
    return await ctx.ask([*msgs, {"role": "assistant", "content": trace},
                          {"role": "user", "content": FINAL}], purpose="final")


@strategy("direct")
async def direct(ctx: Context) -> str:
    return await ctx.ask(ctx.task_messages(), purpose="final")


@strategy("planner")
async def planner(ctx: Context) -> str:
    """A classical planner's method (`planner/...` models run it alone, `config.planner_view`):
    the direct prompt, which the planner ignores, planning on the hidden model instead."""
    return await ctx.ask(ctx.task_messages(), purpose="final")


@strategy("cot")
async def chain_of_thought(ctx: Context) -> str:
    return await _two_step(ctx, "Let's think step by step.")


@strategy("plan-and-solve")
async def plan_and_solve(ctx: Context) -> str:
    lo, hi = ctx.params.get("subgoals", [4, 10])
    return await _two_step(ctx, f"First devise a plan: sketch {lo} to {hi} subgoals that lead "
                                "to the goal, without writing grounded actions yet.")


@strategy("step-back")
async def step_back(ctx: Context) -> str:
    lo, hi = ctx.params.get("constraints", [6, 12])
    return await _two_step(ctx, f"Step back first: list {lo} to {hi} constraints and "
                                "invariants of this problem that any valid plan must respect.")


CRITIQUE = ("Check the answer above only for mechanically checkable issues: action or object "
            "names that do not exist, a wrong number or order of arguments, and formatting. "
            "Do not judge whether the plan reaches the goal. If there is no such issue, answer "
            "exactly NO ISSUES.")


def _answer(reply: str) -> tuple:
    ex = extract(reply)
    return ex.kind, ex.steps


@strategy("self-refine")
async def self_refine(ctx: Context) -> str:
    msgs = ctx.task_messages()
    reply = await ctx.ask(msgs, purpose="final")
    for _ in range(int(ctx.params.get("rounds", 3))):
        review = await ctx.ask([*msgs, {"role": "assistant", "content": reply},
                                {"role": "user", "content": CRITIQUE}], purpose="critique")
        if re.search(r"\bno issues\b", review, re.I) and not re.search(r"\bissues?:", review, re.I):
            break
        revised = await ctx.ask([*msgs, {"role": "assistant", "content": reply},
                                 {"role": "user", "content": "Issues found:\n" + review
                                  + "\n\nRevise your answer. " + FINAL}], purpose="final")
        unchanged = _answer(revised) == _answer(reply)
        reply = revised
        if unchanged:
            break  # the plan stopped changing
    return reply


@strategy("modulo")
async def modulo(ctx: Context) -> str:
    """LLM-Modulo: the hidden model's validator reports the first failure, in plain words."""
    if ctx.check is None:
        raise ValueError("modulo needs a checker")
    msgs = ctx.task_messages()
    reply = await ctx.ask(msgs, purpose="final")
    for _ in range(int(ctx.params.get("rounds", 3))):
        feedback = ctx.check(reply)
        if feedback is None:
            break
        msgs = [*msgs, {"role": "assistant", "content": reply},
                {"role": "user", "content": f"A validator rejected this answer: {feedback}\n"
                                            + FINAL}]
        reply = await ctx.ask(msgs, purpose="final")
    return reply


@strategy("tot")
async def tree_of_thoughts(ctx: Context) -> str:
    """Beam search over plan prefixes: sample continuations, score each, keep the best."""
    depth = int(ctx.params.get("depth", 6))
    width = int(ctx.params.get("samples", 3))
    keep = int(ctx.params.get("beam", 2))
    temperature = float(ctx.params.get("temperature", 0.7))
    beam: list[str] = [""]
    sample = 0
    for _ in range(depth):
        scored: list[tuple[float, str]] = []
        for prefix in beam:
            for _ in range(width):
                sample += 1
                step = await ctx.ask(ctx.task_messages(
                    f"Plan so far:\n{prefix or '(nothing yet)'}\nPropose the next one to three "
                    "grounded actions, one per line, and nothing else."),
                    purpose="reasoning", temperature=temperature, sample=sample)
                candidate = (prefix + "\n" + step.strip()).strip()
                rating = await ctx.ask(ctx.task_messages(
                    f"Plan prefix:\n{candidate}\nRate from 0 to 10 how promising this prefix "
                    "is. Answer with the number only."), purpose="score")
                m = re.search(r"\d+(?:\.\d+)?", rating)
                scored.append((float(m.group()) if m else 0.0, candidate))
        scored.sort(key=lambda x: -x[0])
        beam = [c for _, c in scored[:keep]]
    return await ctx.ask(ctx.task_messages(
        f"A promising start of a plan:\n{beam[0]}\nComplete it into a full plan (or answer "
        "UNSOLVABLE if the goal cannot be reached). " + FINAL), purpose="final")
