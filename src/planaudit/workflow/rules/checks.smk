# Checks before spending: one job per model, ahead of every other job (priority), that
# finds its provider, credentials and server (`planaudit check`). Its marker stays, so a
# later run does not rerun every shard; each shard checks its model again anyway.


rule check_model:
    output:
        f"{RESULTS}/checks/{{model}}.json",
    params:
        # the entry itself: a changed entry is checked again (and its shards rerun anyway)
        spec=model_spec,
    priority: 100  # first of all ready jobs: a model that cannot answer fails the run at once
    resources:
        **job_resources("check"),
    log:
        f"{RESULTS}/logs/checks/{{model}}.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit check --spec {params.spec:q} --out {output} > {log} 2>&1 "
        "|| (cat {log} >&2; exit 1)"
