# The curriculum regime (PlanBench's test cases): one job per model x test case over every
# domain of `curriculum.domains` (one Parquet file per domain, the shards collect reads), a
# thin shell over `planaudit curriculum shard`. A job's params hold exactly the config it
# depends on (its model entry and its test case's settings), so changing one test case's
# settings (`curriculum.params.t6`) reruns that test case's jobs only. Suite domains read
# the prepared suite (their truth files are the inputs); PlanBench roots ({root, config})
# are read by planaudit.planbench.
import json

from planaudit.planbench.cases import TESTS as CURRICULUM_TESTS
from planaudit.curriculum.shard import domain_key, settings

CURRICULUM = config.get("curriculum") or {}
CUR_TESTS = CURRICULUM.get("tests", [])
CUR_ENTRIES = CURRICULUM.get("domains") or list(SUITE_DOMAINS)
CUR_KEYS = [domain_key(e) for e in CUR_ENTRIES]
if len(set(CUR_KEYS)) < len(CUR_KEYS):
    raise ValueError(f"config curriculum.domains: an entry is listed twice ({', '.join(CUR_KEYS)})")
for _e in CUR_ENTRIES:
    if isinstance(_e, str) and _e not in SUITE_DOMAINS:
        _narrowed = " selected by suite.tasks" if SUITE.get("tasks") else ""
        raise ValueError(
            f"config curriculum.domains: '{_e}' is not a domain of the suite{_narrowed} "
            f"(have: {', '.join(SUITE_DOMAINS)}; a PlanBench root is {{root: PATH, config: NAME}})"
        )
    # with suite.tasks, the cases are the first solvable *selected* tasks: a domain whose
    # selected tasks are all labelled unsolvable would have none (fail now, not mid-run)
    if CUR_TESTS and isinstance(_e, str) and SUITE.get("tasks") and not any(
        e.domain == _e and e.label == "solvable" for e in SELECTED
    ):
        raise ValueError(
            f"{locate(CONFIG_FILES, ('suite', 'tasks'), config) or 'config '}suite.tasks: "
            f"curriculum.tests run on {_e}, and no task selected there is "
            f"labelled solvable (the curriculum's cases are solvable tasks); select one, or "
            f"leave {_e} out of curriculum.domains"
        )
CUR_SUITE_TRUTHS = [
    f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in ENTRIES if d in CUR_ENTRIES
]
CURRICULUM_SHARDS = [
    f"{RESULTS}/episodes/curriculum/{m}/{t}/{k}.parquet"
    for m in MODELS
    for t in CUR_TESTS
    for k in CUR_KEYS
]


def curriculum_spec(model_name):
    entry = next(m for m in config["models"] if m["name"] == model_name)

    def spec(wildcards):
        part = {"tests": [wildcards.test], "domains": CUR_ENTRIES,
                **settings(CURRICULUM, wildcards.test)}
        cache = config.get("cache", ".cache/planaudit")
        sliced = {"models": [entry], "curriculum": part, "cache": cache}
        if SELECTED_TASKS is not None:  # suite.tasks: cases among the selected tasks only
            sliced["suite"] = {"tasks": SELECTED_TASKS}
        return json.dumps(sliced)

    return spec


def curriculum_transcripts(model_name):
    """A job's per-domain transcript folder, `{domain}` left for the command to fill in."""

    def path(wildcards):
        return f"{RESULTS}/transcripts/curriculum/{model_name}/{wildcards.test}/{{domain}}"

    return path


for _model in MODELS:

    rule:
        name:
            f"curriculum_{_model}"
        input:
            CUR_SUITE_TRUTHS,
            f"{RESULTS}/checks/{_model}.json",
        output:
            [f"{RESULTS}/episodes/curriculum/{_model}/{{test}}/{k}.parquet" for k in CUR_KEYS],
        wildcard_constraints:
            test="|".join(CURRICULUM_TESTS),
        params:
            model=_model,
            spec=curriculum_spec(_model),
            domains=" ".join(f"--domain {k}" for k in CUR_KEYS),
            # the suite folder, from the first truth file (results/suite/<d>/<t>/truth.json)
            suite=lambda wc, input: Path(input[0]).parents[2] if CUR_SUITE_TRUTHS else f"{RESULTS}/suite",
            out=lambda wc, output: Path(output[0]).parent / "{domain}.parquet",
            transcripts=curriculum_transcripts(_model),
        resources:
            **{RESOURCES[_model]: 1},
            **job_resources("curriculum"),
        log:
            f"{RESULTS}/logs/curriculum/{_model}/{{test}}.log",
        conda:
            "../../envs/planaudit.yaml"
        shell:
            "planaudit curriculum shard --spec {params.spec:q} --model {params.model} "
            "--test {wildcards.test} {params.domains} --suite {params.suite} "
            "--out {params.out:q} --transcripts {params.transcripts:q} 2> {log} "
            "|| (tail -n 20 {log} >&2; exit 1)"
