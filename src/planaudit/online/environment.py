"""The online environment: the hidden model's state behind five tools.

Epistemic tools (`get_task`, `query_state`) read and change nothing; the ontic
tool `act` changes the state. Every judgement (can this action run? does the
goal hold?) is asked of `formal/`; the environment only keeps the state, counts
calls against the budget, and renders observations in the briefs' words, so the
agent never sees PDDL. An inapplicable action ends the episode (the safety
violation), unless the environment is `gated`: then it is blocked, the unmet
conditions are named, and the episode goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planaudit.contract import parse_action
from planaudit.formal import number
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import format_step
from planaudit.formal.task import State, atom_indices, conjuncts, holds
from planaudit.online.disruption import Disruption
from planaudit.suite.brief import BriefError, Renderer, RenderFailed

EPISTEMIC = frozenset({"get_task", "query_state"})
ONTIC = frozenset({"act"})
TOOLS = ("get_task", "query_state", "act", "submit", "declare_unsolvable")

# how an episode ended, before the truth turns it into an outcome (episode.online_outcome)
ENDINGS = ("submitted-goal", "submitted-early", "declared-unsolvable", "inapplicable",
           "budget", "context-exhausted", "error")


@dataclass
class Observation:
    text: str
    ok: bool = True  # False: an error the agent can recover from, or the end of a failure
    ended: bool = False
    kind: str = "ok"  # ok, ill-formed, blocked, reminder, rejected, end


@dataclass
class Counters:
    steps: int = 0  # every tool call, rejected proposal and tool-less turn
    replies: int = 0  # every model reply paid for (actor, critic, reflection, planner)
    n_epistemic: int = 0
    n_ontic: int = 0
    queried_before_act: bool | None = None
    states_revisited: int = 0
    blocked_actions: int = 0
    critic_rejections: int = 0
    reflections: int = 0
    ill_formed: int = 0
    applied: list[str] = field(default_factory=list)


def _num(v) -> str:
    return number.render(v)  # exact: 0.3, or 1/3 where no decimal is


class Environment:
    """One episode's world. Tools return an `Observation`; `ending` says how it ended."""

    def __init__(self, task: Task, brief: dict, renderer: Renderer | None, budget: int,
                 gated: bool = False, disruption: Disruption | None = None):
        self.task = task
        self.brief = brief
        self.renderer = renderer
        self.budget = budget
        self.gated = gated
        self.disruption = disruption  # tools that fail (online.disruption), or None
        self.state: State = task.init
        self.visited: set[State] = {task.init}
        self.actions = frozenset(task.domain.actions)
        self.count = Counters()
        self.ending: str | None = None
        # (step, kind, action, detail): the first failure, named as `planaudit validate` would
        self.first_failure: tuple[int, str, str | None, str] | None = None
        self.failure_kinds: list[str] = []  # every failure, in order
        # the trajectory, turn by turn: the agent's text and the tool it called (with a mark
        # for a blocked, ill-formed or rejected call), what `compliance/` labels
        self.trace: list[dict] = []

    # -- bookkeeping --------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.ending is not None

    def _fail(self, kind: str, action: str | None = None, detail: str = "") -> None:
        self.failure_kinds.append(kind)
        if self.first_failure is None:
            self.first_failure = (self.count.steps, kind, action, detail)

    def _end(self, ending: str, text: str) -> Observation:
        self.ending = ending
        return Observation(text, ok=ending in ("submitted-goal", "declared-unsolvable"), ended=True,
                           kind="end")

    def say(self, text: str | None) -> None:
        """An agent turn begins with this text (its tool call, if any, follows)."""
        self.trace.append({"text": text or "", "tool": None, "args": {}, "mark": ""})

    def _record(self, name: str, args: dict, mark: str = "") -> dict:
        turn = self.trace[-1] if self.trace and self.trace[-1]["tool"] is None else None
        if turn is None:
            turn = {"text": ""}
            self.trace.append(turn)
        turn.update(tool=name, args=dict(args), mark=mark)
        return turn

    @property
    def exhausted(self) -> bool:
        """No unit of the budget is left: an architecture asks before it calls the model,
        so a budget of N never pays for an N+1st reply that could not be executed."""
        return self.count.steps >= self.budget

    def pay(self) -> bool:
        """Count one model reply against the budget before it is asked for; False when the
        budget's N replies are spent (the budget caps replies as well as tool calls, so
        that a critic, a reflector or a planner's retries cannot buy more than N)."""
        if self.count.replies >= self.budget:
            return False
        self.count.replies += 1
        return True

    def exhaust(self, unit: str = "tool calls") -> Observation:
        """End the episode: the budget (of tool calls, or of `unit`) is used up."""
        self._fail("budget", None, f"the budget of {self.budget} {unit} is used up")
        return self._end("budget", f"The budget of {self.budget} {unit} is used up.")

    def context_out(self, detail: str) -> Observation:
        """End the episode: a model call's prompt (the history the agent grew) no longer
        fits the model's context; the model's failure, not an unreachable model."""
        self._fail("context", None, detail)
        return self._end("context-exhausted", "The model's context is exhausted.")

    def unreviewed(self, name: str, args: dict) -> Observation:
        """A proposal the critic could not be paid to review: recorded (the actor did call
        a tool), not executed, and the episode ends on its budget of replies."""
        self._record(name, args, "unreviewed")
        return self.exhaust("model replies")

    def spend(self) -> Observation | None:
        """Count one unit of the budget; with none left, the episode ends."""
        if self.exhausted:
            return self.exhaust()
        self.count.steps += 1
        return None

    def idle(self) -> Observation:
        """A turn with no tool call: it counts, and gets a reminder."""
        over = self.spend()
        return over or Observation(
            "No tool was called. Call exactly one of the tools: " + ", ".join(TOOLS) + ".",
            ok=False, kind="reminder")

    def rejected(self, reason: str, name: str = "act", args: dict | None = None) -> Observation:
        """A proposal a critic rejected: it counts against the budget."""
        self.count.critic_rejections += 1
        over = self.spend()
        if not over:
            self._record(name, args or {}, "rejected")
        return over or Observation("Rejected by the critic, not executed: " + reason, ok=False,
                                   kind="rejected")

    def skipped(self) -> Observation:
        """A second tool call in one turn: it counts, and is not executed."""
        over = self.spend()
        return over or Observation("Not executed: make one tool call per turn.", ok=False,
                                   kind="ill-formed")

    def undecodable(self, error: str, name: str | None = None) -> Observation:
        """A tool call whose arguments could not be read."""
        over = self.spend()
        if not over and name:
            self._record(name, {}, "ill-formed")
        return over or self._ill_formed(error + ".", "bad-arguments")

    # -- the tools ------------------------------------------------------------------

    def call(self, name: str, args: dict) -> Observation:
        """Dispatch one tool call (already decoded); unknown tools and bad
        arguments are recoverable errors."""
        over = self.spend()
        if over:
            return over
        turn = self._record(name, args)
        obs = self._dispatch(name, args)
        if obs.kind in ("blocked", "ill-formed"):
            turn["mark"] = obs.kind
        return obs

    def _dispatch(self, name: str, args: dict) -> Observation:
        if name == "get_task":
            self.count.n_epistemic += 1
            return Observation(self.brief["domain"] + "\n\n" + self.brief["instance"]
                               + "\n\n" + self.vocabulary())
        if name == "query_state":
            obs = self.query_state(args.get("predicate"), args.get("object"))
            if obs.kind == "ill-formed":  # refused: nothing was sensed
                return obs
            self.count.n_epistemic += 1
            if self.count.n_ontic == 0:
                self.count.queried_before_act = True
            return obs
        if name == "act":
            action = args.get("action")
            if not isinstance(action, str) or not action.strip():
                return self._ill_formed("act needs one argument, action: a grounded action "
                                        "such as (action-name object1 object2)", "bad-arguments")
            return self.act(action)
        if name == "submit":
            if self.task.goal_holds(self.state):
                return self._end("submitted-goal", "Submitted: the goal holds.")
            unmet = [self.task.describe(c) for c in conjuncts(self.task.goal)
                     if not holds(c, self.state)]
            self._fail("goal", "submit", "the goal does not hold; unsatisfied: " + " ".join(unmet))
            return self._end("submitted-early", "Submitted, but the goal does not hold.")
        if name == "declare_unsolvable":
            return self._end("declared-unsolvable", "Declared unsolvable.")
        return self._ill_formed(f"there is no tool named '{name}'; the tools are "
                                + ", ".join(TOOLS) + ".", "unknown-tool")

    def _ill_formed(self, text: str, kind: str, action: str | None = None) -> Observation:
        self.count.ill_formed += 1
        self._fail(kind, action, text.rstrip("."))
        return Observation("Error: " + text + " Nothing changed.", ok=False, kind="ill-formed")

    def vocabulary(self) -> str:
        preds = sorted(self.task.domain.predicates)
        fns = sorted(f for f in self.task.domain.functions if f != "total-cost")
        text = "query_state can filter by predicate name: " + ", ".join(preds)
        if fns:
            text += "; numeric quantities: " + ", ".join(fns)
        return text + "."

    def _fact(self, pred: str, args: tuple[str, ...]) -> str:
        if self.renderer is None:
            return f"{pred}({', '.join(args)})"
        try:
            return self.renderer.atom(pred, args)
        except BriefError as e:
            raise RenderFailed(f"an observed fact cannot be put in words: {e}") from e

    def _value(self, fn: str, args: tuple[str, ...], v) -> str:
        if self.renderer is None:
            return f"{fn}({', '.join(args)}) = {_num(v)}"
        try:
            return f"{self.renderer.function(fn, args)} is {_num(v)}"
        except BriefError as e:
            raise RenderFailed(f"an observed value cannot be put in words: {e}") from e

    def query_state(self, predicate: str | None = None, obj: str | None = None) -> Observation:
        predicate = predicate.strip().lower() if isinstance(predicate, str) and predicate else None
        obj = obj.strip().lower() if isinstance(obj, str) and obj else None
        known = set(self.task.domain.predicates) | set(self.task.domain.functions)
        if predicate is not None and predicate not in known:
            return self._ill_formed(f"there is no predicate or quantity named '{predicate}'.",
                                    "bad-arguments")
        if obj is not None and obj not in self.task.objects:
            return self._ill_formed(f"there is no object named '{obj}'.", "bad-arguments")
        bits, nums = self.state
        lines = []
        for i in atom_indices(bits):
            pred, args = self.task.atoms[i]
            if (predicate is None or pred == predicate) and (obj is None or obj in args):
                lines.append(self._fact(pred, args))
        for i, v in enumerate(nums):
            fn, args = self.task.fluents[i]
            if v is not None and (predicate is None or fn == predicate) and (
                    obj is None or obj in args):
                lines.append(self._value(fn, args, v))
        if self.disruption is not None:
            if self.disruption.pending_lie:  # misleading: this query, once, is wrong
                self.disruption.pending_lie = False
                lines = self.disruption.mislead(lines, self._false_fact(bits, predicate, obj))
            self.disruption.sensed()
        if not lines:
            return Observation("No fact matching the query holds now.")
        return Observation("Facts that hold now:\n" + "\n".join(f"- {x}" for x in sorted(lines)))

    def _false_fact(self, bits: int, predicate: str | None, obj: str | None) -> list[str]:
        """One fact the query could list that is false now (seeded), in the brief's words:
        the misleading report's candidate addition (empty when every such fact holds)."""
        false = [i for i, (pred, args) in enumerate(self.task.atoms)
                 if not bits >> i & 1 and (predicate is None or pred == predicate)
                 and (obj is None or obj in args)]
        if not false:
            return []
        pred, args = self.task.atoms[self.disruption.rng.choice(false)]
        return [self._fact(pred, args)]

    def unmet(self, op) -> list[str]:
        false = [c for c in conjuncts(op.pre) if not holds(c, self.state)]
        if self.renderer is None:
            return [self.task.describe(c) for c in false]
        try:
            return [self.renderer.sentence(self.task.lift(c)) for c in false]
        except BriefError as e:  # never a vaguer sentence than the brief to the model
            raise RenderFailed(f"the unmet conditions of {op.name} cannot be put in words: "
                               f"{e}") from e

    def act(self, text: str) -> Observation:
        step = parse_action(text, None)
        if step is None:
            return self._ill_formed(f"cannot read '{text.strip()[:80]}' as an action; write "
                                    "(action-name object1 object2 ...).", "unreadable",
                                    text.strip()[:200])
        try:
            op = self.task.operator(*step)
        except GroundingError as e:
            return self._ill_formed(e.detail + ".", e.kind, format_step(step))
        # an ontic action is one the world could run: a refused, ill-formed one changed
        # nothing and is no evidence of executability (nor of acting without sensing)
        self.count.n_ontic += 1
        if self.count.queried_before_act is None:
            self.count.queried_before_act = False
        if not op.applicable(self.state):
            unmet = [self.task.describe(c) for c in conjuncts(op.pre) if not holds(c, self.state)]
            self._fail("precondition", op.name,
                       "precondition not satisfied; unsatisfied: " + " ".join(unmet))
            if self.gated:
                self.count.blocked_actions += 1
                return Observation(f"Blocked: {op.name} cannot be applied now; these conditions "
                                   "do not hold: " + "; ".join(self.unmet(op))
                                   + ". Nothing changed.", ok=False, kind="blocked")
            return self._end("inapplicable", f"{op.name} cannot be applied in the current state. "
                             "The episode ends: this was a safety violation.")
        after = op.apply(self.state)
        if self.disruption is not None:
            self.disruption.acted()
            if self.disruption.strike(self.task, self.count.steps, op.name, self.state, after):
                if self.disruption.kind == "explicit":
                    return Observation(f"Error: {op.name} failed to execute. Nothing changed.",
                                       ok=False, kind="disrupted")
                if self.disruption.kind == "silent":  # reported as done; nothing changed
                    return Observation(f"Applied {op.name}.")
        self.state = after
        if self.state in self.visited:
            self.count.states_revisited += 1
        self.visited.add(self.state)
        self.count.applied.append(op.name)
        return Observation(f"Applied {op.name}.")
