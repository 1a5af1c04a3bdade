"""People's records judged as models' answers are: one row per participant in the row
contract, one row per recorded event.

The input is a study's export (`planaudit study export`): `study.json` (the design, the
instances' folders, each suggestion arm's plans, which pseudonyms are simulated),
`records.jsonl` (one pseudonymised participant a line, answers and events, as the
study's store keeps them) and `tasks/` (each instance's domain, problem and proven truth,
as prepared for the models). Nothing here reads the study's database: the folder alone
decides the rows, so the workflow can judge it again when new records arrive.

The phase-2 plan is validated by `formal/` (VAL's verdict beside it where VAL is
installed), its outcome named as an offline answer's is; the phase-1 text is read as a
model's reply is, in the words people use (`human.reading`), and judged the same way on
the steps read, its unreadable lines counted; a suggestion arm's plan is
compared with the suggestion step by step. A participant who did not finish gets the
outcome `error` (kept apart from every rate, as an unreachable model is) and says where
they stopped."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

from planaudit import __version__
from planaudit.contract import parse_action
from planaudit.episode import failure_detail, offline_outcome
from planaudit.formal.ground import Task
from planaudit.formal.load import load_task
from planaudit.formal.plan import format_step
from planaudit.formal.repair import levenshtein
from planaudit.formal.validate import Verdict, validate
from planaudit.human import assistance
from planaudit.human.reading import read_text

PEOPLE = "people"
SIMULATED = "simulated participants (scripted, not people)"
FORMAT = 1
TLX = ("mental", "physical", "temporal", "performance", "effort", "frustration")
EDITS = ("add", "undo", "up", "down", "remove")

Step = tuple[str, tuple[str, ...]]


class ExportError(ValueError):
    """An export folder that cannot be judged; the message names the file."""


@dataclass
class Instance:
    key: str
    folder: Path
    domain: str
    task: str
    disguise: str | None

    @cached_property
    def truth(self) -> dict:
        return json.loads((self.folder / "truth.json").read_text())

    @cached_property
    def problem(self) -> Task:
        return load_task(self.folder / "domain.pddl", self.folder / "problem.pddl")

    @cached_property
    def planbench(self):
        """PlanBench's config for a PlanBench instance (its words read phase 1), else None."""
        pb = self.truth.get("planbench")
        if not pb:
            return None
        from planaudit.planbench.material import load_config

        root = Path(pb["root"])  # an export keeps it relative to the task's folder
        return load_config(root if root.is_absolute() else self.folder / root,
                           self.truth["domain"])


def where(key: str) -> tuple[str, str, str | None]:
    """(domain, task, disguise) of an instance key: `blocksworld/p02@deceptive`, or a
    PlanBench instance `planbench:CONFIG/N` (domain `planbench/CONFIG`)."""
    if key.startswith("planbench:"):
        config, _, n = key.removeprefix("planbench:").partition("/")
        return f"planbench/{config}", n, None
    domain, _, task = key.partition("/")
    task, _, disguise = task.partition("@")
    return domain, task, disguise or "none"


class Export:
    """A study's export folder, read and checked."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        meta = self.folder / "study.json"
        try:
            self.meta = json.loads(meta.read_text())
        except FileNotFoundError:
            raise ExportError(f"{meta}: no such file: not a folder written by `planaudit study "
                              "export`") from None
        except json.JSONDecodeError as e:
            raise ExportError(f"{meta}:{e.lineno}: not JSON: {e.msg}") from None
        if self.meta.get("format") != FORMAT:
            raise ExportError(f"{meta}: format {self.meta.get('format')!r}, this planaudit reads "
                              f"format {FORMAT}")
        self.instances = {}
        for key, info in self.meta["instances"].items():
            folder = self.folder / info["folder"]
            if not (folder / "truth.json").is_file():
                raise ExportError(f"{folder}: the task of {key} is missing (truth.json)")
            self.instances[key] = Instance(key, folder, *where(key))

    @property
    def name(self) -> str:
        return self.meta["study"]

    def records(self) -> Iterator[dict]:
        path = self.folder / "records.jsonl"
        if not path.is_file():
            raise ExportError(f"{path}: no such file")
        with path.open() as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ExportError(f"{path}:{n}: not JSON: {e.msg}") from None

    @cached_property
    def config_hash(self) -> str:
        design = json.dumps(self.meta.get("design"), sort_keys=True)
        return hashlib.sha256(design.encode()).hexdigest()[:16]


def steps_of(plan: list[str]) -> tuple[list[Step], int | None]:
    """A phase-2 plan's steps; the first step that is not an action (1-based), if any (the
    server only takes actions of the list, so this guards a hand-edited record)."""
    steps = []
    for i, text in enumerate(plan, 1):
        step = parse_action(text, None)
        if step is None:
            return steps, i
        steps.append(step)
    return steps, None


def left_at(suggestion: list, plan: list) -> int | None:
    """The first step (1-based) where `plan` leaves `suggestion`; None when they are equal."""
    for i, (s, p) in enumerate(zip(suggestion, plan, strict=False), 1):
        if s != p:
            return i
    return None if len(suggestion) == len(plan) else min(len(suggestion), len(plan)) + 1


def _time(at: str | None) -> datetime | None:
    return None if at is None else datetime.fromisoformat(at)


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else max(0.0, (end - start).total_seconds())


def _first(events: list[dict], page: str, kind: str) -> datetime | None:
    return next((_time(e["at"]) for e in events if e["page"] == page and e["kind"] == kind), None)


def _last(events: list[dict], page: str, kind: str) -> datetime | None:
    return next((_time(e["at"]) for e in reversed(events)
                 if e["page"] == page and e["kind"] == kind), None)


def _verdict_columns(v: Verdict | None, optimal_length: int | None, solvable: bool = True) -> dict:
    failure = v.failure if v is not None else None
    outcome = (offline_outcome(solvable, "plan", failure.kind if failure else None) if v
               else "malformed")
    success = outcome == "success"
    return {
        "outcome": outcome, "success": success,
        "executable": v.executable if v else None,
        "plan_length": v.length if v else None,
        "efficiency": (optimal_length / v.length if success and v.length and optimal_length
                       is not None else None),
        "optimal": (v.length == optimal_length if success and optimal_length is not None
                    else None),
        "first_failure_step": failure.step if failure else None,
        "first_failure_kind": failure.kind if failure else None,
        "first_failure_action": failure.action if failure else None,
        "first_failure_detail": failure_detail(failure, None) if failure else None,
    }


def _phase1(text: str | None, inst: Instance, plan: list[Step] | None) -> dict:
    reading = read_text(text, inst.problem, inst.planbench)
    # the plan is the steps read; a line that gave none is counted, for a human coder
    out = {"text_reader": reading.reader, "text_outcome": "malformed", "text_length": None,
           "text_failure_step": None, "text_detail": reading.reason, "text_agrees": None,
           "text_unreadable_lines": (len(reading.unreadable) if reading.reader == "words"
                                     else None)}
    if reading.kind != "plan":
        if reading.kind == "unsolvable":
            out["text_detail"] = "the text says the task is unsolvable"
        return out
    v = validate(inst.problem, reading.steps)
    cols = _verdict_columns(v, inst.truth.get("optimal_length"))
    out.update(text_outcome=cols["outcome"], text_length=len(reading.steps),
               text_failure_step=cols["first_failure_step"],
               text_detail=cols["first_failure_detail"],
               text_agrees=None if plan is None else
               [format_step(s) for s in reading.steps] == [format_step(s) for s in plan])
    return out


def _val(inst: Instance, steps: list[Step]) -> tuple[bool | None, str | None]:
    from planaudit.formal import witness

    if not witness.available():
        return None, None
    plan = "".join(format_step(s) + "\n" for s in steps)
    v = witness.run_val(inst.folder / "domain.pddl", inst.folder / "problem.pddl", plan)
    return v.valid, v.describe()


def judge_record(export: Export, rec: dict) -> tuple[dict, list[dict]]:
    """One participant's row and their events' rows."""
    meta = export.meta
    key = rec["instance"]
    if key not in export.instances:
        raise ExportError(f"{export.folder / 'records.jsonl'}: participant {rec['participant']} "
                          f"planned {key}, which study.json does not list")
    inst = export.instances[key]
    truth = inst.truth
    simulated = rec["participant"] in set(meta.get("simulated") or ())
    answers = rec.get("answers") or {}
    events = rec.get("events") or []
    finished = rec.get("finished_at") is not None
    arm = meta["arms"].get(rec["arm"]) or {}
    optimal_length = truth.get("optimal_length")
    row: dict = {
        "regime": "human", "model": SIMULATED if simulated else PEOPLE,
        "model_tier": "simulated" if simulated else "people", "reference": False,
        "method": rec["arm"], "domain": inst.domain, "task": inst.task,
        "disguise": inst.disguise, "solvable": bool(truth.get("solvable")),
        "optimal_length": optimal_length, "truth_proofs": len(truth.get("proven_by") or []),
        "detected": False, "error": None, "contract_breach": None, "truncated": False,
        "n_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
        "price_source": "no model call", "cache_hits": 0, "config_hash": export.config_hash,
        "code_version": __version__, "study": export.name, "participant": rec["participant"],
        "simulated": simulated, "finished": finished,
        "arm_index": (meta["arm_order"].index(rec["arm"]) if rec["arm"] in meta["arm_order"]
                      else None),
        "stopped_at": None if finished else rec.get("step"),
        # every participant accounted for (human/flow.py): entered without consenting, on
        # the exclusion list, and the verdict of the last plan submitted, finished or not
        "consented": bool(rec.get("consented", rec.get("consent_at") is not None)),
        "excluded": rec.get("excluded"),
        # how phase 2 offered actions (an export from before the choice had the full list)
        "picker": (meta.get("design") or {}).get("picker", "list"),
        "instructions": told(meta.get("design") or {}),
        # how the task was shown (names): models compare only on the same presentation
        "presentation": ((meta.get("design") or {}).get("presentation") or {}).get(key),
        "attention_checks": (rec.get("attention") or {}).get("checks"),
        "attention_failed": (rec.get("attention") or {}).get("failed"),
        **_submitted(inst, events),
    }
    phase2 = answers.get("phase2") or {}
    plan = list(phase2.get("plan") or []) if phase2.get("submitted") else None
    declared = plan is not None and bool(phase2.get("unsolvable"))  # "cannot be done"
    if declared:
        plan = None
    steps, bad = steps_of(plan) if plan is not None else ([], None)
    if finished and declared:  # judged as a model's UNSOLVABLE is (episode.offline_outcome)
        outcome = offline_outcome(row["solvable"], "unsolvable", None)
        row.update(_verdict_columns(None, optimal_length), outcome=outcome, success=False,
                   detected=outcome == "detected", plan_length=None)
        row["val_valid"] = row["val_detail"] = None
    elif not finished or plan is None:
        row.update(_verdict_columns(None, optimal_length), outcome="error", success=False,
                   executable=None, plan_length=None, optimal=None,
                   error=f"did not finish: stopped at {rec.get('step')}")
        row["val_valid"] = row["val_detail"] = None
    elif bad is not None:
        row.update(_verdict_columns(None, optimal_length), plan_length=len(plan),
                   first_failure_step=bad, first_failure_kind="unreadable",
                   first_failure_action=plan[bad - 1],
                   first_failure_detail=f"step {bad} is not an action")
        row["val_valid"] = row["val_detail"] = None
    else:
        row.update(_verdict_columns(validate(inst.problem, steps), optimal_length,
                                    row["solvable"]))
        row["val_valid"], row["val_detail"] = _val(inst, steps)
    row.update(_phase1((answers.get("phase1") or {}).get("text"), inst,
                       steps if plan is not None and bad is None else None))
    row.update(_suggestion(inst, arm, answers, plan))
    row.update(_assistant(meta, rec["arm"], phase2, events, plan, steps, bad, declared))
    row.update(_calls(phase2.get("chat") or []) if assisted(meta, rec["arm"]) else {})
    row["assistant_model"] = (assistant_of(meta, rec["arm"]) or {}).get("model")
    row.update(_tlx(answers.get("tlx")))
    row.update(_times(rec, events))
    row.update(_integrity(rec, events))
    row["latency_s"] = row["time_s"] if row["time_s"] is not None else 0.0
    return row, _events(export, rec, simulated, events)


# a platform's authenticity verdicts that mean "authentic" (Prolific's: high); any other
# verdict given is a signal
AUTHENTIC = frozenset({"high", "authentic", "pass", "passed", "ok"})


def _integrity(rec: dict, events: list[dict]) -> dict:
    """The page scripts' counts summed over the participant's posts (`study/static/
    paradata.js`; none without script), the time to the first keystroke on phase 1, the
    platform's authenticity verdict, and whether any of them is a signal of help from
    elsewhere: a paste, the window losing focus or the page hidden on phase 1 or 2, or a
    verdict other than authentic. None when nothing was recorded or given."""
    seen = [(e.get("page"), e["data"]["paradata"]) for e in events
            if isinstance(e.get("data"), dict) and isinstance(e["data"].get("paradata"), dict)]
    total = {k: sum(int(p.get(k, 0)) for _, p in seen)
             for k in ("paste", "pasted_chars", "blur", "hidden", "hidden_ms")}
    planning = [p for page, p in seen if page in ("phase1", "phase2")]
    first = next((p["first_key_ms"] for page, p in seen
                  if page == "phase1" and p.get("first_key_ms") is not None), None)
    verdict = rec.get("authenticity")
    signals = []
    if planning:
        signals.append(any(p.get("paste", 0) or p.get("blur", 0) or p.get("hidden", 0)
                           for p in planning))
    if verdict:
        signals.append(str(verdict).strip().lower() not in AUTHENTIC)
    return {"paradata": bool(seen), "paste_events": total["paste"] if seen else None,
            "pasted_chars": total["pasted_chars"] if seen else None,
            "focus_losses": total["blur"] if seen else None,
            "hidden_events": total["hidden"] if seen else None,
            "hidden_s": total["hidden_ms"] / 1000 if seen else None,
            "first_key_s": first / 1000 if first is not None else None,
            "authenticity": verdict, "integrity_signal": any(signals) if signals else None}


def told(design: dict) -> str:
    """What people were told beyond the task, as the study config set it ("" for nothing,
    as in the PlanBench paper); an export from before the choice showed the brief's line
    asking for the fewest actions."""
    given = design.get("instructions") or {"minimise": True, "extra": []}
    said = ["find the fewest actions"] if given.get("minimise") else []
    return "; ".join([*said, *given.get("extra", [])])


def _submitted(inst: Instance, events: list[dict]) -> dict:
    """Whether a phase-2 plan was submitted (a feedback page is a submission too), and the
    formal verdict of the last one: kept for someone who stopped after being told it fails,
    whose row is otherwise an `error`."""
    sent = [e for e in events if e.get("page") == "phase2" and e.get("kind") in
            ("submit", "feedback") and isinstance(e.get("data"), dict)]
    if not sent:
        return {"submitted": False, "submitted_valid": None}
    if sent[-1]["data"].get("unsolvable"):  # "cannot be done": right when it cannot
        return {"submitted": True, "submitted_valid": not inst.truth.get("solvable")}
    steps, bad = steps_of(list(sent[-1]["data"].get("plan") or []))
    valid = False if bad is not None else validate(inst.problem, steps).valid
    return {"submitted": True, "submitted_valid": valid}


def _suggestion(inst: Instance, arm: dict, answers: dict, plan: list[str] | None) -> dict:
    sug = (arm.get("suggestion") or {}).get(inst.key)
    if sug is None:
        return {"suggested": False, "suggestion_valid": None, "suggestion_called_correct": None,
                "suggestion_verbatim": None, "suggestion_distance": None,
                "suggestion_left_at": None}
    steps, bad = steps_of(sug["plan"])
    shown = [format_step(s) for s in steps]
    valid = bad is None and validate(inst.problem, steps).valid
    called = (answers.get("suggestion") or {}).get("correct")
    mine = None if plan is None else [format_step(s) for s in steps_of(plan)[0]]
    return {"suggested": True, "suggestion_valid": valid,
            "suggestion_called_correct": None if called is None else bool(called),
            "suggestion_verbatim": None if mine is None else mine == shown,
            "suggestion_distance": None if mine is None else levenshtein(shown, mine),
            "suggestion_left_at": None if mine is None else left_at(shown, mine)}


def assistant_of(meta: dict, arm: str) -> dict | None:
    """The arm's live assistant (its model entry's name, its budget): the export's arm
    says so (`assistant`), or, in an export written before it did, the design the study
    ran under; None for an arm without one."""
    return ((meta.get("arms", {}).get(arm) or {}).get("assistant")
            or ((meta.get("design") or {}).get(f"arms.{arm}") or {}).get("assistant"))


def assisted(meta: dict, arm: str) -> bool:
    """Whether the arm had a live assistant."""
    return assistant_of(meta, arm) is not None


def _assistant(meta: dict, arm: str, phase2: dict, events: list[dict], plan: list[str] | None,
               steps: list[Step], bad: int | None, declared: bool) -> dict:
    """The assistant's columns (`human.assistance`), null for an arm without one. The
    plan is compared in the form proposals are written (`format_step`)."""
    if not assisted(meta, arm):
        return assistance.absent()
    mine = None if plan is None else (list(plan) if bad is not None
                                      else [format_step(s) for s in steps])
    return assistance.measures(phase2.get("chat") or [], [e for e in events
                                                          if e.get("page") == "phase2"],
                               mine, declared)


def _calls(chat: list[dict]) -> dict:
    """On an assistant arm the row's call columns are the assistant's, as a model row's
    are its model's: every call made (a failed one too), its tokens, its cost (None when a
    call was unpriced) and where the price came from."""
    made = assistance.replies(chat)
    tin, tout, usd = assistance.spent(chat)
    sources = sorted({m["price_source"] for m in made if m.get("price_source")})
    return {"n_calls": len(made), "input_tokens": tin, "output_tokens": tout, "cost_usd": usd,
            "price_source": ",".join(sources) if sources else "no model call",
            "cache_hits": sum(bool(m.get("cache_hit")) for m in made)}


def _tlx(answer: dict | None) -> dict:
    ratings = (answer or {}).get("ratings") or {}
    out = {f"tlx_{s}": (int(ratings[s]) if s in ratings else None) for s in TLX}
    out["tlx_raw"] = (answer or {}).get("raw")
    out["tlx_weighted"] = (answer or {}).get("weighted")
    return out


def _times(rec: dict, events: list[dict]) -> dict:
    p1_view, p1_done = _first(events, "phase1", "view"), _last(events, "phase1", "submit")
    p2_view, p2_done = _first(events, "phase2", "view"), _last(events, "phase2", "submit")
    edits = [e for e in events if e["page"] == "phase2" and e["kind"] in EDITS]
    return {
        "time_s": _seconds(p1_view, p2_done), "phase1_s": _seconds(p1_view, p1_done),
        "phase2_s": _seconds(p2_view, p2_done),
        "total_s": _seconds(_time(rec.get("created_at")), _time(rec.get("finished_at"))),
        "edits": len(edits),
        "undos": sum(e["kind"] in ("undo", "remove") for e in edits),
        "moves": sum(e["kind"] in ("up", "down") for e in edits),
        "feedback_seen": sum(e["page"] == "phase2" and (
            e["kind"] == "feedback" or "check" in (e.get("data") or {})) for e in events),
    }


def _events(export: Export, rec: dict, simulated: bool, events: list[dict]) -> list[dict]:
    start = _time(rec.get("created_at"))
    return [{"study": export.name, "participant": rec["participant"], "simulated": simulated,
             "arm": rec["arm"], "instance": rec["instance"], "n": n, "page": e["page"],
             "kind": e["kind"], "at": e["at"], "seconds": _seconds(start, _time(e["at"])),
             "data": None if e.get("data") is None else json.dumps(e["data"], sort_keys=True)}
            for n, e in enumerate(events, 1)]


def judge(folder: Path | str) -> tuple[list[dict], list[dict]]:
    """Every participant's row and every event's, from an export folder."""
    export = Export(folder)
    rows, events = [], []
    for rec in export.records():
        row, evs = judge_record(export, rec)
        rows.append(row)
        events += evs
    return rows, events
