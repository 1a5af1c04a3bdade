"""A reference agent's next tool call in the online regime.

The oracle reads the task, senses, executes an optimal plan and submits (or declares
the task unsolvable), following the plan setting's workflow exactly when the call
carries one; the flawed agent never senses and executes its faulty answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from planaudit.reference.answers import _flawed_answer


def _history(messages: list[dict]) -> list[tuple[str, dict, str]]:
    """(tool, arguments, observation) of every earlier turn, in either tool protocol."""
    from planaudit.protocol import native_calls, text_call

    out = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        calls = native_calls(m.get("tool_calls") or [])
        if not calls and (one := text_call(m.get("content"))) is not None:
            calls = [one]
        if calls:
            nxt = messages[i + 1].get("content") if i + 1 < len(messages) else ""
            out.append((calls[0].name, calls[0].args, nxt or ""))
    return out


def online_turn(variant: str, meta: dict, messages: list[dict]) -> tuple[str, dict]:
    """The next tool call of a reference agent. The oracle reads the task, senses once,
    executes an optimal plan and submits (or declares the task unsolvable); the flawed
    agent never senses and executes its faulty answer. Under a plan setting (the call's
    metadata names its expected order) the oracle follows the workflow exactly instead."""
    return _workflow_turn(variant, meta, messages)[1:]


def _workflow_turn(variant: str, meta: dict, messages: list[dict]) -> tuple[str, str, dict]:
    """(text, tool, arguments) of the next turn; the text is empty except where a plan
    setting asks the oracle to write (its plan, its summary)."""
    folder = Path(meta["task_dir"])
    truth = json.loads((folder / "truth.json").read_text())
    hist = _history(messages)
    names = [h[0] for h in hist]
    if variant == "oracle" and meta.get("plan_order"):
        return _oracle_workflow(truth, meta["plan_order"], len(hist))
    if "get_task" not in names:
        return "", "get_task", {}
    if variant == "oracle":
        if not truth["solvable"]:
            return "", "declare_unsolvable", {}
        if meta.get("disruption"):
            return _resensing_turn(list(truth["plan"]), hist)
        if "query_state" not in names:
            return "", "query_state", {}
        steps = list(truth["plan"])
        done = sum(1 for name, _, obs in hist if name == "act" and obs.startswith("Applied"))
    elif variant == "flawed":
        text = _flawed_answer(folder, truth, meta)
        if text == "UNSOLVABLE":
            return "", "declare_unsolvable", {}
        steps = [line for line in text.splitlines() if line.startswith("(")]
        done = names.count("act")
    else:
        raise ValueError(f"no reference model named {variant!r} (oracle, flawed, responsive)")
    if done < len(steps):
        return "", "act", {"action": steps[done]}
    return "", "submit", {}


def _resensing_turn(steps: list[str], hist: list[tuple[str, dict, str]]) -> tuple[str, str, dict]:
    """The oracle where tools may fail (online.disruption): it senses before its first act
    and after every act, and counts a step done only when the state it then reads differs
    from the state it read before the act, so an error (explicit) or a success reported for
    nothing (silent) is retried, and a wrong fact in the next report (misleading) does not
    undo a step that ran. An optimal plan's every step changes the state, so the test
    cannot mistake a step that ran for one that did not."""
    if hist[-1][0] == "act" or all(tool != "query_state" for tool, _, _ in hist):
        return "", "query_state", {}
    done, seen = 0, None  # seen: the last state report before the pending act
    acted = False
    for tool, _, obs in hist:
        if tool == "query_state":
            if acted and obs != seen:
                done += 1
            seen, acted = obs, False
        elif tool == "act":
            acted = True
    if done < len(steps):
        return "", "act", {"action": steps[done]}
    return "", "submit", {}


def _oracle_workflow(truth: dict, order: str, turn: int) -> tuple[str, str, dict]:
    """The oracle under a prescribed phase order (the one-letter call order of
    `PlanSetting.call_order`, `compliance.phases.LEGACY`, as cached calls are keyed): its
    whole episode as a script of turns, of which it plays number `turn`. A plan (P) is
    written in the reply of the tool call that follows it in the order, a summary (Y) in
    the reply that submits. On an unsolvable task it reads, senses where the workflow
    senses before acting, and declares."""
    steps = list(truth["plan"]) if truth["solvable"] else []
    script: list[list] = []  # [text, tool, args]
    pending = ""
    for phase in order:
        if phase == "U":
            script.append([pending, "get_task", {}])
        elif phase == "S":
            script.append([pending, "query_state", {}])
        elif phase == "P" and steps:
            pending = "My plan:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
            continue
        elif phase == "A":
            script += [[pending if i == 0 else "", "act", {"action": s}]
                       for i, s in enumerate(steps)]
        elif phase == "V" and steps:
            script.append([pending, "query_state", {}])
        else:
            continue
        pending = ""
    if not truth["solvable"]:
        script.append(["", "declare_unsolvable", {}])
    else:
        summary = (f"Summary: I read the task, queried the state, wrote a plan of {len(steps)} "
                   "actions, executed each of them in order, and confirmed that the goal now "
                   "holds, so I submit." if "Y" in order else "")
        script.append([pending or summary, "submit", {}])
    return tuple(script[min(turn, len(script) - 1)])


def online_text(variant: str, meta: dict, messages: list[dict]) -> str:
    """What a reference agent writes beside its next tool call (a plan setting's plan or
    summary; nothing otherwise)."""
    return _workflow_turn(variant, meta, messages)[0]
