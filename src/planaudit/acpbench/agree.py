"""Whether our answer agrees with the one an ACPBench file records, as ACPBench reads it.

Names compare without case and with spaces normalised; lists whose order carries no
meaning compare as sets (`just`: as multisets, a pair can occur twice in a plan).

- app: the same set of applicable actions. val: the same index.
- prog: the same sets of positive and of negative effects.
- reach, areach: the file lists some atoms (actions) that never hold (become applicable);
  every one of them must be among those we prove so. An empty list says there are
  none: then we must prove none (and leave none undecided).
- just: the same multiset of removal options (a single action with its index, or a
  pair of consecutive actions with "-1").
- land: every atom the file calls a landmark (yes) or not (no) classified alike.
- nexta: every action the file calls `yes` (it lowers the optimal cost to go) or `no`
  (it does not) classified alike, and the same optimal cost to go (opt); the file's
  `maybe` marks actions it left to a planner (ACPBench's scorer runs one on them), so
  they are not compared.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from planaudit.acpbench.gold import Gold


@dataclass
class Agreement:
    agree: bool
    reason: str = ""


def norm(s: str) -> str:
    s = " ".join(str(s).lower().replace("(", " ").replace(")", " ").split())
    return f"({s})"


def _names(xs) -> set[str]:
    return {norm(x) for x in xs}


def _show(xs) -> str:
    return ", ".join(sorted(xs)) or "nothing"


def _sets(ours, theirs, what: str) -> Agreement:
    a, b = _names(ours), _names(theirs)
    if a == b:
        return Agreement(True)
    return Agreement(False, f"{what}: ours only {_show(a - b)}; theirs only {_show(b - a)}")


def _limit(g: Gold) -> str:
    return "limit hit (" + "; ".join(g.limits) + ")"


def app(g: Gold, theirs) -> Agreement:
    return _sets(g.answer, theirs, "applicable actions")


def val(g: Gold, theirs) -> Agreement:
    if g.answer == int(theirs):
        return Agreement(True)
    return Agreement(False, f"first inapplicable: ours {g.answer} ({'; '.join(g.notes)}), "
                            f"theirs {theirs}")


def prog(g: Gold, theirs) -> Agreement:
    if g.answer is None:
        return Agreement(False, "; ".join(g.notes))
    pos, neg = _sets(g.answer["pos"], theirs["pos"], "pos"), \
        _sets(g.answer["neg"], theirs["neg"], "neg")
    if pos.agree and neg.agree:
        return Agreement(True)
    return Agreement(False, "; ".join(r.reason for r in (pos, neg) if r.reason))


def _some_never(g: Gold, theirs, what: str) -> Agreement:
    ours, open_, listed = _names(g.answer), _names(g.undecided), _names(theirs)
    if not listed:
        if ours:
            return Agreement(False, f"theirs: no such {what}; ours proves {len(ours)}: "
                                    f"{_show(list(ours)[:5])}")
        if open_:
            return Agreement(False, f"{_limit(g)}: {len(open_)} {what}s undecided")
        return Agreement(True)
    missing = listed - ours
    if not missing:
        return Agreement(True)
    if missing <= open_:
        return Agreement(False, f"{_limit(g)}: undecided {_show(missing)}")
    return Agreement(False, f"theirs {_show(missing - open_)}: not proven never (reachable)")


def reach(g: Gold, theirs) -> Agreement:
    return _some_never(g, theirs, "atom")


def areach(g: Gold, theirs) -> Agreement:
    return _some_never(g, theirs, "action")


def just(g: Gold, theirs) -> Agreement:
    a = Counter(tuple(norm(x) if x.startswith("(") else x for x in o) for o in g.answer)
    b = Counter(tuple(norm(x) if x.startswith("(") else x for x in o) for o in theirs)
    if a == b:
        return Agreement(True)
    return Agreement(False, f"removal options: ours only {sorted((a - b).elements())}; "
                            f"theirs only {sorted((b - a).elements())}")


def _classes(g: Gold, theirs, keys) -> Agreement:
    ours = {norm(x): k for k in keys for x in g.answer[k]}
    open_ = _names(g.undecided)
    wrong, undecided = [], []
    for k in keys:
        for x in theirs.get(k, []):
            x = norm(x)
            if x in open_:
                undecided.append(x)
            elif ours.get(x) != k:
                wrong.append(f"{x}: ours {ours.get(x, 'not a candidate')}, theirs {k}")
    if wrong:
        return Agreement(False, "; ".join(wrong))
    if undecided:
        return Agreement(False, f"{_limit(g)}: undecided {_show(undecided)}")
    return Agreement(True)


def land(g: Gold, theirs) -> Agreement:
    if g.limits and not g.answer["yes"] and not g.answer["no"]:
        return Agreement(False, _limit(g))
    return _classes(g, theirs, ("yes", "no"))


def nexta(g: Gold, theirs) -> Agreement:
    if g.answer["opt"] is None and g.limits:
        return Agreement(False, _limit(g))
    # the file's `maybe` is what it left to a planner: nothing to compare
    r = _classes(g, theirs, ("yes", "no"))
    if str(g.answer["opt"]) != str(theirs.get("opt")):
        extra = f"opt: ours {g.answer['opt']}, theirs {theirs.get('opt')}"
        return Agreement(False, f"{r.reason}; {extra}" if r.reason else extra)
    return r


COMPARE = {"app": app, "val": val, "prog": prog, "reach": reach, "areach": areach,
           "just": just, "land": land, "nexta": nexta}


def compare(task: str, g: Gold, theirs) -> Agreement:
    return COMPARE[task](g, theirs)
