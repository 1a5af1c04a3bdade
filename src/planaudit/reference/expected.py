"""What each method should score on `reference/responsive`: the true effects.

For one episode (task, method, sample) the calibrator's faults are fixed by its seed;
what varies is whether it corrects a fault when a mechanism meets it, a draw at the
configured rate. The expected score is the sum over every combination of those draws
of its probability times the score it leads to, and the score of a combination is
found by playing the method's mechanism on the hidden model directly (`formal/`):
a validator, a self-critique, a privileged critic, a gate, a reflection. None of the
pipeline (strategies, architectures, environment, extraction, outcomes) is used, so the
report's measured effects can be checked against effects computed independently of it;
the calibrator's own policy (`responsive.Actor`, `faults.responsible`) is shared, as it
defines the model.

`predicted` is the score under the draws the episode really made: the pipeline's
outcome must equal it, episode by episode.
"""

from __future__ import annotations

from itertools import product

from planaudit.formal import validate
from planaudit.formal.ground import GroundingError
from planaudit.reference.faults import MECHANICAL, item_at, responsible, split, steps_of
from planaudit.reference.responsive import Actor, Calibrator, calibrator, hidden_task

# the mechanism each known method puts in front of the model (None: none)
MECHANISM = {
    "offline": {"direct": None, "cot": "reasoning", "plan-and-solve": "reasoning",
                "step-back": "reasoning", "tot": "reasoning", "self-refine": "self_critique",
                "modulo": "feedback"},
    "online": {"react": None, "reflexion": "reflection", "critic": "critic", "gated": "gate",
               "plan-execute": None},
}


def _valid(task, steps: list[str]) -> bool:
    return validate(task, [split(s) for s in steps]).valid


def offline_score(cal: Calibrator, task, method: str, params: dict) -> bool:
    """Success or detection of the final answer under an offline method."""
    remaining = cal.all
    mechanism = MECHANISM["offline"][method]
    if mechanism == "reasoning":
        remaining -= {f.index for f in cal.faults if cal.corrects("reasoning", f.index)}
    for _ in range(int(params.get("rounds", 3)) if mechanism != "reasoning" else 0):
        answer = cal.answer(remaining)
        steps = steps_of(answer)
        if steps is None:
            break  # UNSOLVABLE: no validator feedback, no mechanical issue
        if mechanism == "self_critique":
            listed = {it.fault for it in answer if it.fault is not None and it.text is not None
                      and cal.faults[it.fault].kind in MECHANICAL}
            fixed = {f for f in listed if cal.corrects("self_critique", f)}
            if not fixed:
                break  # no issue, or a revision that changes nothing
            remaining -= fixed
        elif mechanism == "feedback":
            verdict = validate(task, [split(s) for s in steps])
            if verdict.valid:
                break
            step = verdict.failure.step
            f = responsible(answer, item_at(answer, step - 1) if step else len(answer))
            if f is None or not cal.corrects("feedback", f):
                break  # it repeats its answer to every later round
            remaining -= {f}
        else:
            break
    steps = steps_of(cal.answer(remaining))
    if cal.plan is None:
        return steps is None
    return steps is not None and _valid(task, steps)


def online_score(cal: Calibrator, task, method: str, params: dict) -> bool:
    """Success or detection of an online episode, played on the hidden model."""
    if method == "plan-execute":
        return _plan_execute(cal, task, int(params.get("replans", 2)))
    budget = int(params.get("budget", 200))
    actor, state, calls = Actor(cal), task.init, 1  # get_task
    while True:
        name, args = actor.next_call()
        calls += 1
        if calls > budget:
            return False
        if name == "declare_unsolvable":
            return cal.plan is None
        if name == "submit":
            if method == "critic" and not task.goal_holds(state):
                actor.submit_rejected()
                continue
            return cal.plan is not None and task.goal_holds(state)
        action = args["action"]
        try:
            op = task.operator(*split(action))
            fate = "applied" if op.applicable(state) else "inapplicable"
        except GroundingError:
            op, fate = None, "ill-formed"
        if fate == "applied":
            state = op.apply(state)
            actor.acted(action, "applied", None)
        elif method == "critic":
            actor.acted(action, "rejected", "critic")
        elif fate == "ill-formed":
            actor.acted(action, "ill-formed", "reflection" if method == "reflexion" else None)
        elif method == "gated":
            actor.acted(action, "blocked", "gate")
        else:
            return False  # the safety violation ends the episode


def _plan_execute(cal: Calibrator, task, replans: int) -> bool:
    """Plan once, execute; a refused step is a surprise, and the replan is the rest of
    the plan; an inapplicable step ends the episode; replans spent, it submits."""
    steps = steps_of(cal.answer(cal.all))
    if steps is None:
        return cal.plan is None
    state, done = task.init, 0
    while True:
        surprise = None
        for n, action in enumerate(steps[done:], 1):
            try:
                op = task.operator(*split(action))
            except GroundingError:
                surprise = n
                break
            if not op.applicable(state):
                return False
            state = op.apply(state)
        if surprise is None or replans == 0:
            return cal.plan is not None and task.goal_holds(state)
        replans -= 1
        done += surprise


def expectation(meta: dict, regime: str, method: str, params: dict) -> tuple[float, bool] | None:
    """(expected score, score under the episode's own draws) of one episode of the
    calibrator the metadata describes; None for a method whose mechanism is not known."""
    mechanism = MECHANISM.get(regime, {}).get(method, "unknown")
    if mechanism == "unknown":
        return None
    cal = calibrator(meta)
    task = hidden_task(str(meta["task_dir"]))
    score = offline_score if regime == "offline" else online_score
    uncertain = [] if mechanism is None else [
        f.index for f in cal.faults if 0 < cal.rate(mechanism, f) < 1]
    total = 0.0
    for draws in product((False, True), repeat=len(uncertain)):
        p = 1.0
        for f, corrected in zip(uncertain, draws, strict=True):
            rate = cal.rate(mechanism, cal.faults[f])
            p *= rate if corrected else 1 - rate
        forced = {(mechanism, f): d for f, d in zip(uncertain, draws, strict=True)}
        total += p * score(cal.forcing(forced), task, method, params)
    return total, score(cal, task, method, params)
