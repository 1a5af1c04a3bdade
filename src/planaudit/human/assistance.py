"""What a live assistant did to a participant's plan (issue 49), from the conversation the
study recorded: how much they used it, what it proposed and whether that was right, and
how the plan they submitted stands to what it said.

The conversation is `answers["phase2"]["chat"]` as `study/assistant.py` records it: a
user message, then the assistant's reply, whose proposal was read by the models' reader
and judged on the hidden model when it was made (`verdict`). Nothing is judged again
here: a wrong proposal is the one that was known wrong at the time it was shown, so the
rate at which people submit one is automation bias measured, not inferred.

A "proposal" is any answer the assistant gave to the task: a plan, or the claim that the
task cannot be done (both carry a verdict). A participant "accepted" a proposal when the
plan they submitted is that plan step for step, or when they declared the task cannot be
done after the assistant claimed so. Pure functions over the recorded dicts; the judge
(`human/judge.py`) puts their values into the participant's row."""

from __future__ import annotations

from collections.abc import Sequence

from planaudit.formal.repair import levenshtein

COLUMNS = ("assistant_turns", "assistant_unanswered", "assistant_proposals",
           "assistant_wrong_proposals", "final_equals_proposal", "accepted_wrong_proposal",
           "edit_distance_last_proposal", "assistant_adoptions", "assistant_input_tokens",
           "assistant_output_tokens", "assistant_cost_usd")


def replies(chat: Sequence[dict]) -> list[dict]:
    """The assistant's messages, in order."""
    return [m for m in chat if m.get("role") == "assistant"]


def turns(chat: Sequence[dict]) -> int:
    """Messages the assistant answered: a reply without an error. A provider failure (or a
    budget refused at the last moment) bought the participant nothing, so it is not a turn,
    as `study.assistant.budget` does not count it against them."""
    return sum(1 for m in replies(chat) if m.get("error") is None)


def unanswered(chat: Sequence[dict]) -> int:
    """Messages that got no answer (the participant was told the assistant is unavailable):
    the failures a study must report beside the turns, since they shaped the conversation."""
    return sum(1 for m in replies(chat) if m.get("error") is not None)


def proposals(chat: Sequence[dict]) -> list[dict]:
    """The replies that answered the task, a plan or "cannot be done": those with a verdict.
    A reply that proposed nothing the reader could take (prose, advice) is not one, nor one
    that arrived after the participant had submitted (`after_submit`: never shown to
    them, though its tokens and cost are theirs)."""
    return [m for m in replies(chat) if m.get("error") is None and m.get("verdict") is not None
            and not m.get("after_submit")]


def wrong(proposal: dict) -> bool:
    """A proposal judged wrong when it was made: an invalid plan, or a false claim that
    the task cannot be done."""
    return (proposal.get("verdict") or {}).get("valid") is False


def plans(chat: Sequence[dict]) -> list[dict]:
    """The proposals that are plans (steps), in order."""
    return [m for m in proposals(chat) if m.get("proposal")]


def accepted(chat: Sequence[dict], plan: Sequence[str] | None, declared: bool) -> list[dict]:
    """The proposals the final answer equals: the submitted plan step for step, or a
    declared "cannot be done" after the assistant claimed so. Several replies may propose
    the same plan; each is returned."""
    if declared:
        return [m for m in proposals(chat) if m.get("unsolvable")]
    if plan is None:
        return []
    mine = list(plan)
    return [m for m in plans(chat) if list(m["proposal"]) == mine]


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance over whole steps (insert, delete or substitute one action, each
    cost 1): how far the participant departed from what they were shown. The dynamic
    programme is the project's own (`formal.repair.levenshtein`, also behind the
    suggestion arm's `suggestion_distance`), so both arms measure departure alike; no
    library in the environment offers it over sequences and none is added for it."""
    return levenshtein(list(a), list(b))


def adoptions(events: Sequence[dict]) -> int:
    """Times the participant took a proposal whole as their plan (the `adopt` op): taking
    it and then editing it differs from building the same plan by hand."""
    return sum(1 for e in events if e.get("page") == "phase2" and e.get("kind") == "adopt")


def spent(chat: Sequence[dict]) -> tuple[int, int, float | None]:
    """(input tokens, output tokens, dollars) the participant's conversation was billed.
    Dollars are None when an answered call had no known price: an unpriced sum is not a
    cost of 0 (the row contract's rule for models). A failed call costs what `llm/`
    recorded for it (nothing)."""
    tin = tout = 0
    usd: float | None = 0.0
    for m in replies(chat):
        tin += int(m.get("input_tokens") or 0)
        tout += int(m.get("output_tokens") or 0)
        cost = m.get("cost_usd")
        if cost is None:
            if m.get("error") is None:
                usd = None
        elif usd is not None:
            usd += float(cost)
    return tin, tout, usd


def measures(chat: Sequence[dict], events: Sequence[dict], plan: Sequence[str] | None,
             declared: bool) -> dict:
    """The participant's assistant columns. `plan` is the submitted plan (None when they
    submitted none, or declared the task cannot be done: then `declared`). The measures of
    the final answer (`final_equals_proposal`, `accepted_wrong_proposal`,
    `edit_distance_last_proposal`) are None without one; the edit distance is also None
    when the assistant proposed no plan, or when the answer is "cannot be done"."""
    answered = plan is not None or declared
    taken = accepted(chat, plan, declared)
    made = plans(chat)
    tin, tout, usd = spent(chat)
    return {
        "assistant_turns": turns(chat),
        "assistant_unanswered": unanswered(chat),
        "assistant_proposals": len(proposals(chat)),
        "assistant_wrong_proposals": sum(wrong(m) for m in proposals(chat)),
        "final_equals_proposal": bool(taken) if answered else None,
        "accepted_wrong_proposal": any(wrong(m) for m in taken) if answered else None,
        "edit_distance_last_proposal": (edit_distance(made[-1]["proposal"], plan)
                                        if plan is not None and made else None),
        "assistant_adoptions": adoptions(events),
        "assistant_input_tokens": tin,
        "assistant_output_tokens": tout,
        "assistant_cost_usd": usd,
    }


def absent() -> dict:
    """The columns of an arm without an assistant: null, not zero (nothing was offered)."""
    return dict.fromkeys(COLUMNS)
