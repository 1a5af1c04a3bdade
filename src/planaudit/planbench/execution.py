"""t7, reasoning about plan execution: the state an action sequence leads to.

Truth: the query's initial state and action sequence, run through `formal/`.
Dialects for reading the listed state:

- `2023` (the recorded verdicts): lower-cased, split on commas only; in each
  piece the predicate is the first of the config's `predicate_mapping` phrases
  that occurs; a one-place fact takes the first object (in the config's order)
  whose word (`red`) occurs in the piece, a two-place fact the first object left
  of the phrase and the first right of it; a piece with " not " or without its
  objects is dropped. So a fact joined by " and " to the one before it is lost.
  The listed facts must equal the true state as a multiset.
- `published`: the same, splitting on " and " too (PlanBench's published code).
- `strict`: each piece must be exactly one of the config's fact phrases (commas
  and " and " separate them, a final period is dropped); any other piece makes
  the answer unreadable; the set of facts must equal the true state.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from planaudit.planbench.language import _fact_table
from planaudit.planbench.material import Atom, Config, MaterialError

_WORD = re.compile(r"[a-z0-9_]+")


@lru_cache(maxsize=64)
def _mapping(cfg: Config) -> tuple[tuple[str, str, int], ...]:
    from planaudit.formal.load import domain_at

    domain = domain_at(cfg.domain_path)
    phrases = cfg.data.get("predicate_mapping") or {}
    out = []
    for pred, phrase in phrases.items():
        if pred in domain.predicates:
            out.append((str(phrase).lower(), pred, len(domain.predicates[pred])))
    if not out:
        raise MaterialError(f"{cfg.path}: no 'predicate_mapping' to read states with")
    return tuple(out)


@lru_cache(maxsize=64)
def _object_words(cfg: Config) -> dict[str, str]:
    words = {}
    for k, v in cfg.objects.items():
        words.setdefault(v.lower().split()[0], k)
    return words


def read_state_2023(cfg: Config, text: str, split_and: bool = False) -> list[Atom]:
    text = text.lower()
    pieces = re.split(r",| and " if split_and else r",", text)
    words = _object_words(cfg)
    facts: list[Atom] = []
    for piece in pieces:
        if " not " in piece:
            continue  # a negated fact states nothing that holds
        for phrase, pred, arity in _mapping(cfg):
            if phrase not in piece:
                continue
            if arity == 2:
                left, _, right = piece.partition(phrase)
                objs = [_first(words, left), _first(words, right)]
            else:
                objs = [_first(words, piece)] * arity
            if None not in objs:
                facts.append((pred, tuple(objs)))
            break
    return facts


def _first(words: dict[str, str], text: str) -> str | None:
    """The first object, in the config's order, whose word occurs in `text`."""
    present = set(_WORD.findall(text))
    for word, obj in words.items():
        if word in present:
            return obj
    return None


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
    from planaudit.planbench.replay import Outcome

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
