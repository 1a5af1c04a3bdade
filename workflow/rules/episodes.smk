# Episodes, both regimes: one job per regime x model x method, over every domain (one
# Parquet file per domain, the shards collect reads). A job imports litellm once (3 s)
# and runs all its episodes in one pool, so a job is worth starting a process for.
# Each model gets a rule of its own per regime so that a custom resource per model
# (`--resources model_gpt_4o=2`: `planaudit check` prints each model's name) caps how
# many of its jobs run at once, across regimes. A job's params hold exactly the config
# it depends on, so changing one method's parameters reruns that method only; adding
# a domain reruns the model x method jobs, whose finished episodes the cache answers.
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


def shard_path(kind, regime, model_name):
    """A job's per-domain folder, `{domain}` left for the command to fill in."""

    def path(wildcards):
        return f"{RESULTS}/{kind}/{regime}/{model_name}/{wildcards.method}/{{domain}}"

    return path


for _regime in REGIMES:
    for _model in MODELS:

        rule:
            name:
                f"{_regime}_{_model}"
            input:
                EPISODE_TRUTHS,
                f"{RESULTS}/checks/{_model}.json",
            output:
                [
                    f"{RESULTS}/episodes/{_regime}/{_model}/{{method}}/{d}.parquet"
                    for d in SUITE_DOMAINS
                ],
            params:
                regime=_regime,
                model=_model,
                spec=shard_spec(_regime, _model),
                # disguises ride on this param; the default ([none]) adds nothing, so a
                # config without disguises keeps its params (and finished jobs) as they were
                domains=" ".join(f"--domain {d}" for d in SUITE_DOMAINS)
                + ("" if DISGUISES == ["none"] else "".join(f" --disguise {x}" for x in DISGUISES)),
                suite=lambda wc, input: Path(input[0]).parent.parent.parent,
                # {domain} is filled in by the command, once per domain
                out=lambda wc, output: Path(output[0]).parent / "{domain}.parquet",
                transcripts=shard_path("transcripts", _regime, _model),
            resources:
                **{RESOURCES[_model]: 1},
            log:
                f"{RESULTS}/logs/{_regime}/{_model}/{{method}}.log",
            conda:
                "../../envs/planaudit.yaml"
            shell:
                "planaudit {params.regime} shard --spec {params.spec:q} --model {params.model} "
                "--method {wildcards.method} {params.domains} --suite {params.suite} "
                "--out {params.out:q} --transcripts {params.transcripts:q} 2> {log} "
                "|| (tail -n 20 {log} >&2; exit 1)"
