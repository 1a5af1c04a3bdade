"""The ACPBench regime as a part of the registry: its atomic questions, one job per model x
question type over the `acpbench` section's domains and forms (`planaudit acpbench shard`)."""

from __future__ import annotations

from pathlib import Path

from planaudit.acpbench.commands import add_parser
from planaudit.acpbench.files import entry_key
from planaudit.acpbench.shard import job_questions
from planaudit.experiment import Experiment, ModelEntry
from planaudit.regime import (
    Estimated,
    Jobs,
    Regime,
    Workflow,
    register,
    row_columns,
    section_schema,
)
from planaudit.suite.catalog import run_domains


def jobs(view: Workflow) -> Jobs:
    """The jobs, after the checks that fail a run before any job starts: an entry listed
    twice, a name that is not a suite domain, an ACPBench root missing a file a job reads."""
    section = view.config.get("acpbench") or {}
    types = section.get("types", [])
    entries = section.get("domains") or list(view.domains)
    keys = [entry_key(e) for e in entries]
    if len(set(keys)) < len(keys):
        raise ValueError(f"config acpbench.domains: an entry is listed twice ({', '.join(keys)})")
    for e in entries:
        if isinstance(e, str) and e not in view.domains:
            narrowed = " selected by suite.tasks" if view.config["suite"].get("tasks") else ""
            raise ValueError(
                f"config acpbench.domains: '{e}' is not a domain of the suite{narrowed} "
                f"(have: {', '.join(view.domains)}; ACPBench's files are "
                "{root: PATH, split: NAME})")
        if isinstance(e, dict):  # every file a job will read, before any job starts
            root, split = Path(e["root"]), e.get("split", "dev")
            if not root.is_dir():
                raise ValueError(f"config acpbench.domains: {root}: no such folder")
            missing = [f"{t}/{split}.gen.json" for t in types
                       if not (root / t / f"{split}.gen.json").is_file()]
            if missing:
                raise ValueError(f"config acpbench.domains: {root} has no {', '.join(missing)}")
    results = view.results
    spec = {**section, "domains": entries}

    def args(model: str, qtype: str) -> list[str]:
        return ["--type", qtype, "--suite", f"{results}/suite",
                "--out", f"{results}/episodes/acpbench/{model}/{qtype}.parquet",
                "--transcripts", f"{results}/transcripts/acpbench/{model}/{qtype}"]

    return Jobs(keys=list(types),
                inputs=[f for d, f in view.ready.items() if d in entries],
                outputs=[f"{results}/episodes/acpbench/{{model}}/{{job}}.parquet"],
                spec=lambda entry, qtype: view.spec(entry, "acpbench", spec), args=args)


def estimate(experiment: Experiment, entry: ModelEntry, suite_dir: Path, out_tokens: dict,
             counter) -> list[Estimated]:
    """One call per question and repeat, its prompt as generated, the reply assumed."""
    section = experiment.section("acpbench").written
    if not section.get("types"):
        return []
    selection = experiment.tasks
    section = {**section, "domains": section.get("domains") or run_domains(selection, suite_dir)}
    rows = []
    repeats = experiment.section("acpbench").epochs  # every repeat pays again
    for qtype in section["types"]:
        found = job_questions(section, qtype, suite_dir, selection)
        tin = repeats * sum(counter([{"role": "user", "content": q.prompt}]) for q in found)
        tout = repeats * len(found) * int(out_tokens["final"])
        rows.append(Estimated(qtype, len(found), repeats * len(found), tin, tout))
    return rows


register(Regime(
    schema=section_schema(__file__),
    name="acpbench", help="ACPBench: its questions answered by proof from their PDDL",
    layout=("model", "method"), columns=row_columns(__file__),
    jobs=jobs, add_parser=add_parser, estimate=estimate, size=(360, 4000), rank=3,
    batch=True, choices=("types",), epochs=True, figures=("acpbench",)))
