# The estimate before spending (docs/tutorial/own-model.md), a thin shell over `planaudit estimate
# --paid`: once the suite is prepared and before the first paid job (each waits for
# ESTIMATE, regimes.smk), the paid jobs' calls, tokens, dollars and batch waves, printed to
# the terminal and kept in ESTIMATE. A config with reference models only has no such job.
import json


if PAID:

    rule estimate:
        # on the submitting machine, so that its table reaches the terminal under SLURM too
        localrule: True
        input:
            list(READY.values()),
            DISGUISED_READY,
        output:
            ESTIMATE,
        params:
            # the effective config and what the user's own files name (config.restrict)
            spec=json.dumps(config),
            named=json.dumps(NAMED),
            # the results folder, where the prepared suite lies: ESTIMATE's folder
            results=lambda wc, output: Path(output[0]).parent,
        resources:
            **job_resources("estimate"),
        log:
            f"{RESULTS}/logs/estimate.log",
        conda:
            "../envs/planaudit.yaml"
        shell:
            "planaudit estimate --paid --spec {params.spec:q} --named {params.named:q} "
            "--results {params.results} --out {output} 2> {log} || (tail -n 20 {log} >&2; exit 1)"
