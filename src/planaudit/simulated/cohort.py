"""The cohort file: scripted participants for `planaudit study simulate`.

A cohort file says what each simulated participant does on the study's pages, from the
consent to the last page, so that a study can be run end to end before anyone real
takes part (and its records, export and analysis checked against known answers).
`planaudit study cohort` writes one to given counts (`planaudit.simulated.cohorts`);
`planaudit study simulate --cohort FILE --url URL` plays it in headless Chromium against
a running `planaudit study serve` (`planaudit.simulated.simulate`). The format, version 1:

```yaml
format: 1                      # required
label: pilot dry run           # optional: a name for this cohort
url_parameters:                # optional: the study's URL parameters (these are the defaults;
  participant: PROLIFIC_PID    #   use the study config's url_parameters)
  study: STUDY_ID
  session: SESSION_ID
instances: [blocksworld/p02, blocksworld/p03]   # optional: the instance keys the scripts may name
participants:                  # required: the scripts, in the order they are handed out
  - id: u001                   # required: the script's unique label ([A-Za-z0-9_.-])
    arm: unassisted            # the arm this script is for; or `accepts: [a, b]`; neither: any arm
    text: "free text for phase 1"        # or a mapping instance key -> text, "*" the default
    plan:                      # phase 2's edits: a list (any instance) or a mapping
      - "(unstack b a)"        #   instance key -> list ("*" the default). A string adds that
      - {undo: true}           #   grounded action as the page lists it (also {add: "(...)"});
      - {up: 2}                #   undo the last step; move step 2 up (steps count from 1);
      - {down: 1}              #   move step 1 down;
      - {remove: 3}            #   remove step 3. The plan is submitted after the last edit.
    suggestion_correct: false  # the answer on the suggestion page (arms that show one)
    tlx: [55, 10, 40, 30, 60, 20]  # mental, physical, temporal, performance, effort,
                               #   frustration: each 0..100 in steps of 5
    tlx_pairs: [mental, temporal, ...]   # optional: the 15 pairwise choices in NASA-TLX's
                               #   order (mental/physical, mental/temporal, ..., effort/
                               #   frustration), each one of its pair; default the first
                               #   of each pair; [] answers none (the page allows it)
    attention: {read: Red}     # optional: the option chosen on an attention check, by the
                               #   check's id; a check not named here is answered as its
                               #   question instructs (the option it quotes)
    assistant:                 # optional, arms with an assistant beside phase 2: the
      - {ask: "Which plan would you use?"}   # conversation, held before the plan's edits:
      - {accept: last}         #   ask types the message and sends it; accept clicks "Use this
      - {ask: "Are you sure?"} #   plan as mine" of a reply (last: the latest reply with a
      - {reject: last}         #   plan; N: the assistant's N-th reply, from 1); reject: its
                               #   plan is not used. After an accept the plan starts from the
                               #   accepted plan (`plan` then optional: its edits apply on top)
    declare: unsolvable        # optional: after its edits (if any), tick "I am sure" and
                               #   submit "this task cannot be done" instead of the plan
    faults:                    # optional, any of:
      - {reload: phase2}       # reload the page on reaching it, then go on (phase 2 also
      - {reload: phase2, after: 3}   #   after its 3rd edit: the plan so far must survive)
      - {abandon: tlx}         # close the browser on reaching this page: never finishes
      - {submit_twice: phase1} # send this page's form twice, the second a duplicate with
                               #   the same idempotency key, which the server must ignore
                               #   (on phase 2: every edit and the submit)
```

Pages, in a participant's order: consent, instructions, example, phase1, phase2,
suggestion (only in an arm that shows a suggestion), tlx, then the completion page.
`text` is needed unless the script abandons on or before phase 1, `plan` unless it
abandons on or before phase 2 or its conversation accepts a plan (its edits must leave
at least one step; after an accept they are checked when the accepted plan is known,
as it is played), `tlx` unless it
abandons on or before the TLX page. `suggestion_correct` is needed when the script meets a suggestion page;
the file cannot know which arms show one, so a missing answer is an error of the run.
Likewise a conversation (`assistant`) needs the chat beside phase 2: a script that holds
one on an arm without an assistant is an error of the run (its plan may rest on what the
assistant proposed), while a script without one on an assistant arm never asks.

Instances. The page does not tell a participant's instance by name (a disguised task's
key must not be readable): its `<body data-instance>` carries `instance_tag(key)`, the
first 12 hex digits of the key's SHA-256. The simulator finds the key by matching that
tag over `instances` and every key a mapping-valued `text` or `plan` names; a script
whose `text` or `plan` depends on the instance (a mapping without a `"*"` entry for it)
cannot run where the key is not found, and the run reports it.

Scripts are matched after assignment: a simulated participant enters, reads the arm the
server assigned (`<body data-arm>`) and takes the first unused script, in file order,
whose `arm` (or `accepts`) admits it. So each arm's scripts all run, whatever the order of
entry, as long as the server's assignment gives each arm as many participants as the
file has scripts for it (balanced assignment: equal numbers per arm).

Simulated participants enter with the platform id `SIMULATED-<k>-<6 hex digits>`
(`SIMULATED_PREFIX`): the prefix marks them in the ledger, and the export relies on it
to tell them from people.

Errors name the file, the line and the field, e.g. `cohort.yaml:14: participants[3].tlx:
6 values 0..100 in steps of 5`; unknown keys are errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from planaudit.config import ConfigError, field_name, read_yaml
from planaudit.study.settings import instance_tag  # the server's contract
from planaudit.study.tlx import PAIRS as TLX_PAIRS

FORMAT = 1
PAGES = ("consent", "instructions", "example", "phase1", "phase2", "suggestion", "tlx")
EDIT_OPS = ("add", "undo", "up", "down", "remove")
CHAT_OPS = ("ask", "accept", "reject")
LAST = "last"
FAULTS = ("reload", "abandon", "submit_twice")
DEFAULT_PARAMS = {"participant": "PROLIFIC_PID", "study": "STUDY_ID", "session": "SESSION_ID"}
ANY = "*"
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PARAM = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ACTION = re.compile(r"^\(\S.*\)$")
_TOP = ("format", "label", "url_parameters", "instances", "participants")
_SCRIPT = ("id", "arm", "accepts", "text", "plan", "suggestion_correct", "tlx", "tlx_pairs",
           "attention", "assistant", "declare", "faults")
_TLX_RULE = ("6 values 0..100 in steps of 5 (mental, physical, temporal, performance, "
             "effort, frustration)")



@dataclass(frozen=True)
class Edit:
    """One edit of the phase-2 plan: add an action, undo, or move/remove step `step`
    (1-based)."""

    op: str
    action: str | None = None
    step: int | None = None

    def to_yaml(self) -> str | dict:
        if self.op == "add":
            return self.action or ""
        return {self.op: True if self.op == "undo" else self.step}


def apply_edits(edits: Sequence[Edit], start: Sequence[str] = ()) -> list[str]:
    """The plan that `edits` leave, starting from `start` (an accepted proposal); valid
    edits (`load_cohort` checks them from an empty start; from an accepted plan an edit
    that names no step of it raises IndexError)."""
    plan: list[str] = list(start)
    for e in edits:
        if e.op == "add":
            plan.append(e.action or "")
        elif e.op == "undo":
            plan.pop()
        elif e.op == "remove":
            plan.pop(e.step - 1)
        else:
            i = (e.step or 0) - 1
            j = i - 1 if e.op == "up" else i + 1
            if not (0 <= i < len(plan) and 0 <= j < len(plan)):
                raise IndexError(f"{e.op} {e.step}: the plan has {len(plan)} step(s)")
            plan[i], plan[j] = plan[j], plan[i]
    return plan


@dataclass(frozen=True)
class Turn:
    """One act of the conversation with the assistant: `ask` a message (`text`), or
    `accept` / `reject` a reply's plan (`reply`: the assistant's reply number, from 1;
    None: the latest reply with a plan)."""

    op: str
    text: str | None = None
    reply: int | None = None

    def to_yaml(self) -> dict:
        if self.op == "ask":
            return {"ask": self.text}
        return {self.op: LAST if self.reply is None else self.reply}

    def __str__(self) -> str:
        if self.op == "ask":
            return "ask"
        return f"{self.op} {LAST if self.reply is None else self.reply}"


@dataclass(frozen=True)
class Fault:
    kind: str  # reload, abandon, submit_twice
    page: str
    after: int | None = None  # reload on phase 2 after this many edits (None: on arrival)

    def __str__(self) -> str:
        return f"{self.kind}:{self.page}" + (f"@{self.after}" if self.after is not None else "")


@dataclass(frozen=True)
class Script:
    """What one simulated participant does."""

    id: str
    arms: tuple[str, ...] | None  # the arms it admits; None: any
    text: Mapping[str, str]  # instance key or "*" -> phase-1 text
    plan: Mapping[str, tuple[Edit, ...]]  # instance key or "*" -> phase-2 edits
    suggestion_correct: bool | None
    tlx: tuple[int, ...] | None
    tlx_pairs: tuple[str, ...] | None  # None: the first of each pair
    faults: tuple[Fault, ...] = ()
    line: int = 0
    attention: Mapping[str, str] = field(default_factory=dict)  # check id -> option chosen
    conversation: tuple[Turn, ...] = ()  # with the assistant, before the plan's edits
    declares: bool = False  # "this task cannot be done" submitted instead of the plan

    @property
    def accepts_plan(self) -> bool:
        """Whether the conversation takes one of the assistant's plans as the start."""
        return any(t.op == "accept" for t in self.conversation)

    def admits(self, arm: str) -> bool:
        return self.arms is None or arm in self.arms

    def text_for(self, key: str | None) -> str:
        """The phase-1 text on instance `key` (None: unknown); LookupError says why not."""
        return _pick(self.text, key, "text")

    def edits_for(self, key: str | None) -> tuple[Edit, ...]:
        if not self.plan and (self.accepts_plan or self.declares):
            return ()  # the accepted plan as it is, or nothing before the declaration
        return _pick(self.plan, key, "plan")

    def plan_for(self, key: str | None, accepted: Sequence[str] = ()) -> list[str]:
        """The plan submitted on instance `key`: the edits from the plan the conversation
        accepted last (`accepted`, empty when it accepts none)."""
        return apply_edits(self.edits_for(key), accepted)

    def fault(self, kind: str, page: str) -> Fault | None:
        return next((f for f in self.faults if f.kind == kind and f.page == page
                     and f.after is None), None)

    @property
    def abandons(self) -> str | None:
        """The page this script abandons at, if any."""
        return next((f.page for f in self.faults if f.kind == "abandon"), None)

    def reaches(self, page: str) -> bool:
        """Whether the script gets to `page` (pages after an abandon are not reached)."""
        stop = self.abandons
        return stop is None or PAGES.index(page) < PAGES.index(stop)


def _pick(values: Mapping, key: str | None, what: str):
    if key is not None and key in values:
        return values[key]
    if ANY in values:
        return values[ANY]
    if key is None:
        raise LookupError(f"its {what} depends on the instance, and the page's instance tag "
                          "matches none the cohort names")
    raise LookupError(f"its {what} names no entry for {key} and no '*' default")


@dataclass(frozen=True)
class Cohort:
    path: Path
    label: str | None
    params: dict[str, str]  # participant, study, session -> URL parameter
    instances: tuple[str, ...]
    participants: tuple[Script, ...]
    raw: dict = field(repr=False, default_factory=dict)

    def known_instances(self) -> list[str]:
        """`instances` and every key a mapping-valued text or plan names."""
        keys = list(self.instances)
        for s in self.participants:
            for k in [*s.text, *s.plan]:
                if k != ANY and k not in keys:
                    keys.append(k)
        return keys

    def resolve(self, tag: str) -> str | None:
        """The instance key whose `instance_tag` is `tag`, if the cohort names it."""
        return next((k for k in self.known_instances() if instance_tag(k) == tag), None)


# -- reading ---------------------------------------------------------------------------


class Reader:
    """Checks a cohort file's data, naming file:line: field of the first problem."""

    def __init__(self, path: Path, data: dict, node: yaml.Node | None):
        self.path, self.data, self.node = path, data, node

    def line(self, where: Sequence, key: str | None = None) -> int:
        """The line of the deepest node on `where` (or of `key` inside it)."""
        node, line = self.node, 1
        for step in where:
            if node is not None:
                line = node.start_mark.line + 1
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == step), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) \
                    and step < len(node.value):
                node = node.value[step]
            else:
                node = None
        if node is not None:
            line = node.start_mark.line + 1
            if key is not None and isinstance(node, yaml.MappingNode):
                line = next((k.start_mark.line + 1 for k, _ in node.value if k.value == key), line)
        return line

    def fail(self, where: Sequence, message: str, key: str | None = None):
        name = field_name([*where, key] if key is not None else where)
        raise ConfigError(f"{self.path}:{self.line(where, key)}: {name}: {message}")

    def mapping(self, value, where: Sequence, known: Sequence[str], what: str) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"{what}, a mapping")
        for k in value:
            if k not in known:
                self.fail(where, f"unknown key '{k}' (known: {', '.join(known)})", key=k)
        return value

    def string(self, value, where: Sequence, pattern: re.Pattern | None = None,
               rule: str = "a string") -> str:
        if not isinstance(value, str) or not value.strip() or (pattern and not pattern.match(value)):
            self.fail(where, rule)
        return value


def load_cohort(path: str | Path) -> Cohort:
    """The cohort file at `path`, checked; ConfigError names file:line: field."""
    path = Path(path)
    data, node = read_yaml(path, "cohort")
    r = Reader(path, data, node)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a cohort file is a mapping (format, participants, ...): "
                          "see planaudit.simulated.cohort")
    r.mapping(data, [], _TOP, "a cohort file")
    if data.get("format") != FORMAT or isinstance(data.get("format"), bool):
        r.fail(["format"], f"must be {FORMAT} (the cohort format this planaudit reads)")
    label = data.get("label")
    if label is not None:
        r.string(label, ["label"], rule="a string naming the cohort")
    params = dict(DEFAULT_PARAMS)
    if "url_parameters" in data:
        given = r.mapping(data["url_parameters"], ["url_parameters"], tuple(DEFAULT_PARAMS),
                          "the URL parameters")
        for k, v in given.items():
            params[k] = r.string(v, ["url_parameters", k], _PARAM,
                                 "a URL parameter's name ([A-Za-z0-9_-])")
    instances: list[str] = []
    if "instances" in data:
        if not isinstance(data["instances"], list):
            r.fail(["instances"], "a list of instance keys (DOMAIN/TASK, as the study config "
                                  "names them)")
        for i, k in enumerate(data["instances"]):
            r.string(k, ["instances", i], rule="an instance key (DOMAIN/TASK)")
            if k == ANY:
                r.fail(["instances", i], "'*' is no instance key")
            if k in instances:
                r.fail(["instances", i], f"{k} is listed twice")
            instances.append(k)
    scripts = data.get("participants")
    if not isinstance(scripts, list) or not scripts:
        r.fail(["participants"], "a non-empty list of scripts (id, arm, text, plan, tlx, ...)")
    out: list[Script] = []
    seen: dict[str, int] = {}
    for n, s in enumerate(scripts):
        script = _script(r, s, ["participants", n], instances)
        if script.id in seen:
            r.fail(["participants", n, "id"], f"'{script.id}' names two scripts (the other "
                                               f"is participants[{seen[script.id]}])")
        seen[script.id] = n
        out.append(script)
    return Cohort(path, label, params, tuple(instances), tuple(out), raw=data)


def _script(r: Reader, s, where: list, instances: list[str]) -> Script:
    s = r.mapping(s, where, _SCRIPT, "a script (id, arm, text, plan, tlx, ...)")
    if "id" not in s:
        r.fail(where, "a script needs an id")
    sid = s["id"]
    if not isinstance(sid, str) or not _ID.match(sid):
        r.fail([*where, "id"], "a label of letters, digits, '_', '.' or '-' (quote a number)")
    if "arm" in s and "accepts" in s:
        r.fail([*where, "accepts"], "give arm or accepts, not both")
    arms: tuple[str, ...] | None = None
    if "arm" in s:
        arms = (r.string(s["arm"], [*where, "arm"], rule="an arm's name"),)
    elif "accepts" in s:
        acc = s["accepts"]
        if not isinstance(acc, list) or not acc:
            r.fail([*where, "accepts"], "a non-empty list of arms' names")
        arms = tuple(r.string(a, [*where, "accepts", i], rule="an arm's name")
                     for i, a in enumerate(acc))
    faults = _faults(r, s.get("faults"), [*where, "faults"])
    stop = next((f.page for f in faults if f.kind == "abandon"), None)

    def reaches(page: str) -> bool:
        return stop is None or PAGES.index(page) < PAGES.index(stop)

    text: dict[str, str] = {}
    if "text" in s:
        text = _per_instance(r, s["text"], [*where, "text"], instances,
                             lambda v, w: r.string(v, w, rule="the phase-1 text, a non-empty "
                                                               "string"))
    elif reaches("phase1"):
        r.fail(where, "a script that reaches phase 1 needs a text", key=None)
    conversation = _conversation(r, s["assistant"], [*where, "assistant"]) \
        if "assistant" in s else ()
    if conversation and not reaches("phase2"):
        r.fail([*where, "assistant"], f"the script abandons on {stop}, before the conversation "
                                      "beside phase 2")
    accepts = any(t.op == "accept" for t in conversation)
    declares = "declare" in s
    if declares and s["declare"] != "unsolvable":
        r.fail([*where, "declare"], "unsolvable (the only declaration phase 2 takes)")
    plan: dict[str, tuple[Edit, ...]] = {}
    if "plan" in s:
        plan = _per_instance(r, s["plan"], [*where, "plan"], instances,
                             lambda v, w: _edits(r, v, w, from_accepted=accepts))
    elif reaches("phase2") and not accepts and not declares:
        r.fail(where, "a script that reaches phase 2 needs a plan (or a conversation that "
                      "accepts the assistant's, or declare: unsolvable)")
    correct = s.get("suggestion_correct")
    if correct is not None and not isinstance(correct, bool):
        r.fail([*where, "suggestion_correct"], "true or false")
    tlx = None
    if "tlx" in s:
        v = s["tlx"]
        if not isinstance(v, list) or len(v) != 6 or any(
                isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 100 or x % 5
                for x in v):
            r.fail([*where, "tlx"], _TLX_RULE)
        tlx = tuple(v)
    elif reaches("tlx"):
        r.fail(where, f"a script that reaches the TLX page needs tlx: {_TLX_RULE}")
    pairs = None
    if "tlx_pairs" in s:
        v = s["tlx_pairs"]
        if not isinstance(v, list) or len(v) not in (0, len(TLX_PAIRS)):
            r.fail([*where, "tlx_pairs"], f"{len(TLX_PAIRS)} choices, one of each pair in "
                                          "NASA-TLX's order (or [] for none)")
        for i, (pick, pair) in enumerate(zip(v, TLX_PAIRS, strict=False)):
            if pick not in pair:
                r.fail([*where, "tlx_pairs", i], f"'{pick}' is not one of {pair[0]}/{pair[1]}")
        pairs = tuple(v)
    attention = s.get("attention") or {}
    if not isinstance(attention, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in attention.items()):
        r.fail([*where, "attention"], "a mapping of attention checks' ids to the option chosen")
    for i, f in enumerate(faults):
        for key, edits in plan.items() if f.after is not None else ():
            if f.after > len(edits):
                on = f" on {key}" if key != ANY else ""
                r.fail([*where, "faults", i, "after"], f"reload after edit {f.after}, but the "
                       f"plan{on} has {len(edits)} edit(s)")
    return Script(sid, arms, text, plan, correct, tlx, pairs, faults, r.line(where),
                  dict(attention), conversation, declares)


def _conversation(r: Reader, value, where: list) -> tuple[Turn, ...]:
    rule = ('a list of turns: {ask: "a message"}, {accept: last} or {accept: N}, '
            '{reject: last} or {reject: N} (N: the assistant\'s N-th reply, from 1)')
    if not isinstance(value, list) or not value:
        r.fail(where, rule)
    out: list[Turn] = []
    asked = 0  # messages sent so far: the replies a turn may name
    for i, t in enumerate(value):
        w = [*where, i]
        if not isinstance(t, dict) or len(t) != 1:
            r.fail(w, "one turn: " + rule.removeprefix("a list of turns: "))
        (op, arg), = t.items()
        if op not in CHAT_OPS:
            r.fail(w, f"unknown turn '{op}' (known: {', '.join(CHAT_OPS)})", key=op)
        if op == "ask":
            r.string(arg, [*w, op], rule="the message typed to the assistant, a non-empty string")
            out.append(Turn("ask", text=arg.strip()))
            asked += 1
            continue
        if asked == 0:
            r.fail([*w, op], f"{op}: no message has been sent yet, so there is no reply to "
                             f"{op} (ask first)")
        if arg == LAST:
            out.append(Turn(op))
        elif isinstance(arg, bool) or not isinstance(arg, int) or arg < 1:
            r.fail([*w, op], f"{op}: '{LAST}' or a reply's number (from 1)")
        elif arg > asked:
            r.fail([*w, op], f"{op} {arg}: only {asked} message(s) have been sent at that point, "
                             f"so the assistant has given at most {asked} reply(ies)")
        else:
            out.append(Turn(op, reply=arg))
    return tuple(out)


def _per_instance(r: Reader, value, where: list, instances: list[str], read) -> dict:
    if isinstance(value, dict):
        if not value:
            r.fail(where, "a mapping of instance keys (or '*') needs an entry")
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                r.fail(where, f"'{k}' is no instance key", key=k)
            if instances and k != ANY and k not in instances:
                r.fail(where, f"'{k}' is not one of the cohort's instances "
                              f"({', '.join(instances)})", key=k)
            out[k] = read(v, [*where, k])
        return out
    return {ANY: read(value, where)}


def _edits(r: Reader, value, where: list, from_accepted: bool = False) -> tuple[Edit, ...]:
    """The edits; `from_accepted`: they start from a plan the conversation accepts, whose
    length is known only as it is played, so step numbers are checked then, not here."""
    if not isinstance(value, list) or not value:
        r.fail(where, "a non-empty list of edits: \"(action ...)\", {undo: true}, {up: N}, "
                      "{down: N}, {remove: N}")
    edits: list[Edit] = []
    n = 0  # the plan's length so far
    for i, e in enumerate(value):
        w = [*where, i]
        if isinstance(e, str):
            e = {"add": e}
        if not isinstance(e, dict) or len(e) != 1:
            r.fail(w, "one edit: \"(action ...)\", {add: \"(action ...)\"}, {undo: true}, "
                      "{up: N}, {down: N} or {remove: N}")
        (op, arg), = e.items()
        if op not in EDIT_OPS:
            r.fail(w, f"unknown edit '{op}' (known: {', '.join(EDIT_OPS)})", key=op)
        if op == "add":
            if not isinstance(arg, str) or not _ACTION.match(arg.strip()):
                r.fail(w, "a grounded action as the page lists it, e.g. \"(unstack b a)\"")
            edits.append(Edit("add", action=" ".join(arg.split())))
            n += 1
        elif op == "undo":
            if arg is not True:
                r.fail(w, "undo: true")
            if n == 0 and not from_accepted:
                r.fail(w, "undo: the plan has no step at that point")
            edits.append(Edit("undo"))
            n -= 1
        else:
            if isinstance(arg, bool) or not isinstance(arg, int) or arg < 1:
                r.fail(w, f"{op}: a step's number (from 1)")
            lo, hi = {"up": (2, n), "down": (1, n - 1), "remove": (1, n)}[op]
            if from_accepted:
                lo, hi = (2 if op == "up" else 1), arg
            if not lo <= arg <= hi:
                room = f"{n} step(s)" if n else "no step"
                r.fail(w, f"{op} {arg}: the plan has {room} at that point"
                          + (" (the first step cannot move up)" if op == "up" and arg == 1 else "")
                          + (" (the last step cannot move down)" if op == "down" and arg == n else ""))
            edits.append(Edit(op, step=arg))
            n -= op == "remove"
    if n == 0 and not from_accepted:
        r.fail(where, "the edits leave no step to submit")
    return tuple(edits)


def _faults(r: Reader, value, where: list) -> tuple[Fault, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        r.fail(where, "a list of faults: {reload: PAGE}, {abandon: PAGE}, {submit_twice: PAGE}")
    out: list[Fault] = []
    for i, f in enumerate(value):
        w = [*where, i]
        f = r.mapping(f, w, (*FAULTS, "after"), "a fault: {reload: PAGE}, {abandon: PAGE} or "
                                                "{submit_twice: PAGE}")
        kinds = [k for k in f if k in FAULTS]
        if len(kinds) != 1:
            r.fail(w, "one of reload, abandon, submit_twice")
        kind = kinds[0]
        page = f[kind]
        if page not in PAGES:
            r.fail([*w, kind], f"'{page}' is no page (pages: {', '.join(PAGES)})")
        after = f.get("after")
        if "after" in f:
            if kind != "reload" or page != "phase2":
                r.fail([*w, "after"], "after goes with {reload: phase2} only")
            if isinstance(after, bool) or not isinstance(after, int) or after < 1:
                r.fail([*w, "after"], "the number of phase-2 edits after which to reload (from 1)")
        fault = Fault(kind, page, after)
        if fault in out:
            r.fail(w, f"{kind} on {page} is given twice")
        if kind == "abandon" and any(o.kind == "abandon" for o in out):
            r.fail(w, "a script abandons once")
        out.append(fault)
    return tuple(out)


def dump_script(s: Script) -> dict:
    """A script as the file writes it (the inverse of reading one)."""
    out: dict = {"id": s.id}
    if s.arms is not None:
        if len(s.arms) == 1:
            out["arm"] = s.arms[0]
        else:
            out["accepts"] = list(s.arms)

    def flat(values: Mapping, conv):
        if set(values) == {ANY}:
            return conv(values[ANY])
        return {k: conv(v) for k, v in values.items()}

    if s.text:
        out["text"] = flat(s.text, lambda t: t)
    if s.plan:
        out["plan"] = flat(s.plan, lambda edits: [e.to_yaml() for e in edits])
    if s.suggestion_correct is not None:
        out["suggestion_correct"] = s.suggestion_correct
    if s.tlx is not None:
        out["tlx"] = list(s.tlx)
    if s.tlx_pairs is not None:
        out["tlx_pairs"] = list(s.tlx_pairs)
    if s.attention:
        out["attention"] = dict(s.attention)
    if s.conversation:
        out["assistant"] = [t.to_yaml() for t in s.conversation]
    if s.declares:
        out["declare"] = "unsolvable"
    if s.faults:
        out["faults"] = [{f.kind: f.page, **({"after": f.after} if f.after is not None else {})}
                         for f in s.faults]
    return out
