"""The formalizer regime as a part of the registry: a model writes the PDDL for each task
(one job per model x method over every domain, `planaudit formalize shard`, episodes
through `shard.py`), a planner plans on it, and the hidden model judges the files and the
route's plan. Its rows stand in the main table and are paired with the offline regime's
on the same tasks (`Regime.versus`)."""

from __future__ import annotations

import json
from pathlib import Path

from planaudit import shard
from planaudit.experiment import Experiment, ModelEntry
from planaudit.formalize.caption import CAPTION
from planaudit.regime import (
    Drawing,
    Estimated,
    Jobs,
    Regime,
    Workflow,
    register,
    row_columns,
    section_schema,
)

# the section's keys every job reads (the route's planner, the equivalence bound, the tasks)
SHARED = ("max_tokens", "planner", "equivalence", "tasks", "epochs")


def part(section: dict, method: str) -> dict:
    """The slice of the `formalize` section one method's job depends on."""
    found = {"methods": [method],
             "params": {method: (section.get("params") or {}).get(method, {})}}
    found.update((k, section[k]) for k in SHARED if k in section)
    return found


def jobs(view: Workflow) -> Jobs:
    section = view.config.get("formalize", {})
    return shard.episode_jobs(view, "formalize", list(section.get("methods", [])),
                              lambda method: part(section, method))


# a feedback message of typical length, for the estimate's rounds
FEEDBACK = ("Your PDDL is not well formed: problem.pddl, line 12: a type error of about this "
            "length. Answer again in the same form.")


def estimate(experiment: Experiment, entry: ModelEntry, suite_dir: Path, out_tokens: dict,
             counter) -> list[Estimated]:
    """Each task's real first prompt, the replies assumed; `feedback` priced at its upper
    bound: every round taken, each prompt the history so far (its assumed replies, a
    feedback message of typical length)."""
    from planaudit.formalize.run import messages, plan_of

    methods = experiment.section("formalize").methods
    if not methods:
        return []
    only = experiment.section("formalize").written.get("tasks")
    folders = [f for f in shard.selected_folders(experiment.suite, suite_dir)
               if only is None or f.name.partition("@")[0] in only]
    if not folders:
        raise FileNotFoundError(f"{suite_dir}: no briefs yet (run `snakemake suite` first)")
    out = int(out_tokens.get("formalize", out_tokens.get("final", 1000)))
    reply = "step " * out
    rows = []
    for method in methods:
        base, rounds = plan_of(method, experiment.method("formalize", method).to_dict())
        calls = tin = 0
        for folder in folders:
            brief = json.loads((folder / "brief.json").read_text())
            history = messages(base, brief, (folder / "domain.pddl").read_text())
            for _ in range(rounds + 1):
                calls += 1
                tin += counter(history)
                history = [*history, {"role": "assistant", "content": reply},
                           {"role": "user", "content": FEEDBACK}]
        repeats = experiment.section("formalize").epochs  # every repeat pays again
        rows.append(Estimated(method, len(folders), calls * repeats, tin * repeats,
                              calls * repeats * out, waves=rounds + 1))
    return rows


def episode(entry: ModelEntry):
    from planaudit.formalize.run import run_episode

    return run_episode


def waves(section, method: str) -> int:
    """One wave per answer: the first, then each round of feedback."""
    from planaudit.formalize.run import plan_of

    return 1 + plan_of(method, (section.get("params") or {}).get(method, {}))[1]


def _add_parser(sub, config_arg) -> None:
    from planaudit.formalize.commands import add_parser

    add_parser(sub, config_arg)


def _table(rows, cell):
    from planaudit.formalize.tables import formalize_table

    return formalize_table(rows, cell)


def _faults(rows, cell):
    from planaudit.formalize.tables import faults_table

    return faults_table(rows, cell)


def _draw(frame, seed: int = 0, bootstrap: int = 2000, alpha: float = 0.05):
    from planaudit.formalize.report import draw

    return draw(frame, seed, bootstrap, alpha)


def _report(frame, config, tables, figures, out) -> str:
    from planaudit.formalize.report import section

    return section(frame, config, tables, figures, out)


register(Regime(
    schema=section_schema(__file__),
    name="formalize", help="the formalizer regime: a model writes the PDDL, a planner plans "
    "on it, and the hidden model judges the files and the route's plan", jobs=jobs,
    layout=("model", "method", "domain"), columns=row_columns(__file__),
    add_parser=_add_parser, estimate=estimate, episode=episode, rank=4, batch=False,
    choices=("methods",), waves=waves, versus="offline", epochs=True,
    tables={"formalize": _table, "formalize_faults": _faults},
    drawings={"formalize": Drawing(CAPTION, _draw)},
    report=_report))
