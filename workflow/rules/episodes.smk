# Episodes, both regimes: one job per regime x model x method x domain shard.
# Each model gets a rule of its own per regime so that a custom resource per model
# (`--resources model_gpt_4o=2`: `planaudit check` prints each model's name) caps how
# many of its shards run at once, across regimes. A shard's params hold exactly the
# config it depends on, so changing one method's parameters reruns that method only.
# No shard starts before `check_model` has found its model reachable (provider,
# credentials, server): a run that cannot succeed fails in seconds, before any paid
# call. Its marker stays, so that a later run does not rerun every shard; each shard
# checks its model again before its first call.
import json

from planaudit.llm.preflight import resource_name

REGIMES = ("offline", "online")
MODELS = [m["name"] for m in config.get("models", [])]
METHODS = {r: config.get(r, {}).get("methods", []) for r in REGIMES}
SHARDS = {
    r: [
        f"{RESULTS}/episodes/{r}/{m}/{s}/{d}.parquet"
        for m in MODELS
        for s in METHODS[r]
        for d in SUITE_DOMAINS
    ]
    for r in REGIMES
}
OFFLINE_SHARDS = SHARDS["offline"]
RESOURCES = {m: resource_name(m) for m in MODELS}
if len(set(RESOURCES.values())) < len(RESOURCES):
    raise ValueError(
        "config models: two model names share one resource name: "
        + ", ".join(f"{m} -> {r}" for m, r in RESOURCES.items())
    )
ONLINE_SHARDS = SHARDS["online"]


def domain_truths(wildcards):
    return [t for t in TRUTHS if Path(t).parent.parent.name == wildcards.domain]


def shard_spec(regime, model_name):
    """The slice of the config one shard depends on, as JSON for the command line."""
    entry = next(m for m in config["models"] if m["name"] == model_name)
    section = config.get(regime, {})

    def spec(wildcards):
        method = wildcards.method
        part = {
            "methods": [method],
            "max_tokens": section.get("max_tokens", 4096),
            "params": {method: section.get("params", {}).get(method, {})},
        }
        if "budget" in section:
            part["budget"] = section["budget"]
        if "witness" in section:  # offline: VAL judges each final plan too (reruns when changed)
            part["witness"] = section["witness"]
        cache = config.get("cache", ".cache/planaudit")
        return json.dumps({"models": [entry], regime: part, "cache": cache})

    return spec


def transcripts_dir(regime, model_name):
    def folder(wildcards):
        return f"{RESULTS}/transcripts/{regime}/{model_name}/{wildcards.method}/{wildcards.domain}"

    return folder


def model_spec(wildcards):
    entry = next(m for m in config["models"] if m["name"] == wildcards.model)
    return json.dumps({"models": [entry]})


rule check_model:
    output:
        f"{RESULTS}/checks/{{model}}.json",
    params:
        # the entry itself: a changed entry is checked again (and its shards rerun anyway)
        spec=model_spec,
    priority: 100  # first of all ready jobs: a model that cannot answer fails the run at once
    log:
        f"{RESULTS}/logs/checks/{{model}}.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit check --spec {params.spec:q} --out {output} > {log} 2>&1 "
        "|| (cat {log} >&2; exit 1)"


for _regime in REGIMES:
    for _model in MODELS:

        rule:
            name:
                f"{_regime}_{_model}"
            input:
                domain_truths,
                f"{RESULTS}/checks/{_model}.json",
            output:
                rows=f"{RESULTS}/episodes/{_regime}/{_model}/{{method}}/{{domain}}.parquet",
            params:
                regime=_regime,
                model=_model,
                spec=shard_spec(_regime, _model),
                suite=lambda wc, input: Path(input[0]).parent.parent.parent,
                transcripts=transcripts_dir(_regime, _model),
            resources:
                **{RESOURCES[_model]: 1},
            log:
                f"{RESULTS}/logs/{_regime}/{_model}/{{method}}/{{domain}}.log",
            conda:
                "../../envs/planaudit.yaml"
            shell:
                "planaudit {params.regime} shard --spec {params.spec:q} --model {params.model} "
                "--method {wildcards.method} --domain {wildcards.domain} --suite {params.suite} "
                "--out {output.rows} --transcripts {params.transcripts} 2> {log} "
                "|| (tail -n 20 {log} >&2; exit 1)"
