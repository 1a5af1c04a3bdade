"""Plan files as VAL reads them.

VAL's plan grammar: a sequence of steps `(action object ...)`, each optionally
preceded by a timestamp `NUMBER:` and followed by a duration `[NUMBER]`, and
`time NUMBER` at the start of a line (the planner's run time). `;` starts a
comment; names are case-insensitive; characters VAL's reader skips (commas,
quotes, `#`, `!` and the like, and anything outside ASCII) are skipped.
Anything else — a word outside a step (`Step 1:`, `[PDDL PLAN]`), a step left
unclosed, a step inside a step, an empty step, a number or operator inside a
step — makes the file unreadable: VAL says "Bad plan description" and so does
this reader, naming the line. Timestamps, where given, must increase: the plan
is sequential. Tolerant reading of free-form model replies is the offline
extractor's job, not this module's.
"""

from __future__ import annotations

import re

from planaudit.formal.sexpr import PDDLError

_COMMENT = re.compile(r";[^\n]*")
# every token VAL does not skip; a character no token matches is skipped by the scan
_TOKEN = re.compile(r"[()\[\]:]|-?\d+(?:\.\d*)?|[a-z_][a-z0-9_-]*|[-+*/<>=?.]", re.ASCII)
_NAME = re.compile(r"[a-z_][a-z0-9_-]*", re.ASCII)
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?")

Step = tuple[str, tuple[str, ...]]


def _tokens(text: str) -> list[tuple[str, int, bool]]:
    """(token, line, whether it begins its line) for every token VAL does not skip."""
    out = []
    for line, chars in enumerate(_COMMENT.sub("", text).lower().split("\n"), 1):
        toks = _TOKEN.findall(chars)
        if toks:
            # only the first token can begin the line; a character that could begin a
            # token is one, so the first token begins the line iff the line starts with it
            first = chars.startswith(toks[0])
            out.append((toks[0], line, first))
            out.extend((tok, line, False) for tok in toks[1:])
    return out


def parse_plan(text: str, source: str = "<plan>") -> list[Step]:
    """The steps of a plan file, each as (action, arguments), lower-cased; a
    PDDLError naming the line when the file is not a plan VAL would read."""
    toks = _tokens(text)
    steps: list[Step] = []
    last_time: float | None = None
    i, n = 0, len(toks)

    def fail(message: str, at: int) -> PDDLError:
        line = toks[min(at, n - 1)][1] if toks else None
        return PDDLError(f"not a plan VAL reads: {message}", source, line)

    while i < n:
        tok, _, first = toks[i]
        if tok == "time" and first and i + 1 < n and _NUMBER.fullmatch(toks[i + 1][0]):
            i += 2
            continue
        if _NUMBER.fullmatch(tok):
            if i + 1 >= n or toks[i + 1][0] != ":":
                raise fail(f"a number '{tok}' not followed by ':' (a timestamp)", i)
            stamp = float(tok)
            if last_time is not None and stamp <= last_time:
                raise fail(f"timestamp {tok} does not come after {last_time:g}: "
                           "only sequential plans are read", i)
            last_time = stamp
            i += 2
            if i >= n or toks[i][0] != "(":
                raise fail(f"timestamp {tok}: is not followed by a step", i - 1)
            tok = "("
        if tok != "(":
            raise fail(f"'{tok}' outside a step", i)
        start = i
        words = []
        i += 1
        while i < n and toks[i][0] != ")":
            word = toks[i][0]
            if word == "(":
                raise fail(f"a step inside a step (or an unclosed step from line {toks[start][1]})", i)
            if not _NAME.fullmatch(word):
                raise fail(f"'{word}' in a step, where a name is expected", i)
            words.append(word)
            i += 1
        if i >= n:
            raise fail(f"the step on line {toks[start][1]} is never closed", start)
        if not words:
            raise fail("an empty step '()'", start)
        steps.append((words[0], tuple(words[1:])))
        i += 1
        if i < n and toks[i][0] == "[":  # a duration: read and ignored
            if i + 2 >= n or not _NUMBER.fullmatch(toks[i + 1][0]) or toks[i + 2][0] != "]":
                raise fail("'[' that does not open a duration '[NUMBER]'", i)
            i += 3
    return steps


def format_step(step: Step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"
