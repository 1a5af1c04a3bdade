"""The curriculum regime as a part of the registry: PlanBench's test cases, one job per
model x test case over the `curriculum` section's domains (`planaudit curriculum shard`)."""

from __future__ import annotations

import sys
from pathlib import Path

from planaudit.curriculum import needs
from planaudit.curriculum.commands import add_curriculum_parser
from planaudit.curriculum.shard import domain_cases, domain_key, settings, skip_reason
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


def planned_skips(config: dict, entries: list | None = None,
                  prepared: list | None = None) -> dict[tuple[str, str], str]:
    """(test, suite domain) -> why it cannot be generated there (`needs.why_not`), read
    from the suite's sources as the workflow is built: the pairs the plan leaves out.
    `prepared`: every task entry of the suite, where the caller has them (read here
    otherwise: 80 ms for the built-in suite's tasks.yaml files)."""
    from planaudit.suite.catalog import selected_suite

    section = config.get("curriculum") or {}
    suite = config.get("suite") or {}
    if prepared is None:
        prepared, _ = selected_suite(suite)
    names = [e for e in (entries if entries is not None else section.get("domains")
                         or list(dict.fromkeys(p.domain for p in prepared)))
             if isinstance(e, str)]
    facts = needs.at_build([p for p in prepared if p.domain in names],
                           suite.get("description", "templates"))
    return needs.skips(section.get("tests") or [], facts, names,
                       lambda t: settings(section, t)["shots"])


def jobs(view: Workflow) -> Jobs:
    """The jobs, after the checks that fail a run before any job starts: an entry listed
    twice, a name that is not a suite domain, a selection with no solvable task there.
    A test that cannot be generated on a domain (`needs.why_not`) is left out there, each
    such pair named on stderr as the workflow is built (the job writes the domain's file
    with no rows); a test left with no domain has no job."""
    section = view.config.get("curriculum") or {}
    tests = section.get("tests", [])
    entries = section.get("domains") or list(view.domains)
    keys = [domain_key(e) for e in entries]
    if len(set(keys)) < len(keys):
        raise ValueError(f"config curriculum.domains: an entry is listed twice ({', '.join(keys)})")
    narrowed = " selected by suite.tasks" if view.config["suite"].get("tasks") else ""
    for e in entries:
        if isinstance(e, str) and e not in view.domains:
            raise ValueError(
                f"config curriculum.domains: '{e}' is not a domain of the suite"
                f"{narrowed} (have: "
                f"{', '.join(view.domains)}; a PlanBench root is {{root: PATH, config: NAME}})")
        # with suite.tasks, the cases are the first solvable *selected* tasks: a domain whose
        # selected tasks are all labelled unsolvable would have none (fail now, not mid-run)
        if tests and isinstance(e, str) and view.config["suite"].get("tasks") and not any(
                s.domain == e and s.label == "solvable" for s in view.selected):
            raise ValueError(
                f"{view.locate(('suite', 'tasks')) or 'config '}suite.tasks: curriculum.tests "
                f"run on {e}, and no task selected there is labelled solvable (the "
                f"curriculum's cases are solvable tasks); select one, or leave {e} out of "
                "curriculum.domains")
    # without suite.tasks the selection is every prepared task: no second read of the suite
    every = view.selected if view.selected_tasks is None else None
    skipped = planned_skips(view.config, entries, every) if tests else {}
    for (test, domain), why in skipped.items():
        print(needs.skip_line(test, domain, why), file=sys.stderr)
    kept = [t for t in tests if any(not isinstance(e, str) or (t, e) not in skipped
                                    for e in entries)]
    for test in sorted(set(tests) - set(kept), key=tests.index):
        print(f"curriculum: {test} has no domain left to run on: no job", file=sys.stderr)
    results = view.results

    def args(model: str, test: str) -> list[str]:
        return ["--test", test, *[a for k in keys for a in ("--domain", k)],
                "--suite", f"{results}/suite",
                "--out", f"{results}/episodes/curriculum/{model}/{test}/{{domain}}.parquet",
                "--transcripts", f"{results}/transcripts/curriculum/{model}/{test}/{{domain}}"]

    return Jobs(
        keys=kept,
        inputs=[f for d, f in view.ready.items() if d in entries],
        outputs=[f"{results}/episodes/curriculum/{{model}}/{{job}}/{k}.parquet" for k in keys],
        spec=lambda entry, test: view.spec(entry, "curriculum", {
            "tests": [test], "domains": entries, **settings(section, test),
            **({"epochs": section["epochs"]} if "epochs" in section else {})}),
        args=args)


def estimate(experiment: Experiment, entry: ModelEntry, suite_dir: Path, out_tokens: dict,
             counter) -> list[Estimated]:
    """One call per case and repeat, its prompt as generated, the reply assumed (none on a
    domain the test cannot be generated on: the plan leaves it out)."""
    section = experiment.section("curriculum").written
    selection = experiment.tasks
    entries = section.get("domains") or run_domains(selection, suite_dir)
    rows = []
    for test in section.get("tests") or []:
        cfg = settings(section, test)
        found = [c for e in entries if not skip_reason(e, test, cfg, suite_dir)
                 for c in domain_cases(e, test, cfg, suite_dir, selection)[0]]
        repeats = experiment.section("curriculum").epochs  # every repeat pays again
        tin = repeats * sum(counter([{"role": "user", "content": c.prompt}]) for c in found)
        tout = repeats * len(found) * int(out_tokens["final"])
        rows.append(Estimated(test, len(found), repeats * len(found), tin, tout))
    return rows


def table(rows, cell):
    """PlanBench's Table 1 (`curriculum/table.py`, imported when the tables are built)."""
    from planaudit.curriculum.table import curriculum_table

    return curriculum_table(rows, cell)


register(Regime(
    schema=section_schema(__file__),
    name="curriculum", help="the curriculum regime (PlanBench's test cases)", jobs=jobs,
    layout=("model", "method", "domain"), columns=row_columns(__file__),
    add_parser=add_curriculum_parser, estimate=estimate, size=(360, 4000), rank=2,
    batch=True, choices=("tests",), epochs=True, tables={"curriculum": table}))
