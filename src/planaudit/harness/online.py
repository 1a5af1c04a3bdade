"""`planaudit/online`: planaudit's tool environment as Inspect tools, Inspect's `react()`
agent as the default solver (any Inspect agent through `--solver`).

The setup solver (run even when `--solver` replaces the agent) builds the sample's
`Environment` (`online/environment.py`: the hidden model's state, the budget, the
fatal-violation rule) and puts its tools in `state.tools`: `get_task` and `query_state`
sense and change nothing, `act` changes the state, and an inapplicable action ends the
episode as `inapplicable-action`, after which no tool runs. Names and descriptions are
planaudit's (`protocol.py`); react's submit tool is planaudit's `submit`, and another
agent's own ending (its submit tool, its message limit) is taken as planaudit's `submit`
when the scorer runs. The
environment is one object per sample, held under the sample's uuid until its scorer has
made the row; the row has the columns `online/run.py` makes, from the same counters,
`episode.online_outcome` and `compliance.assessment`.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.agent import AgentState, AgentSubmit, react
from inspect_ai.dataset import MemoryDataset
from inspect_ai.scorer import accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef

from planaudit.harness.bridge import set_call
from planaudit.harness.offline import samples
from planaudit.harness.scoring import row_score
from planaudit.harness.suite import base_config, prepared
from planaudit.interop import SCORER

ENDED = "The episode has ended; nothing was executed."
_EPISODES: dict[str, Episode] = {}  # sample uuid -> its episode, until the scorer takes it


class Episode:
    """One sample's environment and its tools."""

    def __init__(self, folder: Path, budget: int):
        from planaudit.formal import load_task
        from planaudit.online.environment import Environment
        from planaudit.suite.brief import Renderer, load_templates

        self.folder = folder
        self.brief = json.loads((folder / "brief.json").read_text())
        self.truth = json.loads((folder / "truth.json").read_text())
        self.task = load_task(folder / "domain.pddl", folder / "problem.pddl")
        source = self.brief.get("source", "")
        renderer = (Renderer(load_templates(source))
                    if source.endswith("nl.yaml") and Path(source).is_file() else None)
        if source == "generic":
            from planaudit.suite.generic import templates

            renderer = Renderer(templates(self.task.domain))
        self.env = Environment(self.task, self.brief, renderer, budget)
        self.error: str | None = None

    def run(self, name: str, args: dict) -> str:
        """One tool call: refused once the episode has ended (the fatal-violation rule)."""
        from planaudit.suite.brief import RenderFailed

        if self.env.done:
            return ENDED
        try:
            return self.env.call(name, {k: v for k, v in args.items() if v is not None}).text
        except RenderFailed as e:  # never a vaguer sentence than the brief: the episode errs
            self.env.ending, self.error = "error", str(e)
            return ENDED

    def tools(self) -> list:
        from planaudit.protocol import SCHEMAS

        spec = {s["function"]["name"]: s["function"] for s in SCHEMAS}

        async def get_task() -> str:
            return self.run("get_task", {})

        async def query_state(predicate: str | None = None, object: str | None = None) -> str:
            return self.run("query_state", {"predicate": predicate, "object": object})

        async def act(action: str) -> str:
            return self.run("act", {"action": action})

        async def submit() -> str:
            return self.run("submit", {})

        async def declare_unsolvable() -> str:
            return self.run("declare_unsolvable", {})

        out = []
        for fn in (get_task, query_state, act, submit, declare_unsolvable):
            s = spec[fn.__name__]
            params = {k: v["description"] for k, v in s["parameters"]["properties"].items()}
            out.append(ToolDef(fn, name=fn.__name__, description=s["description"],
                               parameters=params).as_tool())
        return out

    def sensing_and_acting(self) -> list:
        """The tools every agent gets in `state.tools`; `submit` is the agent's own (react's
        is planaudit's; another agent's ending counts as planaudit's submit)."""
        return [t for t in self.tools() if ToolDef(t).name != "submit"]

    def submit_tool(self):
        return next(t for t in self.tools() if ToolDef(t).name == "submit")


def episode_of(state: TaskState) -> Episode:
    if state.uuid not in _EPISODES:
        raise RuntimeError(f"sample {state.sample_id}: no planaudit environment (the task's "
                           "setup solver makes one)")
    return _EPISODES[state.uuid]


def online_messages(budget: int):
    from planaudit.online.architectures import START, instruction

    def messages(brief: dict) -> list[dict]:
        return [{"role": "system", "content": instruction(budget, "native")},
                {"role": "user", "content": START}]

    return messages


@solver
def planaudit_environment(budget: int):
    """The sample's environment and its tools; the reference models' call facts."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        episode = Episode(Path(meta["task_dir"]), budget)
        _EPISODES[state.uuid] = episode
        state.tools = episode.sensing_and_acting()
        set_call({"task_dir": meta["task_dir"], "task": f"{meta['domain']}/{meta['task']}",
                  "purpose": "act", "protocol": "native", "sample": state.epoch - 1})
        return state

    return solve


@solver
def planaudit_react():
    """Inspect's `react()` over the sample's tools, react's submit being planaudit's."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode = episode_of(state)
        env = episode.env
        submit, tools = episode.submit_tool(), list(state.tools)

        async def on_continue(agent: AgentState) -> bool | str:
            if env.done:
                return False
            if not agent.output.message.tool_calls:  # a turn without a tool call counts
                env.say(agent.output.message.text)
                obs = env.idle()
                return False if env.done else obs.text
            if env.exhausted:  # never a reply that could not be executed
                env.exhaust()
                return False
            return True

        agent = react(prompt=None, tools=tools, on_continue=on_continue,
                      submit=AgentSubmit(name="submit", tool=submit, answer_only=True,
                                         keep_in_messages=True))
        out = await agent(AgentState(messages=state.messages))
        state.messages, state.output = out.messages, out.output
        return state

    return solve


def fill_texts(env, messages) -> None:
    """Each recorded turn gets the text the agent wrote with its tool call, in order (what
    the phase labels of `compliance/` read)."""
    turns = [t for t in env.trace if t["tool"] is not None or t["text"]]
    i = 0
    for m in messages:
        if m.role != "assistant" or i >= len(turns):
            continue
        if m.tool_calls:
            if turns[i]["tool"] is not None and not turns[i]["text"]:
                turns[i]["text"] = m.text or ""
            i += len(m.tool_calls)
        elif turns[i]["tool"] is None:
            i += 1


def model_calls() -> list:
    """This sample's model calls, from Inspect's transcript."""
    from inspect_ai.log import transcript

    return [e for e in transcript().events if getattr(e, "event", None) == "model"]


def online_row(episode: Episode, state: TaskState, method: str) -> dict:
    """The row `online/run.py` makes, from the same counters and the same decisions."""
    from planaudit import __version__
    from planaudit.compliance.assess import assessment
    from planaudit.compliance.settings import NONE
    from planaudit.episode import online_outcome
    from planaudit.harness.bridge import model_config, out_of_context
    from planaudit.llm.client import provenance
    from planaudit.online.disruption import off_columns
    from planaudit.online.run import counter_columns, judged_columns

    env, truth, meta = episode.env, episode.truth, state.metadata
    full = out_of_context(state.output)
    if env.ending is None and full:  # the history outgrew the context: the model's outcome
        env.context_out(full)
    if env.ending is None:  # an agent's own ending (its submit, its limit) claims the goal
        env.call("submit", {})
    fill_texts(env, state.messages)
    outcome = online_outcome(bool(truth["solvable"]), env.ending)
    compliance, _ = assessment(env.trace, episode.task.domain.actions, NONE.name, NONE.order)
    calls = model_calls()
    usage = [e.output.usage for e in calls if e.output and e.output.usage]
    cfg = model_config()
    reference = cfg.model.startswith("reference/")
    last = state.output if state.output.choices else None
    truncated = bool(last) and last.stop_reason == "max_tokens"
    breach = None
    if last is not None and env.trace and env.trace[-1]["tool"] is None:
        breach = "reply cut at max_tokens, no tool call" if truncated else "no tool call"
    row = {
        "regime": "online", "model": cfg.name, "model_tier": cfg.tier,
        "reference": reference, "method": method,
        "domain": meta["domain"], "task": meta["task"], **judged_columns(env, truth),
        "error": episode.error, "contract_breach": breach, "truncated": truncated,
        "n_calls": len(calls), "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "reasoning_tokens": (sum(u.reasoning_tokens for u in usage if u.reasoning_tokens)
                             if any(u.reasoning_tokens is not None for u in usage) else None),
        **provenance(cfg), **off_columns(),  # Inspect's tools do not fail on purpose
        "cost_usd": 0.0 if reference else None,  # Inspect prices no call for planaudit
        "price_source": "reference" if reference else None,
        "latency_s": sum(float(getattr(e, "working_time", 0) or 0) for e in calls),
        "cache_hits": 0, "config_hash": "", "code_version": __version__,
        **counter_columns(env, outcome),
        "epoch": state.epoch - 1,
        **compliance,
    }
    return row


@scorer(metrics=[accuracy(), stderr()], name=SCORER)
def outcome(method: str = "react"):
    """How the episode ended, as the environment (and so `formal/`) decided it."""
    async def score(state: TaskState, target):
        episode = _EPISODES.pop(state.uuid, None)
        if episode is None:
            raise RuntimeError(f"sample {state.sample_id}: no planaudit environment")
        return row_score(online_row(episode, state, method))

    return score


@task(name="online")
def online(domain: str = "blocksworld", tasks: str | None = None, root: str | None = None,
           suite: str | None = None, budget: int | None = None,
           method: str = "react") -> Task:
    """planaudit's online regime under Inspect: `method` names the agent in the rows
    (`react` for the default solver; say which agent `--solver` plugs in)."""
    section = base_config().get("online") or {}
    from planaudit.online.run import DEFAULT_BUDGET

    budget = int(budget or section.get("budget", DEFAULT_BUDGET))
    suite_dir, ids = prepared(domain, tasks, root, suite)
    return Task(dataset=MemoryDataset(samples(suite_dir, domain, ids, "online", method,
                                              online_messages(budget)),
                                      name=f"planaudit-{domain}"),
                setup=planaudit_environment(budget), solver=planaudit_react(),
                scorer=outcome(method),
                metadata={"regime": "online", "domain": domain, "method": method,
                          "budget": budget, "suite_dir": str(suite_dir)})
