"""The reference models as a study's chat assistant (call purpose "assistant", issue 49).

A person plans a task with an assistant beside them; the study judges every plan the
assistant proposes and what the person takes from it. A reference assistant's replies
are known in advance, so that tests and simulated participants can predict them and a
wrong proposal is known wrong when it is made:

- `oracle` proposes the proven optimal plan on every turn, or says `UNSOLVABLE`;
- `flawed` proposes the oracle's answer with the entry's faults injected
  (`answers.flawed_plan`), drawn afresh per task and turn;
- `responsive` is wrong by exactly one known fault on turn 1 (the optimum with one step
  dropped; on an unsolvable task, three random grounded actions) and corrects itself from
  turn 2 on (the optimum, or `UNSOLVABLE`).

Draws are seeded by `draws.draw_key`, never by the conversation's text, so asking again
on a turn gets the same reply. `proposal` says what will be proposed without any text to
parse; `reply` writes it as the contract reads it (one fenced block, or `UNSOLVABLE` on a
line of its own).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from planaudit.reference.answers import flawed_plan, plan_block, random_plan, task_objects
from planaudit.reference.draws import draw_key

VARIANTS = ("oracle", "flawed", "responsive")
SAY_PLAN = "Here is a plan that reaches the goal:"
SAY_CORRECTED = "I correct my earlier plan; this one reaches the goal:"
SAY_UNSOLVABLE = "No sequence of actions reaches this goal: the task cannot be done."
SAY_CORRECTED_UNSOLVABLE = ("I correct my earlier plan: no sequence of actions reaches this "
                            "goal, so the task cannot be done.")


def turn_of(meta: dict, messages: list[dict] | None = None) -> int:
    """The participant's 1-based turn: the metadata's `turn`, else the user messages
    counted (a caller that left it out still gets the turn the conversation shows)."""
    if meta.get("turn") is not None:
        return int(meta["turn"])
    return max(1, sum(m.get("role") == "user" for m in messages or []))


def _task(meta: dict) -> str:
    # the instance key, whatever its disguise (`p01@deceptive` draws as `p01` does), as
    # `answers._flawed_answer` draws: the references are blind to disguises
    return str(meta.get("task", meta["task_dir"])).partition("@")[0]


def _steps(text: str) -> list[str] | None:
    """A plan text as `answers.flawed_plan` writes it, back to its steps (None: UNSOLVABLE)."""
    if text.strip() == "UNSOLVABLE":
        return None
    return [ln.strip() for ln in text.strip().strip("`").splitlines() if ln.strip()]


def proposal(variant: str, meta: dict) -> list[str] | None:
    """The plan the reference assistant `variant` proposes at `meta["turn"]` on the task in
    `meta["task_dir"]`, its steps written as `truth.json` writes them; None when it says
    the task cannot be done. Tests and simulated participants ask this, not the text."""
    if variant not in VARIANTS:
        raise ValueError(f"no reference model named {variant!r} ({', '.join(VARIANTS)})")
    folder = Path(meta["task_dir"])
    truth = json.loads((folder / "truth.json").read_text())
    turn = turn_of(meta)
    task = _task(meta)
    if variant == "oracle":
        return list(truth["plan"]) if truth["solvable"] else None
    if variant == "flawed":
        rng = random.Random(draw_key(meta, f"{task}:assistant:turn{turn}"))
        return _steps(flawed_plan(truth, task_objects(folder), meta.get("faults") or {}, rng,
                                  random_plan(folder)))
    if turn >= 2:  # responsive: corrected from the second turn on
        return list(truth["plan"]) if truth["solvable"] else None
    # turn 1: one known fault, the same draw on every call for this task
    rng = random.Random(draw_key(meta, f"{task}:assistant"))
    if not truth["solvable"]:
        return random_plan(folder)(rng)
    steps = list(truth["plan"])
    if len(steps) == 1:  # dropping the only step would leave an empty block: repeat it
        return steps * 2
    if steps:  # an empty optimum (the goal holds at the start) has no step to drop
        steps.pop(rng.randrange(len(steps)))
    return steps


def reply(variant: str, meta: dict, messages: list[dict] | None = None) -> str:
    """The reference assistant's reply text: one short sentence, then the proposal in one
    fenced block, or `UNSOLVABLE` on its last line and no block."""
    meta = {**meta, "turn": turn_of(meta, messages)}
    steps = proposal(variant, meta)
    corrects = variant == "responsive" and meta["turn"] >= 2
    if steps is None:
        return (SAY_CORRECTED_UNSOLVABLE if corrects else SAY_UNSOLVABLE) + "\nUNSOLVABLE"
    return (SAY_CORRECTED if corrects else SAY_PLAN) + "\n" + plan_block(steps)
