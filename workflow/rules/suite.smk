# Suite: prove every task's ground truth by two methods and audit its label.


rule truth:
    input:
        domain=f"{DOMAIN_ROOT}/{{domain}}/domain.pddl",
        problem=task_problem,
        listing=f"{DOMAIN_ROOT}/{{domain}}/tasks.yaml",
    output:
        truth=f"{RESULTS}/suite/{{domain}}/{{task}}/truth.json",
    params:
        root=lambda wc, input: Path(input.listing).parent.parent,
        outdir=lambda wc, output: Path(output.truth).parent,
        limits=(
            f"--bfs-states {config['truth']['bfs_states']} "
            f"--astar-seconds {config['truth']['astar_seconds']} "
            f"--external-seconds {config['truth']['external_seconds']}"
            + ("" if config["truth"]["external"] else " --no-external")
        ),
    log:
        f"{RESULTS}/logs/suite/{{domain}}/{{task}}.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite truth --root {params.root} --domain {wildcards.domain} "
        "--task {wildcards.task} --outdir {params.outdir} {params.limits} 2> {log}"


rule summary:
    input:
        TRUTHS,
    output:
        SUMMARY,
    log:
        f"{RESULTS}/logs/suite/summary.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite summary --out {output} {input} 2> {log}"


rule suite:
    input:
        SUMMARY,
