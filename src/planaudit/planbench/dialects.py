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
- `translated`: the plan is read from the file's `raw_translation` (the response an
  LLM translated into PDDL steps) instead of the response: a line that begins
  with `(action obj ...)` is a step (objects by letter or colour name); any other
  line is skipped, numbered steps (`1. (stack ...)`) included.
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
PLAN_DIALECTS = ("2023", "2024", "2025", "translated", "strict")


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
    rewrites, acts, names = _phrases(cfg)
    arity = dict(acts)
    back = _by_name(cfg)
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
        found = sorted((line.find(o), o) for o in names if o in line)
        if len(named) != 1 or words[0] != named[0] or len(found) != arity[named[0]] \
                or any(line.count(o) > 1 for _, o in found):
            raise Unreadable(f"line {n}: '{raw.strip()}' is not one action with its "
                             f"{arity.get(words[0], '?')} object(s)")
        plan.append((named[0], tuple(back[o] for _, o in found)))
    return plan


_PAREN = re.compile(r"\(\s*([^()\s]+)((?:\s+[^()\s]+)*)\s*\)")


def read_translated(cfg: Config, text: str) -> list[Step]:
    """A translation's PDDL steps: lines that begin with `(action obj ...)`, objects
    named by letter, by the config's compact names (`red`) or its full names; other
    lines (`1. (stack ...)`, `- (stack ...)` included) skipped, as PlanBench did."""
    _, acts, _ = _phrases(cfg)
    arity = dict(acts)
    names = {k.lower(): k for k in cfg.objects}
    for table in ("encoded_objects_compact", "encoded_objects"):
        for k, v in (cfg.data.get(table) or {}).items():
            names.setdefault(str(v).lower(), str(k))
            names.setdefault(str(v).lower().replace(" ", "_"), str(k))
    plan: list[Step] = []
    for line in text.lower().split("\n"):
        m = _PAREN.match(line.strip())
        if m is None:
            continue
        name, args = m.group(1), m.group(2).split()
        if name in arity and len(args) == arity[name] and all(a in names for a in args):
            plan.append((name, tuple(names[a] for a in args)))
    return plan


READERS = {"2023": read_2023, "2024": read_2024, "2025": read_2025, "translated": read_translated,
           "strict": read_strict}
