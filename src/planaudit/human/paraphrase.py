"""Reading one line of a participant's phase-1 text in the words people use.

People do not write "put-down c"; they write "2) then put C on the table." The phrase
patterns come from the domain, not from code: a suite domain's `nl.yaml` may declare
`paraphrases:`, action name -> patterns with the parameters as `{0}`, `{1}`, ... (see
`domains/blocksworld/nl.yaml`). A task gets the patterns of the built-in domain whose
actions have its actions' names and arities, so PlanBench's Blocksworld (the same four
actions) reads with the suite's; a disguised task (renamed actions) gets none. Each
action's own name, with its parameters in order ("unstack {0} {1}"), is a pattern too.

How a line is read (`LineReader.read`), so that a reading is never a guess:

- Numbering and bullets (`1.`, `2)`, `a)`, `-`, `*`, `Step 3:`), markdown, case and
  trailing punctuation are dropped, then leading fillers (`then`, `next`, `finally`,
  `and`, `ok so`, `first I will`, ...).
- A line with several clauses (split at ";", ". ", ",", "and", "then", "->") is read
  clause by clause ("take c off a, then put it down": two steps), before the whole line
  is: the strict reading would take "unstack c from a and put it down" for one step. The
  line reads when every clause is a step or prose; one clause that starts like an action
  and is no step, or names objects alone after a step ("pick up b and c"), makes the
  whole line unreadable: it yields no step.
- A clause is read by the strict reading of plans in words (`planbench.dialects`) first,
  so what a model's reply would be read as reads the same here; then by the patterns, on
  the whole clause: articles are optional anywhere, an object may carry its type's noun
  ("block c", "the red block", "the red one"), and a pattern's word of four letters or
  more (the verb, "table", "onto") matches a word one letter off (Damerau-Levenshtein
  distance 1: "unstak", "pikc"; not a word that is itself an object or a pattern's word;
  "put" has three letters: not tolerated). Among the patterns that match, the longest
  (most words) wins, so "put {0} on the table" beats "put {0} on {1}"; two readings of
  that length that differ make the line ambiguous, hence unreadable, never guessed. An
  object must fit its parameter's type, and a step names each object once.
- "it" (also "that", "this one") as the first parameter is the first fitting object of
  the latest step read since the last unreadable line ("unstack c from a, then put it
  down"); with no such step the line is unreadable.
- Trailing commentary after "so", "to", "because", "(", " - " ... is dropped when the
  rest reads as a step and the commentary does not itself start like an action.
- A clause that starts with a pattern's verb (or one letter off it), or with a generic
  move ("move", "get") and names an object, but reads as no step, is unreadable; so is a
  line that is a move without its verb ("c on the table").
- Anything else is prose ("First I clear a.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from planaudit.formal.ground import Task
from planaudit.formal.syntax import Domain
from planaudit.paths import DOMAINS
from planaudit.planbench.dialects import Unreadable

Step = tuple[str, tuple[str, ...]]
ARTICLES = frozenset({"the", "a", "an"})
# leading words people put before a step; stripped (never when the word names an object
# or starts a pattern: "start" is a verb in loadbalancing)
FILLERS = frozenset({
    "ok", "okay", "so", "first", "firstly", "then", "next", "afterwards", "finally", "lastly",
    "last", "and", "now", "i", "we", "you", "i'll", "we'll", "will", "would", "should", "can",
    "must", "please", "just", "also", "second", "secondly", "third", "thirdly", "fourth",
    "fifth", "let's", "lets", "gonna", "well", "alright", "step", "need", "have", "want",
    "to", "start", "begin", "by", "after", "that", "of", "all", "going", "i'd", "we'd",
    "hmm", "um", "right"})
# phrases a step may end with, whose rest is commentary
WEAK = re.compile(r"\s+(?:so that|so|to|because|since|as|which|leaving|making|until|in order to)"
                  r"\s+|\s*\(|\s+[-–—]+\s+")
STRONG = re.compile(r"\s*(?:;|\.\s+|,?\s+and\s+then\s+|,?\s+then\s+|,\s*and\s+|\s+and\s+|,|->|→|=>)\s*")
# verbs of moving that no pattern may cover: a line starting with one and naming an
# object states a step
GENERIC_MOVES = frozenset({"move", "shift", "bring", "carry", "transfer", "swap", "get",
                           "slide", "push", "switch", "place", "put", "stack", "unstack"})
PREPOSITIONS = frozenset({"in", "at", "on", "to", "from", "with", "into", "onto", "off"})
PRONOUNS = (("it",), ("that", "one"), ("this", "one"), ("that",), ("this",))
_NUMBERING = re.compile(r"^\s*(?:(?:[-*•>+]|\(?\d+\s*[.):\]]|\[\d+\]|#\d+|step\s*\d+\s*[.:)\-–]?|"
                        r"\d+(?=\s)|[a-z]\)(?=\s))\s*)*", re.I)
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_'’\-]*")
_SLOT = re.compile(r"\{(\d+)\}")
PRONOUN = "\0it"  # a slot bound to a pronoun, resolved after the match


class ParaphraseError(ValueError):
    """A paraphrase that cannot be used; the message names the file, action and pattern."""


@dataclass(frozen=True)
class Pattern:
    action: str
    text: str
    tokens: tuple[str | int, ...]  # literal words and parameter indices

    @property
    def weight(self) -> tuple[int, int]:
        """Longer first: the pattern's words (articles aside), then its tokens."""
        return (sum(isinstance(t, str) and t not in ARTICLES for t in self.tokens),
                len(self.tokens))


@dataclass(frozen=True)
class LineRead:
    status: str  # "step", "prose" or "unreadable"
    steps: tuple[Step, ...] = ()
    reason: str | None = None


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("’", "'"))


def within_one(a: str, b: str) -> bool:
    """Damerau-Levenshtein (optimal string alignment) distance of at most 1."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long_[i]), len(short))
    return short[i:] == long_[i + 1:]


def compile_patterns(paraphrases: Mapping[str, Sequence[str]], domain: Domain,
                     where: str = "paraphrases") -> tuple[Pattern, ...]:
    """The declared patterns checked against `domain` (every parameter once, no other
    placeholder), plus each action's own name; longest first."""
    out: list[Pattern] = []
    for action, texts in paraphrases.items():
        if action not in domain.actions:
            raise ParaphraseError(f"{where}: '{action}' is not an action of domain "
                                  f"{domain.name}")
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise ParaphraseError(f"{where}: {action}: a list of patterns, not {texts!r}")
        arity = len(domain.actions[action].params)
        for text in texts:
            out.append(_pattern(action, str(text), arity, f"{where}: {action}: {text!r}"))
    for action, schema in domain.actions.items():
        slots = tuple(range(len(schema.params)))
        words = tuple(tokens(action.replace("-", " ").replace("_", " ")))
        out.append(Pattern(action, action, (*words, *slots)))
        if tuple(tokens(action)) != words:
            out.append(Pattern(action, action, (*tokens(action), *slots)))
    return tuple(sorted(out, key=lambda p: p.weight, reverse=True))


def _pattern(action: str, text: str, arity: int, where: str) -> Pattern:
    toks: list[str | int] = []
    for piece in text.lower().split():
        m = _SLOT.fullmatch(piece)
        if m:
            toks.append(int(m.group(1)))
        elif "{" in piece or "}" in piece:
            raise ParaphraseError(f"{where}: '{piece}' is neither a word nor a placeholder "
                                  "{0}, {1}, ...")
        else:
            toks.extend(tokens(piece))
    slots = sorted(t for t in toks if isinstance(t, int))
    if slots != list(range(arity)):
        raise ParaphraseError(f"{where}: the action has {arity} parameter(s): the pattern "
                              f"must name each of {{0}}..{{{arity - 1}}} once")
    if not any(isinstance(t, str) and t not in ARTICLES for t in toks):
        raise ParaphraseError(f"{where}: a pattern needs a word besides its placeholders")
    return Pattern(action, text, tuple(toks))


def declared(nl_yaml: Path) -> dict[str, list[str]]:
    """The `paraphrases:` of one nl.yaml ({} when it declares none)."""
    data = yaml.safe_load(nl_yaml.read_text()) or {}
    found = data.get("paraphrases") or {}
    if not isinstance(found, dict):
        raise ParaphraseError(f"{nl_yaml}: paraphrases: a mapping action -> list of patterns")
    return {str(k): list(v or []) for k, v in found.items()}


def _signature(domain: Domain) -> frozenset[tuple[str, int]]:
    return frozenset((name, len(a.params)) for name, a in domain.actions.items())


@lru_cache(maxsize=1)
def _builtin() -> tuple[tuple[frozenset[tuple[str, int]], str, tuple], ...]:
    from planaudit.formal.load import domain_at

    out = []
    for folder in sorted(p for p in DOMAINS.iterdir() if (p / "nl.yaml").is_file()):
        found = declared(folder / "nl.yaml")
        if found:
            domain = domain_at(folder / "domain.pddl")
            out.append((_signature(domain), str(folder / "nl.yaml"),
                        tuple((k, tuple(v)) for k, v in found.items())))
    return tuple(out)


def for_domain(domain: Domain) -> dict[str, list[str]]:
    """The paraphrases of the built-in domain whose actions (names and arities) are
    `domain`'s; {} when none is."""
    sig = _signature(domain)
    for other, _source, found in _builtin():
        if other == sig:
            return {k: list(v) for k, v in found}
    return {}


def clean(raw: str) -> str:
    """A line without markdown, numbering, case and trailing punctuation."""
    line = raw.replace("*", "").replace("`", "").replace("’", "'").strip().lower()
    line = _NUMBERING.sub("", line).lstrip("#").strip()
    return line.rstrip(".!?,;: ").strip()


class LineReader:
    """Reads lines of one task's phase-1 texts (see the module docstring)."""

    def __init__(self, task: Task, objects: Mapping[str, str],
                 patterns: Sequence[Pattern], strict: Callable[[str], list[Step]]):
        """`objects`: each object's words (as written: "red block", "c") -> its name;
        `strict`: the strict reading of one line (may raise `Unreadable`)."""
        self.task = task
        self.patterns = tuple(sorted(patterns, key=lambda p: p.weight, reverse=True))
        self.strict = strict
        self.nouns: dict[str, set[str]] = {}
        phrases: dict[tuple[str, ...], set[str]] = {}
        for words, obj in objects.items():
            toks = tuple(tokens(words))
            if not toks:
                continue
            phrases.setdefault(toks, set()).add(obj)
            nouns = self.nouns.setdefault(obj, {"one"})
            nouns.update(self._type_nouns(obj))
            if len(toks) > 1:  # "red block": "red" alone, with "block" as its noun
                phrases.setdefault(toks[:-1], set()).add(obj)
                nouns.add(toks[-1])
        self.phrases = sorted(((p, next(iter(o))) for p, o in phrases.items() if len(o) == 1),
                              key=lambda x: -len(x[0]))
        self.object_words = {w for p, _ in self.phrases for w in p}
        self.all_nouns = set().union(*self.nouns.values()) if self.nouns else set()
        self.literals = {t for p in self.patterns for t in p.tokens if isinstance(t, str)}
        self.known = self.literals | self.object_words | ARTICLES | self.all_nouns
        self.verbs = {p.tokens[0] for p in self.patterns
                      if isinstance(p.tokens[0], str) and p.tokens[0] not in PREPOSITIONS
                      and p.tokens[0] not in ARTICLES}

    def _type_nouns(self, obj: str) -> set[str]:
        domain, out = self.task.domain, set()
        for t in self.task.objects.get(obj, ()):
            seen = set()
            while t != "object" and t not in seen:
                seen.add(t)
                out.update(tokens(t.replace("-", " ")))
                t = domain.types.get(t, "object")
        return out

    # -- one line -------------------------------------------------------------------

    def read(self, raw: str, earlier: Sequence[Step] = ()) -> LineRead | None:
        """The line's reading; None for a blank line. `earlier`: the steps read since the
        last unreadable line (what "it" may name)."""
        line = clean(raw)
        if not line:
            return None
        clauses = [c for c in STRONG.split(line) if c.strip()]
        if len(clauses) < 2:
            got = self._clause(line, earlier)
            if got.status == "prose" and self._shorthand(tokens(self._strip_fillers(line))):
                return LineRead("unreadable", (), "names a move without its action")
            return got
        # split first: the strict reading takes "unstack c from a and put it down" for
        # one step (it names one action and two objects)
        steps: list[Step] = []
        for c in clauses:
            got = self._clause(c, [*earlier, *steps])
            if got.status == "prose" and steps and self._bare(tokens(c)):
                got = LineRead("unreadable", (), "names objects but no action")
            if got.status == "unreadable":
                return LineRead("unreadable", (), f"(at '{c.strip()}') {got.reason}")
            steps += got.steps
        return LineRead("step", tuple(steps)) if steps else LineRead("prose")

    def _clause(self, text: str, earlier: Sequence[Step]) -> LineRead:
        text = self._strip_fillers(clean(text))
        if not text:
            return LineRead("prose")
        got = self._step(text, earlier)
        if got is not None:
            return got
        cuts = [m.start() for m in WEAK.finditer(text)]
        for at in reversed(cuts):
            rest = WEAK.sub("", text[at:], count=1)
            if self._action_like(self._strip_fillers(rest)):
                continue
            got = self._step(text[:at], earlier)
            if got is not None and got.status == "step":
                return got
        if self._action_like(text):
            return LineRead("unreadable", (), "is not one action with its object(s)")
        return LineRead("prose")

    def _bare(self, words: list[str]) -> bool:
        """Objects and nothing else: "pick up b and c" says b's action, not c's."""
        return any(w in self.object_words for w in words) and all(
            w in self.object_words or w in ARTICLES or w in self.all_nouns
            or w in ("and", "too", "also", "then") for w in words)

    def _shorthand(self, words: list[str]) -> bool:
        """A line that is a move without its verb: "c on b", "the red block to the table"
        (one object, a preposition, an object or the table; nothing else)."""
        rest = [w for w in words if w not in ARTICLES and w not in self.all_nouns]
        return (len(rest) == 3 and rest[0] in self.object_words
                and rest[1] in ("on", "onto", "to", "off", "from", "into")
                and (rest[2] in self.object_words or rest[2] == "table"))

    def _strip_fillers(self, text: str) -> str:
        while True:
            m = re.match(r"([a-z']+)[,:;.!]*(?:\s+|$)", text)
            if m is None or m.group(1) not in FILLERS or m.group(1) in self.object_words \
                    or m.group(1) in self.verbs:
                return text.strip()
            text = text[m.end():]

    def _action_like(self, text: str) -> bool:
        """Starts with a pattern's verb (or one letter off it), or with a generic move
        ("move", "get") and names an object: a step this reader cannot read."""
        words = tokens(text)
        if not words:
            return False
        w = words[0]
        if w in self.verbs or (w not in self.known and len(w) >= 3 and any(
                len(v) >= 4 and within_one(w, v) for v in self.verbs)):
            return True
        return w in GENERIC_MOVES and any(x in self.object_words or x == "it" for x in words)

    def _step(self, text: str, earlier: Sequence[Step]) -> LineRead | None:
        """A step, an unreadable verdict (ambiguous, or "it" with nothing before), or None."""
        try:
            got = self.strict(text)
        except Unreadable:
            got = []
        if len(got) == 1:
            return LineRead("step", (got[0],))
        found: dict[Step, tuple[int, int]] = {}
        why = None
        words = tokens(text)
        for pattern in self.patterns:
            if found and pattern.weight < max(found.values()):
                break  # longest first: a shorter pattern never overrides a longer one
            for binds in self._bind(pattern, words):
                step = self._resolve(pattern.action, binds, earlier)
                if step is None:
                    why = "says 'it' with no step read before it"
                    continue
                found.setdefault(step, pattern.weight)
        if not found:
            return LineRead("unreadable", (), why) if why else None
        if len(found) > 1:
            shown = " or ".join(f"({a} {' '.join(args)})" for a, args in found)
            return LineRead("unreadable", (), f"is ambiguous: {shown}")
        return LineRead("step", (next(iter(found)),))

    def _resolve(self, action: str, binds: dict[int, str], earlier: Sequence[Step]) -> Step | None:
        if PRONOUN in binds.values():
            types = self.task.domain.actions[action].params[0][1]
            others = {o for o in binds.values() if o != PRONOUN}
            hit = next((a for _, args in reversed(earlier) for a in args
                        if a not in others and self._fits(a, types)), None)
            if hit is None:
                return None
            binds = {**binds, 0: hit}
        return action, tuple(binds[i] for i in range(len(binds)))

    def _fits(self, obj: str, types: tuple[str, ...]) -> bool:
        return self.task.domain.fits(self.task.objects.get(obj, ("object",)), types)

    def _same(self, word: str, literal: str) -> bool:
        return word == literal or (len(literal) >= 4 and len(word) >= 3 and word not in self.known
                                   and within_one(word, literal))

    def _bind(self, pattern: Pattern, words: list[str]) -> list[dict[int, str]]:
        """Every way the pattern spans all of `words`: parameter -> object (or PRONOUN)."""
        params = self.task.domain.actions[pattern.action].params
        pat, n, out = pattern.tokens, len(words), []

        def go(pi: int, li: int, binds: dict[int, str]) -> None:
            if pi == len(pat):
                if li == n:
                    out.append(dict(binds))
                return
            t = pat[pi]
            if isinstance(t, int):
                for end, obj in self._objects_at(words, li, pronoun=t == 0):
                    if obj != PRONOUN and (obj in binds.values() or not self._fits(obj, params[t][1])):
                        continue
                    binds[t] = obj
                    go(pi + 1, end, binds)
                    del binds[t]
                return
            if t in ARTICLES:
                go(pi + 1, li, binds)
                if li < n and words[li] in ARTICLES:
                    go(pi + 1, li + 1, binds)
                return
            if li < n and words[li] in ARTICLES:
                go(pi, li + 1, binds)  # an article the pattern does not write
            if li < n and self._same(words[li], t):
                go(pi + 1, li + 1, binds)

        go(0, 0, {})
        return out

    def _objects_at(self, words: list[str], at: int, pronoun: bool) -> list[tuple[int, str]]:
        """(end, object) for each object mention starting at `at`: an optional article, an
        optional noun before ("block c") or after ("the red block", "the red one")."""
        out = []
        starts = [(at, None)]
        if at < len(words) and words[at] in ARTICLES:
            starts.append((at + 1, None))
        for s, _ in list(starts):
            if s < len(words) and words[s] in self.all_nouns:
                starts.append((s + 1, words[s]))
        for s, noun in starts:
            for phrase, obj in self.phrases:
                if tuple(words[s:s + len(phrase)]) != phrase:
                    continue
                if noun is not None and noun not in self.nouns.get(obj, ()):
                    continue
                end = s + len(phrase)
                out.append((end, obj))
                if noun is None and end < len(words) and words[end] in self.nouns.get(obj, ()):
                    out.append((end + 1, obj))
            if pronoun and noun is None:
                for p in PRONOUNS:
                    if tuple(words[s:s + len(p)]) == p:
                        end = s + len(p)
                        out.append((end, PRONOUN))
                        if end < len(words) and words[end] in self.all_nouns:
                            out.append((end + 1, PRONOUN))
        return out
