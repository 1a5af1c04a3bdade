"""People as a part of the registry: the regime `human`. Its rows are a study's
participants, judged from the records a study exported (`planaudit study export`), one
job per folder the config names under `study: {records: [...]}`; they run for the
subject `people`, not for the config's models (no call is made). Its tables, figure and
report section are the study's statistics; its rows stand beside the models' in the main
table and in `same_tasks`."""

from __future__ import annotations

import json
from pathlib import Path

from planaudit.regime import Drawing, Jobs, Regime, Workflow, register, row_columns, section_schema

SUBJECT = "people"


def studies(view: Workflow) -> dict[str, str]:
    """study name -> its export folder, checked before any job starts."""
    section = view.config.get("study") or {}
    found: dict[str, str] = {}
    for i, folder in enumerate(section.get("records") or []):
        meta = Path(folder) / "study.json"
        where = view.locate(("study", "records", i)) or "config "
        try:
            name = json.loads(meta.read_text())["study"]
        except FileNotFoundError:
            raise ValueError(f"{where}study.records[{i}]: {meta}: no such file (a folder "
                             "written by `planaudit study export`)") from None
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{where}study.records[{i}]: {meta}: not a study export ({e})") from None
        if name in found:
            raise ValueError(f"{where}study.records[{i}]: study '{name}' is listed twice "
                             f"({found[name]}, {folder})")
        found[name] = str(folder)
    return found


def jobs(view: Workflow) -> Jobs:
    folders = studies(view)
    section = view.config.get("study") or {}
    results = view.results

    def args(subject: str, name: str) -> list[str]:
        return ["--records", folders[name],
                "--out", f"{results}/episodes/human/{subject}/{name}.parquet"]

    return Jobs(
        keys=list(folders),
        inputs=[f"{f}/{n}" for f in folders.values() for n in ("study.json", "records.jsonl")],
        outputs=[f"{results}/episodes/human/{{model}}/{{job}}.parquet"],
        spec=lambda entry, name: {"study": {**section, "records": [folders[name]]}},
        args=args, subjects=(SUBJECT,) if folders else None)


def estimate(*_args, **_kwargs) -> list:
    return []  # people cost no call


def _add_parser(sub, config_arg) -> None:
    from planaudit.human.commands import add_parser

    add_parser(sub, config_arg)


def _human(rows, cell):
    from planaudit.human.analysis import human_table

    return human_table(rows)


def _tests(rows, cell):
    from planaudit.human.analysis import tests_table

    return tests_table(rows)


def _instances(rows, cell):
    from planaudit.human.analysis import instances_table

    return instances_table(rows)


def _flow(rows, cell):
    from planaudit.human.flow import flow_table

    return flow_table(rows)


def _sensitivity(rows, cell):
    from planaudit.human.integrity import sensitivity_table

    return sensitivity_table(rows)


def _draw(frame, seed: int = 0, bootstrap: int = 2000, alpha: float = 0.05):
    from planaudit.human.report import draw

    return draw(frame, seed, bootstrap, alpha)


def _report(frame, config, tables, figures, out) -> str:
    from planaudit.human.report import section

    return section(frame, config, tables, figures, out)


CAPTION = ("People on the study's tasks. Left: valid plans per arm (dark) and valid plans "
           "that are optimal (light), as shares of the finished participants, with 95% Wilson "
           "intervals, beside each model's success on the same tasks, its methods pooled per "
           "regime (grey; reference models are calibrators, not LLMs); middle: time on task "
           "(first view of phase 1 to the phase-2 submission) per participant, the line the "
           "median; right: raw NASA-TLX per participant. Only finished participants; "
           "simulated participants are scripted, not people.")

register(Regime(
    schema=section_schema(__file__), section="study",
    name="human", help="people's rows: a study's records judged like models' answers",
    layout=("model", "study"), columns=row_columns(__file__), jobs=jobs,
    add_parser=_add_parser, estimate=estimate, size=(30, 2000), rank=5,
    tables={"human": _human, "human_tests": _tests, "human_instances": _instances,
            "human_flow": _flow, "human_sensitivity": _sensitivity},
    beside=True,
    drawings={"human": Drawing(CAPTION, _draw)}, report=_report))
