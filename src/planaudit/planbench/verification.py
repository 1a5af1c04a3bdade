"""t3, plan verification: is the query's plan valid, and if not, why.

Truth: the query's plan validated by `formal.validate` from the query's initial
state to its goal; the explanation is formal/'s first failure: the first step
whose precondition is false with every false precondition, or every goal fact
that does not hold at the end.

Three scores, as PlanBench records them: `binary` (valid or not), `w_type` (and
the kind of failure: an unmet precondition or an unmet goal, and only that kind),
`w_expl` (and the explanation: the same action and the same unmet facts).

Dialects for reading the answer:

- `2023` (the recorded verdicts): "invalid" anywhere means invalid. The line
  after the last line naming an "unmet precondition" is the action (read by the
  2023 plan reader; nothing if it reads none); the line after the first "The
  unmet precondition(s) is/are:" below it the facts; the line after the last
  line naming an "unmet goal" the goal facts. Facts are read as
  t7's `2023` state reading does (with the config's `predicate_mapping`, or its
  predicate templates where it has none), split on " and " too, a two-place
  fact naming its phrase exactly once, a fact without its objects kept. The explanation
  counts as right when the action is the failing one and at least one stated
  fact is among the true unmet ones (not all of them).
- `strict`: the answer's first line must say "valid" or "invalid"; facts are
  the config's exact phrases (every line of a list), and the precondition's
  action must be the failing step's exact phrase.
"""

from __future__ import annotations

import re

from planaudit.planbench.dialects import Unreadable, read_2023
from planaudit.planbench.execution import fact_phrases, object_names, piece_objects
from planaudit.planbench.material import Atom, Config, MaterialError

_PRE_HEAD = re.compile(r"unmet precondition", re.I)
_PRE_LIST = re.compile(r"the unmet preconditions? (?:is|are)\s*:?", re.I)
_GOAL_HEAD = re.compile(r"unmet goal", re.I)


def read_facts_2023(cfg: Config, text: str) -> list[Atom]:
    names = object_names(cfg)
    facts: list[Atom] = []
    for piece in re.split(r",| and ", text.lower()):
        if " not " in piece:
            continue
        for phrase in fact_phrases(cfg):
            if phrase.text not in piece:
                continue
            parts = piece.split(phrase.text)
            if phrase.arity == 2 and len(parts) != 2:
                break
            objs = piece_objects(names, phrase, parts[0], "".join(parts[1:]), piece)
            facts.append((phrase.pred, tuple(o for o in objs if o is not None)))
            break
    return facts


def read_answer_2023(cfg: Config, text: str) -> dict:
    """The answer as {valid, unmet_precondition: {action, facts}, unmet_goal: [...]}."""
    lines = text.split("\n")
    out: dict = {"valid": "invalid" not in text.lower()}
    heads = [n for n, ln in enumerate(lines) if _PRE_HEAD.search(ln) and not _PRE_LIST.search(ln)]
    lists = [n for n, ln in enumerate(lines) if _PRE_LIST.search(ln)]
    if heads or lists:
        h = heads[-1] if heads else -1
        steps = read_2023(cfg, lines[h + 1]) if heads and h + 1 < len(lines) else []
        after = [n for n in lists if n > h]
        facts = read_facts_2023(cfg, lines[after[0] + 1]) if after and after[0] + 1 < len(lines) else []
        out["unmet_precondition"] = {"action": steps[0] if steps else None, "facts": facts}
    for n, line in enumerate(lines):
        if _GOAL_HEAD.search(line):
            out["unmet_goal"] = read_facts_2023(cfg, lines[n + 1]) if n + 1 < len(lines) else []
    return out


def truth_of(world, st) -> dict:
    """formal/'s verdict on the query's plan, as the answer the scorer expects."""
    verdict = world.validate_steps(st.init, st.goal, st.plan)
    if verdict.valid:
        return {"valid": True}
    f = verdict.failure
    if f.kind == "goal":
        return {"valid": False, "unmet_goal": [_atom(s) for s in f.unsatisfied]}
    if f.kind != "precondition":
        raise MaterialError(f"query: the plan fails by {f.kind} at step {f.step}")
    return {"valid": False, "unmet_precondition": {"action": st.plan[f.step - 1], "step": f.step,
                                                   "facts": [_atom(s) for s in f.unsatisfied]}}


def _atom(text: str) -> Atom:
    words = text.strip("()").split()
    return (words[0], tuple(words[1:]))


def compare(truth: dict, said: dict) -> dict:
    binary = truth["valid"] == said["valid"]
    kinds = {k for k in ("unmet_precondition", "unmet_goal") if k in truth}
    said_kinds = {k for k in ("unmet_precondition", "unmet_goal") if k in said}
    w_type = binary and kinds == said_kinds
    w_expl = w_type
    if w_type and "unmet_goal" in truth:
        w_expl = bool(set(said["unmet_goal"]) & set(truth["unmet_goal"]))
    if w_type and "unmet_precondition" in truth:
        t, s = truth["unmet_precondition"], said["unmet_precondition"]
        w_expl = t["action"] == s["action"] and bool(set(s["facts"]) & set(t["facts"]))
    return {"binary": binary, "w_type": w_type, "w_expl": w_expl}


def read_answer_strict(cfg: Config, text: str) -> dict:
    from planaudit.planbench.dialects import read_strict
    from planaudit.planbench.execution import read_state_strict

    lines = [ln.strip() for ln in text.strip().split("\n") if ln.strip()]
    if not lines:
        raise MaterialError("empty answer")
    head = lines[0].lower()
    if "invalid" in head:
        out: dict = {"valid": False}
    elif "valid" in head:
        return {"valid": True}
    else:
        raise MaterialError(f"the first line '{lines[0]}' says neither valid nor invalid")
    for n, line in enumerate(lines):
        low = line.lower()
        if "unmet precondition" in low and not _PRE_LIST.search(line) and n + 1 < len(lines):
            steps = read_strict(cfg, lines[n + 1])
            facts: list[Atom] = []
            for k in range(n + 2, len(lines)):
                if _PRE_LIST.search(lines[k]):
                    facts = [a for ln in lines[k + 1:] if "unmet" not in ln.lower()
                             for a in read_state_strict(cfg, ln)]
                    break
            out["unmet_precondition"] = {"action": steps[0] if steps else None, "facts": facts}
            break
        if "unmet goal" in low:
            out["unmet_goal"] = [a for ln in lines[n + 1:] for a in read_state_strict(cfg, ln)]
            break
    return out


def score_t3(ctx, inst: dict, text: str, dialect: str):
    from planaudit.planbench.cases import Outcome

    st = ctx.statement(inst["query"])
    truth = truth_of(ctx.world, st)
    iid = inst["instance_id"]
    if dialect == "strict":
        try:
            said = read_answer_strict(ctx.cfg, text)
        except (MaterialError, Unreadable) as e:
            zero = dict.fromkeys(("binary", "w_type", "w_expl"), False)
            return Outcome(iid, False, "unreadable", str(e), zero)
    else:
        said = read_answer_2023(ctx.cfg, text)
    scores = compare(truth, said)
    why = "plan is valid" if truth["valid"] else (
        "unmet goal" if "unmet_goal" in truth else
        f"unmet precondition at step {truth['unmet_precondition']['step']}")
    ok = scores["binary"]
    return Outcome(iid, ok, "right" if ok else "wrong",
                   f"truth: {why}; answer says {'valid' if said['valid'] else 'invalid'}", scores)
