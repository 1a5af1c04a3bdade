"""The output contract: a single fenced block of grounded actions, or `UNSOLVABLE`.

Models write actions in many ways; the extractor accepts the ones seen in
practice — `(stack a b)`, `stack a b`, `stack(a, b)`, `1. stack a b`,
`Step 2: (stack a b)`, bullets, any case — and records, when a reply breaks the
contract, why. When several fenced blocks appear, the last one counts (models
often show a draft first). Whether the actions make sense is not decided here:
the validator in `formal/` judges the extracted plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.S)
_ENUM = re.compile(r"^\s*(?:[-*•]+|\d+\s*[.):]|step\s*\d+\s*[.):-]?)\s*", re.I)
_NAME = r"[a-z_][\w-]*"
_PAREN = re.compile(r"^\(\s*(" + _NAME + r")((?:[\s,]+[\w-]+)*)\s*\)$")
_CALL = re.compile(r"^(" + _NAME + r")\s*\(\s*([\w\s,-]*)\)$")
_BARE = re.compile(r"^(" + _NAME + r")((?:\s+[\w-]+)*)$")
_WORD_UNSOLVABLE = re.compile(r"^[\s*_`.!]*unsolvable[\s*_`.!]*$", re.I)

Step = tuple[str, tuple[str, ...]]


@dataclass
class Extraction:
    kind: str  # "plan", "unsolvable" or "malformed"
    steps: list[Step] = field(default_factory=list)
    reason: str | None = None  # why the reply breaks the contract

    @property
    def plan_text(self) -> str:
        return "\n".join("(" + " ".join((a, *args)) + ")" for a, args in self.steps)


def parse_action(line: str, actions: frozenset[str] | None = None) -> Step | None:
    """One action in any of the accepted forms, lower-cased; None if unreadable.

    A bare line (`stack a b`) is indistinguishable from prose, so when the
    domain's action names are given it must start with one of them."""
    text = _ENUM.sub("", line.strip().lower(), count=1).strip().rstrip(".;,")
    for pattern in (_PAREN, _CALL, _BARE):
        m = pattern.match(text)
        if m:
            if pattern is _BARE and actions is not None and m.group(1) not in actions:
                return None
            args = tuple(a for a in re.split(r"[\s,]+", m.group(2)) if a)
            return (m.group(1), args)
    return None


def _strip_comment(line: str) -> str:
    return re.split(r"\s;|^;|\s#|^#|//", line, maxsplit=1)[0]


def extract(reply: str | None, actions: frozenset[str] | None = None) -> Extraction:
    """The reply read under the contract; `actions` (the domain's action names) lets
    bare lines be told from prose."""
    if reply is None or not reply.strip():
        return Extraction("malformed", reason="empty reply")
    blocks = _FENCE.findall(reply)
    if not blocks:
        last = [ln for ln in reply.strip().splitlines() if ln.strip()][-1]
        if _WORD_UNSOLVABLE.match(reply.strip()) or _WORD_UNSOLVABLE.match(last):
            return Extraction("unsolvable")
        if reply.count("```") == 1:
            return Extraction("malformed", reason="a fenced block is opened but never closed")
        return Extraction("malformed", reason="no fenced block and no UNSOLVABLE")
    block = blocks[-1]
    if _WORD_UNSOLVABLE.match(block.strip() or "-"):
        return Extraction("unsolvable")
    steps: list[Step] = []
    for n, raw in enumerate(block.splitlines(), 1):
        line = _strip_comment(raw).strip()
        if not line:
            continue
        step = parse_action(line, actions)
        if step is None:
            return Extraction("malformed", steps,
                              reason=f"line {n} of the last fenced block is not an action: "
                                     f"{raw.strip()[:120]!r}")
        steps.append(step)
    return Extraction("plan", steps)


# A formalizer's reply: PDDL files in fenced blocks, each told by its head
_DEFINE = re.compile(r"\(\s*define\s*\(\s*(domain|problem)\b", re.I)


@dataclass
class Files:
    """The PDDL files a formalizer's reply holds (`kind` "files"), or why it breaks the
    contract (`kind` "malformed")."""

    kind: str
    texts: dict[str, str] = field(default_factory=dict)  # "domain", "problem" -> text
    reason: str | None = None


def extract_pddl(reply: str | None, need: tuple[str, ...] = ("problem",)) -> Files:
    """The files `need` names ("problem", or "domain" and "problem") read from a reply under
    the formalizer's contract: each file in a fenced block, told by its `(define (domain`
    or `(define (problem` head; a block holding both is cut at the second head. As for
    plans, the last file of each kind counts (models often show a draft first). Whether
    the text is PDDL that parses is not decided here: the judge says that, with its line."""
    if reply is None or not reply.strip():
        return Files("malformed", reason="empty reply")
    blocks = _FENCE.findall(reply)
    if not blocks:
        if reply.count("```") == 1:
            return Files("malformed", reason="a fenced block is opened but never closed")
        return Files("malformed", reason="no fenced block")
    found: dict[str, str] = {}
    for block in blocks:
        heads = list(_DEFINE.finditer(block))
        for i, m in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(block)
            found[m.group(1).lower()] = block[m.start():end].strip() + "\n"
    missing = [k for k in need if k not in found]
    if missing:
        return Files("malformed", {k: found[k] for k in need if k in found},
                     reason=f"no fenced block holds a {' or a '.join(f'(define ({k} ...' for k in missing)}")
    return Files("files", {k: found[k] for k in need})
