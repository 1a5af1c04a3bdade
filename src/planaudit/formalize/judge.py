"""Judging a formalizer: the files a model wrote, against the hidden model they describe.

Every check is the formal core's, in order, each a column of the judgement:

1. `parses`: both files read as s-expressions (the first error, with its line);
2. `well_formed`: declared names, types and arities (the parser's checks, then grounding);
3. `solvable`: the model's own task proven as the suite's truths are (`formal.truth`);
4. the route's answer: the plan found on the model's files, read as the hidden model's
   actions and validated on it (executable, goal, length against the proven optimum);
5. `equivalence` with the hidden model (`formal.equivalence`), with the shortest
   distinguishing sequence where they differ, `undecided` past its bound.

The outcome is the offline regime's (`episode.offline_outcome`): the route answered with
its plan, or with UNSOLVABLE where the planner proved the model's task unsolvable, and
files that do not read are `malformed`; a planner that found nothing within its limit
left the route without an answer (`budget-exhausted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from planaudit.episode import offline_outcome
from planaudit.formal import equivalence
from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.plan import parse_plan
from planaudit.formal.sexpr import PDDLError, line_of_word, parse, read_file
from planaudit.formal.syntax import parse_domain, parse_problem
from planaudit.formal.truth import Limits, solve
from planaudit.formal.validate import validate


@dataclass
class Judgement:
    outcome: str
    parses: bool
    well_formed: bool
    error: str | None = None  # the first error of reading, with file and line
    solvable: bool | None = None  # the model's own task, where it was proven
    route_status: str | None = None  # solved, unsolvable, limit (the planner on the files)
    plan: list[str] | None = None  # the route's plan, in the hidden model's names
    verdict: dict | None = None  # the plan's verdict on the hidden model
    optimal_length: int | None = None  # the hidden task's proven optimum
    equivalence: equivalence.Equivalence | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        eq = self.equivalence
        return {"outcome": self.outcome, "parses": self.parses, "well_formed": self.well_formed,
                "error": self.error, "solvable": self.solvable, "route_status": self.route_status,
                "plan": self.plan, "verdict": self.verdict, "optimal_length": self.optimal_length,
                "equivalence": eq.to_json() if eq else None, "notes": self.notes}

    def words(self) -> str:
        lines = [f"outcome: {self.outcome}"]
        if self.error:
            lines.append(f"error: {self.error}")
        if self.well_formed:
            said = {True: "solvable", False: "unsolvable", None: "not proven either way"}
            lines.append(f"your task: {said[self.solvable]}")
        if self.plan is not None and self.verdict is not None:
            v = self.verdict
            text = f"the route's plan ({len(self.plan)} steps) on the hidden model: "
            if v["valid"]:
                text += "valid" + (f"; the optimum is {self.optimal_length} steps"
                                   if self.optimal_length is not None else "")
            else:
                f = v["failure"]
                where = "the goal" if f["step"] is None else f"step {f['step']}"
                text += f"fails ({f['kind']}) at {where}: {f['detail']}"
            lines.append(text)
        if self.equivalence is not None:
            lines.append(self.equivalence.words())
        lines += self.notes
        return "\n".join(lines)


def _read(domain: str | Path, problem: str | Path) -> tuple[list[tuple[str, str]], list]:
    """The files' texts and names, and their s-expressions; a PDDLError with its line for
    one that is not s-expressions (`parses` False)."""
    texts = [(read_file(p), str(p)) for p in (domain, problem)]
    return texts, [parse(text, source) for text, source in texts]


def _task(texts: list[tuple[str, str]]) -> Task:
    """The task the texts define; a PDDLError from the parser's checks of names, types and
    arities, or a GroundingError (`well_formed` False)."""
    d = parse_domain(*texts[0])
    task = Task(d, parse_problem(texts[1][0], d, texts[1][1]))
    _check_types(task, *texts[1])
    task.all_operators()  # grounding: a metric search cannot take
    return task


def _check_types(task: Task, text: str, source: str) -> None:
    """Every object in the problem's facts and goal of a type its predicate takes: the
    parser checks names and arities only (grounding then simply never builds an operator
    for a mistyped fact), and a formalizer that types an object wrongly wrote another task."""
    domain = task.domain

    def atoms(f: tuple):
        if f[0] == "atom":
            yield f[1], f[2]
        elif f[0] in ("and", "or"):
            for g in f[1]:
                yield from atoms(g)
        elif f[0] == "not":
            yield from atoms(f[1])

    for where, facts in ((":init", task.problem.init_atoms), (":goal", atoms(task.problem.goal))):
        for pred, args in facts:
            for arg, (_, want) in zip(args, domain.predicates[pred], strict=True):
                have = task.objects.get(arg)
                if have is not None and not domain.fits(have, want):
                    raise PDDLError(f"{arg} is a {' or '.join(have)} but {pred} takes a "
                                    f"{' or '.join(want)} in {where}", source,
                                    line_of_word(text, arg))


def judge(hidden_domain: str | Path, hidden_problem: str | Path, domain: str | Path,
          problem: str | Path, truth: dict | None = None, limits: Limits | None = None,
          rename: Callable[[str], str] | None = None, max_pairs: int = equivalence.MAX_PAIRS,
          max_seconds: float = equivalence.MAX_SECONDS) -> Judgement:
    """The judgement of a model's files against the hidden model's. `truth` is the hidden
    task's truth record (proven here when None); `rename` reads the model's action and
    object names as the hidden model's (None: the same names)."""
    limits = limits or Limits()
    truth = truth if truth is not None else solve(str(hidden_domain), str(hidden_problem), limits)
    solvable = bool(truth["solvable"])
    hidden_texts, hidden_trees = _read(hidden_domain, hidden_problem)
    hidden = _task(hidden_texts)
    try:
        texts, trees = _read(domain, problem)
    except PDDLError as e:
        return Judgement("malformed", False, False, error=str(e))
    try:
        model = _task(texts)
    except (PDDLError, GroundingError) as e:
        return Judgement("malformed", True, False, error=str(e))
    j = Judgement("", True, True, optimal_length=truth.get("optimal_length"))
    # the hidden model's own files, token for token (whitespace, comments and case aside):
    # the same task, proven already; walking its product would only meet the bound on a
    # large task, and proving it again would repeat the truth's proof
    if rename is None and trees == hidden_trees:
        j.equivalence = equivalence.Equivalence(equivalence.EQUIVALENT, 0, 0.0, identical=True)
        route = truth
    else:
        route = solve(str(domain), str(problem), limits)
        # sequences that may tell the systems apart where the search meets its bound
        probes = [p for p in (truth.get("plan"), [rename(a) if rename else a for a in
                                                  route.get("plan") or []]) if p]
        j.equivalence = equivalence.compare(hidden, model, rename, max_pairs, max_seconds,
                                            probes)
    j.solvable = route["solvable"]
    own = route["methods"].get("own", {}).get("status", "limit")
    j.route_status = "solved" if route["solvable"] else "unsolvable" if route["solvable"] is False \
        else own
    if route["solvable"] is None:
        j.outcome = "budget-exhausted"
        j.notes.append("the planner found no plan and no proof within its limits on your files")
        return j
    if route["solvable"] is False:
        j.outcome = offline_outcome(solvable, "unsolvable", None)
        return j
    j.plan = [rename(a) if rename else a for a in route["plan"]]
    verdict = validate(hidden, parse_plan("\n".join(j.plan), "<the route's plan>"))
    j.verdict = verdict.to_json()
    j.outcome = offline_outcome(solvable, "plan", verdict.failure.kind if verdict.failure else None)
    return j


def feedback(j: Judgement) -> str | None:
    """What a user's own tools would tell a formalizer about its files, for the `feedback`
    method's next round: the parser's or checker's first error, or what the planner found
    on the files alone. Never anything of the hidden model (its equivalence verdict, the
    distinguishing sequence, the plan's verdict on it): a round that leaked those would
    turn formalizing into copying. None where the tools have nothing to say."""
    if not j.parses:
        return f"Your PDDL does not parse: {j.error}"
    if not j.well_formed:
        return f"Your PDDL is not well formed: {j.error}"
    if j.route_status == "unsolvable":
        return "The planner proved your task unsolvable: no sequence of actions reaches its goal."
    if j.route_status not in ("solved", None):
        return "The planner found no plan for your task within its limit."
    return None
