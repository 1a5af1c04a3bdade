"""What a reference model says to a call that is not an agent's turn.

The oracle answers a final offline call with the hidden model's optimal plan or
`UNSOLVABLE`, a curriculum case with the answer that scores full marks; the flawed
model says the same with faults injected, each at the rate the call's metadata
gives, seeded by the task so that every method meets the same faults. Intermediate
calls (scores, critics, reflections, reasoning) get short fixed texts.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from planaudit.reference.draws import draw_key

FAULTS = ("drop_action", "swap_adjacent", "wrong_argument", "unknown_object",
          "unsolvable_on_solvable", "plan_on_unsolvable", "drop_fact", "flip_verdict")


def plan_block(steps: list[str]) -> str:
    """A plan as a reply writes it: its steps in one fenced block."""
    return "```\n" + "\n".join(steps) + "\n```"


def _split(step: str) -> list[str]:
    return step.strip("()").split()


def flawed_plan(truth: dict, objects: list[str], faults: dict, rng: random.Random,
                random_plan) -> str:
    """The oracle's answer with faults injected, each at its configured rate."""
    def hit(name: str) -> bool:
        return rng.random() < float(faults.get(name, 0.0))

    if not truth["solvable"]:
        return plan_block(random_plan(rng)) if hit("plan_on_unsolvable") else "UNSOLVABLE"
    if hit("unsolvable_on_solvable"):
        return "UNSOLVABLE"
    steps = list(truth["plan"])
    if steps and hit("drop_action"):
        steps.pop(rng.randrange(len(steps)))
    if len(steps) >= 2 and hit("swap_adjacent"):
        i = rng.randrange(len(steps) - 1)
        steps[i], steps[i + 1] = steps[i + 1], steps[i]
    if steps and hit("wrong_argument"):
        i = rng.randrange(len(steps))
        words = _split(steps[i])
        if len(words) > 1:
            j = rng.randrange(1, len(words))
            others = [o for o in objects if o != words[j]]
            if others:
                words[j] = rng.choice(others)
                steps[i] = "(" + " ".join(words) + ")"
    if steps and hit("unknown_object"):
        i = rng.randrange(len(steps))
        words = _split(steps[i])
        if len(words) > 1:
            words[rng.randrange(1, len(words))] = "obj_unknown"
            steps[i] = "(" + " ".join(words) + ")"
    return plan_block(steps)


def answer(variant: str, meta: dict) -> str:
    """What a reference model says to one call, given the call's metadata."""
    purpose = meta.get("purpose", "final")
    if purpose == "score":
        return "10"
    if purpose == "critic":
        return "APPROVE"
    if purpose == "reflect":
        return "Lesson: write every action exactly as the task description lists it."
    if purpose == "curriculum":
        return curriculum_answer(variant, meta)
    if purpose == "acpbench":
        return acpbench_answer(variant, meta)
    if purpose == "formalize":
        from planaudit.reference.formalizer import reply

        return reply(variant, meta)
    if purpose != "final":
        return "Noted. (reference model: no reasoning of its own)"
    folder = Path(meta["task_dir"])
    truth = json.loads((folder / "truth.json").read_text())
    if variant == "oracle":
        return plan_block(truth["plan"]) if truth["solvable"] else "UNSOLVABLE"
    if variant != "flawed":
        raise ValueError(f"no reference model named {variant!r} (oracle, flawed, responsive)")
    return _flawed_answer(folder, truth, meta)


def curriculum_answer(variant: str, meta: dict) -> str:
    """A curriculum test case (t1-t8): the shard puts the answer that scores full marks
    in `answer` (and, for t3, a flipped verdict in `wrong`); the oracle says it, the flawed
    model injects its faults by the kind of answer: a plan gets the plan faults above, a
    state loses a fact (`drop_fact`), a verdict is flipped (`flip_verdict`)."""
    text = meta["answer"]
    if variant == "oracle":
        return text
    if variant != "flawed":
        raise ValueError(f"no reference model named {variant!r} (oracle, flawed, responsive)")
    faults = meta.get("faults", {})
    rng = random.Random(draw_key(meta))
    kind = meta.get("answer_kind")
    lines = [ln for ln in text.strip().strip("`").splitlines() if ln.strip()]
    if kind == "plan":
        objects = sorted({w for ln in lines for w in _split(ln)[1:]})
        return flawed_plan({"solvable": True, "plan": lines}, objects, faults, rng, None)
    if kind == "state":
        if lines and rng.random() < float(faults.get("drop_fact", 0.0)):
            lines.pop(rng.randrange(len(lines)))
        return plan_block(lines)
    if kind == "verdict" and rng.random() < float(faults.get("flip_verdict", 0.0)):
        return meta["wrong"]
    return text


def acpbench_answer(variant: str, meta: dict) -> str:
    """An ACPBench question: the shard puts the answer that scores full marks in
    `answer` and a readable wrong one in `wrong`; the oracle says the first, the flawed
    model the second at its `wrong_answer` rate."""
    if variant == "oracle":
        return meta["answer"]
    if variant != "flawed":
        raise ValueError(f"no reference model named {variant!r} (oracle, flawed, responsive)")
    rng = random.Random(draw_key(meta))
    if rng.random() < float(meta.get("faults", {}).get("wrong_answer", 0.0)):
        return meta["wrong"]
    return meta["answer"]


def _flawed_answer(folder: Path, truth: dict, meta: dict) -> str:
    # seeded by the task, whatever its disguise (`p01@deceptive` draws as `p01` does), so
    # that the flawed reference is as blind to disguises as the oracle
    task = str(meta.get("task", folder)).partition("@")[0]
    rng = random.Random(draw_key(meta, task))
    return flawed_plan(truth, task_objects(folder), meta.get("faults", {}), rng,
                       random_plan(folder))


def task_objects(folder: Path) -> list[str]:
    """The task's objects as its briefs name them (a disguised task's `names.json` keeps
    them under `objects`): the names a wrong argument is drawn from."""
    names = json.loads((folder / "names.json").read_text())
    return sorted((names["objects"] if "disguise" in names else names).values())


def random_plan(folder: Path) -> Callable[[random.Random], list[str]]:
    """A draw of three grounded actions of the task (a plan said for an unsolvable one);
    the task is loaded only when a draw is made, as most answers never need it."""
    def draw(r: random.Random) -> list[str]:
        from planaudit.formal.load import load_task

        task = load_task(folder / "domain.pddl", folder / "problem.pddl")
        ops = task.all_operators()
        return [r.choice(ops).name for _ in range(3)] if ops else ["(noop)"]

    return draw
