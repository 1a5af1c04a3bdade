"""Replaying a recorded PlanBench results file: scoring it again from the prompt,
the response, the config and the instance files, and comparing with the verdict
PlanBench recorded (which is compared, never used to score).

Only instances with a response and a recorded verdict are scored: an instance
whose response is missing or null (a partial run), empty, or that records no
verdict is counted apart (`no_response`, `empty`, `no_verdict`), never as a
disagreement. A response the dialect cannot read counts as incorrect; a case
whose truth cannot be recovered gets the verdict `unreadable` naming the
instance (never a crash of the whole replay); a config that cannot read the
file's answers at all is the file's error, naming the config and its field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from planaudit.formal import PDDLError
from planaudit.planbench.cases import Outcome
from planaudit.planbench.dialects import READERS, TRANSLATED, Unreadable, best_translated
from planaudit.planbench.material import Config, MaterialError, load_config
from planaudit.planbench.query import Statement, read_statement
from planaudit.planbench.world import World, goal_atoms, world_of

# the results files' `task` field (old and new spellings) -> test id
TASK_IDS = {
    "task_1_plan_generation": "t1", "task_1_plan_generation_zero_shot": "t1",
    "task_2_plan_optimality": "t2", "task_3_plan_verification": "t3",
    "task_4_plan_reuse": "t4", "task_5_plan_generalization": "t5", "task_6_replanning": "t6",
    "task_7_plan_execution": "t7", "task_8_1_goal_shuffling": "t8_1",
    "task_8_2_full_to_partial": "t8_2", "task_8_3_partial_to_full": "t8_3",
}
PLAN_TESTS = ("t1", "t2", "t4", "t5", "t6", "t8_1", "t8_2", "t8_3")
T3_SCORES = ("binary", "w_type", "w_expl")


# disagreements with a recorded verdict that were checked by hand, by
# (config, model, file name, instance id): which side PDDL semantics supports
CHECKED = {
    ("blocksworld_3", "llama-3.1-405b_aws", "task_1_plan_generation_zero_shot", 36):
        "checked by hand: the response proposes a dozen successive plans; read as one plan, as "
        "PlanBench reads responses, it fails at step 4; no reading yields the recorded True: "
        "ours is right",
}


class ResultsError(Exception):
    """A results file that cannot be replayed; the message names the file and field."""


@dataclass
class Results:
    path: Path
    root: Path
    test: str
    config: str
    model: str
    prompt_type: str
    instances: list[dict] = field(repr=False)
    translated: bool = False


def _test_id(task: str, path: Path) -> str:
    if task in TASK_IDS.values():
        return task
    if task in TASK_IDS:
        return TASK_IDS[task]
    stem = path.stem
    for key, test in TASK_IDS.items():
        if stem.startswith(key):
            return test
    raise ResultsError(f"{path}: field 'task': unknown task '{task}'")


def load_results(path: Path | str, root: Path | str | None = None) -> Results:
    """A results file and the root its config lives in (by default the root the file
    sits in: `<root>/results/<config>/<model>/<file>`)."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ResultsError(f"{path}: not UTF-8 text: {e}") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: not JSON: {e}") from None
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror}") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not a JSON object")
    for key in ("task", "instances"):
        if key not in data:
            raise ResultsError(f"{path}: missing field '{key}'")
    if not isinstance(data["instances"], list):
        raise ResultsError(f"{path}: field 'instances' is not a list")
    test = _test_id(str(data["task"]), path)
    parts = path.resolve().parts
    if root is None:
        if "results" not in parts:
            raise ResultsError(f"{path}: not under a root's results/ folder: give --root")
        root = Path(*parts[:len(parts) - 1 - parts[::-1].index("results")])
    config = path.resolve().parent.parent.name
    if not (Path(root) / "configs" / f"{config}.yaml").is_file():
        config = str(data.get("domain", config)).replace("_zero_shot", "")
    translated = any("raw_translation" in i for i in data["instances"] if isinstance(i, dict))
    return Results(path, Path(root), test, config, str(data.get("engine", path.parent.name)),
                   str(data.get("prompt_type", "")), data["instances"], translated)


def dialects_for(res: Results) -> list[str]:
    """Every dialect that applies to the file's test (and file), the default first."""
    base = ["2023", "2024", "2025"]
    if res.test == "t4":
        base = ["2023", "2022", "2024", "2025"]
    if res.test == "t7":
        base = ["2023", "published"]
    if res.test == "t3":
        base = ["2023"]
    if res.translated:
        base = [*TRANSLATED, *base]
    first = default_dialect(res)  # once: for a translated file it reads every translation
    return [first, *(d for d in base if d != first), "strict"]


def default_dialect(res: Results) -> str:
    """The dialect the file was most likely scored by, from the file alone: when it
    carries `raw_translation`, the translated reading that reproduces the most of its
    `extracted_llm_plan` (`dialects.best_translated`); for a plan test, the plan reading that
    reproduces the most of the file's `extracted_llm_plan` (PlanBench's own reading,
    not its verdict), ties going to the root's era (`plan-bench`: 2023, later roots:
    2025); other tests: 2023."""
    if res.translated:
        try:
            return best_translated(load_config(res.root, res.config), res.instances)
        except MaterialError:
            return "translated"
    era = "2023" if res.root.name == "plan-bench" else "2025"
    if res.test not in PLAN_TESTS:
        return "2023"
    try:
        cfg = load_config(res.root, res.config)
    except MaterialError:
        return era
    order = [era] + [d for d in ("2023", "2024", "2025") if d != era]
    hits = dict.fromkeys(order, 0)
    for inst in res.instances[:100]:
        if not isinstance(inst, dict) or not isinstance(inst.get("llm_raw_response"), str):
            continue
        recorded = _plan_lines(inst.get("extracted_llm_plan"))
        if recorded is None:
            continue
        for d in order:
            steps = READERS[d](cfg, inst["llm_raw_response"])
            letters = [_fmt(s) for s in steps]
            names = [_fmt((a, tuple(cfg.objects.get(o, o).split()[0] for o in args))) for a, args in steps]
            hits[d] += recorded in (letters, names)
    return max(order, key=lambda d: hits[d])


def _plan_lines(value) -> list[str] | None:
    if isinstance(value, list):
        value = "\n".join(map(str, value))
    if not isinstance(value, str):
        return None
    return [ln.strip() for ln in value.strip().split("\n") if ln.strip()]


def recorded_verdict(inst: dict, test: str) -> bool | None:
    """The verdict PlanBench recorded; None when the instance records none (or null)."""
    key = "llm_correct_binary" if test == "t3" else "llm_correct"
    for k in (key, "correct"):
        if inst.get(k) is not None:
            return bool(inst[k])
    return None


class Context:
    """What scoring a file needs, computed once: config, world, per-instance statements."""

    def __init__(self, res: Results):
        self.res = res
        self.cfg: Config = load_config(res.root, res.config)
        self.world: World = world_of(self.cfg)
        self._statements: dict[int, Statement] = {}
        if res.test in ("t3", "t7"):  # answers are read as facts: the config must say how
            from planaudit.planbench.execution import fact_phrases, object_names

            fact_phrases(self.cfg)
            object_names(self.cfg)

    def statement(self, query: str) -> Statement:
        key = hash(query)
        st = self._statements.get(key)
        if st is None:
            st = self._statements[key] = read_statement(self.cfg, query)
        return st


def recorded_text(inst: dict, dialect: str, res: Results) -> str | None:
    """The text the dialect reads; None when its field is missing or null."""
    field_name = "raw_translation" if dialect in TRANSLATED else "llm_raw_response"
    if field_name not in inst and dialect in TRANSLATED:
        field_name = "llm_raw_response"
    text = inst.get(field_name)
    if text is None:
        return None
    if not isinstance(text, str):
        raise ResultsError(f"{res.path}: instance {inst.get('instance_id')}: field '{field_name}' "
                           "is not text")
    return text


def _instance_truth(ctx: Context, inst: dict) -> tuple[list, list]:
    task = ctx.cfg.task(inst["instance_id"])
    return list(task.problem.init_atoms), goal_atoms(task)


def score_plan(ctx: Context, inst: dict, steps: list, dialect: str) -> Outcome:
    """A plan test: valid from the test's initial state to the test's goal (t2: and optimal)."""
    test = ctx.res.test
    st = ctx.statement(inst["query"])
    w = ctx.world
    init, goal = st.init, st.goal
    if test in ("t1", "t2", "t8_2", "t8_3") and dialect != "strict":
        init, goal = _instance_truth(ctx, inst)  # PlanBench validates the instance's own goal
    if test == "t4" and dialect not in ("2022", "strict"):
        goal = [a for a in goal if a not in set(init)]  # only the facts that became true
    if test == "t6":
        prefix = w.run(w.bits(st.init), st.plan[:st.event_step])
        if prefix.failed_at is not None:
            raise MaterialError(f"query: the stated plan fails at step {prefix.failed_at}")
        bits = (prefix.bits | w.bits(st.became_true)) & ~w.bits(st.became_false)
        init = w.atoms(bits)
    start, want = w.bits(init), w.bits(goal)
    run = w.run(start, steps)
    if run.failed_at is not None:
        return Outcome(inst["instance_id"], False, "invalid",
                       f"step {run.failed_at} {_fmt(steps[run.failed_at - 1])}: {run.kind} fails")
    if run.bits & want != want:
        missing = [ctx.cfg.fact_text(a) for a in w.atoms(want & ~run.bits)]
        return Outcome(inst["instance_id"], False, "goal-not-reached",
                       f"{len(steps)} steps; goal facts not reached: {', '.join(filter(None, missing))}")
    if test == "t2":
        best = w.optimal_length(init, goal)
        if best is not None and len(steps) != best:
            return Outcome(inst["instance_id"], False, "not-optimal",
                           f"valid in {len(steps)} steps, optimal is {best}")
    return Outcome(inst["instance_id"], True, "valid", f"valid in {len(steps)} steps")


def _checked(res: Results, o: Outcome) -> str:
    note = CHECKED.get((res.config, res.model, res.path.stem, o.instance_id))
    return f"{o.why}; {note}" if note else o.why


def _fmt(step) -> str:
    return "(" + " ".join((step[0], *step[1])) + ")"


def score_instance(ctx: Context, inst: dict, dialect: str) -> Outcome:
    res = ctx.res
    iid = inst.get("instance_id") if isinstance(inst, dict) else None
    if not isinstance(inst, dict) or "instance_id" not in inst or "query" not in inst:
        missing = "instance_id" if not isinstance(inst, dict) or "instance_id" not in inst else "query"
        return Outcome(iid, False, "unreadable", f"{res.path}: an instance has no field '{missing}'")
    try:
        text = recorded_text(inst, dialect, res)
    except ResultsError as e:
        return Outcome(iid, False, "unreadable", str(e))
    raw = inst.get("llm_raw_response")
    if text is None and raw is None:
        return Outcome(iid, None, "no-response", "no response (field missing or null): left out")
    if text is None or not text.strip():
        if not isinstance(raw, str) or not raw.strip():
            return Outcome(iid, None, "empty", "empty response: left out")
        text = ""
    try:
        if res.test in PLAN_TESTS:
            reader = READERS[dialect if dialect in READERS else "2023"]
            try:
                steps = reader(ctx.cfg, text)
            except Unreadable as e:
                return Outcome(iid, False, "unreadable", str(e))
            return score_plan(ctx, inst, steps, dialect)
        if res.test == "t3":
            from planaudit.planbench.verification import score_t3

            return score_t3(ctx, inst, text, dialect)
        if res.test == "t7":
            from planaudit.planbench.execution import score_t7

            return score_t7(ctx, inst, text, dialect)
    except (MaterialError, PDDLError, OSError) as e:
        return Outcome(iid, False, "unreadable", f"instance {iid}: {e}")
    raise ResultsError(f"{res.path}: no scorer for test {res.test}")


def replay(path: Path | str, root: Path | str | None = None, dialect: str | None = None,
           all_dialects: bool = True) -> dict:
    """The summary `planaudit planbench replay --json` prints (docs/howto/planbench-replay.md); without
    `all_dialects`, only the chosen dialect is scored (`dialects` then holds it alone)."""
    res = load_results(path, root)
    try:
        ctx = Context(res)
    except MaterialError as e:
        raise ResultsError(f"{res.path}: {e}") from None
    names = dialects_for(res)
    chosen = dialect or names[0]
    if chosen not in names:
        raise ResultsError(f"{res.path}: dialect '{chosen}' does not apply to {res.test} "
                           f"(applicable: {', '.join(names)})")
    per: dict[str, list[Outcome]] = {d: [score_instance(ctx, i, d) for i in res.instances]
                                     for d in (names if all_dialects else [chosen])}
    outs = per[chosen]
    recs = [recorded_verdict(i, res.test) if isinstance(i, dict) else None for i in res.instances]
    scored = [(o, r, i) for o, r, i in zip(outs, recs, res.instances, strict=True)
              if o.correct is not None and r is not None]
    summary = {
        "task": res.test, "domain": res.config, "model": res.model, "dialect": chosen,
        "file": str(res.path), "instances": len(res.instances), "scored": len(scored),
        "no_response": sum(o.outcome == "no-response" for o in outs),
        "empty": sum(o.outcome == "empty" for o in outs),
        "no_verdict": sum(o.correct is not None and r is None for o, r in zip(outs, recs, strict=True)),
        "correct": sum(bool(o.correct) for o, _, _ in scored),
        "recorded_correct": sum(bool(r) for _, r, _ in scored),
        "agree": sum(bool(o.correct) == r for o, r, _ in scored),
        "unreadable": [{"instance_id": o.instance_id, "why": o.why} for o in outs
                       if o.outcome == "unreadable"],
        "disagreements": [{"instance_id": o.instance_id, "ours": o.correct, "recorded": r,
                           "why": _checked(res, o)} for o, r, _ in scored if o.correct != r],
    }
    if res.test == "t3":
        for key in T3_SCORES:
            summary[f"correct_{key}"] = sum(bool(o.scores.get(key)) for o, _, _ in scored)
            summary[f"recorded_{key}"] = sum(bool(i.get(f"llm_correct_{key}")) for _, _, i in scored)
    summary["dialects"] = {}
    for d, os_ in per.items():
        pairs = [(o, r) for o, r in zip(os_, recs, strict=True) if o.correct is not None and r is not None]
        summary["dialects"][d] = {"correct": sum(bool(o.correct) for o, _ in pairs),
                                  "agree": sum(bool(o.correct) == r for o, r in pairs),
                                  "scored": len(pairs)}
    return summary
