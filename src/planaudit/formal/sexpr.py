"""S-expression reading for PDDL and plan files.

PDDL is case-insensitive and `;` starts a comment, so text is lower-cased and
comments are stripped before tokenising. Positions are not tracked on the fast
path; when something is wrong, `locate` recomputes the line of a token so that
errors can still name it.
"""

from __future__ import annotations

import re
from pathlib import Path

_COMMENT = re.compile(r";[^\n]*")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")

SExpr = str | list  # a token, or a list of SExpr


class PDDLError(ValueError):
    """Bad input: names the file and, where known, the line."""

    def __init__(self, message: str, source: str = "<string>", line: int | None = None):
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


def clean(text: str) -> str:
    """Lower-case and strip comments, keeping line breaks (so lines still count)."""
    return _COMMENT.sub("", text).lower()


def line_of_token(text: str, index: int) -> int | None:
    """The 1-based line of the `index`-th token of the cleaned `text`."""
    cleaned = clean(text)
    for i, m in enumerate(_TOKEN.finditer(cleaned)):
        if i == index:
            return cleaned.count("\n", 0, m.start()) + 1
    return None


def line_of_word(text: str, word: str) -> int | None:
    """The first line where `word` stands as a token of the cleaned text."""
    cleaned = clean(text)
    m = re.search(r"(?<![^\s()])" + re.escape(word.lower()) + r"(?![^\s()])", cleaned)
    return cleaned.count("\n", 0, m.start()) + 1 if m else None


def parse(text: str, source: str = "<string>") -> list[SExpr]:
    """All top-level expressions of `text`, as nested lists of lower-case tokens."""
    tokens = _TOKEN.findall(clean(text))
    stack: list[list] = [[]]
    opened: list[int] = []
    for i, tok in enumerate(tokens):
        if tok == "(":
            stack.append([])
            opened.append(i)
        elif tok == ")":
            if len(stack) == 1:
                raise PDDLError("unbalanced ')'", source, line_of_token(text, i))
            done = stack.pop()
            opened.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise PDDLError("unclosed '(' (missing ')')", source, line_of_token(text, opened[-1]))
    return stack[0]


def read_file(path: str | Path) -> str:
    """The text of a file, or a PDDLError that names it."""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise PDDLError("no such file", str(path)) from None
    except IsADirectoryError:
        raise PDDLError("is a directory, not a file", str(path)) from None
    except OSError as e:
        raise PDDLError(f"cannot read: {e.strerror}", str(path)) from None
