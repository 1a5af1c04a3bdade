"""One formalizer episode: a model writes PDDL for a prepared task; the hidden model judges it.

The episode reads what the suite stage wrote for a task (`brief.json`, `truth.json`, the
hidden `domain.pddl` and `problem.pddl`), asks the model through `llm/` (its cache,
retries, prices and transcripts), reads the files from the reply under the formalizer's
contract (`contract.extract_pddl`), and judges them (`judge.py`). Methods:

- `problem` (LLM+P's setting): the brief and the domain file as the suite holds it; the
  model writes the problem file;
- `domain-and-problem` (Huang and Zhang's): the brief only; the model writes both files,
  naming actions and objects as the brief does;
- either with `rounds: N` (the `feedback` method's parameter): after a judgement, up to N
  more calls, each told only what a user's own tools would say of the files
  (`judge.feedback`), never anything of the hidden model.

Not yet a registered regime (issue 46): no jobs, rows schema, tables or report section.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from planaudit.contract import extract_pddl
from planaudit.formal.truth import Limits
from planaudit.formalize.judge import Judgement, feedback, judge
from planaudit.llm.client import price_source, total_cost

METHODS = ("problem", "domain-and-problem")
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


async def run_episode(client, method: str, params: dict, folder: Path, *, task_name: str,
                      limits: Limits | None = None,
                      reference_meta: dict | None = None) -> tuple[dict, list[dict]]:
    """The row and the transcript of one episode of `method` on the task in `folder`;
    `reference_meta` (a reference formalizer's fault rates and seed) goes with each call."""
    brief = json.loads((folder / "brief.json").read_text())
    truth = json.loads((folder / "truth.json").read_text())
    hidden_domain = (folder / "domain.pddl").read_text()
    limits = limits or Limits(external=bool(params.get("external", True)))
    rounds = int(params.get("rounds", 0))
    history = messages(method, brief, hidden_domain)
    transcript: list[dict] = []
    calls = []
    j: Judgement | None = None
    reason = error = None
    for round_ in range(rounds + 1):
        call = await client.complete(history, temperature=float(params.get("temperature", 0.0)),
                                     max_tokens=int(params.get("max_tokens", 4096)),
                                     metadata={"task_dir": str(folder), "task": task_name,
                                               "purpose": "formalize", "method": method,
                                               "round": round_, **(reference_meta or {})})
        calls.append(call)
        transcript.append({"purpose": "formalize", "round": round_, "messages": list(history),
                           "call": call.to_json()})
        if call.error is not None:
            error = call.error
            break
        files = extract_pddl(call.content, NEEDS[method])
        if files.kind == "malformed":
            j, reason = None, files.reason
            said = f"Your answer breaks the output format: {files.reason}."
        else:
            with tempfile.TemporaryDirectory(prefix="formalize-") as tmp:
                domain, problem = _files(method, files.texts, hidden_domain, Path(tmp))
                j = judge(folder / "domain.pddl", folder / "problem.pddl", domain, problem,
                          truth=truth, limits=limits)
            reason = None
            said = feedback(j)
        transcript[-1]["judgement"] = j.to_json() if j else {"outcome": "malformed",
                                                             "contract_breach": reason}
        if said is None or round_ == rounds:
            break
        history = [*history, {"role": "assistant", "content": call.content or ""},
                   {"role": "user", "content": said + " Answer again in the same form."}]
    domain_name, task = task_name.split("/")
    eq = j.equivalence if j else None
    row = {
        "regime": "formalize", "model": client.cfg.name, "method": method,
        "reference": client.cfg.model.startswith("reference/"),
        "domain": domain_name, "task": task, "solvable": bool(truth["solvable"]),
        "optimal_length": truth.get("optimal_length"),
        "outcome": "error" if error else (j.outcome if j else "malformed"),
        "contract_breach": reason, "parses": j.parses if j else None,
        "well_formed": j.well_formed if j else None, "read_error": j.error if j else None,
        "model_task_solvable": j.solvable if j else None,
        "route_status": j.route_status if j else None,
        "plan_length": len(j.plan) if j and j.plan is not None else None,
        "equivalence": eq.verdict if eq else None,
        "distinguishing": " ".join(eq.difference.sequence) if eq and eq.difference else None,
        "distinguishing_words": eq.difference.words() if eq and eq.difference else None,
        "equivalence_pairs": eq.pairs if eq else None,
        "equivalence_bound": eq.bound if eq else None,
        "rounds": len(calls), "error": error,
        "n_calls": len(calls), "input_tokens": sum(c.input_tokens for c in calls),
        "output_tokens": sum(c.output_tokens for c in calls), "cost_usd": total_cost(calls),
        "price_source": price_source(calls),
    }
    row["success"] = row["outcome"] == "success"
    row["detected"] = row["outcome"] == "detected"
    return row, transcript
