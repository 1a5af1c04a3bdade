"""What a config will cost before any money is spent.

Each strategy is run for real on every prepared task, but against a stand-in
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
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import planaudit.llm  # noqa: F401  (local price map)
from planaudit.compliance.settings import PlanSetting
from planaudit.experiment import epochs, method_params, model_config, plan_settings
from planaudit.offline.strategies import STRATEGIES, Context
from planaudit.suite.catalog import selected_suite

DEFAULT_OUTPUT_TOKENS = {"final": 400, "reasoning": 800, "critique": 200, "score": 5,
                         "act": 150, "critic": 100, "reflect": 80}


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


def _filler(n_tokens: int, k: int) -> str:
    """A reply of about `n_tokens` whose plan differs from every earlier one."""
    return f"```\n(draft-{k})\n```\n" + "step " * max(0, n_tokens - 8)


async def _count(method: str, params: dict, brief: dict, out_tokens: dict,
                 counter) -> tuple[int, int, int]:
    calls = tin = tout = 0

    async def ask(messages, purpose="final", temperature=None, sample=0) -> str:
        nonlocal calls, tin, tout
        calls += 1
        tin += counter(messages)
        n = int(out_tokens.get(purpose, DEFAULT_OUTPUT_TOKENS.get(purpose, 400)))
        tout += n
        return _filler(n, calls)

    ctx = Context(brief, ask, params, check=lambda reply: "a precondition does not hold")
    await STRATEGIES[method](ctx)
    return calls, tin, tout


async def _count_online(method: str, params: dict, folder: Path, out_tokens: dict,
                        counter) -> tuple[int, int, int]:
    """Calls and tokens of one online episode along the oracle's path."""
    from planaudit.formal import load_task
    from planaudit.llm.client import Call
    from planaudit.online.architectures import ARCHITECTURES, Agent
    from planaudit.online.environment import Environment
    from planaudit.online.run import DEFAULT_BUDGET
    from planaudit.reference import online_turn

    brief = json.loads((folder / "brief.json").read_text())
    task = load_task(folder / "domain.pddl", folder / "problem.pddl")
    env = Environment(task, brief, None, int(params.get("budget", DEFAULT_BUDGET)),
                      gated=method == "gated")
    calls = tin = tout = 0
    setting = PlanSetting.from_json(params.get("plan_setting"))
    meta = {"task_dir": str(folder)}
    if setting.steps:  # the oracle follows the setting's workflow, as in a real run
        meta |= {"plan_setting": setting.name, "plan_order": setting.call_order}

    async def ask(messages, purpose="act", tools=None) -> Call:
        nonlocal calls, tin, tout
        calls += 1
        tin += counter(messages)
        n = int(out_tokens.get(purpose, DEFAULT_OUTPUT_TOKENS.get(purpose, 400)))
        tout += n
        filler = "step " * max(0, n - 20)
        if purpose == "act":
            name, args = online_turn("oracle", meta, messages)
            return Call(filler, [{"id": f"c{calls}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}])
        if purpose == "final":
            truth = json.loads((folder / "truth.json").read_text())
            plan = "```\n" + "\n".join(truth["plan"]) + "\n```" if truth["solvable"] \
                else "UNSOLVABLE"
            return Call(filler + "\n" + plan)
        return Call("APPROVE " + filler)

    await ARCHITECTURES[method](Agent(env, ask, params, "native", setting=setting))
    return calls, tin, tout


def selected_folders(config: dict, suite_dir: Path) -> list[Path]:
    """The prepared task folders the config's episodes run on: every one under each
    disguise, or with `suite.tasks` exactly the selected tasks (checked against the suite
    as at DAG build; a selected task not prepared yet is an error, not a smaller bill)."""
    suite = config.get("suite") or {}
    disguises = suite.get("disguise") or ["none"]
    selection = suite.get("tasks")
    folders = sorted(p.parent for p in suite_dir.glob("*/*/brief.json")  # <task>@<disguise>
                     if (p.parent.name.partition("@")[2] or "none") in disguises)
    if selection is None:
        return folders
    _, chosen = selected_suite(suite)
    wanted = sorted(suite_dir / e.domain / (e.id if d == "none" else f"{e.id}@{d}")
                    for e in chosen for d in disguises)
    if missing := [w for w in wanted if w not in set(folders)]:
        raise FileNotFoundError(f"{missing[0]}: not prepared yet ({len(missing)} of the "
                                f"{len(wanted)} selected; run `snakemake suite` first)")
    return wanted


def estimate(config: dict, suite_dir: Path) -> list[Estimate]:
    import litellm

    folders = selected_folders(config, suite_dir)
    briefs = [json.loads((f / "brief.json").read_text()) for f in folders]
    episodes = config.get("offline", {}).get("methods") or config.get("online", {}).get("methods")
    if not briefs and episodes:
        raise FileNotFoundError(f"{suite_dir}: no briefs yet (run `snakemake suite` first)")
    out_tokens = {**DEFAULT_OUTPUT_TOKENS,
                  **(config.get("estimate", {}) or {}).get("output_tokens", {})}
    rows = []
    for entry in config.get("models", []):
        cfg = model_config(entry)
        count_model = "gpt-4o" if cfg.model.startswith("reference/") else cfg.model

        def counter(messages, _m=count_model):
            try:
                return litellm.token_counter(model=_m, messages=messages)
            except Exception:  # an unknown tokenizer: litellm's default one
                return litellm.token_counter(messages=messages)

        work = [("offline", m, None) for m in config.get("offline", {}).get("methods", [])]
        work += [("online", m, s) for m in config.get("online", {}).get("methods", [])
                 for s in plan_settings(config)]
        repeats = epochs(config)
        for regime, method, setting in work:
            params = method_params(config, regime, method, setting)
            calls = tin = tout = 0
            for folder, brief in zip(folders, briefs, strict=True):
                if regime == "offline":
                    c, i, o = asyncio.run(_count(method, params, brief, out_tokens, counter))
                else:
                    c, i, o = asyncio.run(_count_online(method, params, folder, out_tokens,
                                                        counter))
                    c, i, o = c * repeats, i * repeats, o * repeats  # every repeat pays again
                calls, tin, tout = calls + c, tin + i, tout + o
            if cfg.input_price is not None and cfg.output_price is not None:
                usd = (tin * cfg.input_price + tout * cfg.output_price) / 1e6
            elif cfg.model.startswith("reference/"):
                usd = 0.0
            else:
                try:
                    p, c = litellm.cost_per_token(model=cfg.model, prompt_tokens=tin,
                                                  completion_tokens=tout)
                    usd = p + c
                except Exception:
                    usd = float("nan")
            label = method + (f"+{setting}" if setting and setting != "none" else "")
            rows.append(Estimate(cfg.name, label, regime, len(briefs), calls, tin, tout, usd))
        rows += _curriculum(config, cfg, suite_dir, out_tokens, counter)
        rows += _acpbench(config, cfg, suite_dir, out_tokens, counter)
    return rows


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


def _default_domains(config: dict, suite_dir: Path) -> list[str]:
    """The suite domains a regime runs on when its section lists none (as the workflow)."""
    selection = (config.get("suite") or {}).get("tasks")
    if selection is not None:  # the workflow's default: the domains the selection names
        return list(dict.fromkeys(p.partition("/")[0] for p in selection))
    return sorted(p.name for p in suite_dir.iterdir() if p.is_dir()) if suite_dir.is_dir() else []


def _curriculum(config: dict, cfg, suite_dir: Path, out_tokens: dict, counter) -> list[Estimate]:
    """The curriculum's calls: one per case, its prompt as generated, the reply assumed."""
    section = config.get("curriculum") or {}
    if not section.get("tests"):
        return []
    from planaudit.curriculum.shard import domain_cases, settings

    selection = (config.get("suite") or {}).get("tasks")
    entries = section.get("domains") or _default_domains(config, suite_dir)
    rows = []
    for test in section["tests"]:
        found = [c for e in entries
                 for c in domain_cases(e, test, settings(section, test), suite_dir,
                                       selection)[0]]
        tin = sum(counter([{"role": "user", "content": c.prompt}]) for c in found)
        tout = len(found) * int(out_tokens.get("final", DEFAULT_OUTPUT_TOKENS["final"]))
        rows.append(Estimate(cfg.name, test, "curriculum", len(found), len(found), tin, tout,
                             _usd(cfg, tin, tout)))
    return rows


def _acpbench(config: dict, cfg, suite_dir: Path, out_tokens: dict, counter) -> list[Estimate]:
    """ACPBench's calls: one per question, its prompt as generated, the reply assumed."""
    section = config.get("acpbench") or {}
    if not section.get("types"):
        return []
    from planaudit.acpbench.shard import job_questions

    section = {**section, "domains": section.get("domains") or _default_domains(config, suite_dir)}
    selection = (config.get("suite") or {}).get("tasks")
    rows = []
    for qtype in section["types"]:
        found = job_questions(section, qtype, suite_dir, selection)
        tin = sum(counter([{"role": "user", "content": q.prompt}]) for q in found)
        tout = len(found) * int(out_tokens.get("final", DEFAULT_OUTPUT_TOKENS["final"]))
        rows.append(Estimate(cfg.name, qtype, "acpbench", len(found), len(found), tin, tout,
                             _usd(cfg, tin, tout)))
    return rows


def render(rows: list[Estimate]) -> str:
    head = f"{'model':<24} {'regime':<8} {'method':<22} {'tasks':>5} {'calls':>8} {'input tok':>12} " \
           f"{'output tok':>11} {'USD':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.model:<24} {r.regime:<8} {r.method:<22} {r.tasks:>5} {r.calls:>8} "
                     f"{r.input_tokens:>12,} {r.output_tokens:>11,} {r.usd:>10.2f}")
    total = sum(r.usd for r in rows)
    lines += ["-" * len(head),
              f"{'total':<56} {sum(r.calls for r in rows):>14} "
              f"{sum(r.input_tokens for r in rows):>12,} "
              f"{sum(r.output_tokens for r in rows):>11,} {total:>10.2f}",
              "(offline: upper bound for self-refine, modulo and tot, every round assumed to run; "
              "online: lower bound, the oracle's path; reference models cost nothing and are "
              "not LLMs)"]
    return "\n".join(lines)
