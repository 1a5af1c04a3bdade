"""What people see and what judges them: each instance of a study prepared and proven as
the suite rules prepare it for models (the same brief, the same hidden model), its
grounded actions, and the suggestions of the arms that show one, resolved from a run's
transcripts (or given plans) and validated by `formal/` before the study opens. A
reference model's missing suggestions are generated here, once, through `llm/` (no
network); a paid model's must come from a run: no call is made while anyone waits."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from planaudit import atomic
from planaudit.config import ConfigError, field_name
from planaudit.contract import extract, parse_action
from planaudit.formal import PDDLError
from planaudit.formal.ground import Task
from planaudit.formal.load import load_task
from planaudit.formal.plan import format_step
from planaudit.formal.task import conjuncts, holds
from planaudit.formal.validate import validate
from planaudit.study.settings import Study, where
from planaudit.suite.brief import BriefError, load_templates
from planaudit.suite.world import World


@dataclass(frozen=True)
class Check:
    """A plan (or a prefix of one) judged against the hidden model."""

    valid: bool
    executable: bool
    goal_reached: bool
    length: int
    optimal: bool | None
    failure_step: int | None  # 1-based
    failure_kind: str | None
    message: str | None  # the first failure in the domain's words

    def to_json(self) -> dict:
        return dict(self.__dict__)


class Material:
    """One prepared task: its brief, hidden model, grounded actions and optimum."""

    def __init__(self, key: str, folder: Path):
        self.key = key
        self.folder = folder
        self.brief = json.loads((folder / "brief.json").read_text())
        self.truth = json.loads((folder / "truth.json").read_text())

    @cached_property
    def task(self) -> Task:
        return load_task(self.folder / "domain.pddl", self.folder / "problem.pddl")

    @cached_property
    def world(self) -> World:
        source = self.brief.get("source", "")
        if source.endswith("nl.yaml") and Path(source).is_file():
            templates = load_templates(source)
        else:
            from planaudit.suite.generic import templates as generic

            templates = generic(self.task.domain)
        return World(self.folder / "domain.pddl", templates)

    @cached_property
    def actions(self) -> tuple[str, ...]:
        """Every grounded action people may pick, in a stable order."""
        return tuple(sorted(op.name for op in self.task.all_operators()))

    @cached_property
    def action_set(self) -> frozenset[str]:
        return frozenset(self.actions)

    def instance_text(self, minimise: bool) -> str:
        """The task as people read it: the brief's instance, without its closing request
        for the fewest actions (or least cost) unless the study asks for it (`minimise`)."""
        text = self.brief.get("instance", "")
        if minimise:
            return text
        lines = text.rstrip("\n").split("\n")
        if lines and lines[-1].startswith("Minimise the "):
            lines = lines[:-1]
            while lines and not lines[-1].strip():
                lines.pop()
        return "\n".join(lines)

    @property
    def in_planbench_words(self) -> bool:
        """A PlanBench instance, told in its config's words: its steps are shown so too."""
        return self.brief.get("source") == "planbench" and bool(self.brief.get("actions"))

    def words(self, step: str) -> str:
        """A grounded step as a participant reads it: on a PlanBench instance in PlanBench's
        words ("unstack the blue block from on top of the red block"), else as the brief
        writes actions (`(unstack b a)`, the form a model writes too)."""
        parsed = parse_action(step, None) if self.in_planbench_words else None
        if parsed is None:
            return step
        name, args = parsed
        template = self.brief["actions"].get(name)
        objects = self.brief.get("objects") or {}
        if template is None or template.count("{}") != len(args):
            return step
        return template.format(*(objects.get(a, a) for a in args))

    @cached_property
    def picker(self) -> list[dict]:
        """The default phase-2 picker: each action in the task's words, then a choice of
        objects per parameter in order (only objects of its type), so a person picks an
        action and its objects rather than scanning every grounded action (112 on seven
        blocks). Each row: the action, the text around its slots, the slots' objects as
        (name, words)."""
        objects = self.brief.get("objects") or {} if self.in_planbench_words else {}
        templates = self.brief.get("actions") or {} if self.in_planbench_words else {}
        rows = []
        for name, schema in self.task.domain.actions.items():
            arity = len(schema.params)
            template = templates.get(name)
            if template is not None and template.count("{}") == arity:
                parts = template.split("{}")
            else:
                parts = [name.replace("-", " ").replace("_", " ") + (" " if arity else ""),
                         *([" "] * max(arity - 1, 0)), *([""] if arity else [])]
            slots = [[(o, objects.get(o, o)) for o in sorted(self.task.objects_of(types))]
                     for _, types in schema.params]
            label = parts[0].strip() or name
            rows.append({"action": name, "label": label, "parts": parts, "slots": slots})
        return rows

    def step_of(self, name: str, args: list[str]) -> str | None:
        """The grounded step `(name args...)` if the domain has it and the objects fit
        its parameters' types (a step whose conditions can never hold is still a step:
        the validator judges it), else None."""
        from planaudit.formal.ground import GroundingError

        try:
            self.task.operator(name, tuple(args))
        except GroundingError:
            return None
        return format_step((name, tuple(args)))

    @property
    def solvable(self) -> bool:
        return bool(self.truth.get("solvable"))

    @property
    def optimal_length(self) -> int | None:
        return self.truth.get("optimal_length")

    @property
    def plan(self) -> list[str]:
        return list(self.truth.get("plan") or [])

    def check(self, plan: list[str]) -> Check:
        """`plan` judged by `formal/`; a failure told as the brief tells the world."""
        steps = []
        for i, text in enumerate(plan, 1):
            step = parse_action(text, None)
            if step is None:
                return Check(False, False, False, len(plan), None, i, "malformed",
                             f"step {i}: '{text}' is not an action")
            steps.append(step)
        v = validate(self.task, steps)
        optimal = None
        if v.valid and self.optimal_length is not None:
            optimal = v.length == self.optimal_length
        if v.failure is None:
            return Check(True, True, True, v.length, optimal, None, None, None)
        f = v.failure
        words = (self._words(steps, f.step, f.kind) if f.kind in ("precondition", "goal")
                 or f.step is None else f"Step {f.step}: {f.detail.removeprefix(f'step {f.step} ')}.")
        return Check(False, v.executable, v.goal_reached, v.length, None, f.step, f.kind, words)

    def _words(self, steps, step: int | None, kind: str) -> str:
        state = self.task.init
        for s in steps[: (step or len(steps) + 1) - 1]:
            state = self.task.operator(*s).apply(state)
        if kind == "goal":
            unmet = [c for c in conjuncts(self.task.goal) if not holds(c, state)]
            return ("Every step can be done, but the goal does not hold at the end: "
                    + "; ".join(self._say(unmet)) + " still missing.")
        op = self.task.operator(*steps[step - 1])
        unmet = self._say([c for c in conjuncts(op.pre) if not holds(c, state)])
        which = "this does not hold" if len(unmet) == 1 else "these do not hold"
        return (f"Step {step}, {self.words(format_step(steps[step - 1]))}, cannot be done at "
                f"that point: {which}: {'; '.join(unmet)}.")

    def _say(self, formulas) -> list[str]:
        if self.in_planbench_words:
            return [self._planbench_fact(c) for c in formulas]
        try:
            return [self.world.renderer.sentence(self.task.lift(c)) for c in formulas]
        except BriefError:
            return [self.task.describe(c) for c in formulas]

    def _planbench_fact(self, f: tuple) -> str:
        """A compiled fact in PlanBench's words (its config's predicate templates, which the
        brief keeps); what they cannot say, as PDDL."""
        if f[0] == "not":
            return "not: " + self._planbench_fact(f[1])
        if f[0] != "atom":
            return self.task.describe(f)
        pred, args = self.task.atoms[f[1]]
        template = (self.brief.get("predicates") or {}).get(pred)
        objects = self.brief.get("objects") or {}
        if not template or template.count("{}") != len(args):
            return self.task.describe(f)
        return template.format(*(objects.get(a, a) for a in args))

    def state_after(self, plan: list[str]) -> list[str] | None:
        """The facts that hold after `plan` in the domain's words (None if it fails)."""
        state = self.task.init
        for text in plan:
            step = parse_action(text, None)
            if step is None:
                return None
            op = self.task.operator(*step)
            if not op.applicable(state):
                return None
            state = op.apply(state)
        if self.in_planbench_words:
            from planaudit.formal.task import atom_indices

            return sorted(self._planbench_fact(("atom", i)) for i in atom_indices(state[0]))
        return self.world.state_sentences(self.task, state)


@dataclass
class Materials:
    """Every task of a study, and each suggestion arm's plan per instance."""

    instances: dict[str, Material]
    example: Material
    example_solution: list[str]
    suggestions: dict[str, dict[str, dict]]  # arm -> instance -> {plan, check, source}


def _prepare(study: Study, key: str, field_path: list) -> Material:
    from planaudit.suite.catalog import CatalogError
    from planaudit.suite.prepare import prepare_task
    from planaudit.suite.records import LabelError

    if key.startswith("planbench:"):
        from planaudit.study.planbench_source import prepare_planbench

        config, _, n = key.removeprefix("planbench:").partition("/")
        try:
            folder = prepare_planbench(study.planbench_root, config, n,
                                       study.results / "planbench" / config / n)
        except (ValueError, PDDLError) as e:
            raise ConfigError(f"{where(study, field_path)}{field_name(field_path)}: {key}: {e}") from None
        return Material(key, folder)
    domain, _, task = key.partition("/")
    folder = study.results / "suite" / domain / task
    if not (folder / "truth.json").is_file():
        print(f"study: preparing and proving {key} (as `snakemake suite` would)", file=sys.stderr)
        try:
            folder = prepare_task(study.experiment, domain, task, study.results)
        except (CatalogError, BriefError, LabelError, KeyError) as e:
            raise ConfigError(f"{where(study, field_path)}{field_name(field_path)}: {key}: {e}") from None
    return Material(key, folder)


def _solvable(study: Study, m: Material, field_path: list) -> Material:
    """The example, which shows a plan that solves it, must be solvable (an instance need
    not: people can say "this task cannot be done", judged as a model's UNSOLVABLE is)."""
    if not m.solvable:
        raise ConfigError(f"{where(study, field_path)}{field_name(field_path)}: {m.key}: "
                          "unsolvable; the example shows a plan that solves it")
    return m


def _transcript_plan(path: Path) -> str | None:
    steps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    calls = [s for s in steps if isinstance(s, dict) and "call" in s]
    final = [s for s in calls if s.get("purpose") == "final"] or calls
    return None if not final else (final[-1]["call"].get("content") or "")


def _generate(study: Study, arm: str, model: str, method: str, m: Material, out: Path) -> None:
    """A reference model's answer on `m`, through `llm/` as any episode's, kept at `out`."""
    import asyncio

    from planaudit.experiment import Experiment, shard_hash
    from planaudit.llm.cache import Cache
    from planaudit.llm.client import Client
    from planaudit.shard import episode_runner

    ex = Experiment.from_dict(study.experiment)
    entry = ex.model(model)
    params = ex.method("offline", method, None)
    values = params.to_dict()
    client = Client(entry.client(), Cache(str(study.results / "cache")))
    _row, transcript = asyncio.run(episode_runner("offline", entry)(
        client, method, values, m.folder, task_name=m.key,
        config_hash=shard_hash(entry, method, values), reference_meta=entry.reference, tier=entry.tier))
    atomic.write_text(out, "".join(json.dumps(s) + "\n" for s in transcript))


def _suggestion(study: Study, i: int, m: Material) -> dict:
    arm = study.arms[i]
    s = arm.suggestion
    assert s is not None
    field_path = ["arms", i, "suggestion"]
    if s.planbench is not None:
        from planaudit.study.planbench_source import planbench_suggestion, planbench_suggestion_words

        if not m.key.startswith("planbench:"):
            raise ConfigError(f"{where(study, field_path)}arms[{i}].suggestion.planbench: "
                              f"{m.key} is not a PlanBench instance (planbench:CONFIG/N)")
        try:
            plan = planbench_suggestion(s.planbench, m.key.rsplit("/", 1)[1], study.planbench_root)
            words = planbench_suggestion_words(s.planbench, m.key.rsplit("/", 1)[1],
                                               study.planbench_root)
        except ValueError as e:
            raise ConfigError(f"{where(study, field_path)}arms[{i}].suggestion.planbench: {e}") from None
        # a recorded model's plan is the model's: a step naming what the task lacks makes it
        # a wrong suggestion, not a wrong config
        # shown to people in the model's own words, as its results file holds them
        return {"plan": plan, "check": m.check(plan).to_json(), "source": str(s.planbench),
                "model": None, "method": None, "words": words}
    if s.plans:
        if m.key not in s.plans:
            raise ConfigError(f"{where(study, field_path)}arms[{i}].suggestion.plans: no plan "
                              f"for {m.key}")
        plan, source = list(s.plans[m.key]), "config"
    else:
        domain, _, task = m.key.partition("/")
        path = s.run / "transcripts" / "offline" / s.model / s.method / domain / f"{task}.jsonl"
        if not path.is_file():
            entry = next((e for e in study.experiment.get("models", []) if e["name"] == s.model), None)
            if entry is None or entry.get("tier") != "reference":
                raise ConfigError(
                    f"{where(study, field_path)}arms[{i}].suggestion: no transcript {path} (run "
                    f"offline {s.model}/{s.method} on {m.key} first: a study never calls a model "
                    "that is not a reference model)")
            path = study.results / "suggestions" / s.model / s.method / domain / f"{task}.jsonl"
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                _generate(study, arm.name, s.model, s.method, m, path)
        reply = _transcript_plan(path)
        got = extract(reply)
        if got.kind != "plan":
            raise ConfigError(f"{where(study, field_path)}arms[{i}].suggestion: {s.model}'s answer "
                              f"on {m.key} ({path}) is no plan ({got.kind}): nothing to suggest")
        plan, source = [format_step(st) for st in got.steps], str(path)
    check = m.check(plan)
    if check.failure_kind == "malformed" or check.failure_kind in (
            "unknown-action", "wrong-arity", "unknown-object", "type-mismatch"):
        raise ConfigError(f"{where(study, field_path)}arms[{i}].suggestion on {m.key}: "
                          f"{check.message} (was the run's suite prepared with the study's names?)")
    return {"plan": plan, "check": check.to_json(), "source": source,
            "model": s.model, "method": s.method}


def resolve(study: Study) -> Materials:
    """Every task prepared and proven, every suggestion found and judged: before opening."""
    instances = {k: _prepare(study, k, ["instances", n]) for n, k in enumerate(study.instances)}
    example = _solvable(study, _prepare(study, study.example, ["example", "task"]),
                        ["example", "task"])
    solution = list(study.example_solution or example.plan)
    verdict = example.check(solution)
    if not verdict.valid:
        raise ConfigError(f"{where(study, ['example', 'solution'])}example.solution: not a valid "
                          f"plan of {study.example}: {verdict.message}")
    suggestions: dict[str, dict[str, dict]] = {}
    for i, arm in enumerate(study.arms):
        if arm.suggestion is not None:
            suggestions[arm.name] = {k: _suggestion(study, i, m) for k, m in instances.items()}
    atomic.write_text(study.results / "suggestions.json", json.dumps(suggestions, indent=1) + "\n")
    return Materials(instances, example, solution, suggestions)


def design(study: Study, materials: Materials) -> dict:
    """What people are assigned to and shown, by field: a study keeps it, and refuses to
    go on with another once people have enrolled."""
    out = {"instances": list(study.instances), "example": study.example,
           "example_solution": materials.example_solution, "assignment": study.assignment,
           "consent_hash": study.consent_hash, "tlx_pairwise": study.tlx_pairwise,
           "text_chars": study.text_chars, "plan_steps": study.plan_steps,
           "picker": study.picker, "instructions": study.instructions,
           "presentation": {k: study.presentation(k) for k in study.instances},
           "attention": [dict(c.__dict__, options=list(c.options)) for c in study.attention[0]],
           "reject_after": study.attention[1]}
    for arm in study.arms:
        sug = materials.suggestions.get(arm.name)
        out[f"arms.{arm.name}"] = {
            "feedback": arm.feedback, "show_state": arm.show_state,
            "suggestion": None if sug is None else {
                "label": arm.suggestion.label, "plans": {k: v["plan"] for k, v in sug.items()}}}
        if arm.assistant is not None:  # only then: older studies' designs stay as they were
            out[f"arms.{arm.name}"]["assistant"] = dict(arm.assistant.__dict__)
    return out
