"""t7, reasoning about plan execution: the state an action sequence leads to.

Truth: the query's initial state and action sequence, run through `formal/`.
Dialects for reading the listed state:

- `2023` (the recorded verdicts): lower-cased, split on commas only; in each
  piece the predicate is the first of the config's phrases that occurs (its
  `predicate_mapping`, or, where the config has none, as on the disguised
  domains, each predicate template's longest stretch of words, in the config's
  order, a phrase that lies inside another tried after it);
  a one-place fact takes the first object (in the config's order) named in the
  piece, a two-place fact the first object left of the phrase and the first right
  of it (objects on one side of the phrase beyond one: in order of appearance);
  an object is named by its distinguishing word (`red` of "red block") when the
  first words of the config's names differ, else by its whole name ("object a");
  a piece with " not " or without its objects is dropped. So a fact joined by
  " and " to the one before it is lost. The listed facts must equal the true
  state as a multiset.
- `published`: the same, splitting on " and " too (PlanBench's published code).
- `strict`: each piece must be exactly one of the config's fact phrases (commas
  and " and " separate them, a final period is dropped); any other piece makes
  the answer unreadable; the set of facts must equal the true state.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from planaudit.planbench.language import _fact_table
from planaudit.planbench.material import Atom, Config, MaterialError

_EDGE = r"(?<![a-z0-9_])"
_EDGE_END = r"(?![a-z0-9_])"


@dataclass(frozen=True)
class Phrase:
    """How a predicate is found in a piece of text: its phrase, and how many of its
    objects stand left of the phrase (the rest stand right of it)."""

    text: str
    pred: str
    arity: int
    left: int


@lru_cache(maxsize=64)
def fact_phrases(cfg: Config) -> tuple[Phrase, ...]:
    """The phrases facts are read by (see the module docstring); MaterialError naming the
    config and field when there is nothing to read a state with."""
    from planaudit.formal.load import domain_at

    domain = domain_at(cfg.domain_path)
    mapping = cfg.data.get("predicate_mapping")
    if mapping:  # the phrases PlanBench's own reading used, in the config's order
        out = [Phrase(str(phrase).lower(), pred, len(domain.predicates[pred]),
                      1 if len(domain.predicates[pred]) == 2 else 0)
               for pred, phrase in mapping.items() if pred in domain.predicates]
        if not out:
            raise MaterialError(f"{cfg.path}: field 'predicate_mapping' names none of the domain's "
                                "predicates")
        return tuple(out)
    out = []
    for pred, template in cfg.predicates.items():  # the config's order, as PlanBench tries them
        if pred not in domain.predicates or not template:
            continue  # not the domain's, or silent (logistics' types): never stated
        params = domain.predicates[pred]
        parts = template.lower().split("{}")
        if len(parts) - 1 != len(params):
            raise MaterialError(f"{cfg.path}: field 'predicates': the template for '{pred}' has "
                                f"{len(parts) - 1} placeholder(s), the predicate {len(params)} "
                                "argument(s)")
        words = max(range(len(parts)), key=lambda k: len(parts[k].strip()))
        if not parts[words].strip():
            raise MaterialError(f"{cfg.path}: field 'predicates': the template for '{pred}' has no "
                                "words to find its facts by")
        out.append(Phrase(parts[words].strip(), pred, len(params), words))
    if not out:
        raise MaterialError(f"{cfg.path}: field 'predicates': no template to read states with")
    seen: dict[str, str] = {}
    for p in out:
        if p.text in seen:
            raise MaterialError(f"{cfg.path}: field 'predicates': '{seen[p.text]}' and '{p.pred}' "
                                f"are both found by '{p.text}'")
        seen[p.text] = p.pred
    # a phrase inside another ("is in" of "is in the city") is tried after it
    return tuple(sorted(out, key=lambda p: sum(p.text in q.text for q in out if q is not p)))


@lru_cache(maxsize=64)
def object_names(cfg: Config) -> tuple[tuple[re.Pattern, str], ...]:
    """(pattern, object) in the config's order: the distinguishing first word of each name
    ("red" of "red block") when those differ, else the whole name ("object a")."""
    names = {k: v.lower().split() for k, v in cfg.objects.items()}
    if any(not w or "{}" in " ".join(w) for w in names.values()):
        raise MaterialError(f"{cfg.path}: field 'encoded_objects' names objects by template: "
                            "states cannot be read without an instance's objects")
    firsts = [w[0] for w in names.values()]
    by_word = all(len(w) > 1 for w in names.values()) and len(set(firsts)) == len(firsts)
    out = []
    for obj, words in names.items():
        key = words[0] if by_word else " ".join(words)
        out.append((re.compile(_EDGE + re.escape(key) + _EDGE_END), obj))
    return tuple(out)


def _first(names, text: str) -> str | None:
    """The first object, in the config's order, named in `text`."""
    for pattern, obj in names:
        if pattern.search(text):
            return obj
    return None


def _in_order(names, text: str, n: int) -> list[str | None]:
    """The first `n` objects named in `text`, in order of appearance."""
    found = sorted((m.start(), obj) for pattern, obj in names if (m := pattern.search(text)))
    objs: list[str | None] = [obj for _, obj in found[:n]]
    return objs + [None] * (n - len(objs))


def piece_objects(names, phrase: Phrase, left: str, right: str, whole: str) -> list[str | None]:
    """A fact's objects in a piece split at its phrase (None where none is named)."""
    if phrase.arity == 0:
        return []
    if phrase.arity == 1:
        return [_first(names, whole)]
    def side(text: str, n: int) -> list[str | None]:
        if n == 0:
            return []
        return [_first(names, text)] if n == 1 else _in_order(names, text, n)
    return side(left, phrase.left) + side(right, phrase.arity - phrase.left)


def read_state_2023(cfg: Config, text: str, split_and: bool = False) -> list[Atom]:
    text = text.lower()
    pieces = re.split(r",| and " if split_and else r",", text)
    names = object_names(cfg)
    facts: list[Atom] = []
    for piece in pieces:
        if " not " in piece:
            continue  # a negated fact states nothing that holds
        for phrase in fact_phrases(cfg):
            if phrase.text not in piece:
                continue
            left, _, right = piece.partition(phrase.text)
            objs = piece_objects(names, phrase, left, right, piece)
            if None not in objs:
                facts.append((phrase.pred, tuple(objs)))
            break
    return facts


def read_state_strict(cfg: Config, text: str) -> list[Atom]:
    table = _fact_table(cfg, tuple(sorted(cfg.objects)))
    facts = []
    body = text.strip()
    end = body.find("[RESULTING STATE END]")
    if end >= 0:
        body = body[:end]
    for piece in re.split(r",\s*(?:and\s+)?|\s+and\s+|\n", body.lower()):
        piece = piece.strip().strip(".").strip()
        if not piece:
            continue
        atom = table.get(piece)
        if atom is None:
            raise MaterialError(f"'{piece}' is not one of the config's facts")
        facts.append(atom)
    return facts


def score_t7(ctx, inst: dict, text: str, dialect: str):
    from planaudit.planbench.cases import Outcome

    st = ctx.statement(inst["query"])
    w = ctx.world
    run = w.run(w.bits(st.init), st.sequence)
    if run.failed_at is not None:
        raise MaterialError(f"query: the action sequence fails at step {run.failed_at}")
    truth = w.atoms(run.bits)
    iid = inst["instance_id"]
    if dialect == "strict":
        try:
            said = read_state_strict(ctx.cfg, text)
        except MaterialError as e:
            return Outcome(iid, False, "unreadable", str(e))
        ok = set(said) == set(truth)
    else:
        said = read_state_2023(ctx.cfg, text, split_and=dialect == "published")
        ok = Counter(said) == Counter(truth)
    if ok:
        return Outcome(iid, True, "right-state", "the listed state is the true one")
    missing = [a for a in truth if a not in said]
    extra = [a for a in said if a not in truth]
    dup = [a for a, n in Counter(said).items() if n > 1]
    why = "; ".join(filter(None, [
        "missed: " + ", ".join(ctx.cfg.fact_text(a) for a in missing) if missing else "",
        "wrong: " + ", ".join(ctx.cfg.fact_text(a) for a in extra) if extra else "",
        "listed twice: " + ", ".join(ctx.cfg.fact_text(a) for a in dup) if dup else ""]))
    return Outcome(iid, False, "wrong-state", why)
