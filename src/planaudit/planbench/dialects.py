"""The ways PlanBench read model text, as named dialects.

A results file does not say which version of PlanBench's code scored it, so each
reading is a dialect a replay can name:

- `2023`: the text is lower-cased; each action's phrase (its name with hyphens as
  spaces, or the first word of its template when that word is not part of the
  name) is rewritten as the action's name; then line by line, the action taken is
  the first of the domain's actions, in the domain file's order, that is a word of
  the line; its objects are the config's object names found in the line, in order
  of appearance; a line whose object count differs from the action's arity is
  skipped. Reading does not stop at `[PLAN END]` (the `[COST]` stop never fires
  after lower-casing).
- `2025`: as `2023`, after keeping only what follows `### plan:` (when present) and
  what lies between `[PLAN]` and `[PLAN END]` (when both are present), and deleting
  every `*`.
- `2024`: the intermediate version: `2025` without the `[PLAN]` cut.
- `translated`, `translated-early`, `translated-published`: the plan is read from
  the file's `raw_translation` (the response an LLM translated into PDDL steps), as
  PlanBench's code reads a translation: the text between the first `[PDDL PLAN]`
  and the next `[PDDL PLAN END]` (without `[PDDL PLAN]`, all before `[PDDL PLAN
  END]`), lower-cased; per line, brackets and full stops deleted, the first word
  the action (`pick-up`, `put-down`, `stack`, `unstack`; `pickup`, `pick_up`,
  `putdown`, `put_down` for the first two), each later word the first of the
  config's compact object names (`red`, ...) it contains, words containing none
  dropped (so a step may end up with the wrong number of objects, and then fails,
  as it failed VAL). The three differ in which lines are steps: `translated` only
  lines that begin with `(`, digits deleted first (`(1) stack red blue` is a step:
  the o1-preview files); `translated-early` the same with digits kept (`(1)
  (stack red blue)` is not: the llama-3.1-405b file); `translated-published` every
  line, digits deleted (`1. Stack red on blue` is a step: the published code).
  Mystery Blocksworld's translations are PDDL steps over letters: `object_`
  deleted, `*` and digits too, every line that begins with `(` (and does not say
  `pddl plan`) is the step it spells, `no plan possible` included (it fails).
- `strict`: planaudit's own reading: the text between the last `[PLAN]` and
  `[PLAN END]` (or all of it); a line is a step when, after numbering and markdown,
  it is a PDDL step `(action obj ...)`, or begins with an action's word and names
  exactly that one action and exactly its number of objects, each once, in order
  ("unstack the red block from the blue block", "put down the red block on the
  table"); a line that begins with an action word and is not such a step makes
  the response unreadable (nothing is silently skipped); prose lines are not
  steps. Plans are judged against the goal the prompt states (t4:
  the whole stated state; t8_2, t8_3: the stated goal) and t7 states by exact
  set equality.

Test-specific rules (t4's goal, t7's state reading) are in `replay.py`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from planaudit.planbench.material import Config

Step = tuple[str, tuple[str, ...]]
TRANSLATED = ("translated", "translated-early", "translated-published")
PLAN_DIALECTS = ("2023", "2024", "2025", *TRANSLATED, "strict")


class Unreadable(Exception):
    """A response the dialect cannot read; the message says where."""


@lru_cache(maxsize=64)
def _phrases(cfg: Config) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, int], ...], tuple[str, ...]]:
    """(phrase -> name rewrites, (name, arity) in domain order, object names lower-cased)."""
    from planaudit.formal.load import domain_at

    domain = domain_at(cfg.domain_path)
    rewrites = []
    acts = []
    for name, template in cfg.actions.items():
        word = template.split(" ")[0].lower()
        phrase = name.replace("-", " ") if word in name else word
        rewrites.append((phrase, name))
        acts.append((name, len(domain.actions[name].params)))
    names = tuple(v.lower() for v in cfg.objects.values())
    return tuple(rewrites), tuple(acts), names


def _by_name(cfg: Config) -> dict[str, str]:
    return {v.lower(): k for k, v in cfg.objects.items()}


def read_2023(cfg: Config, text: str) -> list[Step]:
    rewrites, acts, names = _phrases(cfg)
    back = _by_name(cfg)
    text = text.lower().strip()
    for phrase, name in rewrites:
        if phrase != name:
            text = text.replace(phrase, name)
    plan: list[Step] = []
    for line in text.split("\n"):
        line = line.strip()
        words = line.split()
        if not words:
            continue
        hit = next((act for act in acts if act[0] in words), None)
        if hit is None:
            continue
        name, arity = hit
        found = sorted((line.find(o), o) for o in names if o in line)
        if len(found) != arity:
            continue
        plan.append((name, tuple(back[o] for _, o in found)))
    return plan


_PLAN_HEAD = "### plan:"


def _cut_2024(text: str) -> str:
    low = text.lower()
    at = low.rfind(_PLAN_HEAD)
    if at >= 0:
        text = text[at + len(_PLAN_HEAD):]
    return text.replace("*", "")


def _cut_plan_tags(text: str) -> str:
    start, end = text.find("[PLAN]"), text.find("[PLAN END]")
    if start >= 0 and end > start:
        return text[start + len("[PLAN]"):end]
    return text


def read_2025(cfg: Config, text: str) -> list[Step]:
    return read_2023(cfg, _cut_plan_tags(_cut_2024(text)))


def read_2024(cfg: Config, text: str) -> list[Step]:
    return read_2023(cfg, _cut_2024(text))


_NUMBERING = re.compile(r"^\s*(?:[-*•]\s*|\d+\s*[.):]\s*|step\s*\d+\s*[.:)]\s*)*", re.I)
_PDDL = re.compile(r"^\(\s*([a-z][\w-]*)((?:\s+[\w-]+)*)\s*\)$")


def read_strict(cfg: Config, text: str) -> list[Step]:
    """planaudit's own reading (see the module docstring)."""
    rewrites, acts, _names = _phrases(cfg)
    return read_words(text, rewrites, acts, _by_name(cfg))


def read_words(text: str, rewrites, acts, objects: dict[str, str],
               whole_words: bool = False) -> list[Step]:
    """The strict reading on any vocabulary: `rewrites` (phrase, action name) pairs,
    `acts` (action name, arity) pairs, `objects` each object's words (lower case) -> its
    name. PlanBench's configs give one (`read_strict`); a task's own names give another,
    so that people's plans in words are read as models' are (planaudit.human), there with
    `whole_words` (an object named `a` is not the a of "stack")."""
    arity = dict(acts)
    names = tuple(objects)
    verbs = {p.split()[0] for p, _ in rewrites}
    end = text.find("[PLAN END]")
    if end >= 0:
        text = text[:end]
    start = text.rfind("[PLAN]")
    if start >= 0:
        text = text[start + len("[PLAN]"):]
    plan: list[Step] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = _NUMBERING.sub("", raw.replace("*", "").replace("`", "")).strip().rstrip(".").lower()
        if not line:
            continue
        m = _PDDL.match(line)
        if m and m.group(1) in arity:
            plan.append((m.group(1), tuple(m.group(2).split())))
            continue
        if line.split()[0] not in verbs:
            continue  # prose, not a step
        for phrase, name in rewrites:
            line = line.replace(phrase, name)
        words = line.split()
        named = [w for w in words if w in arity]
        if whole_words:
            spans = {o: [m.start() for m in re.finditer(
                rf"(?<![\w-]){re.escape(o)}(?![\w-])", line)] for o in names}
            found = sorted((at[0], o) for o, at in spans.items() if at)
            twice = any(len(spans[o]) > 1 for _, o in found)
        else:
            found = sorted((line.find(o), o) for o in names if o in line)
            twice = any(line.count(o) > 1 for _, o in found)
        if len(named) != 1 or words[0] != named[0] or len(found) != arity[named[0]] or twice:
            raise Unreadable(f"line {n}: '{raw.strip()}' is not one action with its "
                             f"{arity.get(words[0], '?')} object(s)")
        plan.append((named[0], tuple(objects[o] for _, o in found)))
    return plan


_PB_ACTIONS = {"unstack": "unstack", "stack": "stack", "pick-up": "pick-up", "put-down": "put-down",
               "pickup": "pick-up", "pick_up": "pick-up", "putdown": "put-down", "put_down": "put-down"}
_DIGITS = str.maketrans("", "", "0123456789")


def _translation_body(text: str) -> str:
    """What PlanBench keeps of a translation: between the first `[PDDL PLAN]` and the
    next `[PDDL PLAN END]`, or everything before `[PDDL PLAN END]`; lower-cased."""
    if "[PDDL PLAN]" in text:
        text = text.split("[PDDL PLAN]")[1]
    return text.split("[PDDL PLAN END]")[0].strip().lower()


def _colour_steps(cfg: Config, body: str, paren_only: bool, digits: bool) -> list[Step]:
    compact = [(str(k), str(v).lower()) for k, v in (cfg.data.get("encoded_objects_compact") or {}).items()]
    if not compact:
        raise Unreadable(f"{cfg.path}: no 'encoded_objects_compact' to read a translation's objects by")
    plan: list[Step] = []
    for line in body.split("\n"):
        if not line.strip() or (paren_only and not line.strip().startswith("(")):
            continue
        line = line.replace("(", "").replace(")", "").replace(".", "")
        if digits:
            line = line.translate(_DIGITS)
        words = line.split()
        if not words or words[0] not in _PB_ACTIONS:
            continue
        objs = [next(k for k, name in compact if name in w) for w in words[1:]
                if any(name in w for _, name in compact)]
        plan.append((_PB_ACTIONS[words[0]], tuple(objs)))
    return plan


def _pddl_steps(cfg: Config, body: str) -> list[Step]:
    """Every line that begins with `(`: the step it spells, whatever it names."""
    name = str(cfg.data.get("domain_name", cfg.name))
    mystery = name.startswith("mystery_blocksworld")
    if name != "logistics":
        body = body.replace("object_", "" if mystery else "o")
    plan: list[Step] = []
    for line in body.split("\n"):
        line = line.replace(".", "")
        if mystery:
            line = line.replace("*", "").translate(_DIGITS)
        line = line.strip()
        if line == "no plan possible":
            line = "(no plan possible)"
        if line.startswith("(") and "pddl plan" not in line:
            words = line.replace("(", " ").replace(")", " ").split()
            if words:
                plan.append((words[0], tuple(words[1:])))
    return plan


def _translated(paren_only: bool, digits: bool):
    def read(cfg: Config, text: str) -> list[Step]:
        body = _translation_body(text)
        if str(cfg.data.get("domain_name", cfg.name)) in ("blocksworld", "blocksworld_3"):
            return _colour_steps(cfg, body, paren_only, digits)
        return _pddl_steps(cfg, body)

    read.__doc__ = (f"A translation's steps (see the module docstring): lines beginning with "
                    f"`(` {'only' if paren_only else 'or not'}, digits {'deleted' if digits else 'kept'}.")
    return read


read_translated = _translated(paren_only=True, digits=True)
read_translated_early = _translated(paren_only=True, digits=False)
read_translated_published = _translated(paren_only=False, digits=True)


def best_translated(cfg: Config, instances: list) -> str:
    """The translated reading (of TRANSLATED) that reproduces the most of a file's
    recorded `extracted_llm_plan` (PlanBench's reading of the translation, not its
    verdict), over every instance: the readings differ on few lines. Ties: `translated`."""
    hits = dict.fromkeys(TRANSLATED, 0)
    for inst in instances:
        if not isinstance(inst, dict) or not isinstance(inst.get("raw_translation"), str):
            continue
        recorded = inst.get("extracted_llm_plan")
        if isinstance(recorded, list):
            recorded = "\n".join(map(str, recorded))
        if not isinstance(recorded, str):
            continue
        want = [ln.strip() for ln in recorded.strip().split("\n") if ln.strip()]
        for name in TRANSLATED:
            try:
                steps = READERS[name](cfg, inst["raw_translation"])
            except Unreadable:
                continue
            hits[name] += want == ["(" + " ".join((a, *args)) + ")" for a, args in steps]
    return max(TRANSLATED, key=lambda name: hits[name])


READERS = {"2023": read_2023, "2024": read_2024, "2025": read_2025, "translated": read_translated,
           "translated-early": read_translated_early,
           "translated-published": read_translated_published, "strict": read_strict}
