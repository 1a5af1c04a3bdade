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
# Online, the plan setting (a workflow written into the agent's prompt, see
# config/plan_settings.yaml) is part of the job: one job per model x architecture x
# setting, so that changing or adding a setting reruns or adds only its jobs (a job of
# reference models starts in under a second; the episodes, not the start, are the cost).
import json

from planaudit.compliance.settings import resolve
from planaudit.experiment import plan_settings
from planaudit.llm.preflight import resource_name

REGIMES = ("offline", "online")
MODELS = [m["name"] for m in config.get("models", [])]
METHODS = {r: config.get(r, {}).get("methods", []) for r in REGIMES}
SETTINGS = plan_settings(config)
for _setting in SETTINGS:  # a setting missing from the settings file fails here, named
    resolve(config, _setting)
# the method folder of a job: offline the strategy, online architecture/setting
VARIANTS = {
    "offline": METHODS["offline"],
    "online": [f"{a}/{s}" for a in METHODS["online"] for s in SETTINGS],
}
SHARDS = {
    r: [
        f"{RESULTS}/episodes/{r}/{m}/{v}/{d}.parquet"
        for m in MODELS
        for v in VARIANTS[r]
        for d in SUITE_DOMAINS
    ]
    for r in REGIMES
}


# a job's folder under its model: the strategy, or the architecture and the setting
JOB_FOLDER = {"offline": "{method}", "online": "{method}/{setting}"}


wildcard_constraints:
    method="[^/]+",
    setting="[^/]+",
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
        if regime == "online":  # the setting's workflow itself: a changed text reruns its jobs
            setting = resolve(config, wildcards.setting)
            part["plan_settings"] = [wildcards.setting]
            part["setting_defs"] = {wildcards.setting: setting.to_json()}
            part["epochs"] = section.get("epochs", 1)
            if "dead_tools_after" in section:  # the shard's alarm for a server that drops tools
                part["dead_tools_after"] = section["dead_tools_after"]
        if "repair" in section:  # offline: heuristic mode, LPG repairs each plan (reruns when changed)
            part["repair"] = section["repair"]
        cache = config.get("cache", ".cache/planaudit")
        sliced = {"models": [entry], regime: part, "cache": cache}
        if SELECTED_TASKS is not None:  # suite.tasks: the shard runs these tasks only
            sliced["suite"] = {"tasks": SELECTED_TASKS}
        return json.dumps(sliced)

    return spec


def shard_path(kind, regime, model_name):
    """A job's per-domain folder, `{domain}` left for the command to fill in."""

    def path(wildcards):
        parts = [wildcards.method] + ([wildcards.setting] if regime == "online" else [])
        return f"{RESULTS}/{kind}/{regime}/{model_name}/{'/'.join(parts)}/{{domain}}"

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
                    f"{RESULTS}/episodes/{_regime}/{_model}/{JOB_FOLDER[_regime]}/{d}.parquet"
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
                setting=(lambda wc: f"--setting {wc.setting}") if _regime == "online" else "",
                suite=lambda wc, input: Path(input[0]).parent.parent.parent,
                # {domain} is filled in by the command, once per domain
                out=lambda wc, output: Path(output[0]).parent / "{domain}.parquet",
                transcripts=shard_path("transcripts", _regime, _model),
            resources:
                **{RESOURCES[_model]: 1},
                **job_resources("shard"),
            log:
                f"{RESULTS}/logs/{_regime}/{_model}/{JOB_FOLDER[_regime]}.log",
            conda:
                "../../envs/planaudit.yaml"
            shell:
                "planaudit {params.regime} shard --spec {params.spec:q} --model {params.model} "
                "--method {wildcards.method} {params.setting} {params.domains} --suite {params.suite} "
                "--out {params.out:q} --transcripts {params.transcripts:q} 2> {log} "
                "|| (tail -n 20 {log} >&2; exit 1)"
