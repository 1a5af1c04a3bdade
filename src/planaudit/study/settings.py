"""A study config read into typed settings: checked against `schema.yaml` beside this
module (a bad field is named by file:line, as an experiment config's is) and against what
exists (its experiment config, its consent file), before anything is prepared or served."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from planaudit.config import ConfigError, load_config, locate, read_layer, validate
from planaudit.study.allocation import Assignment

SCHEMA = Path(__file__).with_name("schema.yaml")
DEFAULT_CONSENT = Path(__file__).with_name("texts") / "consent.md"
FEEDBACK = ("none", "submission", "step")
ADMIN_ENV = "PLANAUDIT_STUDY_ADMIN_TOKEN"  # the researchers' token: the server's environment
SIMULATED_PREFIX = "SIMULATED-"  # platform ids of simulated participants: export tells them apart


def instance_tag(key: str) -> str:
    """The opaque tag of an instance key a page carries (a disguised task's key must not
    be readable): sha256 of the key, hex, 12 digits."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Suggestion:
    run: Path | None
    planbench: Path | None
    model: str | None
    method: str | None
    plans: dict[str, list[str]]
    label: str


DEFAULT_SYSTEM_PROMPT = Path(__file__).with_name("texts") / "assistant.md"
ASSISTANT_LABEL = "An AI assistant you can ask about this task. It is not perfect and can make mistakes."


@dataclass(frozen=True)
class Assistant:
    """A live assistant beside phase 2: a model entry of the experiment config, the
    study's system prompt, and each participant's budget (messages, tokens)."""

    model: str
    system_prompt: str
    turns: int = 6
    tokens: int = 30000
    reply_tokens: int = 800
    message_chars: int = 1000
    sees_plan: bool = True
    label: str = ASSISTANT_LABEL


@dataclass(frozen=True)
class Arm:
    name: str
    feedback: str = "none"
    show_state: bool = False
    suggestion: Suggestion | None = None
    assistant: Assistant | None = None


@dataclass(frozen=True)
class AttentionCheck:
    """An instructed-response item: the question names the option to choose."""

    id: str
    page: str
    question: str
    options: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class Pay:
    currency: str = "USD"
    base: float = 0.0
    valid_bonus: float = 0.0
    invalid_deduction: float = 0.0


@dataclass(frozen=True)
class Study:
    """One study: what people plan, the arms, the pay rule, and where records go."""

    name: str
    source: Path  # the study config file
    experiment: dict  # the experiment config with the study's suite laid over it
    results: Path
    database: str | None
    instances: tuple[str, ...]
    example: str
    example_solution: tuple[str, ...] | None
    arms: tuple[Arm, ...]
    assignment: str | dict  # as the config gives it (the design records it so)
    pay: Pay
    completion_code: str
    redirect: str | None
    params: dict[str, str]  # participant, study, session -> URL parameter name
    consent: str
    tlx_pairwise: bool
    text_chars: int
    plan_steps: int
    planbench_root: Path | None = None
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def platform(self) -> dict:
        """`platform`: the study id a link must carry (None: any), and whether a session
        id is required."""
        given = self.raw.get("platform") or {}
        return {"study_id": given.get("study_id"),
                "require_session": bool(given.get("require_session", True))}

    @property
    def enrolment(self) -> dict:
        """`enrolment`: the cap (None: none) and whether the study is closed."""
        given = self.raw.get("enrolment") or {}
        return {"cap": given.get("cap"), "closed": bool(given.get("closed", False))}

    @property
    def exclusions(self) -> Path | None:
        """The exclusion list's file, relative to the config."""
        given = self.raw.get("exclusions")
        return None if not given else (self.source.parent / given).resolve()

    @property
    def instructions(self) -> dict:
        """`instructions`: whether the brief's "minimise" line is kept, and extra lines."""
        given = self.raw.get("instructions") or {}
        return {"minimise": bool(given.get("minimise", False)),
                "extra": [str(x) for x in given.get("extra") or ()]}

    def presentation(self, key: str) -> str:
        """How instance `key` is shown to people (PlanBench's words, or the suite's names
        under the study's experiment config): model rows compare only on the same."""
        if key.startswith("planbench:"):
            return "PlanBench's words"
        from planaudit.suite.catalog import presentation

        return presentation(self.experiment.get("suite") or {}, key.split("/", 1)[0])

    @property
    def picker(self) -> str:
        """How phase 2 offers actions: `objects` (action, then objects) or `list`."""
        return str(self.raw.get("picker", "objects"))

    @property
    def attention(self) -> tuple[tuple[AttentionCheck, ...], int]:
        """The attention checks, and how many failures exclude (the platform's rule: 2)."""
        given = self.raw.get("attention") or {}
        checks = tuple(AttentionCheck(c["id"], c["page"], c["question"], tuple(c["options"]),
                                      c["answer"]) for c in given.get("checks") or ())
        return checks, int(given.get("reject_after", 2))

    def checks_on(self, page: str) -> tuple[AttentionCheck, ...]:
        return tuple(c for c in self.attention[0] if c.page == page)

    @property
    def authenticity(self) -> Path | None:
        """The platform's authenticity verdicts' file, relative to the config."""
        given = self.raw.get("authenticity")
        return None if not given else (self.source.parent / given).resolve()

    @property
    def allocation(self) -> Assignment:
        """The assignment as the server draws it (`study/allocation.py`)."""
        return Assignment.of(self.assignment)

    @property
    def consent_hash(self) -> str:
        return hashlib.sha256(self.consent.encode()).hexdigest()

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)

    def database_url(self, override: str | None = None) -> str:
        """The SQLAlchemy URL: --db, the config's, or SQLite under the results folder."""
        url = override or self.database
        if url:
            return url
        return f"sqlite:///{(self.results / 'study.sqlite').resolve()}"


def _where(path: Path, where: list) -> str:
    return locate([path], where, read_layer(path)[0]) or f"{path}: "


def load_study(path: str | Path) -> Study:
    """The study config at `path`, checked; ConfigError names file:line:field."""
    path = Path(path)
    data, node = read_layer(path)
    validate(data, [(path, node)], schema=SCHEMA, regimes=False)
    experiment_file = Path(data.get("experiment", "config/config.yaml"))
    try:
        experiment = load_config(experiment_file, base=None)
    except ConfigError as e:
        raise ConfigError(f"{_where(path, ['experiment'])}experiment: {e}") from None
    if data.get("suite"):
        experiment = dict(experiment, suite={**experiment["suite"], **data["suite"]})
    results = Path(data.get("results")
                   or Path(experiment.get("results", "results")) / "study" / data["study"])
    names = [a["name"] for a in data["arms"]]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"{_where(path, ['arms', i, 'name'])}arms[{i}].name: '{name}' "
                              "names two arms")
    arms = []
    for i, a in enumerate(data["arms"]):
        s = a.get("suggestion")
        sug = None
        if s is not None:
            has_run = "run" in s or "model" in s or "method" in s
            if has_run and not all(k in s for k in ("run", "model", "method")):
                raise ConfigError(f"{_where(path, ['arms', i, 'suggestion'])}arms[{i}].suggestion: "
                                  "a run's plans need run, model and method")
            if [has_run, "plans" in s, "planbench" in s].count(True) != 1:
                raise ConfigError(f"{_where(path, ['arms', i, 'suggestion'])}arms[{i}].suggestion: "
                                  "give one of run/model/method, planbench or plans")
            sug = Suggestion(Path(s["run"]) if "run" in s else None,
                             Path(s["planbench"]) if "planbench" in s else None,
                             s.get("model"), s.get("method"),
                             {k: list(v) for k, v in s.get("plans", {}).items()},
                             s.get("label", "A plan suggested by an AI system. It is not perfect "
                                            "and can make mistakes."))
        arms.append(Arm(a["name"], a.get("feedback", "none"), bool(a.get("show_state", False)), sug,
                        _assistant(path, i, a, experiment)))
    seen_ids: set[str] = set()
    for i, c in enumerate((data.get("attention") or {}).get("checks") or ()):
        at = ["attention", "checks", i]
        if c["id"] in seen_ids:
            raise ConfigError(f"{_where(path, [*at, 'id'])}attention.checks[{i}].id: "
                              f"'{c['id']}' names two checks")
        seen_ids.add(c["id"])
        if c["answer"] not in c["options"]:
            raise ConfigError(f"{_where(path, [*at, 'answer'])}attention.checks[{i}].answer: "
                              f"'{c['answer']}' is not one of its options")
    consent_file = Path(data["consent"]) if "consent" in data else DEFAULT_CONSENT
    if not consent_file.is_file():
        raise ConfigError(f"{_where(path, ['consent'])}consent: no such file {consent_file}")
    pay = data.get("pay", {})
    urlp = data.get("url_parameters", {})
    limits = data.get("limits", {})
    completion = data.get("completion", {"code": "PLANAUDIT"})
    ex = data["example"]
    if ex["task"] in data["instances"]:
        raise ConfigError(f"{_where(path, ['example', 'task'])}example.task: {ex['task']} is also "
                          "an instance people plan: the example must be another task")
    return Study(
        name=data["study"], source=path, experiment=experiment, results=results,
        database=data.get("database"), instances=tuple(data["instances"]), example=ex["task"],
        example_solution=tuple(ex["solution"]) if "solution" in ex else None, arms=tuple(arms),
        assignment=data.get("assignment", "balanced"),
        pay=Pay(pay.get("currency", "USD"), float(pay.get("base", 0)),
                float(pay.get("valid_bonus", 0)), float(pay.get("invalid_deduction", 0))),
        completion_code=completion["code"], redirect=completion.get("redirect"),
        params={"participant": urlp.get("participant", "PROLIFIC_PID"),
                "study": urlp.get("study", "STUDY_ID"), "session": urlp.get("session", "SESSION_ID")},
        consent=consent_file.read_text(), tlx_pairwise=bool(data.get("tlx", {}).get("pairwise", True)),
        text_chars=int(limits.get("text_chars", 5000)), plan_steps=int(limits.get("plan_steps", 100)),
        planbench_root=Path(data["planbench_root"]) if "planbench_root" in data else None, raw=data)


def _assistant(path: Path, i: int, arm: dict, experiment: dict) -> Assistant | None:
    """An arm's assistant, its model found among the experiment's entries (a name that is
    none of them is an error here, before any request could leave the machine)."""
    a = arm.get("assistant")
    if a is None:
        return None
    at = ["arms", i, "assistant"]
    if arm.get("suggestion") is not None:
        raise ConfigError(f"{_where(path, at)}arms[{i}].assistant: an arm shows a suggestion "
                          "or has an assistant, not both")
    entries = {m.get("name"): m for m in experiment.get("models", [])}
    if a["model"] not in entries:
        raise ConfigError(f"{_where(path, [*at, 'model'])}arms[{i}].assistant.model: "
                          f"'{a['model']}' is not a model of the experiment config (one of: "
                          f"{', '.join(map(str, entries))})")
    if str(entries[a["model"]].get("model", "")).startswith("planner/"):
        raise ConfigError(f"{_where(path, [*at, 'model'])}arms[{i}].assistant.model: "
                          f"'{a['model']}' is a classical planner: it plans, it does not talk")
    prompt = a.get("system_prompt")
    if prompt is None:
        prompt = DEFAULT_SYSTEM_PROMPT.read_text()
    if not prompt.strip():
        raise ConfigError(f"{_where(path, [*at, 'system_prompt'])}arms[{i}].assistant."
                          "system_prompt: empty")
    got = Assistant(a["model"], prompt, int(a.get("turns", 6)), int(a.get("tokens", 30000)),
                    int(a.get("reply_tokens", 800)), int(a.get("message_chars", 1000)),
                    bool(a.get("sees_plan", True)), a.get("label", ASSISTANT_LABEL))
    if got.reply_tokens >= got.tokens:
        raise ConfigError(f"{_where(path, [*at, 'reply_tokens'])}arms[{i}].assistant.reply_tokens: "
                          f"{got.reply_tokens} leaves nothing of the budget of {got.tokens} tokens "
                          "for the prompt")
    return got


def where(study: Study, field_path: list) -> str:
    """`file:line: ` of a field of the study config, for checks past the schema."""
    return _where(study.source, field_path)
