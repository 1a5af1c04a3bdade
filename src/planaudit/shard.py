"""A shard job: one regime × model × method over every task of its domains, in one process.

Importing litellm costs seconds, so a job is worth it only when it runs many
episodes: the workflow gives each regime × model × method one job over all
domains, concurrently up to the model's limit (one client, one pool). Each
episode's transcript is written as it finishes; each domain's rows go to their
own Parquet file at the end. The cache makes a rerun after a crash free:
finished calls are answered from disk.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from planaudit import atomic
from planaudit.experiment import Experiment, MethodParams, ModelEntry, shard_hash
from planaudit.llm.batch import BatchFailed, Batching, in_waves
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client
from planaudit.regime import Jobs, Workflow, get
from planaudit.suite.catalog import selected_suite, selects


class ShardFailed(RuntimeError):
    """Every episode of a shard ended in `error`: the model was never reached. The job
    fails (its transcripts stay) instead of handing on a shard with nothing to measure."""


class DeadTools(ShardFailed):
    """A real model's first replies under a tool-calling architecture made not one native
    tool call: the server almost surely drops the tools (llama.cpp without --jinja, vLLM
    without --enable-auto-tool-choice, a chat template with no tool support). Going on
    would pay for every episode to run to its budget and measure nothing."""


class AlarmRang(Exception):
    """The dead-tools alarm rang: no request more leaves this shard."""


# tool-less replies, counted across the shard's episodes, before it gives up while none
# has made a native tool call (online.dead_tools_after)
DEAD_TOOLS_AFTER = 20
TOOLLESS = frozenset({"plan-execute"})  # architectures whose model is never offered tools


class ToolAlarm:
    """Counts a shard's replies to requests that carried tools, across all its episodes as
    the replies arrive, and whether any made a native tool call. It rings at `after`
    tool-less replies and none with a call; it keeps the cache keys of those replies, so
    that they can be set aside and a rerun against a repaired server asks it again."""

    def __init__(self, entry: ModelEntry, params: MethodParams, after: int | None = None):
        self.armed = (get(params.regime).tools and params.method not in TOOLLESS
                      and not entry.in_process and entry.tool_protocol == "native")
        self.after = DEAD_TOOLS_AFTER if after is None else after
        self.replies = 0  # tool-less replies to requests that carried tools
        self.called = False
        self.base = entry.api_base
        self.keys: set[str] = set()  # the cache entries that answered with no tool call
        self.on_ring = lambda: None  # the shard's way to stop the episodes in flight

    def reply(self, call) -> None:
        """One reply to a request that carried tools (a failed call reached no model and
        says nothing about its tools)."""
        if not self.armed or call.error is not None or self.called:
            return
        if call.tool_calls:
            self.called = True
            self.keys.clear()
            return
        self.replies += 1
        if self.ringing:
            self.on_ring()

    def entry(self, key: str, value: dict) -> None:
        """A cache entry answered (or was written for) a request while no tool call has been
        seen: a tool-less one is what the alarm would set aside."""
        if self.armed and not self.called and not value.get("tool_calls"):
            self.keys.add(key)

    @property
    def ringing(self) -> bool:
        return self.armed and not self.called and self.replies >= self.after

    def message(self, label: str, aside: tuple[Path, int] | None = None) -> str:
        where = f"the server at {self.base}" if self.base else "the provider"
        kept = ""
        if aside is not None and aside[1]:
            kept = (f" The {aside[1]} cached tool-less replies were moved out of the cache to "
                    f"{aside[0]}, so that a rerun asks the server again instead of reading "
                    "them back (delete that folder, or move its files back if the server "
                    "was right).")
        return (f"{label}: {self.replies} replies and not one native tool call: {where} "
                "almost surely ignores the tools. Enable function calling there (llama.cpp: "
                "llama-server --jinja; llama-cpp-python: --chat_format chatml-function-calling "
                "or a tool-aware handler; vLLM: --enable-auto-tool-choice --tool-call-parser "
                "<parser>; Ollama: a model with tool support), or give the model "
                "`tool_protocol: text`. The shard stopped before spending the rest (episodes "
                "in flight were cancelled); its finished episodes' transcripts are kept."
                + kept)


class AlarmCache(Cache):
    """The shard's cache, telling the alarm which entry answered each request (read or
    written), so that the tool-less replies behind an alarm can be set aside."""

    def __init__(self, root: str | Path, alarm: ToolAlarm):
        super().__init__(root)
        self.alarm = alarm

    def get(self, key: str) -> dict | None:
        hit = super().get(key)
        if hit is not None:
            self.alarm.entry(key, hit)
        return hit

    def put(self, key: str, value: dict) -> None:
        super().put(key, value)
        self.alarm.entry(key, value)


class Listened:
    """The client as a shard's episodes see it while the alarm listens: each reply to a
    request with tools is counted as it arrives, and once the alarm rings no request
    leaves (the episode that heard the last reply would otherwise send its next one
    before the cancellation reaches it)."""

    def __init__(self, client: Client, alarm: ToolAlarm):
        self.client, self.alarm = client, alarm

    def __getattr__(self, name: str):
        return getattr(self.client, name)

    async def complete(self, messages: list[dict], **kw):
        if self.alarm.ringing:
            raise AlarmRang
        call = await self.client.complete(messages, **kw)
        if kw.get("tools"):
            self.alarm.reply(call)
        return call


def require_witness(params: MethodParams) -> None:
    """Before the first call: the witness (VAL) and the repairer (LPG) the config asks for
    can run here (else WitnessUnavailable or RepairUnavailable, saying how to install it)."""
    if params.witness == "val":
        from planaudit.formal.witness import val_binary

        val_binary()
    if params.repair is not None:
        from planaudit.formal.repair import lpg_binary

        lpg_binary()


def episode_runner(regime: str, entry: ModelEntry):
    """The regime's `run_episode` for this model (its `Regime.episode`)."""
    episode = get(regime).episode
    if episode is None:
        raise ValueError(f"the {regime} regime runs no episodes")
    return episode(entry)


class Progress:
    """How far a job is: every episode goes to the log (stderr), and a one-line summary
    (episodes done of total, outcome counts) to the terminal (stdout) at most every
    `every` seconds and when the job ends, so a run of many jobs stays readable."""

    def __init__(self, label: str, total: int, every: float = 15.0, out=None, log=None):
        self.label, self.total, self.every = label, total, every
        self.out, self.log = out or sys.stdout, log or sys.stderr
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.last = time.monotonic()

    def line(self) -> str:
        counts = ", ".join(f"{o} {n}" for o, n in sorted(self.outcomes.items()))
        return f"{self.label}: {self.done}/{self.total} episodes ({counts})"

    def episode(self, name: str, row: dict) -> None:
        self.done += 1
        self.outcomes[row["outcome"]] += 1
        why = f" ({row['error']})" if row.get("error") else ""
        print(f"{self.label}: {self.done}/{self.total} {name} {row['outcome']}{why}",
              file=self.log, flush=True)
        now = time.monotonic()
        if now - self.last >= self.every and self.done < self.total:
            self.last = now
            print(self.line(), file=self.out, flush=True)

    def restart(self) -> None:
        """Batch mode runs a job again after each batch: its episodes count afresh."""
        self.done = 0
        self.outcomes.clear()

    def finish(self) -> None:
        print(self.line(), file=self.out, flush=True)


async def _run(entry: ModelEntry, params: MethodParams, tasks: list[tuple[str, Path, int]],
               transcripts: dict[str, Path], cache_dir: str, progress: Progress,
               alarm: ToolAlarm) -> list[dict]:
    regime, method = params.regime, params.method
    values = params.to_dict()
    client = Client(entry.client(), AlarmCache(cache_dir, alarm) if alarm.armed
                    else Cache(cache_dir))
    asker = Listened(client, alarm) if alarm.armed else client
    digest = shard_hash(entry, method, values)
    run_episode = episode_runner(regime, entry)
    for folder in transcripts.values():
        folder.mkdir(parents=True, exist_ok=True)

    async def one(domain: str, folder: Path, epoch: int) -> dict:
        repeat = {"epoch": epoch} if get(regime).epochs else {}
        row, transcript = await run_episode(
            asker, method, values, folder, task_name=f"{domain}/{folder.name}",
            config_hash=digest, reference_meta=entry.reference, tier=entry.tier, **repeat)
        # a disguised task's row names the task itself and its disguise (the pairing key)
        row = {**row, "task": folder.name.partition("@")[0],
               "disguise": task_disguise(folder.name),
               **calibration_columns(entry, params, folder, f"{domain}/{folder.name}", epoch)}
        # written as soon as the episode ends: a killed job keeps every finished transcript
        name = folder.name + (f".e{epoch}" if epoch else "")
        # atomically: a transcript on disk is a whole one (it ends with its row)
        atomic.write_text(transcripts[domain] / f"{name}.jsonl",
                          "".join(json.dumps(step) + "\n" for step in transcript)
                          + json.dumps({"row": row}) + "\n")
        progress.episode(f"{domain}/{name}", row)
        return row

    async def everything() -> list[dict | None]:
        # a fixed pool of workers, one episode each at a time: every slot the model allows
        # stays busy until the queue is empty (50 waiters on one semaphore left slots idle)
        progress.restart()
        queue: asyncio.Queue[tuple[int, tuple[str, Path, int]]] = asyncio.Queue()
        for item in enumerate(tasks):
            queue.put_nowait(item)
        rows: list[dict | None] = [None] * len(tasks)

        async def worker() -> None:
            while not queue.empty() and not alarm.ringing:
                i, (domain, folder, epoch) = queue.get_nowait()
                try:
                    rows[i] = await one(domain, folder, epoch)
                except AlarmRang:
                    return

        workers = [asyncio.ensure_future(worker())
                   for _ in range(min(client.cfg.max_concurrency, len(tasks)))]
        # the alarm stops the episodes in flight at once, not after their budgets
        alarm.on_ring = lambda: [w.cancel() for w in workers]
        done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
        for w in done:  # a failure fails the job at once, as before; a cancelled one is none
            if not w.cancelled() and w.exception() is not None:
                for other in pending:
                    other.cancel()
                raise w.exception()
        return rows

    # batch mode (a regime whose calls do not wait on each other's answers): in waves
    rows = await in_waves(client, Batching.of(entry.to_dict()) if get(regime).batch else None,
                          everything)
    if alarm.armed and not alarm.called and alarm.replies:
        # rung after the first K tool-less replies, or at the end of a shard with fewer:
        # the replies that rang it must not answer a rerun against a repaired server
        aside = client.cache.set_aside(alarm.keys, "dead-tools-" + time.strftime(
            "%Y%m%dT%H%M%S") + "-" + progress.label.replace("/", "_"))
        raise DeadTools(alarm.message(progress.label, aside))
    return rows


def calibration_columns(entry: ModelEntry, params: MethodParams, folder: Path, task_name: str,
                        epoch: int) -> dict:
    """The responsive calibrator's rows carry what the episode should score, computed on
    the hidden model apart from the pipeline (`reference/expected.py`): the expectation
    over its draws, the score under the draws it made, and which judge computed them
    (other rows: nothing)."""
    if entry.model != "reference/responsive":
        return {}
    from planaudit.reference.expected import expectation, resolve

    # online a repeat is a sample; elsewhere (offline) the epoch itself, from the second on
    repeat = ({"sample": epoch} if params.regime == "online"
              else {"sample": 0, **({"epoch": epoch} if epoch else {})})
    meta = {"task_dir": str(folder), "task": task_name, **repeat, **(entry.reference or {})}
    witness = resolve("auto")  # VAL where installed: the row says which judged
    found = expectation(meta, params.regime, params.method, params.to_dict(), witness=witness)
    expected, predicted = found if found is not None else (None, None)
    return {"calibration_expected": expected, "calibration_predicted": predicted,
            "calibration_witness": witness if found is not None else None}


def task_disguise(folder_name: str) -> str:
    """`p01` → none, `p01@deceptive` → deceptive (a disguised task's folder)."""
    return folder_name.partition("@")[2] or "none"


def selected_folders(suite: Mapping, suite_dir: Path) -> list[Path]:
    """The prepared task folders the config's episodes run on (`suite` its suite section):
    every one under each disguise, or with `suite.tasks` exactly the selected tasks (checked
    against the suite as at DAG build; a selected task not prepared yet is an error, not a
    smaller bill)."""
    disguises = suite.get("disguise") or ["none"]
    selection = suite.get("tasks")
    folders = sorted(p.parent for p in suite_dir.glob("*/*/brief.json")  # <task>@<disguise>
                     if (p.parent.name.partition("@")[2] or "none") in disguises)
    if selection is None:
        return folders
    _, chosen = selected_suite(dict(suite))
    wanted = sorted(suite_dir / e.domain / (e.id if d == "none" else f"{e.id}@{d}")
                    for e in chosen for d in disguises)
    if missing := [w for w in wanted if w not in set(folders)]:
        raise FileNotFoundError(f"{missing[0]}: not prepared yet ({len(missing)} of the "
                                f"{len(wanted)} selected; run `snakemake suite` first)")
    return wanted


def episode_jobs(view: Workflow, regime: str, keys: list[str], part) -> Jobs:
    """A regime of episodes' jobs: one per key (a method, online `architecture/setting`)
    over every suite domain, a Parquet file per domain; `part(key)` is the section's slice
    the job depends on, so changing one method's parameters reruns that method only."""
    results = view.results
    folder = f"{regime}/{{model}}/{{job}}"
    disguise = [] if view.disguises == ["none"] else \
        [a for x in view.disguises for a in ("--disguise", x)]

    def args(model: str, key: str) -> list[str]:
        method, _, setting = key.partition("/")
        return ["--method", method, *(["--setting", setting] if setting else []),
                *[a for d in view.domains for a in ("--domain", d)], *disguise,
                "--suite", f"{results}/suite",
                "--out", f"{results}/episodes/{regime}/{model}/{key}/{{domain}}.parquet",
                "--transcripts", f"{results}/transcripts/{regime}/{model}/{key}/{{domain}}"]

    return Jobs(keys=keys,
                inputs=[*view.ready.values(), *view.disguised_ready],
                outputs=[f"{results}/episodes/{folder}/{d}.parquet" for d in view.domains],
                spec=lambda entry, key: view.spec(entry, regime, part(key)), args=args)


def _path(template: str | Path, domain: str) -> Path:
    return Path(str(template).replace("{domain}", domain))


def run_shard(experiment: Experiment, entry: ModelEntry, params: MethodParams,
              domains: str | list[str], suite_dir: Path, out: str | Path,
              transcripts: str | Path, progress_every: float = 15.0,
              disguises: tuple[str, ...] = ("none",)) -> dict[str, pl.DataFrame]:
    """One job: a model under one method (`params`: its regime, online its plan setting) on
    every task of `domains`, in one process and one pool of calls (so the model's
    concurrency cap holds across domains); tasks under each of `disguises`
    (`<task>@<disguise>` folders, rows with a `disguise` column). `out` and `transcripts`
    may hold `{domain}`; each domain's rows go to their own Parquet file. Online, every
    episode runs `online.epochs` times. The experiment's `suite.tasks` (the workflow
    passes the selected ids) leaves the rest of the prepared tasks out."""
    regime, method, setting = params.regime, params.method, params.setting
    domains = [domains] if isinstance(domains, str) else list(domains)
    if len(domains) > 1 and "{domain}" not in str(out):
        raise ValueError("several domains need {domain} in the output path")
    selection = experiment.tasks
    section = experiment.section(regime)
    only = section.written.get("tasks")  # a regime's own ids in each domain (formalize)
    tasks = []
    for domain in domains:
        folders = sorted(p.parent for p in (suite_dir / domain).glob("*/truth.json")
                         if task_disguise(p.parent.name) in disguises
                         and selects(selection, domain, p.parent.name)
                         and (only is None or p.parent.name.partition("@")[0] in only))
        if not folders:
            raise FileNotFoundError(f"{suite_dir / domain}: no prepared tasks"
                                    + (" selected by suite.tasks" if selection else "")
                                    + (f" among {regime}.tasks" if only else "")
                                    + " (run the suite rules)")
        repeats = section.epochs if get(regime).epochs else 1
        tasks += [(domain, f, e) for f in folders for e in range(repeats)]
    require_witness(params)
    Cache(experiment.cache).require_writable()  # before any request: a reply must have a home
    label = f"{regime}/{entry.name}/{method}" + (f"/{setting}" if setting else "")
    progress = Progress(label, len(tasks), progress_every)
    alarm = ToolAlarm(entry, params, section.dead_tools_after)
    rows = asyncio.run(_run(entry, params, tasks, {d: _path(transcripts, d) for d in domains},
                            experiment.cache, progress, alarm))
    progress.finish()
    if all(r["outcome"] == "error" for r in rows):
        reasons = sorted({r["error"] or "unknown" for r in rows})
        raise ShardFailed(f"{label}/{'+'.join(domains)}: all {len(rows)} episodes ended in "
                          f"error: {'; '.join(reasons[:3])}")
    frames = {}
    for domain in domains:
        frame = pl.DataFrame([r for r, (d, _, _) in zip(rows, tasks, strict=True) if d == domain],
                             infer_schema_length=None)
        path = _path(out, domain)
        atomic.write_parquet(frame, path)
        frames[domain] = frame
    return frames


def add_parser(sub, regime: str, config_arg) -> None:
    """`planaudit <regime> shard` for a regime of episodes (offline, online)."""
    o = sub.add_parser(regime, help=get(regime).help)
    add_shard(o.add_subparsers(dest=f"{regime}_command", required=True), regime, config_arg)


def add_shard(osub, regime: str, config_arg) -> None:
    """The `shard` subcommand among a regime's subcommands (`osub`)."""
    sh = osub.add_parser("shard", help="run one model x method over the tasks of one or more "
                                       "domains")
    config_arg(sh)
    sh.add_argument("--spec", help="the config slice as JSON (the workflow passes this)")
    sh.add_argument("--model", required=True, help="a model's name in the config's models")
    sh.add_argument("--method", required=True,
                    help=f"a method the config's {regime}.methods lists")
    sh.add_argument("--domain", required=True, action="append",
                    help="a domain of the prepared suite (repeatable)")
    sh.add_argument("--suite", default="results/suite", help="the prepared suite folder")
    sh.add_argument("--disguise", action="append", choices=("none", "deceptive", "randomized"),
                    help="run the tasks under this disguise (repeatable; default: none); "
                         "disguised tasks are the suite's <task>@<disguise> folders")
    sh.add_argument("--out", required=True,
                    help="each domain's Parquet file; {domain} stands for the domain's name")
    sh.add_argument("--transcripts", required=True,
                    help="folder for <task>.jsonl; {domain} stands for the domain's name")
    if "setting" in get(regime).layout:  # a plan setting per job (online)
        sh.add_argument("--setting", help="the plan setting (config/plan_settings.yaml); "
                                          "default none")
    sh.set_defaults(func=cmd_shard, regime=regime)


def cmd_shard(args) -> int:
    from planaudit.commandline import EXIT_NEGATIVE, EXIT_OK, InputError, read_config
    from planaudit.experiment import ConfigError
    from planaudit.formal.repair import RepairUnavailable
    from planaudit.formal.witness import WitnessUnavailable

    experiment = Experiment.from_dict(json.loads(args.spec) if args.spec else read_config(args))
    try:
        entry = experiment.model(args.model)
        params = experiment.method(args.regime, args.method, getattr(args, "setting", None))
        entry.require()
        frames = run_shard(experiment, entry, params, args.domain, Path(args.suite), args.out,
                           args.transcripts, disguises=tuple(args.disguise or ("none",)))
    except (ConfigError, FileNotFoundError, ValueError) as e:
        raise InputError(str(e)) from None
    except WitnessUnavailable as e:
        raise InputError(f"config {args.regime}.witness: {e} (or set witness: none)") from None
    except RepairUnavailable as e:
        raise InputError(f"config {args.regime}.repair: {e} (or set enabled: false)") from None
    except (ShardFailed, BatchFailed) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return EXIT_NEGATIVE
    for domain, frame in frames.items():
        counts = frame["outcome"].value_counts().sort("outcome")
        print(f"{args.regime}/{args.model}/{args.method}/{domain}: {frame.height} episodes: "
              + ", ".join(f"{o} {n}" for o, n in counts.iter_rows()), file=sys.stderr)
    return EXIT_OK
