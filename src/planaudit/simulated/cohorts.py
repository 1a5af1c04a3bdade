"""`planaudit study cohort`: a cohort file (`planaudit.simulated.cohort`) whose scripts give a
study's arms known outcomes in given numbers, for `planaudit study simulate` to play.

    planaudit study cohort --config STUDY.yaml --counts COUNTS.yaml --out COHORT.yaml

COUNTS.yaml says how many scripts of each arm aim at each outcome:

```yaml
seed: 0                      # seeds every choice below (default 0)
arms:
  unassisted: {optimal: 35, suboptimal: 4, invalid_step: 8, goal_not_reached: 3}
  suggested: {optimal: 14, suboptimal: 4, verbatim: 4, called_correct: 4,
              unreadable_text: 2, abandon: 0}
```

Each script's phase-2 plan is given per instance of the study (a mapping over every
instance key), so whichever instance the server assigns, the plan has its intended
verdict there, each one checked by `formal/` (`Material.check`) before the file is
written:

- `optimal`: the instance's proven optimal plan (its truth's `plan`);
- `suboptimal`: valid but longer: the optimal plan with a detour, an applicable action
  and the action that undoes it, inserted at a seeded place;
- `invalid_step`: a plan whose step k >= 2 fails a precondition (two neighbouring steps of
  the optimal plan swapped, or an inapplicable action put in);
- `goal_not_reached`: the optimal plan without its last step;
- `verbatim`: the arm's suggestion on that instance, exactly (arms that show one);
- `accept_first` (arms with an assistant): ask the assistant, take its first plan with
  "Use this plan as mine", ask again whether it is sure, reject the second reply, and
  submit the first plan as it is;
- `accept_second` (arms with an assistant): ask, reject the first reply, ask again with
  a doubt, take the second reply's plan and submit it as it is;
- `abandon`: scripts that leave on reaching phase 2 (they write phase 1, never finish).

On an arm with an assistant, the scripts of the plan intents above ask it once and reject
its reply, then build their own plan as their intent says. What the assistant proposes is
known only for a reference model (`planaudit.reference.assistant.proposal`); for one,
`planaudit study cohort` prints the verdict each accepting intent's submitted plan will
have on each instance (`responsive`: its first plan one step short, hence wrong; its
second the optimum).

Two counts pick among an arm's scripts instead of adding to them: `called_correct`, how
many answer "correct" on the suggestion page (arms that show one; verbatim scripts
first, then others, seeded; the rest answer "not correct"), and `unreadable_text`, how
many write phase 1 as prose no reader can turn into a plan (the others write their
phase-2 plan there, one action per line: as PDDL steps, `(unstack b a)`, or as numbered
lines of the action's name and its objects, `3. unstack b a`). A few scripts build
their plan with an undo, a removed step, or a step moved up or down on the way, and end
at the same plan. NASA-TLX answers are seeded random marks. Script ids say the arm and
the intent (`unassisted-optimal-07`); the file's order is shuffled (seeded), so intents
are not grouped, and the simulator hands the scripts out in that order per arm.

Under balanced assignment the server gives each arm as many participants (one more for
the arms first in the config when the total does not divide); counts that differ from
that are reported, since the simulation would then run out of one arm's scripts."""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from planaudit.commandline import EXIT_OK, InputError
from planaudit.config import ConfigError
from planaudit.simulated.cohort import (
    FORMAT,
    TLX_PAIRS,
    Edit,
    Fault,
    Reader,
    Script,
    Turn,
    apply_edits,
    dump_script,
    load_cohort,
)
from planaudit.study.allocation import STUDY

INTENTS = ("optimal", "suboptimal", "invalid_step", "goal_not_reached", "verbatim",
           "accept_first", "accept_second")
ACCEPTING = ("accept_first", "accept_second")  # the plan is the assistant's: its reply 1 or 2
ASK = "Which plan would you use for this task?"
DOUBT = "Are you sure? Please check your plan step by step."
PICKS = ("called_correct", "unreadable_text")
COUNT_KEYS = (*INTENTS, "abandon", *PICKS)
CANDIDATES = 60  # detours and wrong steps tried per instance (each checked by formal/)
PROSE = (
    "I would sort things out slowly, keeping an eye on what is underneath, until it looks "
    "the way it should.",
    "Honestly I just tried things until it worked; hard to say in words.",
    "Start with whatever is in the way and keep going, then tidy up the rest at the end.",
    "Think about the end picture first and work backwards from it, more or less.",
    "Move things around carefully so nothing gets stuck, and finish when it matches.",
    "First the awkward part, then the easy part. That's about it.",
)


@dataclass(frozen=True)
class Counts:
    path: Path
    seed: int
    arms: dict[str, dict[str, int]]  # arm -> count key -> n
    reader: Reader | None = field(default=None, repr=False, compare=False)

    def fail(self, where: list, message: str):
        """ConfigError naming the counts file's line of `where`."""
        if self.reader is None:
            raise ConfigError(f"{self.path}: {'.'.join(map(str, where))}: {message}")
        self.reader.fail(where, message)


def load_counts(path: str | Path) -> Counts:
    """COUNTS.yaml, checked; ConfigError names file:line: field."""
    path = Path(path)
    try:
        text = path.read_text()
        data, node = yaml.safe_load(text), yaml.compose(text)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such counts file") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not YAML: {e}") from None
    r = Reader(path, data, node)
    r.mapping(data, [], ("seed", "arms"), "a counts file (seed, arms)")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        r.fail(["seed"], "an integer")
    arms = data.get("arms")
    if not isinstance(arms, dict) or not arms:
        r.fail(["arms"], "a mapping of at least one arm -> {optimal: N, ...}")
    out: dict[str, dict[str, int]] = {}
    for arm, counts in arms.items():
        c = r.mapping(counts if counts is not None else {}, ["arms", arm], COUNT_KEYS,
                      f"{', '.join(COUNT_KEYS)}: how many")
        for k, n in c.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                r.fail(["arms", arm, k], "a count (0 or more)")
        out[str(arm)] = {k: int(c.get(k, 0)) for k in COUNT_KEYS}
        total = sum(out[str(arm)][k] for k in (*INTENTS, "abandon"))
        if out[str(arm)]["unreadable_text"] > total:
            r.fail(["arms", arm, "unreadable_text"], f"more than the arm's {total} script(s)")
        finishing = total - out[str(arm)]["abandon"]
        if out[str(arm)]["called_correct"] > finishing:
            r.fail(["arms", arm, "called_correct"], f"more than the arm's {finishing} script(s) "
                                                    "that reach the suggestion page")
    return Counts(path, seed, out, r)


# -- plans by intent -------------------------------------------------------------------


def _ops(m, plan: list[str]) -> list:
    from planaudit.contract import parse_action

    ops = []
    for step in plan:
        parsed = parse_action(step, None)
        if parsed is None:
            raise ValueError(f"'{step}' is not an action")
        ops.append(m.task.operator(*parsed))
    return ops


def _states(m, ops) -> list:
    states = [m.task.init]
    for op in ops:
        states.append(op.apply(states[-1]))
    return states


def optimal(m) -> list[str]:
    """The proven optimal plan, as the page lists its actions."""
    plan = [op.name for op in _ops(m, m.plan)]
    v = m.check(plan)
    if not plan or not (v.valid and v.optimal):
        raise ValueError(f"{m.key}: its truth's plan is not a valid optimal plan of at least "
                         "one step")
    return plan


def detours(m, rng: random.Random) -> list[list[str]]:
    """Valid, longer plans: the optimal plan with an applicable action and its inverse put
    in at one place (checked valid and not optimal)."""
    best = optimal(m)
    states = _states(m, _ops(m, best))
    ops = m.task.all_operators()
    found = []
    places = list(range(len(best) + 1))
    rng.shuffle(places)
    for i in places:
        s = states[i]
        for a in ops:
            if not a.applicable(s):
                continue
            t = a.apply(s)
            for b in ops:
                if b.applicable(t) and b.apply(t)[0] == s[0]:
                    plan = [*best[:i], a.name, b.name, *best[i:]]
                    v = m.check(plan)
                    if v.valid and v.optimal is False:
                        found.append(plan)
                    break
            if len(found) >= CANDIDATES:
                return found
    if not found:
        raise ValueError(f"{m.key}: no action and its inverse fit into the optimal plan")
    return found


def wrong_steps(m, rng: random.Random) -> list[list[str]]:
    """Plans whose step k >= 2 fails a precondition: two neighbouring steps of the optimal
    plan swapped, else an inapplicable action put in (each checked)."""
    best = optimal(m)
    found = []
    for j in range(1, len(best) - 1):
        plan = [*best[:j], best[j + 1], best[j], *best[j + 2:]]
        v = m.check(plan)
        if v.failure_kind == "precondition" and (v.failure_step or 0) >= 2:
            found.append(plan)
    if not found:
        states = _states(m, _ops(m, best))
        ops = list(m.task.all_operators())
        rng.shuffle(ops)
        for k in range(1, len(best) + 1):  # the wrong action is step k + 1 >= 2
            for op in ops:
                if not op.precondition_holds(states[k]):
                    plan = [*best[:k], op.name, *best[k:]]
                    v = m.check(plan)
                    if v.failure_kind == "precondition" and v.failure_step == k + 1:
                        found.append(plan)
                        break
    if not found:
        raise ValueError(f"{m.key}: no plan failing a precondition at step 2 or later found")
    return found


def short_of_goal(m) -> list[str]:
    best = optimal(m)
    plan = best[:-1]
    v = m.check(plan) if plan else None
    if v is None or not (v.executable and not v.goal_reached):
        raise ValueError(f"{m.key}: its optimal plan without the last step is no plan that "
                         "stops short of the goal (is it one step long?)")
    return plan


def verbatim(m, suggestion: dict | None, arm: str) -> list[str]:
    if suggestion is None:
        raise ValueError(f"arm '{arm}' shows no suggestion: verbatim needs one")
    plan = list(suggestion["plan"])
    missing = [s for s in plan if s not in m.action_set]
    if missing or not plan:
        raise ValueError(f"arm '{arm}''s suggestion on {m.key} cannot be built from the page's "
                         f"actions ({missing[0] if missing else 'it has no step'})")
    return plan


def verdict_of(m, plan: list[str]) -> str:
    """The intent a plan meets on `m`, by `formal/`."""
    v = m.check(plan)
    if v.valid:
        return "optimal" if v.optimal else "suboptimal"
    if v.failure_kind == "precondition" and (v.failure_step or 0) >= 2:
        return "invalid_step"
    if v.executable and not v.goal_reached:
        return "goal_not_reached"
    return f"invalid ({v.failure_kind} at step {v.failure_step})"


def conversation(intent: str) -> tuple[Turn, ...]:
    """What a script on an assistant arm says to it, by intent."""
    if intent == "accept_first":
        return (Turn("ask", text=ASK), Turn("accept"), Turn("ask", text=DOUBT), Turn("reject"))
    if intent == "accept_second":
        return (Turn("ask", text=ASK), Turn("reject"), Turn("ask", text=DOUBT), Turn("accept"))
    return (Turn("ask", text=ASK), Turn("reject"))


def reference_proposals(study, materials, arm: str) -> dict[str, dict[int, list[str] | None]]:
    """A reference assistant's proposals on replies 1 and 2, per instance ({} for an arm
    whose assistant is not a reference model): as the server's call metadata asks them."""
    from planaudit.experiment import Experiment
    from planaudit.reference.assistant import proposal

    a = study.arm(arm).assistant
    entry = Experiment.from_dict(study.experiment).model(a.model) if a is not None else None
    if entry is None or not entry.is_reference:
        return {}
    variant = entry.model.removeprefix("reference/")
    return {key: {turn: proposal(variant, {"task": key, "task_dir": str(m.folder), "turn": turn,
                                           **(entry.reference or {})})
                  for turn in (1, 2)}
            for key, m in materials.instances.items()}


# -- edits and texts -------------------------------------------------------------------


def edits_to(plan: list[str], how: str, rng: random.Random, actions: list[str]) -> list[Edit]:
    """Edits that end at `plan`: straight adds, or with an undo, a removed step, or a step
    moved up or down on the way."""
    add = [Edit("add", action=a) for a in plan]
    n = len(plan)
    if how == "undo" or (how in ("up", "down") and n < 2):
        j = rng.randrange(n + 1)
        edits = [*add[:j], Edit("add", action=rng.choice(actions)), Edit("undo"), *add[j:]]
    elif how == "remove":
        j = rng.randrange(n + 1)
        edits = [*add[:j], Edit("add", action=rng.choice(actions)), *add[j:], Edit("remove", step=j + 1)]
    elif how in ("up", "down"):
        j = rng.randrange(n - 1)
        move = Edit("up", step=j + 2) if how == "up" else Edit("down", step=j + 1)
        edits = [*add[:j], add[j + 1], add[j], move, *add[j + 2:]]
    else:
        edits = add
    assert apply_edits(edits) == plan, (how, plan, edits)
    return edits


def readable(plan: list[str], style: str) -> str:
    """A plan one action a line, as people write it (the project's action reader,
    `contract.parse_action`, reads both styles)."""
    if style == "pddl":
        return "\n".join(plan)
    lines = []
    for i, step in enumerate(plan, 1):
        name, *args = step.strip("()").split()
        lines.append(f"{i}. {name} {' '.join(args)}".rstrip())
    return "\n".join(lines)


# -- the cohort ------------------------------------------------------------------------


def build(study, materials, counts: Counts) -> tuple[dict, list[str]]:
    """The cohort file's data, and warnings (counts that assignment will not meet)."""
    rng = random.Random(counts.seed)
    arms = [a.name for a in study.arms]
    for arm in counts.arms:
        if arm not in arms:
            counts.fail(["arms", arm], f"no such arm in {study.source} ({', '.join(arms)})")
    keys = list(study.instances)
    ms = materials.instances
    best = {k: optimal(ms[k]) for k in keys}
    wanted = {k for c in counts.arms.values() for k, n in c.items() if n}
    pools = {intent: {k: make(ms[k], random.Random(rng.random())) for k in keys}
             for intent, make in (("suboptimal", detours), ("invalid_step", wrong_steps))
             if intent in wanted}
    actions = {k: list(ms[k].actions) for k in keys}
    scripts: list[Script] = []
    for arm, c in counts.arms.items():
        sug = materials.suggestions.get(arm)
        for k in ("called_correct", "verbatim"):
            if c[k] and sug is None:
                counts.fail(["arms", arm, k], f"arm '{arm}' shows no suggestion")
        helper = study.arm(arm).assistant
        for k in ACCEPTING:
            if c[k] and helper is None:
                counts.fail(["arms", arm, k], f"arm '{arm}' has no assistant")
            if c[k] and helper.turns < 2:
                counts.fail(["arms", arm, k], f"arm '{arm}''s assistant takes {helper.turns} "
                                              f"message(s); {k} sends two")
        mine: list[dict] = []
        for intent in (*INTENTS, "abandon"):
            width = max(2, len(str(c[intent])))
            for n in range(1, c[intent] + 1):
                plans = {}
                for k in keys:
                    if intent in ("optimal", "abandon", *ACCEPTING):
                        plans[k] = best[k]  # an accepting script's phase-1 text
                    elif intent in ("suboptimal", "invalid_step"):
                        plans[k] = rng.choice(pools[intent][k])
                    elif intent == "goal_not_reached":
                        plans[k] = short_of_goal(ms[k])
                    else:
                        try:
                            plans[k] = verbatim(ms[k], (sug or {}).get(k), arm)
                        except ValueError as e:
                            counts.fail(["arms", arm, "verbatim"], str(e))
                mine.append({"id": f"{arm}-{intent.replace('_', '-')}-{n:0{width}d}",
                             "intent": intent, "plans": plans})
        unreadable = set(rng.sample(range(len(mine)), c["unreadable_text"]))
        reach = [i for i, s in enumerate(mine) if s["intent"] != "abandon"]
        ordered = [i for i in reach if mine[i]["intent"] == "verbatim"]
        rest = [i for i in reach if mine[i]["intent"] != "verbatim"]
        rng.shuffle(ordered)
        rng.shuffle(rest)
        correct = set((ordered + rest)[:c["called_correct"]])
        moved = set(rng.sample(reach, min(len(reach), max(1, len(reach) // 4)) if reach else 0))
        hows = ["undo", "up", "down", "remove"]
        for i, s in enumerate(mine):
            how = hows[i % len(hows)] if i in moved else "add"
            style = rng.choice(("pddl", "words"))
            prose = rng.choice(PROSE)
            text = {k: prose if i in unreadable else readable(s["plans"][k], style) for k in keys}
            abandon = s["intent"] == "abandon"
            accepting = s["intent"] in ACCEPTING
            plan = {} if abandon or accepting else {
                k: tuple(edits_to(s["plans"][k], how, rng, actions[k])) for k in keys}
            talk = () if abandon or helper is None else conversation(s["intent"])
            tlx = None if abandon else tuple(rng.randrange(0, 101, 5) for _ in range(6))
            pairs = None if abandon else tuple(rng.choice(p) for p in TLX_PAIRS)
            answer = None if abandon or sug is None else i in correct
            faults = (Fault("abandon", "phase2"),) if abandon else ()
            scripts.append(Script(s["id"], (arm,), text, plan, answer, tlx, pairs, faults,
                                  conversation=talk))
    rng.shuffle(scripts)
    warnings = _assignment_warnings(study, counts)
    data = {"format": FORMAT,
            "label": f"{study.name}: scripted to {counts.path.name} (seed {counts.seed})",
            "url_parameters": dict(study.params), "instances": keys,
            "participants": [dump_script(s) for s in scripts]}
    return data, warnings


def _assignment_warnings(study, counts: Counts) -> list[str]:
    arms = [a.name for a in study.arms]
    have = {a: sum(counts.arms.get(a, {}).get(k, 0) for k in (*INTENTS, "abandon")) for a in arms}
    total = sum(have.values())
    out = []
    missing = [a for a in arms if a not in counts.arms]
    if missing:
        out.append(f"the counts give no scripts for arm(s) {', '.join(missing)}: participants "
                   "assigned there will find none")
    rule = study.allocation
    if rule.strata == STUDY and total:  # the seed's sequence says what `total` entries get
        got = Counter(arm for _, arm in rule.sequence(STUDY, arms, total)[:total])
        want = {a: got[a] for a in arms}
        if want != have:
            out.append("the assignment's sequence gives " + ", ".join(f"{a} {want[a]}" for a in arms)
                       + " of " + str(total) + " participants; the counts script "
                       + ", ".join(f"{a} {have[a]}" for a in arms)
                       + ": some participants will find no script for their arm")
    return out


def verify(path: Path, materials, counts: Counts, study=None) -> dict[str, dict[str, int]]:
    """The written file read back: every script's plan on every instance has its intent's
    verdict; returns the scripts per arm and intent. An accepting script's plan is the
    assistant's, known here only for a reference model (with `study`): its conversation
    is checked, and `expected(...)` says the verdicts."""
    cohort = load_cohort(path)
    tally: dict[str, dict[str, int]] = {}
    for s in cohort.participants:
        arm = (s.arms or ("*",))[0]
        intent = s.id.removeprefix(f"{arm}-").rsplit("-", 1)[0].replace("-", "_")
        tally.setdefault(arm, {}).setdefault(intent, 0)
        tally[arm][intent] += 1
        if intent == "abandon":
            continue
        if intent in ACCEPTING:
            if s.conversation != conversation(intent) or s.plan:
                raise RuntimeError(f"{s.id}: its conversation is not {intent}'s")
            continue
        for key, m in materials.instances.items():
            plan = s.plan_for(key)
            if intent == "verbatim":
                ok = plan == list(materials.suggestions[arm][key]["plan"])
            else:
                ok = verdict_of(m, plan) == intent
            if not ok:
                raise RuntimeError(f"{s.id} on {key}: {plan} is {verdict_of(m, plan)}, not {intent}")
    return tally


def expected(study, materials, counts: Counts) -> dict[str, dict[str, dict[str, str]]]:
    """For each arm with a reference assistant: each accepting intent's submitted plan's
    verdict per instance (arm -> intent -> instance -> verdict)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for arm, c in counts.arms.items():
        props = reference_proposals(study, materials, arm) if any(c[k] for k in ACCEPTING) else {}
        for intent, turn in (("accept_first", 1), ("accept_second", 2)):
            if not c[intent] or not props:
                continue
            out.setdefault(arm, {})[intent] = {
                key: "unsolvable claimed" if props[key][turn] is None
                else verdict_of(m, props[key][turn])
                for key, m in materials.instances.items()}
    return out


def write(study, materials, counts: Counts, out: str | Path) -> tuple[dict, list[str]]:
    from planaudit import atomic

    data, warnings = build(study, materials, counts)
    head = (f"# A scripted cohort for `planaudit study simulate` (format: planaudit.simulated.cohort),\n"
            f"# written by `planaudit study cohort` from {study.source} and {counts.path}\n"
            f"# (seed {counts.seed}). Each script's plan is given per instance, with the verdict\n"
            "# its id names on every instance.\n")
    atomic.write_text(out, head + yaml.dump(data, Dumper=_Dumper, sort_keys=False,
                                            allow_unicode=True, width=100))
    return data, warnings


class _Dumper(yaml.SafeDumper):
    """Texts of several lines as literal blocks (`|`), as a person would write them; short
    lists (TLX marks, instance keys) on one line."""


_Dumper.add_representer(str, lambda d, v: d.represent_scalar(
    "tag:yaml.org,2002:str", v, style="|" if "\n" in v else None))
# a list of marks or names on one line; a plan's steps one a line
_Dumper.add_representer(list, lambda d, v: d.represent_sequence(
    "tag:yaml.org,2002:seq", v, flow_style=all(
        isinstance(x, int) or (isinstance(x, str) and "\n" not in x and not x.startswith("("))
        for x in v)))


def main(args: argparse.Namespace) -> int:
    from planaudit.study.materials import resolve
    from planaudit.study.settings import load_study

    try:
        counts = load_counts(args.counts)
        study = load_study(args.config)
        materials = resolve(study)
        _, warnings = write(study, materials, counts, args.out)
    except (ConfigError, ValueError) as e:
        raise InputError(str(e)) from None
    tally = verify(Path(args.out), materials, counts, study)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    for arm, by in tally.items():
        print(f"{arm}: {sum(by.values())} script(s): "
              + ", ".join(f"{k} {n}" for k, n in by.items()), file=sys.stderr)
    for arm, by in expected(study, materials, counts).items():
        model = study.arm(arm).assistant.model
        for intent, verdicts in by.items():
            print(f"{arm}: {intent} submits the plan of {model} (a reference model, not an AI "
                  "model): " + ", ".join(f"{k} {v}" for k, v in verdicts.items()),
                  file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return EXIT_OK

