"""One formalizer episode: a model writes PDDL for a prepared task; the hidden model judges it.

The episode reads what the suite stage wrote for a task (`brief.json`, `truth.json`, the
hidden `domain.pddl` and `problem.pddl`), asks the model through `llm/` (its cache,
retries, prices and transcripts), reads the files from the reply under the formalizer's
contract (`contract.extract_pddl`), and judges them (`judge.py`). Methods:

- `problem` (LLM+P's setting): the brief and the domain file as the suite holds it; the
  model writes the problem file;
- `domain-and-problem` (Huang and Zhang's): the brief only; the model writes both files,
  naming actions and objects as the brief does;
- `feedback`: one of the two (its parameter `of`) with up to `rounds` more calls after a
  judgement, each told only what a user's own tools would say of the files
  (`judge.feedback`), never anything of the hidden model.

The row's columns are the judge's checks (`row.yaml`) and the columns every regime shares:
the outcome, executability and first failure are the route's plan's on the hidden model.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from planaudit import __version__
from planaudit.contract import extract_pddl
from planaudit.episode import failure_text
from planaudit.formal import equivalence as eqv
from planaudit.formal.truth import Limits
from planaudit.formalize.judge import Judgement, feedback, judge
from planaudit.llm.client import price_source, provenance, reasoning_tokens, total_cost

METHODS = ("problem", "domain-and-problem")
FAULTY_REFERENCES = ("reference/flawed", "reference/responsive")
NEEDS = {"problem": ("problem",), "domain-and-problem": ("domain", "problem")}

ASK = {
    "problem": (
        "Write the PDDL problem file for this task, for the domain file below. Name every "
        "object as the task names it. Answer with the problem file in one fenced code block "
        "(```pddl ... ```)."),
    "domain-and-problem": (
        "Write the PDDL for this task: a domain file and a problem file. Name every action "
        "and every object as the task names it, and give each action its parameters in the "
        "order the task lists them. Answer with two fenced code blocks (```pddl ... ```): "
        "the domain file first, then the problem file."),
}


def messages(method: str, brief: dict, domain_pddl: str) -> list[dict]:
    """The first request of an episode: the task in words, the domain file where the
    method gives it, and what to write."""
    if method not in METHODS:
        raise ValueError(f"unknown formalize method {method!r} (known: {', '.join(METHODS)})")
    parts = [brief["domain"], brief["instance"]]
    if method == "problem":
        parts.append(f"The domain file:\n```pddl\n{domain_pddl.strip()}\n```")
    parts.append(ASK[method])
    return [{"role": "user", "content": "\n\n".join(parts)}]


def _files(method: str, texts: dict[str, str], hidden_domain: str, folder: Path) -> tuple[Path, Path]:
    """The model's files written where the judge reads them (the hidden domain file
    standing for the model's where the method gives it)."""
    domain = folder / "domain.pddl"
    domain.write_text(texts["domain"] if "domain" in texts else hidden_domain)
    problem = folder / "problem.pddl"
    problem.write_text(texts["problem"])
    return domain, problem


def plan_of(method: str, params: dict) -> tuple[str, int]:
    """The method that writes the files and the rounds of feedback after the first answer:
    `feedback` is its parameter `of` with `rounds` (3 by default); the others have none
    unless given `rounds`."""
    if method == "feedback":
        return str(params.get("of", "problem")), int(params.get("rounds", 3))
    return method, int(params.get("rounds", 0))


def limits_of(params: dict) -> tuple[Limits, dict]:
    """The planner's limits on the model's files and the equivalence check's bound, from
    the section's `planner` and `equivalence` (their schema's defaults where absent)."""
    planner = params.get("planner") or {}
    limits = Limits(bfs_states=int(planner.get("bfs_states", 300_000)),
                    astar_seconds=float(planner.get("astar_seconds", 20.0)),
                    external_seconds=float(planner.get("external_seconds", 60.0)),
                    external=bool(planner.get("external", True)))
    bound = params.get("equivalence") or {}
    return limits, {"max_pairs": int(bound.get("max_pairs", eqv.MAX_PAIRS)),
                    "max_seconds": float(bound.get("max_seconds", eqv.MAX_SECONDS))}


def faulty(j: Judgement | None) -> bool | None:
    """Whether a judgement finds the files unlike the hidden model (None: no files were
    read, or the check was undecided)."""
    if j is None:
        return None
    if not j.well_formed:
        return True
    verdict = j.equivalence.verdict if j.equivalence else None
    return None if verdict in (None, eqv.UNDECIDED) else verdict == eqv.DIFFERENT


def fault_seeded(model: str, folder: Path, task_name: str, method: str,
                 reference_meta: dict | None) -> str | None:
    """The kind of fault a flawed or responsive reference formalizer's first answer holds,
    from the seeded draw on the hidden files (reference/formalizer.written), not from the
    judge: the expected count of the positive control ("none": no fault; None: not such
    a model)."""
    if model not in FAULTY_REFERENCES:
        return None
    from planaudit.reference.formalizer import written

    meta = {"task_dir": str(folder), "task": task_name, "method": method, "sample": 0,
            **(reference_meta or {})}
    _, fault = written(meta)
    return fault.kind if fault else "none"


async def run_episode(client, method: str, params: dict, folder: Path, *, task_name: str,
                      limits: Limits | None = None, reference_meta: dict | None = None,
                      config_hash: str = "", tier: str = "",
                      epoch: int = 0) -> tuple[dict, list[dict]]:
    """The row and the transcript of one episode of `method` on the task in `folder`;
    `reference_meta` (a reference formalizer's fault rates and seed) goes with each call,
    and `epoch` (formalize.epochs) from the second repeat on: its own cache key and draws."""
    repeat = {"epoch": epoch} if epoch else {}
    brief = json.loads((folder / "brief.json").read_text())
    truth = json.loads((folder / "truth.json").read_text())
    hidden_domain = (folder / "domain.pddl").read_text()
    planner, bound = limits_of(params)
    limits = limits or planner
    base, rounds = plan_of(method, params)
    history = messages(base, brief, hidden_domain)
    transcript: list[dict] = []
    calls = []
    j: Judgement | None = None
    first: Judgement | None = None
    judged: dict[tuple, Judgement] = {}  # the same files again: the same judgement
    reason = error = None
    for round_ in range(rounds + 1):
        call = await client.complete(history, temperature=float(params.get("temperature", 0.0)),
                                     max_tokens=int(params.get("max_tokens", 4096)),
                                     metadata={"task_dir": str(folder), "task": task_name,
                                               "purpose": "formalize", "method": base,
                                               "round": round_, **repeat,
                                               **(reference_meta or {})})
        calls.append(call)
        transcript.append({"purpose": "formalize", "round": round_, "messages": list(history),
                           "call": call.to_json()})
        if call.error is not None:
            error = call.error
            break
        files = extract_pddl(call.content, NEEDS[base])
        if files.kind == "malformed":
            j, reason = None, files.reason
            said = f"Your answer breaks the output format: {files.reason}."
        else:
            # on the event loop, not in a thread: Fast Downward's driver runs in a scratch
            # folder it changes into (formal/external.py), which would move every relative
            # path of the episodes in flight
            key = tuple(sorted(files.texts.items()))
            if key not in judged:
                judged[key] = _judge(base, files.texts, hidden_domain, folder, truth, limits,
                                     bound)
            j = judged[key]
            reason = None
            said = feedback(j)
        if round_ == 0:
            first = j
        transcript[-1]["judgement"] = j.to_json() if j else {"outcome": "malformed",
                                                             "contract_breach": reason}
        if said is None or round_ == rounds:
            break
        history = [*history, {"role": "assistant", "content": call.content or ""},
                   {"role": "user", "content": said + " Answer again in the same form."}]
    row = _row(client, method, task_name, truth, j, error, reason, calls)
    row.update(first_faulty=faulty(first),
               fault_seeded=fault_seeded(client.cfg.model, folder, task_name, base,
                                         {**repeat, **(reference_meta or {})}),
               epoch=epoch,
               model_tier=tier or client.cfg.tier, config_hash=config_hash,
               code_version=__version__)
    transcript.append({"ending": row["outcome"], "outcome": row["outcome"], "error": error})
    return row, transcript


def _judge(base: str, texts: dict[str, str], hidden_domain: str, folder: Path, truth: dict,
           limits: Limits, bound: dict) -> Judgement:
    with tempfile.TemporaryDirectory(prefix="formalize-") as tmp:
        domain, problem = _files(base, texts, hidden_domain, Path(tmp))
        j = judge(folder / "domain.pddl", folder / "problem.pddl", domain, problem,
                  truth=truth, limits=limits, **bound)
    if j.error:  # the files as the model knows them (domain.pddl:3), not a scratch path:
        # the error goes into the next round's prompt, and with it into the cache key
        j.error = j.error.replace(f"{tmp}/", "")
    return j


def _row(client, method: str, task_name: str, truth: dict, j: Judgement | None,
         error: str | None, reason: str | None, calls: list) -> dict:
    """The columns of the episode's judgement (the final answer's) and its calls."""
    domain_name, task = task_name.split("/")
    eq = j.equivalence if j else None
    verdict = j.verdict if j else None
    failure = verdict["failure"] if verdict else None
    outcome = "error" if error else (j.outcome if j else "malformed")
    plan_length = len(j.plan) if j and j.plan is not None else None
    if j is not None and not j.well_formed:
        kind, detail = "unreadable", j.error
    elif failure is not None:
        kind, detail = failure["kind"], failure_text(failure["detail"], failure["unsatisfied"])
    else:
        kind = detail = None
    row = {
        "regime": "formalize", "model": client.cfg.name, "method": method,
        "reference": client.cfg.model.startswith("reference/"),
        "domain": domain_name, "task": task, "solvable": bool(truth["solvable"]),
        "optimal_length": truth.get("optimal_length"),
        "outcome": outcome, "contract_breach": reason, "parses": j.parses if j else None,
        "well_formed": j.well_formed if j else None, "read_error": j.error if j else None,
        "model_task_solvable": j.solvable if j else None,
        "route_status": j.route_status if j else None,
        "executable": verdict["executable"] if verdict else None,
        "plan_length": plan_length,
        "first_failure_step": failure["step"] if failure else None,
        "first_failure_kind": kind,
        "first_failure_action": failure["action"] if failure else None,
        "first_failure_detail": detail,
        "equivalence": eq.verdict if eq else None,
        "distinguishing": " ".join(eq.difference.sequence) if eq and eq.difference else None,
        "distinguishing_words": eq.difference.words() if eq and eq.difference else None,
        "equivalence_pairs": eq.pairs if eq else None,
        "equivalence_bound": eq.bound if eq else None,
        "rounds": len(calls), "error": error,
        "truncated": bool(calls) and bool(calls[-1].truncated),
        "n_calls": len(calls), "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls), "cost_usd": total_cost(calls),
        "reasoning_tokens": reasoning_tokens(calls), **provenance(client.cfg),
        "price_source": price_source(calls), "latency_s": sum(c.latency_s for c in calls),
        "cache_hits": sum(bool(c.cache_hit) for c in calls),
    }
    row["success"] = outcome == "success"
    row["detected"] = outcome == "detected"
    row["efficiency"] = (truth["optimal_length"] / plan_length
                         if row["success"] and plan_length else None)
    return row
