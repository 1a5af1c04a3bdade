"""ACPBench's own files as a question source: its `gen` items, gold answers by proof.

An entry `{root: DIR, split: dev}` asks the items of `DIR/<type>/<split>.gen.json` in
the generative form, with ACPBench's own context and question and planaudit's answer
contract appended; the truth is `gold.py`'s answer from the item's PDDL, never the
file's `answer`. An item whose proof stopped at a search limit is not asked (it has no
proven truth). The files' bool and mcq forms carry no PDDL, so no answer of theirs can
be proven: they are not asked, and the shard says so.
"""

from __future__ import annotations

from pathlib import Path

from planaudit.acpbench.bound import DEFAULT, Bound, PastBound
from planaudit.acpbench.generate import answer_format
from planaudit.acpbench.gold import gold_each, plan_steps, valid_plan
from planaudit.acpbench.items import read_items
from planaudit.acpbench.questions import GEN_KIND, Question, QuestionError
from planaudit.acpbench.read import normal_fact
from planaudit.formal.plan import format_step
from planaudit.formal.space import Unsupported


def entry_key(entry) -> str:
    """The name an entry's rows go under (a suite domain's own name)."""
    if isinstance(entry, str):
        return entry
    return f"acpbench-{entry.get('split', 'dev')}"


def item_questions(entry: dict, qtype: str, limit: int | None,
                   skipped: dict[str, int], bound: Bound = DEFAULT) -> list[Question]:
    """The first `limit` items of one type (None: all) as generative questions; an item
    whose gold runs past `bound` is not asked (its id in the reason)."""
    root, split = Path(entry["root"]), entry.get("split", "dev")
    path = root / qtype / f"{split}.gen.json"
    if not path.is_file():
        raise QuestionError(f"acpbench.domains: {path}: no such file (an ACPBench root holds "
                            "<type>/<split>.gen.json)")
    out = []
    for item, g, error, _ in gold_each(read_items(path)[:limit], bound):
        if isinstance(error, Unsupported):
            why = f"unsupported PDDL ({error})"
            skipped[why] = skipped.get(why, 0) + 1
            continue
        if isinstance(error, PastBound):
            why = f"gold {error} (item {item.id})"
            skipped[why] = skipped.get(why, 0) + 1
            continue
        if error is not None:
            raise error
        if g.limits or g.answer is None:
            why = "a search limit (no proven answer)" if g.limits else "no reading of the action"
            skipped[why] = skipped.get(why, 0) + 1
            continue
        if qtype == "nexta" and not g.answer["yes"]:
            skipped["no action lowers the cost to go"] = skipped.get(
                "no action lowers the cost to go", 0) + 1
            continue
        truth, oracle, wrong = _truth(item, g.answer)
        kind = GEN_KIND[qtype]
        prompt = (f"{item.context}\n\n{item.question}\n\n"
                  f"{answer_format('gen', kind, truth.get('what', 'fact'), words=False)}")
        out.append(Question(qtype, "gen", "acpbench", entry_key(entry), item.id, "item", prompt,
                            {"kind": kind, **truth}, _block(oracle), _block(wrong)))
    return out


def _block(lines: list[str]) -> str:
    return "```\n" + "\n".join(lines) + ("\n" if lines else "") + "```"


def _paren(name: str) -> str:
    """An atom or action as the reader gives it back: `(pred arg ...)`, lower case."""
    return normal_fact(name if name.startswith("(") else f"({name})")


def _truth(item, answer) -> tuple[dict, list[str], list[str]]:
    """(the truth in the scorer's terms, an answer that scores full marks, a wrong one)."""
    t = item.task
    if t == "app":
        return {"gold": answer}, answer, answer[:-1] if answer else ["(none-such)"]
    if t == "prog":
        lines = [f"added: {a}" for a in answer["pos"]] + [f"deleted: {a}" for a in answer["neg"]]
        return ({"pos": answer["pos"], "neg": answer["neg"], "facts": None}, lines,
                lines[:-1] if len(lines) > 1 else [*lines, "added: (none-such)"])
    if t == "val":
        return ({"gold": answer}, ["none" if answer < 0 else str(answer + 1)],
                [str(answer + 2) if answer >= 0 else "1"])
    if t in ("reach", "areach"):
        what = "fact" if t == "reach" else "action"
        answer = [_paren(a) for a in answer]
        return ({"what": what, "gold": answer, "none_ok": True, "facts": None},
                [answer[0] if answer else "none"], ["none"] if answer else ["(none-such)"])
    if t == "land":
        yes, no = answer["yes"], answer["no"]
        return ({"what": "fact", "gold": yes, "none_ok": True, "facts": None},
                [yes[0] if yes else "none"], [no[0]] if no else ["none"])
    if t == "nexta":
        yes, no = answer["yes"], answer["no"]
        return ({"what": "action", "gold": yes, "none_ok": False}, [yes[0] if yes else "none"],
                [no[0]] if no else ["none"])
    # just: every removal of one action or two consecutive ones that leaves a plan
    task = item.planning_task()
    steps = plan_steps(item.question)
    plan = [format_step(s) for s in steps]
    shortened = []
    for i in range(len(steps)):
        if valid_plan(task, steps[:i] + steps[i + 1:]):
            shortened.append(plan[:i] + plan[i + 1:])
    for i in range(len(steps) - 1):
        if valid_plan(task, steps[:i] + steps[i + 2:]):
            shortened.append(plan[:i] + plan[i + 2:])
    return ({"what": "action", "plan": plan, "gold": shortened},
            shortened[0] if shortened else plan, plan)
