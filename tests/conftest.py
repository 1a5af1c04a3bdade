"""Shared paths and helpers for the tests (no network, no keys)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

_BEFORE = pytest.StashKey[dict]()

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "domains"
DATA = Path(__file__).resolve().parent / "data"
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "planbench"
SEMANTICS = ROOT.parent / "shared" / "conformance" / "semantics"
# The files that take longest, longest first (CI's durations before xdist: the SLURM and
# live-model files there, then the rest): `make test` hands whole files to its workers in
# collection order (xdist's `--dist loadfile`), so these start first and no long file is
# left to start while the other worker has nothing more to do.
SLOW_FILES = ("test_docs_first_run.py", "test_docs_services.py",
              "test_cluster.py", "test_docs_howto.py", "test_docs_tutorial.py",
              "test_disguise.py", "test_resilience.py", "test_live_model.py",
              "test_workflow.py", "test_truth.py", "test_task_selection.py",
              "test_acpbench_questions.py", "test_curriculum.py", "test_harness.py",
              "test_inspect_log.py", "test_human_paper.py", "test_study_server.py",
              "test_study_browser.py", "test_study_simulate.py", "test_study_cohorts.py",
              "test_human_export.py")
SUITE_DOMAINS = ("blocksworld", "gripper", "logistics", "loadbalancing", "hospital")
# buy costs (price): 100 until one haggles (itself cost 1); the optimum, haggle then buy,
# costs 2. A cost taken from the initial state, or by ENHSP, gets this task wrong.
SHOP_DOMAIN = """(define (domain shop)
  (:requirements :strips :numeric-fluents :action-costs)
  (:predicates (got) (haggled))
  (:functions (price) (total-cost) - number)
  (:action haggle :parameters () :precondition (not (haggled))
    :effect (and (haggled) (assign (price) 1) (increase (total-cost) 1)))
  (:action buy :parameters () :precondition ()
    :effect (and (got) (increase (total-cost) (price)))))"""
SHOP_PROBLEM = """(define (problem shop-1) (:domain shop)
  (:init (= (price) 100) (= (total-cost) 0)) (:goal (got))
  (:metric minimize (total-cost)))"""


def blocksworld_config(tmp: Path, tasks: dict[str, str], **sections) -> Path:
    """A workflow config over a copy of blocksworld with `tasks` (id -> label), the oracle
    alone, offline and online off, and `sections` laid over it (a regime's own)."""
    import yaml

    from tests.test_workflow import make_suite

    root = tmp / "domains"
    if not root.exists():
        make_suite(tmp, tasks)
    cfg = {
        "results": str(tmp / "results"), "cache": str(tmp / "cache"),
        "suite": {"source": "builtin", "root": str(root), "domains": ["blocksworld"],
                  "obfuscate": ["blocksworld"], "seed": 3},
        "truth": {"bfs_states": 100000, "astar_seconds": 10, "external_seconds": 120,
                  "external": False},
        "offline": {"methods": []}, "online": {"methods": []}, "formalize": {"methods": []},
        "models": [{"name": "oracle", "model": "reference/oracle", "family": "reference",
                    "tier": "reference"}],
        **sections,
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def snakemake(cfg: Path, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """The venv's Snakemake on a config file, in the repository, its output captured."""
    bin_ = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([str(bin_ / "snakemake"), *extra, "--cores", "2", "--nolock",
                           "--configfile", str(cfg)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def outside_ci_unless_asked(what: str) -> None:
    """Skip a CI-only test (a SLURM cluster, a model server built from source) outside CI
    unless PLANAUDIT_CI_TESTS=1 asks for it: as root it would apt-get packages, start
    daemons or compile for minutes inside a developer's `make test`."""
    if not (os.environ.get("CI") or os.environ.get("PLANAUDIT_CI_TESTS")):
        pytest.skip(f"{what} runs in CI only (set PLANAUDIT_CI_TESTS=1 to run it here)")


def suite_entries():
    from planaudit.suite.catalog import load_domain_tasks

    return [e for d in SUITE_DOMAINS for e in load_domain_tasks(DOMAINS, d)]


@pytest.fixture
def write(tmp_path):
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return _write


@pytest.fixture(scope="session")
def episode_figures(tmp_path_factory) -> tuple[Path, list[Path], list[str]]:
    """Every figure of the analysis fixture's rows (tests/episodes_fixture.py), drawn once
    per test process into a folder no test writes to: several report tests read the same
    draw, and one costs seconds. Returns the folder, the files written, the notes."""
    from planaudit.analysis import figures
    from tests.episodes_fixture import make_episodes

    folder = tmp_path_factory.mktemp("episode-figures")
    notes: list[str] = []
    return folder, figures.draw_all(make_episodes(), folder, notes), notes


# What a test must never write into the checkout: a user's reply cache and results. A test
# that did left `make run` after `make test` warm; the controller compares these folders'
# files before and after the whole run and fails it, naming what was written.
CHECKOUT_OUTPUTS = (".cache", "results")


def _checkout_files() -> dict[str, tuple[int, int]]:
    """Every file and folder under CHECKOUT_OUTPUTS (folders too: an empty cache folder a
    test made is as wrong as a file), with its modification time and size."""
    seen = {}
    for name in CHECKOUT_OUTPUTS:
        top = ROOT / name
        for path in [top, *top.rglob("*")] if top.exists() else []:
            try:
                st = path.stat()
            except OSError:  # removed while walked
                continue
            seen[str(path.relative_to(ROOT))] = (0, 0) if path.is_dir() else (
                st.st_mtime_ns, st.st_size)
    return seen


# which of CHECKOUT_OUTPUTS this process saw: one that appears during a test is named there
_PRESENT = {n for n in CHECKOUT_OUTPUTS if (ROOT / n).exists()}


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        session.config.stash[_BEFORE] = _checkout_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run (after every test) if a test wrote into the checkout's .cache/ or
    results/: each test must write under its own tmp_path."""
    before = session.config.stash.get(_BEFORE, None)
    if before is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    after = _checkout_files()
    written = sorted(p for p, stat in after.items() if before.get(p) != stat)
    if written:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (f"the tests wrote {len(written)} file(s) into the checkout's "
                   f"{' or '.join(n + '/' for n in CHECKOUT_OUTPUTS)} (a test writes under its "
                   "tmp_path only): " + ", ".join(written[:10]))
        if reporter is not None:
            reporter.write_line("ERROR: " + message, red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# `make check` (the inner loop) runs every test not marked `heavy`: a test is heavy when it
# starts a service (SLURM, PostgreSQL, a model server, the study server), a Snakemake run
# or a browser, or proves the whole suite (below). Whole files, and single tests of other
# files, are listed here;
# under `make check` (PLANAUDIT_CHECK=1) a test that is not listed and starts one of these
# fails, naming what it started, so the list cannot fall behind the tests.
HEAVY_FILES = (
    "test_docs_first_run.py", "test_docs_services.py", "test_docs_howto.py",
    "test_docs_tutorial.py", "test_cluster.py", "test_live_model.py", "test_resilience.py",
    "test_workflow.py", "test_task_selection.py", "test_init.py", "test_cache_shared.py",
    "test_study_server.py", "test_study_browser.py", "test_study_simulate.py",
    "test_study_cohorts.py", "test_study_bonus.py", "test_human_export.py",
    "test_human_paper.py", "test_wheel.py", "test_user_domain_curriculum.py",
    "test_own_domain.py", "test_local_server.py", "test_inspect_log.py", "test_harness.py",
    # no service, but minutes of proof: every built-in task proven by two methods, all 50
    # again under two disguises, ACPBench's development split answered by proof, PlanBench's
    # recorded results replayed; a change there is checked by `make test`
    "test_truth.py", "test_disguise.py", "test_acpbench.py", "test_planbench.py",
    # and hypothesis's random domains and plans, each judged by unified-planning too
    "test_properties.py",
)
HEAVY_TESTS = (
    "test_study_assistant_simulated.py::test_a_simulated_participant_accepts_the_wrong_proposal_and_submits_it",
    "test_acpbench_questions.py::test_acpbench_config_runs_acpbench_alone_and_the_paying_configs_never_do",
    "test_acpbench_questions.py::test_each_models_transcripts_land_in_its_own_folder",
    "test_acpbench_questions.py::test_workflow_runs_one_job_per_model_and_type_and_refuses_an_unknown_domain",
    "test_batch_waves.py::test_the_workflow_refuses_it_when_it_is_built",
    "test_calibrate.py::test_snakemake_calibrate_target_writes_its_files_and_reruns_nothing",
    "test_certificate_limit.py::test_the_suite_job_past_the_limit_carries_the_checked_astar_certificate",
    "test_curriculum.py::test_workflow_refuses_a_curriculum_domain_outside_the_suite",
    "test_curriculum.py::test_workflow_runs_curriculum_jobs_and_reruns_only_a_changed_test_case",
    "test_first_hour.py::test_a_run_of_the_paper_config_without_keys_fails_before_any_other_job",
    "test_first_hour.py::test_the_docs_throttling_example_works_with_the_paper_config",
    "test_online.py::test_the_workflow_hands_dead_tools_after_to_the_online_shards",
    "test_regime.py::test_a_toy_regime_is_one_file_and_a_config_section",
    "test_report.py::test_index_loads_in_headless_chromium",
    "test_report.py::test_the_chromium_probe_sees_broken_images_and_errors",
    "test_user_config.py::test_a_user_file_naming_one_offline_strategy_plans_only_that_job",
    "test_user_config.py::test_check_shows_the_table_the_workflow_prints",
    "test_user_config.py::test_the_default_and_the_paid_configs_plan_what_they_planned",
    "test_user_config.py::test_the_estimate_job_prints_calls_and_dollars_before_any_paid_job",
)
# what a heavy test starts, by a word of its command line
HEAVY_PROGRAMS = {"snakemake": "a Snakemake run", "chromium": "a browser",
                  "headless_shell": "a browser", "run-driver": "a browser (Playwright)",
                  "sbatch": "a SLURM job", "slurm.sh": "SLURM", "postgres.sh": "PostgreSQL",
                  "pg_ctl": "PostgreSQL", "server.sh": "the local model server",
                  "llama_server.py": "the local model server", "uvicorn": "a web server",
                  "serve": "a server (`planaudit ... serve`)",
                  "tests.fake_openai": "a model server (tests/fake_openai.py)",
                  "inspect": "an Inspect run (`inspect eval`)"}
_STARTED: list[str] = []


def _heavy(item: pytest.Item) -> bool:
    return (item.path.name in HEAVY_FILES
            or any(item.nodeid.split("[")[0].endswith(t) for t in HEAVY_TESTS))


def _watch_subprocesses(event: str, args: tuple) -> None:
    """An audit hook (make check only): note every heavy program a test starts."""
    if event != "subprocess.Popen":
        return
    argv = args[1] if isinstance(args[1], list | tuple) else [args[1] or args[0]]
    for word in argv:
        what = HEAVY_PROGRAMS.get(os.path.basename(str(word)))
        if what:
            _STARTED.append(f"{what} ({' '.join(map(str, argv))[:200]})")
            return


if os.environ.get("PLANAUDIT_CHECK"):
    sys.addaudithook(_watch_subprocesses)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow files first (SLOW_FILES), every file's own order kept; heavy tests marked."""
    rank = {name: i for i, name in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    for item in items:
        if _heavy(item):
            item.add_marker(pytest.mark.heavy)


_STARTED_AT = [0.0]


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    _STARTED.clear()  # before the set-up: a module fixture's run counts for its first test
    _STARTED_AT[0] = time.time()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test during which .cache/ or results/ appeared in the checkout fails; under make
    check, so does a test not marked heavy that started a heavy program."""
    outcome = yield
    if call.when != "teardown":
        return
    report = outcome.get_result()
    appeared = [n for n in CHECKOUT_OUTPUTS if n not in _PRESENT and (ROOT / n).exists()]
    _PRESENT.update(appeared)
    # made during this test (a test on another worker made the others: it is named there;
    # the run's end names every file either way)
    made = [n for n in appeared if (ROOT / n).stat().st_ctime >= _STARTED_AT[0] - 1]
    if made:
        report.outcome = "failed"
        report.longrepr = (f"{', '.join(n + '/' for n in made)} appeared in the checkout "
                           f"({ROOT}) during {item.nodeid} (or a test running beside it on "
                           "another worker): a test writes under its tmp_path only")
        return
    if not os.environ.get("PLANAUDIT_CHECK"):
        return
    started, _STARTED[:] = list(_STARTED), []
    if started and not _heavy(item):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} started {started[0]}"
                           f"{f' and {len(started) - 1} more' if len(started) > 1 else ''}: "
                           "a test that starts a service, a Snakemake run or a browser is "
                           "heavy: list it in tests/conftest.py's HEAVY_FILES or HEAVY_TESTS")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With PLANAUDIT_TEST_CPU=<file>, each test's wall and CPU seconds (this process's and
    its finished children's: a Snakemake run, a planner, a process pool), its fixtures'
    set-up included, appended to <file> as a JSON line: `make test` is bound by CPU on two
    cores, so its durations alone do not say what to cut (benchmarks/test_cpu.py sums it)."""
    out = os.environ.get("PLANAUDIT_TEST_CPU")
    if not out:
        yield
        return
    import json
    import resource
    import time

    def cpu() -> float:
        return sum(u.ru_utime + u.ru_stime for u in (
            resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))

    start, used = time.perf_counter(), cpu()
    yield
    line = json.dumps({"test": item.nodeid, "wall": round(time.perf_counter() - start, 3),
                       "cpu": round(cpu() - used, 3), "end": round(time.time(), 3),
                       "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})
    with open(out, "a") as f:  # one short write: lines of two workers do not interleave
        f.write(line + "\n")
