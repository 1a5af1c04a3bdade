# Offline regime: one job per model x method x domain shard. Each model gets a
# rule of its own so that a custom resource per model (`--resources model_<name>=2`)
# can cap how many of its shards run at once. A shard's params hold exactly the
# config it depends on, so changing one method's parameters reruns that method only.
import json

OFFLINE = config.get("offline", {"methods": []})
MODELS = [m["name"] for m in config.get("models", [])]
OFFLINE_SHARDS = [
    f"{RESULTS}/episodes/offline/{m}/{s}/{d}.parquet"
    for m in MODELS
    for s in OFFLINE["methods"]
    for d in SUITE_DOMAINS
]


def domain_truths(wildcards):
    return [t for t in TRUTHS if Path(t).parent.parent.name == wildcards.domain]


def shard_spec(model_name):
    """The slice of the config one shard depends on, as JSON for the command line."""
    entry = next(m for m in config["models"] if m["name"] == model_name)

    def spec(wildcards):
        method = wildcards.method
        offline = {
            "methods": [method],
            "max_tokens": OFFLINE.get("max_tokens", 4096),
            "params": {method: OFFLINE.get("params", {}).get(method, {})},
        }
        cache = config.get("cache", ".cache/planaudit")
        return json.dumps({"models": [entry], "offline": offline, "cache": cache})

    return spec


def transcripts_dir(model_name):
    def folder(wildcards):
        return f"{RESULTS}/transcripts/offline/{model_name}/{wildcards.method}/{wildcards.domain}"

    return folder


for _model in MODELS:

    rule:
        name:
            f"offline_{_model}"
        input:
            domain_truths,
        output:
            rows=f"{RESULTS}/episodes/offline/{_model}/{{method}}/{{domain}}.parquet",
        params:
            model=_model,
            spec=shard_spec(_model),
            suite=lambda wc, input: Path(input[0]).parent.parent.parent,
            transcripts=transcripts_dir(_model),
        resources:
            **{f"model_{_model}": 1},
        log:
            f"{RESULTS}/logs/offline/{_model}/{{method}}/{{domain}}.log",
        conda:
            "../../envs/planaudit.yaml"
        shell:
            "planaudit offline shard --spec {params.spec:q} --model {params.model} "
            "--method {wildcards.method} --domain {wildcards.domain} --suite {params.suite} "
            "--out {output.rows} --transcripts {params.transcripts} 2> {log}"
