"""`reference/responsive`: a calibrator whose answers each method's mechanism can improve.

It answers as the oracle with seeded faults (`faults.py`), like `reference/flawed`, and
then reacts to what a method puts in front of it, each reaction a seeded draw at the
rate the config gives its mechanism (`responses:` of the model's entry):

- `feedback` (modulo): a validator's rejection; it reads the step the rejection names
  and corrects the fault that step is put down to (a step that is not where its answer
  first fails, as it sees it on the hidden model, only if one of its faults wrote it);
- `self_critique` (self-refine): its critique lists its mechanical faults (unknown names,
  wrong arity); the revision corrects each;
- `reasoning` (cot, plan-and-solve, step-back, tot): a reasoning reply of its own in the
  conversation; each fault is avoided (0 unless configured);
- `critic`: a privileged critic (the same model) rejects every call that would fail; the
  actor corrects the fault behind the rejected call;
- `reflection` (reflexion): a lesson after a refused call; the actor corrects that call;
- `gate` (gated): a blocked action; the actor corrects the fault behind it.

A fault it does not correct it never corrects: the actor then moves on to its next step
(a refused, blocked or rejected step is left out), the offline answer stays as it was.
Everything is derived from the conversation each call carries (a reference model keeps
no state between calls), so the cache and the transcripts work as for any model.
`expected.py` computes what every method should score on this model.
"""

from __future__ import annotations

import copy
import json
import random
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from planaudit.reference.draws import draw_key
from planaudit.reference.faults import (
    MECHANICAL,
    Fault,
    Item,
    answer_text,
    decide,
    item_at,
    items,
    responsible,
    seed_faults,
    split,
)

MECHANISMS = ("feedback", "self_critique", "reasoning", "critic", "reflection", "gate")
REASONING = "Thinking it over (reference model: its reasoning is not shown)."
LESSON = "Lesson: write every action exactly as the task description lists it."
_LESSONS = "Lessons learned earlier in this episode:"
_FEEDBACK = "A validator rejected this answer:"
_ISSUES = "Issues found:"
_REPLAN = re.compile(r"While executing your plan, action (\d+), ")


@dataclass(frozen=True)
class Calibrator:
    """One episode's calibrator: the task's optimal plan (None: unsolvable), its seeded
    faults, the response rates and the seed of its draws; `forced` fixes draws (the
    expectation enumerates them)."""

    plan: list[str] | None
    faults: list[Fault]
    rates: dict
    key: str  # seed:task:sample, what the draws are seeded by
    forced: dict = field(default_factory=dict)
    folder: str | None = None  # the task folder: its hidden model, to check feedback on

    def rate(self, mechanism: str, fault: Fault) -> float:
        if mechanism == "self_critique" and fault.kind not in MECHANICAL:
            return 0.0
        return float(self.rates.get(mechanism, 0.0))

    def corrects(self, mechanism: str, index: int) -> bool:
        fault = self.faults[index]
        rate = self.rate(mechanism, fault)
        if (mechanism, index) in self.forced and 0 < rate < 1:
            return self.forced[(mechanism, index)]
        return decide(self.key, mechanism, fault, rate)

    def answer(self, remaining: frozenset[int]) -> list[Item] | None:
        return items(self.plan, self.faults, remaining)

    @property
    def all(self) -> frozenset[int]:
        return frozenset(f.index for f in self.faults)

    def forcing(self, forced: dict) -> Calibrator:
        return replace(self, forced=forced)


def task_key(meta: dict) -> str:
    # seeded by the task whatever its disguise, as `reference/flawed` is
    task = str(meta.get("task", meta["task_dir"])).partition("@")[0]
    return draw_key(meta, task)


def calibrator(meta: dict) -> Calibrator:
    """The calibrator a call's metadata describes (its task, faults, responses, seed)."""
    return _calibrator(str(meta["task_dir"]), task_key(meta),
                       json.dumps(meta.get("faults", {}), sort_keys=True),
                       json.dumps(meta.get("responses", {}), sort_keys=True))


@lru_cache(maxsize=64)
def hidden_task(folder: str):
    """The task folder's hidden model, loaded once per process (it is only read)."""
    from planaudit.formal.load import load_task

    return load_task(Path(folder) / "domain.pddl", Path(folder) / "problem.pddl")


@lru_cache(maxsize=256)
def _calibrator(folder: str, key: str, faults: str, responses: str) -> Calibrator:
    truth = json.loads((Path(folder) / "truth.json").read_text())
    task = hidden_task(folder)

    def random_plan(rng: random.Random) -> list[str]:
        ops = task.all_operators()
        return [rng.choice(ops).name for _ in range(3)] if ops else ["(noop)"]

    plan = list(truth["plan"]) if truth["solvable"] else None
    found = seed_faults(plan, task.objects, json.loads(faults), random.Random(key), random_plan)
    return Calibrator(plan, found, json.loads(responses), key, folder=folder)


# -- offline: answers, critiques ------------------------------------------------------


def _text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def read_answer(cal: Calibrator, text: str) -> frozenset[int] | None:
    """The faults an answer of its own still holds (None: not one of its answers). Each
    fault changes the text of its own steps, so one set of faults gives one text."""
    from itertools import combinations

    wanted = text.strip()
    faults = sorted(cal.all)
    for n in range(len(faults), -1, -1):
        for subset in combinations(faults, n):
            if answer_text(cal.answer(frozenset(subset))) == wanted:
                return frozenset(subset)
    return None


def offline_state(cal: Calibrator, messages: list[dict]) -> tuple[frozenset[int], int]:
    """(faults left, steps already executed) after what the conversation shows: its own
    latest answer, and after it a validator's rejections, a critique's issues, a
    plan-execute replan; before any answer, its own reasoning."""
    remaining = cal.all
    if any(REASONING in _text(m) for m in messages):
        remaining -= {f.index for f in cal.faults if cal.corrects("reasoning", f.index)}
    start = 2
    for i in range(len(messages) - 1, 1, -1):
        if messages[i].get("role") == "assistant" and (
                held := read_answer(cal, _text(messages[i]))) is not None:
            remaining, start = held, i + 1
            break
    done = 0
    for m in messages[start:]:
        text = _text(m)
        if m.get("role") != "user":
            continue
        answer = cal.answer(remaining)
        if text.startswith(_FEEDBACK) and answer is not None:
            step = re.search(r"\baction (\d+),", text)
            k = item_at(answer, int(step.group(1)) - 1) if step else (
                len(answer) if "goal is not reached" in text else None)
            f = told(cal, answer, k) if k is not None else None
            if f is not None and cal.corrects("feedback", f):
                remaining -= {f}
        elif text.startswith(_ISSUES) and answer is not None:
            for n in {int(s) for s in re.findall(r"\bstep (\d+)\b", text)}:
                k = item_at(answer, n - 1)
                f = answer[k].fault if k < len(answer) else None
                if f is not None and cal.corrects("self_critique", f):
                    remaining -= {f}
        elif (replan := _REPLAN.match(text)) is not None:
            done += int(replan.group(1))  # the refused step is left out
    return remaining, done


def first_failure(cal: Calibrator, answer: list[Item]) -> int | None:
    """The item where its answer first fails on the hidden model (len(answer): the goal),
    as the calibrator sees it with its privileged access; None for a valid answer."""
    from planaudit.formal import validate

    if cal.folder is None:
        raise ValueError("the calibrator reads feedback against its task: give it the folder")
    steps = [split(it.text) for it in answer if it.text is not None]
    failure = validate(hidden_task(cal.folder), steps).failure
    if failure is None:
        return None
    return len(answer) if failure.step is None else item_at(answer, failure.step - 1)


def told(cal: Calibrator, answer: list[Item], k: int) -> int | None:
    """The fault a rejection naming item `k` (len(answer): the goal) is put down to. The
    step it is told is read as told: where its answer does first fail, the fault behind
    that failure (`responsible`, which looks back to a dropped step); anywhere else only
    the fault that wrote that very step, so feedback naming the wrong step misleads it."""
    if k == first_failure(cal, answer):
        return responsible(answer, k)
    return answer[k].fault if k < len(answer) else None


def final_answer(cal: Calibrator, messages: list[dict]) -> str:
    remaining, done = offline_state(cal, messages)
    return answer_text(cal.answer(remaining), skip=done)


def critique(cal: Calibrator, messages: list[dict]) -> str:
    """Self-refine's check of names and arities: the mechanical faults of its answer."""
    answer = cal.answer(offline_state(cal, messages)[0])
    issues, n = [], 0
    for it in answer or []:
        if it.text is None:
            continue
        n += 1
        if it.fault is not None and cal.faults[it.fault].kind in MECHANICAL:
            what = ("names an object that does not exist"
                    if cal.faults[it.fault].kind == "unknown_object"
                    else "has the wrong number of arguments")
            issues.append(f"- step {n}, {it.text}, {what}.")
    return "Issues:\n" + "\n".join(issues) if issues else "NO ISSUES"


# -- online: the actor and the critic --------------------------------------------------


def observed(text: str) -> str:
    """What an observation says of the call before it: applied, ill-formed, blocked,
    rejected or other (a reminder of the workflow may come first)."""
    last = text.rsplit("\n\n", 1)[-1] if text.startswith("Reminder") else text
    last = last.removeprefix("Observation: ").strip()
    for prefix, kind in (("Applied ", "applied"), ("Error:", "ill-formed"),
                         ("Blocked:", "blocked"), ("Rejected by the critic", "rejected")):
        if last.startswith(prefix):
            return kind
    return "other"


class Desync(RuntimeError):
    """The conversation shows a call the calibrator would not have made."""


class Actor:
    """The calibrator acting online: its answer executed step by step; a failed call
    (refused, blocked, rejected) is corrected at its mechanism's rate, else left out."""

    def __init__(self, cal: Calibrator):
        self.cal = cal
        self.remaining = cal.all
        self.answer = cal.answer(self.remaining)
        self.k = 0  # the next item of the answer
        self.detour: list[str] = []  # restored steps to execute before item k
        self.skipped: set[int] = set()  # items left out after a failed call
        self.gave_up = False

    def copy(self) -> Actor:
        """An independent actor in the same place (a look-ahead plays it on)."""
        other = copy.copy(self)
        other.detour, other.skipped = list(self.detour), set(self.skipped)
        return other

    def _skip_dropped(self) -> None:
        while self.answer is not None and self.k < len(self.answer) and \
                self.answer[self.k].text is None:
            self.k += 1

    def next_call(self) -> tuple[str, dict]:
        if self.answer is None or self.gave_up:
            return "declare_unsolvable", {}
        if self.detour:
            return "act", {"action": self.detour[0]}
        self._skip_dropped()
        if self.k < len(self.answer):
            return "act", {"action": self.answer[self.k].text}
        return "submit", {}

    def acted(self, action: str | None, outcome: str, mechanism: str | None) -> None:
        """The conversation's next `act` and how it went; mechanism: what met a failure."""
        name, args = self.next_call()
        if name != "act" or args["action"] != action:
            raise Desync(f"the calibrator would have called {name} {json.dumps(args)}, "
                         f"the conversation shows act {action!r}")
        if outcome == "applied" or not (mechanism and self._correct(mechanism)):
            if self.detour:
                self.detour.pop(0)
            else:
                if outcome != "applied":
                    self.skipped.add(self.k)
                self.k += 1

    def submit_rejected(self) -> None:
        if not self._correct("critic"):
            self.gave_up = True  # it cannot see what is missing: it gives up

    def _correct(self, mechanism: str) -> bool:
        if self.detour or self.answer is None:
            return False  # a restored step that fails is put down to no fault
        f, restore = self._responsible()
        if f is None or not self.cal.corrects(mechanism, f):
            return False
        self.remaining -= {f}
        self.answer = self.cal.answer(self.remaining)
        if restore is not None and self.cal.plan is not None:
            self.detour.insert(0, self.cal.plan[restore])
        return True

    def _responsible(self) -> tuple[int | None, int | None]:
        """(fault, step to restore) behind a failure at item k: the fault that wrote item
        k, unless part of it ran already; else the latest dropped or left-out step
        before k (restored by executing it now)."""
        ans = self.answer
        if self.k < len(ans) and (f := ans[self.k].fault) is not None and (
                self.cal.faults[f].slot < 0  # the whole answer: it declares instead
                or not any(it.fault == f and it.text is not None for it in ans[:self.k])):
            return f, None
        for j in range(min(self.k, len(ans)) - 1, -1, -1):
            it = ans[j]
            if it.fault is None or self.cal.faults[it.fault].kind == "swap_adjacent":
                continue
            if it.text is None or j in self.skipped:
                return it.fault, it.slot
        return None, None


def online_turn(cal: Calibrator, messages: list[dict]) -> tuple[str, dict]:
    """The calibrator's next tool call, from the episode so far."""
    from planaudit.reference.agent import _history

    hist = _history(messages)
    if "get_task" not in [h[0] for h in hist]:
        return "get_task", {}
    system = _text(messages[0]) if messages else ""
    lessons = system.split(_LESSONS, 1)[1].count("\n- ") if _LESSONS in system else 0
    actor, refused = Actor(cal), 0
    for name, args, obs in hist:
        outcome = observed(obs)
        if name == "act":
            mechanism = {"rejected": "critic", "blocked": "gate"}.get(outcome)
            if outcome == "ill-formed":
                mechanism = "reflection" if refused < lessons else None
                refused += 1
            actor.acted(args.get("action"), outcome, mechanism)
        elif name == "submit" and outcome == "rejected":
            actor.submit_rejected()
    return actor.next_call()


def critic_verdict(meta: dict, messages: list[dict]) -> str:
    """A privileged critic: REJECT exactly the calls that would fail (an action that is
    ill-formed or inapplicable after the actions applied so far, a submit before the
    goal holds), judged on the hidden model."""
    from planaudit.formal.ground import GroundingError

    text = _text(messages[-1]) if messages else ""
    task = hidden_task(str(meta["task_dir"]))
    state = task.init
    for applied in re.findall(r"Applied (\([^()]*\))\.", text):
        state = task.operator(*split(applied)).apply(state)
    proposal = text.rsplit("Proposed call: ", 1)[-1].strip()
    name, _, raw = proposal.partition(" ")
    if name == "submit":
        return "APPROVE" if task.goal_holds(state) else "REJECT: the goal does not hold yet."
    if name != "act":
        return "APPROVE"
    try:
        action = json.loads(raw or "{}").get("action", "")
        op = task.operator(*split(action))
    except (ValueError, AttributeError, IndexError):
        return "REJECT: the call cannot be read."
    except GroundingError as e:
        return f"REJECT: {e.detail}."
    return "APPROVE" if op.applicable(state) else "REJECT: its conditions do not hold now."


def reply(meta: dict, messages: list[dict]) -> str:
    """What the calibrator says to one call that is not an agent's turn."""
    purpose = meta.get("purpose", "final")
    if purpose == "critic":
        return critic_verdict(meta, messages)
    if purpose == "reflect":
        return LESSON
    if purpose == "score":
        return "10"
    if purpose == "curriculum":  # no mechanism to respond to: it answers as flawed does
        from planaudit.reference.answers import curriculum_answer

        return curriculum_answer("flawed", meta)
    if purpose == "acpbench":  # nor here
        from planaudit.reference.answers import acpbench_answer

        return acpbench_answer("flawed", meta)
    if purpose == "formalize":  # its mechanism: feedback on its files, `responses.repair`
        from planaudit.reference.formalizer import reply as formalized

        return formalized("responsive", meta)
    cal = calibrator(meta)
    if purpose == "critique":
        return critique(cal, messages)
    if purpose != "final":
        return REASONING
    return final_answer(cal, messages)
