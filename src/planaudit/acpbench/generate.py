"""ACPBench's eight question types in its three forms, generated over states of a suite's
tasks, every gold answer read off the exhaustive state graph (`formal/reachable.py`).

`questions(suite_dir, domain, types, forms, tasks, states, seed)` poses, for each of the
first `tasks` solvable prepared tasks of a domain (obfuscated where the suite is) and
each of `states` states of it, every requested type in every requested form. States
are drawn from `Random(seed:domain:task:k)`: even k by a random walk from the initial
state, odd k as the state after a random prefix of the task's proven optimal plan; a
state is kept only when the goal is still ahead (reachable, not reached), so every type
can be asked. Facts are shown as the sentences of the domain's `nl.yaml`, actions as
`(name arg ...)`, as the curriculum shows them.

Every answer is proven on the graph of the states reachable from the question's state,
explored to exhaustion. Past the graph's limit, a plain-STRIPS task's exhaustive types
come from `gold.py`'s exact searches (bitset breadth-first search, then A* with LM-cut;
what a limit leaves undecided is never asked about, and no generative question is posed
while anything is undecided); any other task's state gets only the types that need no
exhaustion there (app, prog, val). Multiple-choice questions have two to four
choices of which exactly one is right by that proof; a question that cannot be posed
(no distractor exists, say) is not posed, and `Skipped` says why.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from planaudit.acpbench.bound import DEFAULT, Bound, PastBound, bounded_each
from planaudit.acpbench.gold import ANSWER, BFS_FIRST, Gold
from planaudit.acpbench.items import Item
from planaudit.acpbench.questions import FORMS, GEN_KIND, LABELS, TYPES, Question, check_types
from planaudit.acpbench.read import normal_fact
from planaudit.formal import write
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.load import domain_at
from planaudit.formal.reachable import UNREACHABLE, Graph, explore
from planaudit.formal.search import breadth_first
from planaudit.formal.space import (
    Unsupported,
    astar_plan,
    ground_actions,
    ground_atoms,
    strips_operators,
)
from planaudit.formal.task import State, conjuncts
from planaudit.suite import brief as template_brief
from planaudit.suite import generic
from planaudit.suite.brief import load_templates
from planaudit.suite.catalog import selects
from planaudit.suite.world import Instance, World, load_instances

MAX_STATES = 50_000  # a question state's graph; past it gold.py's searches (STRIPS) or app, prog, val
EXHAUSTIVE = ("reach", "areach", "just", "land", "nexta")


def answer_format(form: str, kind: str, what: str, words: bool) -> str:
    """The answer contract appended to every question (both sources)."""
    fact = ("written in the words the state above uses" if words
            else "written as (predicate argument ...)")
    if form == "bool":
        return 'End your reply with a line "Answer: yes" or "Answer: no".'
    if form == "mcq":
        return 'End your reply with a line "Answer: X", where X is the letter of the one right choice.'
    item = "action, written as (name argument1 argument2 ...)" if what == "action" else f"fact, {fact}"
    return {
        "set": "End your reply with a fenced block (```) listing every such action, one per line, "
               "written as (name argument1 argument2 ...); an empty block if there is none.",
        "effects": "End your reply with a fenced block (```) with one line per fact that changes, "
                   f"{fact}: \"added: FACT\" for a fact that becomes true, \"deleted: FACT\" for "
                   "one that becomes false.",
        "member": f"End your reply with a fenced block (```) holding only that {item}, or the "
                  "word none if there is none.",
        "index": "End your reply with a fenced block (```) holding only the number of that step "
                 "(the first step is 1), or the word none if every action is applicable.",
        "shorten": "End your reply with a fenced block (```) holding the shortened plan, one "
                   "action per line.",
    }[kind]


@dataclass
class Skipped:
    """Questions not posed, by (domain, type, form) and reason."""

    counts: dict[tuple[str, str, str, str], int] = field(default_factory=dict)

    def add(self, domain: str, qtype: str, form: str, reason: str) -> None:
        key = (domain, qtype, form, reason)
        self.counts[key] = self.counts.get(key, 0) + 1

    def past_bound(self) -> dict[tuple[str, str, str, str], int]:
        """The questions not posed because their gold ran past its memory or time bound
        (the reason names the task and state, or the item)."""
        return {k: n for k, n in self.counts.items() if k[3].startswith(PAST_BOUND)}

    def rows(self) -> list[dict]:
        """One record per (domain, type, form, reason): the job's `.not_posed.json`."""
        return [{"domain": d, "type": t, "form": f, "reason": r, "questions": n,
                 "past_bound": r.startswith(PAST_BOUND)}
                for (d, t, f, r), n in sorted(self.counts.items())]


PAST_BOUND = "gold past its"  # how the reason of a question past the gold bound begins


class StateQuestions:
    """Everything asked about one state of one task, proven on its state graph."""

    def __init__(self, world: World, inst: Instance, label: str, state: State, graph: Graph,
                 seed: int, brief=template_brief.domain_brief):
        self.world, self.inst, self.label, self.state, self.graph = world, inst, label, state, graph
        self.brief = brief
        self._searched: dict[str, Gold] = {}
        self.task: Task = inst.task
        self.seed = seed

    # -- the universe of names -------------------------------------------------------

    def atom_name(self, i: int) -> str:
        pred, args = self.task.atoms[i]
        return "(" + " ".join((pred, *args)) + ")"

    def sentence(self, i: int) -> str:
        return self.world.atom_sentence(*self.task.atoms[i])

    @cached_property
    def universe(self) -> list[int]:
        """Every type-correct ground atom of a predicate some action changes."""
        return sorted({self.task.atom(p, a) for p, a in ground_atoms(self.task)})

    @cached_property
    def facts(self) -> dict[str, str]:
        """How a fact may be written (its sentence, its PDDL form) -> its atom's name."""
        out = {}
        for i in self.universe:
            name = self.atom_name(i)
            out[normal_fact(self.sentence(i))] = name
            out[normal_fact(name)] = name
        return out

    @cached_property
    def fixed(self) -> list[str]:
        """How a fact no action changes may be written (sentence and PDDL form): the
        facts the reach question excludes by its wording, read so that naming one is
        judged wrong with that reason rather than taken for no fact at all."""
        out = set()
        for pred, args in ground_atoms(self.task, fluent_only=False):
            if pred not in self.world.dynamic_predicates:
                out.add(normal_fact(self.world.atom_sentence(pred, args)))
                out.add(normal_fact("(" + " ".join((pred, *args)) + ")"))
        return sorted(out)

    def changeable_kinds(self) -> list[str]:
        """The kinds of fact some action makes true or false, as patterns (X, Y for the
        arguments) in the domain's own sentences."""
        letters = "XYZUVW"
        return [self.world.atom_sentence(p, tuple(letters[:len(self.world.domain.predicates[p])]))
                for p in sorted(self.world.dynamic_predicates)]

    @cached_property
    def all_actions(self) -> list[str]:
        return sorted("(" + " ".join((a, *args)) + ")" for a, args in ground_actions(self.task))

    @cached_property
    def applicable(self) -> list[str]:
        return sorted({self.graph.ops[k].name for k in self.graph.applicable(0)})

    def inapplicable(self, state: State) -> list[str]:
        out = []
        for name in self.all_actions:
            op = self.op(name)
            if op is None or not op.applicable(state):
                out.append(name)
        return out

    def op(self, name: str):
        words = name.strip("()").split()
        try:
            return self.task.operator(words[0], tuple(words[1:]))
        except GroundingError:  # a grounding the task refuses applies nowhere
            return None

    def holds(self, i: int, state: State | None = None) -> bool:
        return bool((self.state if state is None else state)[0] >> i & 1)

    # -- the text --------------------------------------------------------------------

    @cached_property
    def context(self) -> str:
        w, task = self.world, self.task
        by_type: dict[str, list[str]] = {}
        for name, types in {**w.domain.constants, **task.problem.objects}.items():
            by_type.setdefault(" or ".join(types), []).append(name)
        lines = [self.brief(w.domain, w.templates), "", "Objects:"]
        lines += [f"- {ty}: {', '.join(sorted(ns))}" for ty, ns in sorted(by_type.items())]
        lines += ["", "The current state (every fact not listed here is false):"]
        lines += [f"- {s}" for s in w.state_sentences(task, self.state, dynamic_only=False)]
        lines += ["", "The goal (all of these must hold at the end):"]
        lines += [f"- {w.renderer.sentence(c)}" for c in conjuncts(task.problem.goal)
                  if c != ("and", ())]
        return "\n".join(lines)

    def fact_text(self, name: str) -> str:
        words = name.strip("()").split()
        return self.world.atom_sentence(words[0], tuple(words[1:]))

    # -- posing ----------------------------------------------------------------------

    def rng(self, qtype: str, form: str) -> random.Random:
        return random.Random(f"{self.seed}:{qtype}:{form}:{self.inst.domain}:{self.inst.id}:"
                             f"{self.label}")

    def question(self, qtype: str, form: str, body: str, truth: dict, oracle: str,
                 wrong: str) -> Question:
        what = truth.get("what", "fact")
        kind = GEN_KIND[qtype] if form == "gen" else form
        prompt = (f"{self.context}\n\n{body}\n\n"
                  f"{answer_format(form, kind, what, words=True)}")
        return Question(qtype, form, "suite", self.inst.domain, self.inst.id, self.label,
                        prompt, {"kind": kind, **truth}, oracle, wrong)

    def pose(self, qtype: str, form: str) -> Question | str:
        """The question, or why it cannot be posed here."""
        if qtype in EXHAUSTIVE and not self.graph.complete and self.item is None:
            return (f"state graph over {len(self.graph.states)} states, and no exact search "
                    "past it (the task is not plain STRIPS)")
        return getattr(self, "q_" + qtype)(form, self.rng(qtype, form))

    # -- past the graph's limit: the exact searches of gold.py -------------------------

    @cached_property
    def item(self) -> Item | None:
        """The state as an ACPBench item (its problem with this state as :init), for the
        bitset searches of `gold.py` where the graph stopped at its limit; None when the
        graph is complete or the task is not plain STRIPS (those searches take no other)."""
        if self.graph.complete:
            return None
        problem = write.problem(self.world.state_problem(self.task, self.state))
        item = Item(self.label, "", "", write.domain(self.task.domain), problem, None)
        try:
            strips_operators(item.planning_task())
        except Unsupported:
            return None
        return item

    @cached_property
    def _item_task(self) -> Task:
        return self.item.planning_task()

    def searched(self, qtype: str) -> Gold:
        """`gold.py`'s answer for one type from this state (its limits in `undecided`),
        searched once for the three forms."""
        if qtype not in self._searched:
            self._searched[qtype] = ANSWER[qtype](self.item, self._item_task)
        return self._searched[qtype]

    def plan(self) -> list[str]:
        """A shortest plan from the state (action names)."""
        if self.graph.complete:
            return [op.name for op in self.graph.optimal_plan(0) or []]
        task = self._item_task
        found = breadth_first(task, max_states=BFS_FIRST)
        plan = found.plan if found.status != "limit" else astar_plan(task, task.init[0])
        return [op.name for op in plan] if isinstance(plan, list) else []

    # -- helpers for the forms -------------------------------------------------------

    def yes_no(self, rng, form, qtype, ask, yes: list, no: list, render) -> Question | str:
        """A bool question about one candidate, yes or no as the coin (and what exists) says."""
        if not yes and not no:
            return "no candidate"
        answer = rng.random() < 0.5 if yes and no else bool(yes)
        pick = rng.choice(yes if answer else no)
        truth = {"answer": "yes" if answer else "no", "about": pick}
        return self.question(qtype, form, ask(render(pick)), truth,
                             f"Answer: {truth['answer']}",
                             f"Answer: {'no' if answer else 'yes'}")

    def choice(self, rng, form, qtype, ask: str, right: list, wrong: list, render,
               ) -> Question | str:
        """A multiple-choice question, two to four choices, exactly one right: one of
        `right` and up to three of `wrong`; when either list is empty, "none of the other
        choices" stands in for it (then right when `right` is empty, wrong otherwise)."""
        if not right and not wrong:
            return "no candidate"
        none = "none of the other choices"
        if right:
            picks = [render(rng.choice(right))]
            picks += [render(w) for w in rng.sample(wrong, min(3, len(wrong)))] or [none]
        else:
            picks = [none] + [render(w) for w in rng.sample(wrong, min(3, len(wrong)))]
        order = list(range(len(picks)))
        rng.shuffle(order)
        if none in picks:  # "none of the other choices" reads best last
            order.remove(picks.index(none))
            order.append(picks.index(none))
        choices = {LABELS[n]: picks[k] for n, k in enumerate(order)}
        label = LABELS[order.index(0)]
        other = next(lb for lb in choices if lb != label)
        body = ask + "\n" + "\n".join(f"{lb}. {text}" for lb, text in choices.items())
        truth = {"answer": label, "choices": choices}
        return self.question(qtype, form, body, truth, f"Answer: {label}", f"Answer: {other}")

    @staticmethod
    def block(lines: Sequence[str]) -> str:
        return "```\n" + "\n".join(lines) + ("\n" if lines else "") + "```"

    def member(self, form, rng, qtype, what: str, gold: list[str], others: list[str],
               gen_ask: str, bool_ask, mcq_ask: str, none_ok: bool = True,
               undecided: Sequence[str] = ()) -> Question | str:
        """The types whose generative answer is one element of a proven set (or none);
        bool and mcq ask about proven candidates only, and the generative form is not
        posed while a search limit leaves some element `undecided` (no judge for it)."""
        render = self.fact_text if what == "fact" else (lambda a: a)
        if form == "gen" and undecided:
            return f"a search limit left {len(undecided)} undecided"
        if form == "bool":
            return self.yes_no(rng, form, qtype, bool_ask, gold, others, render)
        if form == "mcq":
            return self.choice(rng, form, qtype, mcq_ask, gold, others, render)
        if not gold and not none_ok:
            return "no answer exists"
        truth = {"what": what, "gold": gold, "none_ok": none_ok}
        if what == "fact":
            truth["facts"] = self.facts
        oracle = render(gold[0]) if gold else "none"
        wrong = render(rng.choice(others)) if others else "none"
        if not gold and not others:
            return "no wrong answer exists"
        return self.question(qtype, form, gen_ask, truth, self.block([oracle]), self.block([wrong]))

    # -- the eight types -------------------------------------------------------------

    def q_app(self, form, rng):
        yes, no = self.applicable, self.inapplicable(self.state)
        if form == "gen":
            wrong = yes[:-1] if len(yes) > 1 else yes + no[:1]
            return self.question("app", form, "Which actions are applicable in the current "
                                 "state? List all of them.", {"gold": yes}, self.block(yes),
                                 self.block(wrong))
        if form == "bool":
            return self.yes_no(rng, form, "app", lambda a: f"Is the action {a} applicable in "
                               "the current state?", yes, no, lambda a: a)
        return self.choice(rng, form, "app", "Which of these actions is applicable in the "
                           "current state?", yes, no, lambda a: a)

    def q_prog(self, form, rng):
        if not self.applicable:
            return "no applicable action"
        name = rng.choice(self.applicable)
        after = self.op(name).apply(self.state)
        pos = [self.atom_name(i) for i in self.universe if self.holds(i, after) and not self.holds(i)]
        neg = [self.atom_name(i) for i in self.universe if self.holds(i) and not self.holds(i, after)]
        true_after = [self.atom_name(i) for i in self.universe if self.holds(i, after)]
        false_after = [self.atom_name(i) for i in self.universe if not self.holds(i, after)]
        lead = f"Suppose the action {name} is performed in the current state."
        if form == "gen":
            lines = [f"added: {self.fact_text(a)}" for a in pos] + \
                    [f"deleted: {self.fact_text(a)}" for a in neg]
            wrong = lines[:-1] if len(lines) > 1 else [
                *lines, f"added: {self.fact_text(false_after[0])}"]
            return self.question("prog", form, f"{lead} Which facts does it make true that are "
                                 "false now, and which facts does it make false that are true now?",
                                 {"action": name, "pos": pos, "neg": neg, "facts": self.facts},
                                 self.block(lines), self.block(wrong))
        # the facts the action changes make the better candidates
        yes = pos or true_after
        no = neg or false_after
        if form == "bool":
            return self.yes_no(rng, form, "prog", lambda f: f"{lead} Will it then be true that "
                               f"{f}?", yes, no, self.fact_text)
        return self.choice(rng, form, "prog", f"{lead} Which of these facts will be true "
                           "after it?", pos or true_after, neg + [a for a in false_after
                                                                  if a not in neg][:6],
                           self.fact_text)

    def q_reach(self, form, rng):
        """A fact that can never hold, among the facts some action changes.

        The state lists fixed facts too (a location's city), and a false one never holds;
        but it never holds by reading alone, with no reasoning about actions, and were it
        an answer, nearly every question would have one, so `none` would never be right.
        So the question and the gold agree the other way: the generative question asks
        explicitly for a fact of a kind some action changes (the kinds listed), the gold
        holds only those, and a fixed fact named is read and judged wrong with that
        reason (`fixed`), never taken for a malformed reply. ACPBench's own gold holds
        only changeable atoms as well; the bool and mcq forms ask about such facts only."""
        seen = self.graph.atoms_seen  # every atom seen holds in a reachable state
        can = [self.atom_name(i) for i in self.universe if seen >> i & 1 and not self.holds(i)]
        undecided: list[str] = []
        if self.graph.complete:
            never = [self.atom_name(i) for i in self.universe if not seen >> i & 1]
        else:
            g = self.searched("reach")
            never = sorted(f"({a})" for a in g.answer)
            undecided = g.undecided
        kinds = "; ".join(self.changeable_kinds())
        question = self.member(
            form, rng, "reach", "fact", never, can,
            "Name a fact that actions can make true or false, but that can never hold in any "
            "state reachable from the current state. Only facts of these kinds can change: "
            f"{kinds}. A fact of any other kind (a fixed fact of the task) is not asked about: "
            "answer none if every fact of these kinds can hold in some reachable state.",
            lambda f: f"Is the following false in every state reachable from the current one: "
                      f"{f}?",
            "Which of these facts can never hold in any state reachable from the current state?",
            undecided=undecided)
        if isinstance(question, Question) and form == "gen":
            question = replace(question, truth={**question.truth, "fixed": self.fixed})
        return question

    def q_areach(self, form, rng):
        seen = {self.graph.ops[k].name for k in self.graph.ops_seen}
        can = [a for a in self.all_actions if a in seen and a not in self.applicable]
        undecided: list[str] = []
        if self.graph.complete:
            never = [a for a in self.all_actions if a not in seen]
        else:
            g = self.searched("areach")
            never, undecided = list(g.answer), g.undecided
        return self.member(
            form, rng, "areach", "action", never, can,
            "Name an action that can never become applicable in any state reachable from the "
            "current state.",
            lambda a: f"Is the action {a} never applicable in any state reachable from the "
                      "current one?",
            "Which of these actions can never become applicable in any state reachable from "
            "the current state?", undecided=undecided)

    @cached_property
    def landmarks(self) -> tuple[list[str], list[str]]:
        """(landmarks, the other candidates) on the complete graph: atoms false now and not
        in the goal, a landmark when no path to a goal state avoids its states (an atom
        off one optimal plan's states is none)."""
        goal = self.task.goal_pos
        plan_atoms = 0
        s = self.state
        for op in self.graph.optimal_plan(0) or []:
            s = op.apply(s)
            plan_atoms |= s[0]
        cands = [i for i in self.universe if not self.holds(i) and not goal >> i & 1]
        yes = [self.atom_name(i) for i in cands
               if plan_atoms >> i & 1 and not self.graph.goal_avoiding(i)]
        return yes, [self.atom_name(i) for i in cands if self.atom_name(i) not in yes]

    def q_land(self, form, rng):
        undecided: list[str] = []
        if self.graph.complete:
            yes, no = self.landmarks
        else:
            g = self.searched("land")
            yes, no, undecided = sorted(g.answer["yes"]), sorted(g.answer["no"]), g.undecided
        return self.member(
            form, rng, "land", "fact", yes, no,
            "Name a fact landmark: a fact that is false in the current state, is not part of "
            "the goal, and will be true at some point on every plan from the current state to "
            "the goal.",
            lambda f: f"Is it a landmark that {f}: false now, not part of the goal, and true at "
                      "some point on every plan from the current state to the goal?",
            "Which of these facts is a landmark: false now, not part of the goal, and true at "
            "some point on every plan from the current state to the goal?", undecided=undecided)

    def q_nexta(self, form, rng):
        undecided: list[str] = []
        if self.graph.complete:
            dist = self.graph.distance
            here = dist[0]
            yes, no = [], []
            for k, j in self.graph.succ[0]:
                name = self.graph.ops[k].name
                ok = dist[j] != UNREACHABLE and dist[j] == here - 1
                (yes if ok else no).append(name)
            yes, no = sorted(set(yes)), sorted(set(no) - set(yes))
        else:
            g = self.searched("nexta")
            if g.limits and g.answer["opt"] is None:
                return "a search limit: no cost to go from the state"
            yes, no, undecided = g.answer["yes"], g.answer["no"], g.answer["maybe"]
        return self.member(
            form, rng, "nexta", "action", yes, no,
            "Name an action, applicable now, that takes us towards the goal: the first "
            "action of some shortest plan from the current state.",
            lambda a: f"Is the action {a} the first action of some shortest plan from the "
                      "current state to the goal?",
            "Which of these actions, all applicable now, is the first action of some shortest "
            "plan from the current state to the goal?", none_ok=False, undecided=undecided)

    def q_val(self, form, rng):
        seq, first = self.sequence(rng)
        steps = "\n".join(f"{n}. {a}" for n, a in enumerate(seq, 1))
        lead = f"Consider this sequence of actions, performed from the current state:\n{steps}\n"
        if form == "gen":
            oracle = "none" if first < 0 else str(first + 1)
            wrong = str(first + 2 if 0 <= first < len(seq) - 1 else 1) if first != 0 else "2"
            return self.question("val", form, lead + "Which step is the first one whose action "
                                 "is not applicable?", {"gold": first, "steps": len(seq)},
                                 self.block([oracle]), self.block([wrong]))
        if form == "bool":
            yes = first < 0
            return self.question("val", form, lead + "Is every action of it applicable in turn?",
                                 {"answer": "yes" if yes else "no"}, f"Answer: {'yes' if yes else 'no'}",
                                 f"Answer: {'no' if yes else 'yes'}")
        texts = [f"step {n}" for n in range(1, len(seq) + 1)] + ["none: every action applies"]
        right = texts[first] if first >= 0 else texts[-1]
        return self.choice(rng, form, "val", lead + "Which step is the first one whose action "
                           "is not applicable?", [right], [t for t in texts if t != right],
                           lambda t: t)

    def sequence(self, rng) -> tuple[list[str], int]:
        """A sequence of 3 to 6 actions from the state; half of them break at a random step
        (an action type-correct but inapplicable there); the index of the first
        inapplicable one, or -1."""
        n = rng.randint(3, 6)
        broken = rng.randrange(n) if rng.random() < 0.5 else -1
        state, seq, first = self.state, [], -1
        for i in range(n):
            ok = [a for a in self.all_actions if (op := self.op(a)) and op.applicable(state)]
            if first < 0 and i != broken and ok:
                name = rng.choice(ok)
                state = self.op(name).apply(state)
            else:
                bad = self.inapplicable(state) if first < 0 else self.all_actions
                name = rng.choice(bad)
                first = i if first < 0 else first
            seq.append(name)
        return seq, first

    def q_just(self, form, rng):
        plan = self.padded_plan(rng)
        if plan is None:
            return "no plan with a removable action"
        singles = [i for i in range(len(plan)) if self.is_plan(plan[:i] + plan[i + 1:])]
        pairs = [i for i in range(len(plan) - 1) if self.is_plan(plan[:i] + plan[i + 2:])]
        shortened = sorted({tuple(plan[:i] + plan[i + 1:]) for i in singles}
                           | {tuple(plan[:i] + plan[i + 2:]) for i in pairs})
        steps = "\n".join(f"{n}. {a}" for n, a in enumerate(plan, 1))
        lead = f"This plan reaches the goal from the current state:\n{steps}\n"
        if form == "gen":
            bad = next((plan[:i] + plan[i + 1:] for i in range(len(plan)) if i not in singles),
                       plan)
            return self.question("just", form, lead + "Make it shorter by removing one action, "
                                 "or two consecutive actions, so that what remains is still a "
                                 "plan. Give the shortened plan.",
                                 {"what": "action", "plan": plan,
                                  "gold": [list(p) for p in shortened]},
                                 self.block(shortened[0]), self.block(bad))
        removable = [f"step {i + 1}" for i in singles] + \
                    [f"steps {i + 1} and {i + 2}" for i in pairs]
        kept = [f"step {i + 1}" for i in range(len(plan)) if i not in singles] + \
               [f"steps {i + 1} and {i + 2}" for i in range(len(plan) - 1) if i not in pairs]
        if form == "bool":
            return self.yes_no(rng, form, "just", lambda s: f"{lead}Is what remains still a "
                               f"plan when {s} {'are' if 'and' in s else 'is'} removed?",
                               removable, kept, lambda s: s)
        return self.choice(rng, form, "just", lead + "Removing which of these leaves a plan?",
                           removable, kept, lambda s: s)

    def is_plan(self, names: Sequence[str]) -> bool:
        state = self.state
        for name in names:
            op = self.op(name)
            if op is None or not op.applicable(state):
                return False
            state = op.apply(state)
        return self.task.goal_holds(state)

    def padded_plan(self, rng) -> list[str] | None:
        """An optimal plan from the state with one action, or a pair that undoes itself,
        inserted where the rest still reaches the goal, so that some removal leaves a plan
        (half the draws try the pair first)."""
        plan = self.plan()
        kinds = ["one", "pair"]
        if rng.random() < 0.5:
            kinds.reverse()
        for kind in kinds:
            spots = list(range(len(plan) + 1))
            rng.shuffle(spots)
            for i in spots:
                state = self.state
                for name in plan[:i]:
                    state = self.op(name).apply(state)
                for extra in self.inserts(state, kind, rng):
                    cand = plan[:i] + extra + plan[i:]
                    if self.is_plan(cand):
                        return cand
        return None

    def inserts(self, state: State, kind: str, rng) -> list[list[str]]:
        """What may be inserted at `state`: one applicable action, or a pair (a step and
        one straight back)."""
        def moves(s: State) -> list[tuple[str, State]]:
            return [(op.name, op.apply(s)) for op in self.graph.ops if op.applicable(s)]

        if kind == "one":
            out = [[name] for name, _ in moves(state)]
        else:
            out = [[a, b] for a, t in moves(state) for b, u in moves(t) if u == state]
        rng.shuffle(out)
        return out

def load_world(inst: Instance) -> tuple[World, object]:
    """A prepared domain's sentences and its domain brief: through its `nl.yaml` where the
    brief was rendered from one, else from the PDDL alone (`suite.description: generic`, a
    domain without templates), as the suite rendered it."""
    brief = json.loads((inst.folder / "brief.json").read_text())
    source = str(brief.get("source", ""))
    domain_file = inst.folder / "domain.pddl"
    if source.endswith("nl.yaml") and Path(source).is_file():
        return World(domain_file, load_templates(source)), template_brief.domain_brief
    world = World(domain_file, generic.templates(domain_at(domain_file)))
    return world, generic.domain_brief


def _walk(task: Task, graph_ops, state: State, rng: random.Random, n: int) -> State:
    for _ in range(n):
        ok = [op for op in graph_ops if op.applicable(state)]
        if not ok:
            break
        state = rng.choice(ok).apply(state)
    return state


def draw_state(inst: Instance, k: int, seed: int, avoid: frozenset = frozenset()) -> State | None:
    """State k of a task: a random walk (even k) or an optimal-plan prefix (odd k), with
    the goal still ahead and none of the states `avoid` (those drawn before: the same
    question twice would count twice); None if twenty draws find no such state (a tiny
    task may have no other)."""
    task = inst.task
    rng = random.Random(f"{seed}:{inst.domain}:{inst.id}:s{k}")
    plan = [task.operator(*s) for s in inst.steps]
    ops = task.all_operators()
    for _ in range(20):
        if k % 2:
            state = task.init
            for op in plan[:rng.randrange(len(plan))]:
                state = op.apply(state)
        else:
            state = _walk(task, ops, task.init, rng, rng.randint(1, max(2, len(plan))))
        if not task.goal_holds(state):
            graph = explore(task, state, 2_000)
            if not graph.complete or graph.distance[0] != UNREACHABLE:
                if state not in avoid:
                    return state
    return None


def _state_questions(world: World, brief, inst: Instance, k: int, seed: int, avoid: frozenset,
                     types: Sequence[str], forms: Sequence[str], max_states: int,
                     ) -> tuple[State | None, list[Question | str]]:
    """State k of a task drawn, its graph explored and every (type, form) posed on it:
    one gold computation, run within the bound by `questions`."""
    state = draw_state(inst, k, seed, avoid)
    if state is None:
        return None, []
    sq = StateQuestions(world, inst, f"s{k}", state, explore(inst.task, state, max_states),
                        seed, brief)
    return state, [sq.pose(t, f) for t in types for f in forms]


def questions(suite_dir, domain: str, types: Sequence[str] = TYPES,
              forms: Sequence[str] = FORMS, tasks: int | None = 2, states: int = 2,
              seed: int = 0, select: Sequence[str] | None = None, only: str | None = None,
              skipped: Skipped | None = None, max_states: int = MAX_STATES,
              bound: Bound = DEFAULT) -> list[Question]:
    """Every question of `types` x `forms` over `states` states of each of the first
    `tasks` solvable prepared tasks of `domain` (None: all) among those `select`
    (`suite.tasks` patterns) admits, or just task `only`. Each state's questions are
    proven within `bound` (`bound.py`); a state past it is not asked, and `skipped`
    names it (task and state) with the bound it passed."""
    check_types(types, forms)
    instances = [i for i in load_instances(Path(suite_dir), domain)
                 if selects(select, domain, i.id)]
    if only is not None:
        instances = [i for i in instances if i.id == only]
        if not instances:
            from planaudit.acpbench.questions import QuestionError

            raise QuestionError(f"{domain}: no solvable prepared task '{only}'")
    elif tasks is not None:
        instances = instances[:tasks]
    skipped = skipped if skipped is not None else Skipped()
    out: list[Question] = []
    world, brief = load_world(instances[0]) if instances else (None, None)

    # one forked child proves every state of the domain in turn (bound.py: each within
    # the bound), the states of a task drawn so far carried from one to the next
    def prove(job: tuple[Instance, int], carry: tuple[str, frozenset]):
        inst, k = job
        drawn = carry[1] if carry[0] == inst.id else frozenset()
        state, posed = _state_questions(world, brief, inst, k, seed, drawn, types, forms,
                                        max_states)
        return (state, posed), (inst.id, drawn | {state} if state is not None else drawn)

    jobs = [(inst, k) for inst in instances for k in range(states)]
    for (inst, k), value, error, _ in bounded_each(prove, jobs, bound, ("", frozenset())):
        if isinstance(error, PastBound):
            for t in types:
                for f in forms:
                    skipped.add(domain, t, f, f"gold {error} ({inst.id}/s{k})")
            continue
        if error is not None:
            raise error
        state, posed = value
        if state is None:
            for t in types:
                for f in forms:
                    skipped.add(domain, t, f, "no new state with the goal ahead")
            continue
        for (t, f), q in zip(((t, f) for t in types for f in forms), posed, strict=True):
            if isinstance(q, str):
                skipped.add(domain, t, f, q)
            else:
                out.append(q)
    return out

