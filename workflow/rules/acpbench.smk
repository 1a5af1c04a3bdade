# The ACPBench regime (its atomic questions): one job per model x question type over
# every domain and form of `acpbench`, one Parquet file each, a thin shell over
# `planaudit acpbench shard`. A job's params hold exactly the config it depends on (its
# model entry and the section), so a new model reruns only its own jobs. Suite domains
# read the prepared suite (their truth files are the inputs); ACPBench roots
# ({root, split}) are read by planaudit.acpbench.files, gold answers by proof.
import json

from planaudit.acpbench.files import entry_key as acp_entry_key
from planaudit.acpbench.questions import TYPES as ACP_TYPES

ACPBENCH = config.get("acpbench") or {}
ACP_TYPES_RUN = ACPBENCH.get("types", [])
ACP_ENTRIES = ACPBENCH.get("domains") or list(SUITE_DOMAINS)
ACP_KEYS = [acp_entry_key(e) for e in ACP_ENTRIES]
if len(set(ACP_KEYS)) < len(ACP_KEYS):
    raise ValueError(f"config acpbench.domains: an entry is listed twice ({', '.join(ACP_KEYS)})")
for _e in ACP_ENTRIES:
    if isinstance(_e, str) and _e not in SUITE_DOMAINS:
        _narrowed = " selected by suite.tasks" if SUITE.get("tasks") else ""
        raise ValueError(
            f"config acpbench.domains: '{_e}' is not a domain of the suite{_narrowed} "
            f"(have: {', '.join(SUITE_DOMAINS)}; ACPBench's files are {{root: PATH, split: NAME}})"
        )
    if isinstance(_e, dict):  # every file a job will read, before any job starts
        _root, _split = Path(_e["root"]), _e.get("split", "dev")
        if not _root.is_dir():
            raise ValueError(f"config acpbench.domains: {_root}: no such folder")
        _missing = [f"{t}/{_split}.gen.json" for t in ACP_TYPES_RUN
                    if not (_root / t / f"{_split}.gen.json").is_file()]
        if _missing:
            raise ValueError(f"config acpbench.domains: {_root} has no {', '.join(_missing)}")
ACP_SUITE_TRUTHS = [
    f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in ENTRIES if d in ACP_ENTRIES
]
ACPBENCH_SHARDS = [
    f"{RESULTS}/episodes/acpbench/{m}/{t}.parquet" for m in MODELS for t in ACP_TYPES_RUN
]


def acpbench_spec(model_name):
    entry = next(m for m in config["models"] if m["name"] == model_name)
    section = {**ACPBENCH, "domains": ACP_ENTRIES}
    sliced = {"models": [entry], "acpbench": section,
              "cache": config.get("cache", ".cache/planaudit")}
    if SELECTED_TASKS is not None:  # suite.tasks: questions on the selected tasks only
        sliced["suite"] = {"tasks": SELECTED_TASKS}
    return json.dumps(sliced)


for _model in MODELS:

    rule:
        name:
            f"acpbench_{_model}"
        input:
            ACP_SUITE_TRUTHS,
            f"{RESULTS}/checks/{_model}.json",
        output:
            f"{RESULTS}/episodes/acpbench/{_model}/{{qtype}}.parquet",
        wildcard_constraints:
            qtype="|".join(ACP_TYPES),
        params:
            model=_model,
            spec=acpbench_spec(_model),
            suite=lambda wc, input: Path(input[0]).parents[2] if ACP_SUITE_TRUTHS else f"{RESULTS}/suite",
            # the model from the output, not `_model`: a lambda reads the loop's variable when
            # it runs, after the loop, so every model's transcripts went to the last one's folder
            transcripts=lambda wc, output: (
                f"{RESULTS}/transcripts/acpbench/{Path(output[0]).parent.name}/{wc.qtype}"
            ),
        resources:
            **{RESOURCES[_model]: 1},
            **job_resources("acpbench"),
        log:
            f"{RESULTS}/logs/acpbench/{_model}/{{qtype}}.log",
        conda:
            "../../envs/planaudit.yaml"
        shell:
            "planaudit acpbench shard --spec {params.spec:q} --model {params.model} "
            "--type {wildcards.qtype} --suite {params.suite} --out {output:q} "
            "--transcripts {params.transcripts:q} 2> {log} "
            "|| (tail -n 20 {log} >&2; exit 1)"
