"""`planaudit/curriculum`: one PlanBench test case (t1-t8) on a suite domain, one sample a case.

The cases are `curriculum.generate.cases` on the prepared suite (the prompts the
pipeline sends), each reply judged by `curriculum.score.score` and filed by the shard's
`make_row`; a reference model's call carries the answer that scores full marks, as the
shard's does.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from planaudit.harness.scoring import row_score
from planaudit.harness.single import base_row, output_call, planaudit_call
from planaudit.harness.suite import base_config, prepared
from planaudit.interop import SCORER


def case_samples(suite_dir, domain: str, test: str, cfg: dict, tasks) -> list[Sample]:
    from planaudit.curriculum.generate import cases
    from planaudit.curriculum.shard import oracle_text

    out = []
    select = [f"{domain}/{t}" for t in tasks]  # `suite.tasks` patterns
    for case in cases(suite_dir, domain, test, cfg["instances"], cfg["seed"], cfg["shots"],
                      tasks=select):
        answer, kind, wrong = oracle_text(case)
        out.append(Sample(
            id=f"{domain}/{case.instance}", input=case.prompt,
            metadata={"regime": "curriculum", "method": test, "domain": domain,
                      "task": case.instance, "source": case.source, "case": case.to_json(),
                      "call": {"task": f"{test}:{domain}/{case.instance}",
                               "purpose": "curriculum"},
                      "reference": {"answer": answer, "answer_kind": kind, "wrong": wrong}}))
    return out


@scorer(metrics=[accuracy(), stderr()], name=SCORER)
def outcome():
    """The case's verdict by `formal/` (`curriculum.score`), as the shard's row."""
    from planaudit.curriculum.score import score as judge
    from planaudit.curriculum.shard import (
        Case,  # wherever the curriculum keeps it
        make_row,
    )

    async def score(state: TaskState, target):
        case = Case.from_json(state.metadata["case"])
        call = output_call(state)
        verdict = None if call.error else judge(case, call.content or "")
        row = make_row(case, verdict, call, {**base_row("curriculum"),
                                             "domain": state.metadata["domain"]}, call.error)
        return row_score(row)

    return score


@task(name="curriculum")
def curriculum(domain: str = "blocksworld", test: str = "t1", tasks: str | None = None,
               root: str | None = None, suite: str | None = None,
               instances: int | None = None) -> Task:
    """planaudit's curriculum regime: test case `test` on the first `instances` solvable
    tasks of `domain` (the config's curriculum settings otherwise)."""
    from planaudit.curriculum.shard import TESTS, settings

    if test not in TESTS:
        raise ValueError(f"no test case '{test}' (have: {', '.join(TESTS)})")
    cfg = settings(base_config().get("curriculum") or {}, test)
    if instances:
        cfg["instances"] = int(instances)
    suite_dir, ids = prepared(domain, tasks, root, suite)
    return Task(dataset=MemoryDataset(case_samples(suite_dir, domain, test, cfg, ids),
                                      name=f"planaudit-{domain}-{test}"),
                solver=planaudit_call(), scorer=outcome(),
                config=_config(cfg["max_tokens"]),
                metadata={"regime": "curriculum", "domain": domain, "method": test,
                          "suite_dir": str(suite_dir)})


def _config(max_tokens: int):
    from inspect_ai.model import GenerateConfig

    return GenerateConfig(temperature=0.0, max_tokens=int(max_tokens))
