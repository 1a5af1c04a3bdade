"""PlanBench's own instances as a study's tasks, posed as the PlanBench paper's human study
posed them: PlanBench's instance in PlanBench's words, a recorded model's plan as the
suggestion. The words are `planaudit.planbench`'s rendering of PlanBench's prompts (the
config's intro, the t1 statement without its question); the truth is proven by `formal/` on
the copied PDDL files, never read from PlanBench's; a recorded plan is read by the replay's
dialect machinery, as PlanBench's scoring read that file, and judged later like any plan."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from planaudit import atomic
from planaudit.formal import PDDLError
from planaudit.formal.plan import format_step
from planaudit.formal.truth import Limits, solve
from planaudit.planbench.dialects import READERS, Unreadable
from planaudit.planbench.generate import goal_text_of, statement_text
from planaudit.planbench.language import sort_key
from planaudit.planbench.material import Config, MaterialError, load_config
from planaudit.planbench.replay import Results, ResultsError, default_dialect, load_results, recorded_text
from planaudit.planbench.world import goal_atoms

DEFAULT_ROOT = Path("../shared/planbench/plan-bench")  # from the project root, as config/planbench.yaml
PREAMBLE = "Find a sequence of actions that reaches the goal from the initial conditions."
FILES = ("domain.pddl", "problem.pddl", "brief.json", "truth.json")  # truth.json is written last
PLAN_FOR_INSTANCE = ("t1", "t2")  # tests whose answer is a plan for the instance's own state and goal


def _instance_id(instance: int | str, where: object) -> int:
    try:
        return int(str(instance).strip())
    except ValueError:
        raise ValueError(f"{where}: instance '{instance}' is not a PlanBench instance number") from None


def _config(root: Path, domain: str) -> Config:
    if not (root / "configs").is_dir():
        raise ValueError(f"{root}: not a PlanBench root (no configs/ folder)")
    try:
        cfg = load_config(root, domain)
    except MaterialError as e:
        raise ValueError(f"PlanBench domain '{domain}': {e}") from None
    if not cfg.domain_path.is_file():
        raise ValueError(f"{cfg.path}: domain '{domain}': no domain file {cfg.domain_path}")
    return cfg


def _texts(cfg: Config, iid: int) -> tuple[str, str]:
    """(domain, instance): the config's intro and the instance's t1 [STATEMENT] without its
    question, rendered by `generate` as in PlanBench's prompts (`generate.cases` itself needs
    a world of every encoded object, which template-named configs such as logistics lack)."""
    task = cfg.task(iid)
    init = sorted(task.problem.init_atoms, key=sort_key)
    statement = statement_text(cfg, init, goal_text_of(cfg, goal_atoms(task)))
    return cfg.intro("domain_intro").strip(), statement.removeprefix("[STATEMENT]").strip()


def prepare_planbench(root: Path | str | None, domain: str, instance: int | str, outdir: Path) -> Path:
    """The task folder `outdir` (domain.pddl, problem.pddl, brief.json, truth.json) for
    PlanBench instance `instance` of config `domain` under `root` (None: DEFAULT_ROOT), so a
    study's `Material(key, outdir)` reads it like a suite task. A complete folder is left
    alone (truth.json comes last, every file atomically); ValueError names a missing root,
    config, instance file, or a folder that holds another instance."""
    root, outdir = Path(root or DEFAULT_ROOT), Path(outdir)
    iid = _instance_id(instance, f"{root}: {domain}")
    if all((outdir / f).is_file() for f in FILES) and "actions" in json.loads(
            (outdir / "brief.json").read_text()):  # an older folder lacks the words of steps
        truth = json.loads((outdir / "truth.json").read_text())
        if (truth.get("domain"), truth.get("task")) != (domain, str(iid)):
            raise ValueError(f"{outdir}: holds {truth.get('domain')} instance {truth.get('task')}, "
                             f"not {domain} instance {iid}")
        return outdir
    cfg = _config(root, domain)
    problem = cfg.instance_path(iid)
    if not problem.is_file():
        raise ValueError(f"{problem}: no such file: PlanBench {domain} has no instance {iid}")
    try:
        intro, statement = _texts(cfg, iid)
        record = solve(str(cfg.domain_path), str(problem), Limits(external=False))
        objects = {o: cfg.object_text(o) for o in cfg.task(iid).problem.objects}
    except (MaterialError, PDDLError) as e:
        raise ValueError(f"{problem}: {domain} instance {iid}: {e}") from None
    if record["solvable"] is None:
        raise ValueError(f"{problem}: {domain} instance {iid}: formal/ could not decide it within its limits")
    certificate = record.pop("certificate_data", None)
    atomic.copy_file(cfg.domain_path, outdir / "domain.pddl")
    atomic.copy_file(problem, outdir / "problem.pddl")
    # PlanBench's words for a page that shows steps, facts and a picker: PDDL name -> words,
    # and the config's action and predicate templates ("unstack the {} from on top of the {}")
    brief = {"preamble": PREAMBLE, "domain": intro, "instance": statement, "source": "planbench",
             "objects": objects, "actions": dict(cfg.actions), "predicates": dict(cfg.predicates)}
    atomic.write_text(outdir / "brief.json", json.dumps(brief, indent=2) + "\n")
    if certificate is not None:
        from planaudit.formal.certificate import dumps

        atomic.write_text(outdir / "certificate.json", dumps(certificate))
    truth = {"domain": domain, "task": str(iid), "source": "planbench",
             "planbench": {"root": str(root), "config": str(cfg.path), "problem": str(problem)}, **record}
    atomic.write_text(outdir / "truth.json", json.dumps(truth, indent=2) + "\n")
    return outdir


@lru_cache(maxsize=8)
def _results(path: str, _mtime_ns: int, root: str | None) -> tuple[Results, Config, str]:
    """A results file, its config and its dialect, read once per version of the file (a study
    takes one suggestion per instance; the dialect is chosen over the whole file)."""
    res = load_results(path, root)
    return res, load_config(res.root, res.config), default_dialect(res)


def _recorded(results_file: Path | str, instance: int | str,
              root: Path | str | None) -> tuple[Config, str, str, int]:
    """(config, dialect, recorded text, instance id) of `instance` in a results file."""
    path = Path(results_file)
    iid = _instance_id(instance, path)
    try:
        res, cfg, dialect = _results(str(path), path.stat().st_mtime_ns, None if root is None else str(root))
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    except (ResultsError, MaterialError) as e:
        raise ValueError(str(e)) from None
    if res.test not in PLAN_FOR_INSTANCE:
        raise ValueError(f"{path}: a {res.test} file: its answers are not plans for an instance's own goal")
    inst = next((i for i in res.instances if isinstance(i, dict) and str(i.get("instance_id")) == str(iid)),
                None)
    if inst is None:
        raise ValueError(f"{path}: no instance {iid}")
    try:
        return cfg, dialect, recorded_text(inst, dialect, res) or "", iid
    except ResultsError as e:
        raise ValueError(f"{path}: instance {iid}: {e}") from None


def planbench_suggestion_words(results_file: Path | str, instance: int | str,
                               root: Path | str | None = None) -> str:
    """The model's plan in its own words, as the results file holds what PlanBench's
    scoring read (the PlanBench paper showed people the model's plan so)."""
    return _recorded(results_file, instance, root)[2].strip()


def planbench_suggestion(results_file: Path | str, instance: int | str,
                         root: Path | str | None = None) -> list[str]:
    """The plan a PlanBench results file records for `instance`, as PDDL steps in the
    instance's object names ("(unstack b a)"), read in the dialect the replay takes the file
    to have been scored in (`replay.default_dialect`). Not judged here: `Material.check`
    does that. ValueError names the file when it is not a plan-generation file, lacks the
    instance, or its response reads as no plan."""
    path = Path(results_file)
    cfg, dialect, text, iid = _recorded(results_file, instance, root)
    try:
        steps = READERS[dialect](cfg, text) if text else []
    except (Unreadable, MaterialError) as e:
        raise ValueError(f"{path}: instance {iid}: {e}") from None
    if not steps:
        raise ValueError(f"{path}: instance {iid}: the response reads as no plan (dialect {dialect})")
    return [format_step(s) for s in steps]


def planbench_reply_steps(root: Path | str | None, key: str, text: str) -> list[str] | None:
    """A live model's plan on PlanBench instance `key` ("planbench:CONFIG/N"), written in
    PlanBench's words as the instance is told ("unstack the red block from on top of the
    blue block"): read by planaudit's own PlanBench reading (`strict`, the replay's), as
    PDDL steps in the instance's object names; None when it reads as no plan."""
    domain = key.removeprefix("planbench:").partition("/")[0]
    cfg = _config(Path(root) if root is not None else DEFAULT_ROOT, domain)
    try:
        steps = READERS["strict"](cfg, text)
    except (Unreadable, MaterialError):
        return None
    return [format_step(s) for s in steps] or None
