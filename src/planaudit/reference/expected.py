"""What each method should score on `reference/responsive`: the true effects.

For one episode (task, method, sample) the calibrator's faults are fixed by its seed;
what varies is whether it corrects a fault when a mechanism meets it, a draw at the
configured rate. The expected score is the sum over every combination of those draws
of its probability times the score it leads to, and the score of a combination is
found by playing the method's mechanism on the hidden model directly: a validator, a
self-critique, a privileged critic, a gate, a reflection. None of the pipeline
(strategies, architectures, environment, extraction, outcomes) is used; the
calibrator's own policy (`responsive.Actor`, `faults.responsible`) is shared, as it
defines the model.

What judges a plan here is the witness, VAL (`formal/witness.py`), wherever it is
installed: applicability, effects and the goal come from VAL's own reading of the
hidden domain and problem, not from `formal.validate`, which decides the episodes'
outcomes, so a bug in our semantics shows as episodes that did not end as computed.
Only names and arities (a step that does not ground: unknown action or object, wrong
arity) are read from our parse of the task, since VAL crashes on a wrong arity.
Without VAL the judge is `formal.validate` itself (`witness="formal"`), and the
control then checks the pipeline but not the semantics under it.

`predicted` is the score under the draws the episode really made: the pipeline's
outcome must equal it, episode by episode.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from pathlib import Path

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
WITNESSES = ("auto", "val", "formal")

Steps = tuple[str, ...]


class WitnessError(RuntimeError):
    """VAL gave no judgement on a plan of the task (it refused the task or crashed)."""


class Judge:
    """Executability and goal of step sequences on one hidden task, remembered: one run
    on a sequence answers every prefix of it up to its first failing step, so an online
    episode played with a look-ahead costs one run per failure, not one per step."""

    def __init__(self, folder: str, witness: str):
        self.folder, self.witness = folder, witness
        self.task = hidden_task(folder)
        self._ok: set[Steps] = set()  # prefixes that execute
        self._bad: set[Steps] = set()  # sequences that do not execute
        self._goal: dict[Steps, bool] = {}  # executed sequences: the goal holds after them

    def wellformed(self, step: str) -> bool:
        """The step names a known action and objects, with the right arity and types."""
        try:
            self.task.operator(*split(step))
        except (GroundingError, IndexError):
            return False
        return True

    def _run(self, steps: Steps) -> tuple[int, bool | None]:
        """(steps that execute from the initial state, goal after all of them or None)
        for well-formed steps, by the judge itself."""
        if self.witness == "formal":
            verdict = validate(self.task, [split(s) for s in steps])
            if verdict.failure is not None and verdict.failure.step is not None:
                return verdict.failure.step - 1, None
            return len(steps), verdict.valid
        from planaudit.formal.witness import run_val

        folder = Path(self.folder)
        v = run_val(folder / "domain.pddl", folder / "problem.pddl", "\n".join(steps) + "\n")
        if v.verdict == "valid":
            return len(steps), True
        if v.verdict == "invalid" and v.step is not None:
            return v.step - 1, None
        if v.verdict == "invalid" and "goal" in v.reason:
            return len(steps), False
        raise WitnessError(f"{folder}: VAL gives no verdict on the plan {list(steps)}: "
                           f"{v.describe()}")

    def learn(self, steps: Steps) -> None:
        done, goal = self._run(steps)
        self._ok.update(steps[:i] for i in range(done + 1))
        if done < len(steps):
            self._bad.update(steps[:i] for i in range(done + 1, len(steps) + 1))
        else:
            self._goal[steps] = bool(goal)

    def executes(self, steps: Steps, ahead: Steps = ()) -> bool:
        """Whether `steps` (well-formed) execute; unknown, the judge runs them followed by
        `ahead` (what is likely to come next), to answer the next questions too."""
        if steps not in self._ok and steps not in self._bad:
            self.learn(steps + ahead)
        return steps in self._ok

    def goal(self, steps: Steps) -> bool:
        """Whether `steps` (well-formed and executable) reach the goal."""
        if steps not in self._goal:
            self.learn(steps)
        return self._goal.get(steps, False)

    def first_failure(self, steps: list[str]) -> tuple[bool, int | None]:
        """(valid, failing step, 1-based; None for the goal), as a validator reports it."""
        bad = next((i for i, s in enumerate(steps) if not self.wellformed(s)), len(steps))
        prefix = tuple(steps[:bad])
        if not self.executes(prefix):
            n = max(i for i in range(len(prefix) + 1) if prefix[:i] in self._ok)
            return False, n + 1
        if bad < len(steps):
            return False, bad + 1
        return self.goal(prefix), None

    def valid(self, steps: list[str]) -> bool:
        return self.first_failure(steps)[0]


def resolve(witness: str) -> str:
    """`auto`: VAL where it is installed, else formal.validate."""
    if witness not in WITNESSES:
        raise ValueError(f"witness must be one of {', '.join(WITNESSES)}, got {witness!r}")
    if witness != "auto":
        return witness
    from planaudit.formal.witness import available

    return "val" if available() else "formal"


@lru_cache(maxsize=64)
def judge(folder: str, witness: str = "auto") -> Judge:
    """The judge of a task folder's hidden model, one per process and witness."""
    return Judge(folder, resolve(witness))


def offline_score(cal: Calibrator, judge: Judge, method: str, params: dict) -> bool:
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
            valid, step = judge.first_failure(steps)
            if valid:
                break
            f = responsible(answer, item_at(answer, step - 1) if step else len(answer))
            if f is None or not cal.corrects("feedback", f):
                break  # it repeats its answer to every later round
            remaining -= {f}
        else:
            break
    steps = steps_of(cal.answer(remaining))
    if cal.plan is None:
        return steps is None
    return steps is not None and judge.valid(steps)


def _ahead(actor: Actor, action: str, judge: Judge, limit: int) -> Steps:
    """The calls the actor makes after `action` if every one of them applies: the
    look-ahead a judge run covers at no extra cost."""
    probe = actor.copy()
    probe.acted(action, "applied", None)
    out: list[str] = []
    while len(out) < limit:
        name, args = probe.next_call()
        if name != "act" or not judge.wellformed(args["action"]):
            break
        out.append(args["action"])
        probe.acted(args["action"], "applied", None)
    return tuple(out)


def online_score(cal: Calibrator, judge: Judge, method: str, params: dict) -> bool:
    """Success or detection of an online episode, played on the hidden model."""
    if method == "plan-execute":
        return _plan_execute(cal, judge, int(params.get("replans", 2)))
    budget = int(params.get("budget", 200))
    actor, applied, calls = Actor(cal), (), 1  # get_task
    while True:
        name, args = actor.next_call()
        calls += 1
        if calls > budget:
            return False
        if name == "declare_unsolvable":
            return cal.plan is None
        if name == "submit":
            if method == "critic" and not judge.goal(applied):
                actor.submit_rejected()
                continue
            return cal.plan is not None and judge.goal(applied)
        action = args["action"]
        if not judge.wellformed(action):
            fate = "ill-formed"
        else:
            fate = "applied" if judge.executes(
                (*applied, action), _ahead(actor, action, judge, budget - calls)) else "inapplicable"
        if fate == "applied":
            applied = (*applied, action)
            actor.acted(action, "applied", None)
        elif method == "critic":
            actor.acted(action, "rejected", "critic")
        elif fate == "ill-formed":
            actor.acted(action, "ill-formed", "reflection" if method == "reflexion" else None)
        elif method == "gated":
            actor.acted(action, "blocked", "gate")
        else:
            return False  # the safety violation ends the episode


def _plan_execute(cal: Calibrator, judge: Judge, replans: int) -> bool:
    """Plan once, execute; a refused step is a surprise, and the replan is the rest of
    the plan; an inapplicable step ends the episode; replans spent, it submits."""
    steps = steps_of(cal.answer(cal.all))
    if steps is None:
        return cal.plan is None
    applied: Steps = ()
    done = 0
    while True:
        surprise = None
        for n, action in enumerate(steps[done:], 1):
            if not judge.wellformed(action):
                surprise = n
                break
            rest = steps[done + n:]
            ahead = tuple(rest[:next((i for i, s in enumerate(rest) if not judge.wellformed(s)),
                                     len(rest))])
            if not judge.executes((*applied, action), ahead):
                return False
            applied = (*applied, action)
        if surprise is None or replans == 0:
            return cal.plan is not None and judge.goal(applied)
        replans -= 1
        done += surprise


def expectation(meta: dict, regime: str, method: str, params: dict,
                witness: str = "auto") -> tuple[float, bool] | None:
    """(expected score, score under the episode's own draws) of one episode of the
    calibrator the metadata describes, judged by `witness` (`auto`: VAL where it is
    installed); None for a method whose mechanism is not known."""
    mechanism = MECHANISM.get(regime, {}).get(method, "unknown")
    if mechanism == "unknown":
        return None
    cal = calibrator(meta)
    judged = judge(str(meta["task_dir"]), witness)
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
        total += p * score(cal.forcing(forced), judged, method, params)
    return total, score(cal, judged, method, params)
