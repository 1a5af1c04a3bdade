"""`planaudit/acpbench`: one ACPBench question type over a suite domain's states, one
sample a question.

The questions are `acpbench.generate.questions` on the prepared suite (every gold answer
proven on the state graph), each reply judged by `acpbench.score.judge` and filed by the
shard's `make_row`; a reference model's call carries the right and a wrong answer, as
the shard's does.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from planaudit.harness.curriculum import _config
from planaudit.harness.scoring import row_score
from planaudit.harness.single import base_row, output_call, planaudit_call
from planaudit.harness.suite import base_config, prepared, split
from planaudit.interop import SCORER


def question_samples(suite_dir, domain: str, qtype: str, cfg: dict, tasks) -> list[Sample]:
    from planaudit.acpbench.generate import questions

    out = []
    for q in questions(suite_dir, domain, [qtype], cfg["forms"], cfg["tasks"], cfg["states"],
                       cfg["seed"], select=[f"{domain}/{t}" for t in tasks]):
        out.append(Sample(
            id=f"{q.id}/{q.form}", input=q.prompt,
            metadata={"regime": "acpbench", "method": qtype, "domain": domain,
                      "task": f"{q.task}/{q.state}", "form": q.form, "source": q.source,
                      "question": q.to_json(),
                      "call": {"task": f"acpbench:{qtype}:{q.form}:{q.id}",
                               "purpose": "acpbench"},
                      "reference": {"answer": q.oracle, "wrong": q.wrong}}))
    return out


@scorer(metrics=[accuracy(), stderr()], name=SCORER)
def outcome():
    """The answer judged by semantics (`acpbench.score.judge`), as the shard's row."""
    from planaudit.acpbench.questions import Question
    from planaudit.acpbench.score import judge
    from planaudit.acpbench.shard import make_row

    async def score(state: TaskState, target):
        q = Question.from_json(state.metadata["question"])
        call = output_call(state)
        j = None if call.error else judge(q, call.content)
        return row_score(make_row(q, j, call, base_row("acpbench"), call.error))

    return score


@task(name="acpbench")
def acpbench(domain: str = "blocksworld", type: str = "app", forms: str | None = None,
             tasks: str | None = None, root: str | None = None, suite: str | None = None,
             states: int | None = None) -> Task:
    """planaudit's ACPBench regime: question type `type` in `forms` (default all three)
    over the config's number of tasks and states of `domain`."""
    from planaudit.acpbench.questions import TYPES
    from planaudit.acpbench.shard import settings

    if type not in TYPES:
        raise ValueError(f"no ACPBench question type '{type}' (have: {', '.join(TYPES)})")
    cfg = settings(base_config().get("acpbench") or {})
    if forms:
        cfg["forms"] = split(forms)
    if states:
        cfg["states"] = int(states)
    suite_dir, ids = prepared(domain, tasks, root, suite)
    return Task(dataset=MemoryDataset(question_samples(suite_dir, domain, type, cfg, ids),
                                      name=f"planaudit-{domain}-{type}"),
                solver=planaudit_call(), scorer=outcome(), config=_config(cfg["max_tokens"]),
                metadata={"regime": "acpbench", "domain": domain, "method": type,
                          "suite_dir": str(suite_dir)})
