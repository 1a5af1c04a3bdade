"""What a config will cost before any money is spent: every regime of the registry counts
its own calls and tokens (`Regime.estimate`); this module prices them.

Offline, each strategy is run for real on every prepared task, but against a stand-in
model that answers instantly with filler of the assumed length. So the calls
are exactly the calls the strategy would make and the prompts are the real
prompts (counted with litellm's token counter); only the replies are assumed.
The stand-in never lets a loop stop early (critiques always find issues, plans
always change, the modulo checker always objects), so multi-round strategies
are priced at their upper bound.

Online, each architecture runs in the real environment with a stand-in agent
that takes the oracle's path (read, sense once, execute an optimal plan,
submit; declare an unsolvable task), its replies padded to the assumed length.
An online prompt carries the whole history, so this prices the shortest
sensible episode: a real agent that wanders pays more (a lower bound, said so
in the output).

A model with `batch: true` has its offline, curriculum and ACPBench calls priced at its
batch rate (`batch_rate`, default half), as batch mode bills them (llm/batch.py); online
calls are not batched and keep the ordinary price. Each batched row says its waves (the
sequential calls of its longest episode, each a batch that may take 24 hours: the
worst-case wait); a row past the model's `batch_max_waves` is marked REFUSED, as the
workflow and the shard refuse it before any request.

A model that is not a reference model is estimated on what the user's own files name
(`Experiment.for_model`), as the workflow runs it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import planaudit.llm  # noqa: F401  (local price map)
from planaudit.experiment import Experiment
from planaudit.llm.batch import Batching
from planaudit.regime import regimes

# reasoning tokens a call is assumed to spend at each effort (estimate.reasoning_tokens)
DEFAULT_REASONING_TOKENS = {"low": 1024, "medium": 4096, "high": 16384}
DEFAULT_OUTPUT_TOKENS = {"final": 400, "reasoning": 800, "critique": 200, "score": 5,
                         "act": 150, "critic": 100, "reflect": 80, "formalize": 1000}


@dataclass
class Estimate:
    model: str
    method: str
    regime: str
    tasks: int
    calls: int
    input_tokens: int
    output_tokens: int
    usd: float
    batch_rate: float | None = None  # priced at this fraction of the model's price (batch mode)
    waves: int = 1  # sequential calls of the longest episode: batch mode waits up to 24 h each
    max_waves: int | None = None  # batch mode: the model's batch_max_waves (None: not batched)


def estimate(experiment: Experiment, suite_dir: Path) -> list[Estimate]:
    import litellm

    out_tokens = {**DEFAULT_OUTPUT_TOKENS, **experiment.output_tokens}
    thinking = {**DEFAULT_REASONING_TOKENS, **experiment.reasoning_tokens}
    rows = []
    for entry in experiment.models:
        if entry.is_planner:  # no model call: nothing to count or price
            continue
        cfg = entry.client()
        extra = reasoning_per_call(cfg.reasoning, thinking)
        count_model = "gpt-4o" if cfg.model.startswith("reference/") else cfg.model

        def counter(messages, _m=count_model):
            try:
                return litellm.token_counter(model=_m, messages=messages)
            except Exception:  # an unknown tokenizer: litellm's default one
                return litellm.token_counter(messages=messages)

        batching = Batching.of(entry.to_dict())
        mine = experiment.for_model(entry)
        waves = experiment.waves(entry)
        for name, regime in regimes().items():
            rate = batching.rate if batching is not None and regime.batch else None
            for e in regime.estimate(mine, entry, suite_dir, out_tokens, counter):
                tout = e.output_tokens + e.calls * extra  # reasoning is billed as output
                usd = _usd(cfg, e.input_tokens, tout) * (1.0 if rate is None else rate)
                rows.append(Estimate(cfg.name, e.method, name, e.tasks, e.calls,
                                     e.input_tokens, tout, usd, rate,
                                     waves.get((name, e.method), e.waves),
                                     entry.max_waves if rate is not None else None))
    return rows


def reasoning_per_call(reasoning: dict | None, assumed: dict[str, int]) -> int:
    """The reasoning tokens the bill assumes a call spends: the effort's assumption, or a
    token budget itself (the most it may spend); 0 without reasoning."""
    if not reasoning:
        return 0
    if "effort" in reasoning:
        return int(assumed[reasoning["effort"]])
    return int(reasoning["budget_tokens"])


def _usd(cfg, tin: int, tout: int) -> float:
    import litellm

    if cfg.input_price is not None and cfg.output_price is not None:
        return (tin * cfg.input_price + tout * cfg.output_price) / 1e6
    if cfg.model.startswith("reference/"):
        return 0.0
    try:
        p, c = litellm.cost_per_token(model=cfg.model, prompt_tokens=tin, completion_tokens=tout)
        return p + c
    except Exception:
        return float("nan")


def render(rows: list[Estimate]) -> str:
    head = f"{'model':<24} {'regime':<10} {'method':<22} {'tasks':>5} {'calls':>8} {'input tok':>12} " \
           f"{'output tok':>11} {'USD':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        batch = "" if r.batch_rate is None else f"  batch x{r.batch_rate:g}, {waves(r)}"
        lines.append(f"{r.model:<24} {r.regime:<10} {r.method:<22} {r.tasks:>5} {r.calls:>8} "
                     f"{r.input_tokens:>12,} {r.output_tokens:>11,} {r.usd:>10.2f}{batch}")
    total = sum(r.usd for r in rows)
    lines += ["-" * len(head),
              f"{'total':<58} {sum(r.calls for r in rows):>14} "
              f"{sum(r.input_tokens for r in rows):>12,} "
              f"{sum(r.output_tokens for r in rows):>11,} {total:>10.2f}",
              "(offline: upper bound for self-refine, modulo and tot, every round assumed to run; "
              "formalize: upper bound for feedback, every round taken; online: lower bound, "
              "the oracle's path; reference models cost nothing and are "
              "not LLMs)"]
    if any(r.batch_rate is not None for r in rows):
        lines.append("(batch xR: sent as provider batches, priced at R times the model's price; "
                     "N waves: the longest episode's sequential calls, one batch each, up to 24 h "
                     "a batch; REFUSED: past the model's batch_max_waves, not run)")
    return "\n".join(lines)


def waves(r: Estimate) -> str:
    """A batched row's waves and worst-case wait, and whether batch mode refuses it."""
    text = f"{r.waves} wave{'s' * (r.waves != 1)} (worst case {r.waves * 24} h)"
    if r.max_waves is not None and r.waves > r.max_waves:
        text += f" REFUSED: batch_max_waves {r.max_waves}"
    return text


def paid(experiment: Experiment, suite_dir: Path, strict: bool = False,
         priced: bool = True) -> str:
    """What a run pays for, as the workflow prints it when it is built (and its `estimate`
    job once the suite is prepared, before any paid job starts) and `planaudit check`
    shows it: the jobs of every model that is not a reference model and, once the suite
    is prepared, their estimate (calls, tokens, dollars, waves). `strict`: a suite not
    prepared is an error, not a note. `priced` False: the jobs alone (the workflow's start,
    which leaves the pricing to its estimate job rather than pay for it at every start)."""
    text = render_jobs(jobs_of(experiment))
    models = tuple(m for m in experiment.models if not m.in_process)
    if not models:
        return text
    if not priced:
        return text + ("\n(calls and dollars: printed by the workflow's estimate job once the "
                       f"suite is prepared in {suite_dir}, before any paid job)")
    try:
        if not any(suite_dir.glob("*/*/truth.json")):
            raise FileNotFoundError(f"{suite_dir}: no prepared task (run the suite rules)")
        rows = estimate(dataclasses.replace(experiment, models=models), suite_dir)
    except (FileNotFoundError, ValueError):  # a part of the suite not prepared yet
        if strict:
            raise
        return (text + "\n(calls and dollars: printed by the workflow's estimate job once the "
                       f"suite is prepared in {suite_dir}, before any paid job; or "
                       "`planaudit estimate`)")
    return text + "\n" + render(rows)


def jobs_of(experiment: Experiment) -> list[tuple[str, str, list[str]]]:
    """(model, regime, job keys) for every model that is not a reference model: the jobs a
    run pays for, as the user's files name them (`Experiment.for_model`). A regime's keys
    are its choice lists crossed (`Regime.choices`; online, an absent plan setting list is
    `none`), as its job list builds them."""
    out = []
    for entry in experiment.models:
        if entry.in_process:
            continue
        mine = experiment.for_model(entry)
        for name, regime in regimes().items():
            section = mine.section(name)
            keys: list[str] = [""]
            for k in regime.choices:
                values = (section.plan_settings if k == "plan_settings"
                          else section.written.get(k) or [])
                keys = [f"{a}/{b}" if a else str(b) for a in keys for b in values]
            if regime.choices:  # a regime without them: its own job list decides
                out.append((entry.name, name, keys))
    return out


def render_jobs(rows: list[tuple[str, str, list[str]]]) -> str:
    """The table the workflow prints before its first request and `planaudit check` shows:
    per model that is not a reference model and regime, the jobs it pays for."""
    if not rows:
        return ("Paid jobs: none (every model is a reference model or a classical planner: no "
                "call costs anything)")
    lines = ["Paid jobs (models that are not reference models run only the regimes, methods "
             "and plan settings your config files name; docs: tutorial, your own model):",
             f"  {'model':<24} {'regime':<11} {'jobs':>4}  which"]
    for model, regime, keys in rows:
        which = ", ".join(keys) if keys else "none"
        lines.append(f"  {model:<24} {regime:<11} {len(keys):>4}  {which}")
    return "\n".join(lines)
