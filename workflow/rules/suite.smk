# Suite: prove every task's ground truth by two methods and audit its label.
TRUTH = config["truth"]


rule truth:
    input:
        domain=f"{DOMAIN_ROOT}/{{domain}}/domain.pddl",
        problem=task_problem,
        listing=f"{DOMAIN_ROOT}/{{domain}}/tasks.yaml",
    output:
        truth=f"{RESULTS}/suite/{{domain}}/{{task}}/truth.json",
    params:
        outdir=lambda wc: f"{RESULTS}/suite/{wc.domain}/{wc.task}",
        external="" if TRUTH["external"] else "--no-external",
    log:
        f"{RESULTS}/logs/suite/{{domain}}/{{task}}.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite truth --root {DOMAIN_ROOT} --domain {wildcards.domain} "
        "--task {wildcards.task} --outdir {params.outdir} "
        "--bfs-states {TRUTH[bfs_states]} --astar-seconds {TRUTH[astar_seconds]} "
        "--external-seconds {TRUTH[external_seconds]} {params.external} 2> {log}"


rule summary:
    input:
        TRUTHS,
    output:
        SUMMARY,
    params:
        domains=" ".join(DOMAINS),
    log:
        f"{RESULTS}/logs/suite/summary.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite summary --root {DOMAIN_ROOT} --domains {params.domains} "
        "--results {RESULTS}/suite --out {output} 2> {log}"


rule suite:
    input:
        SUMMARY,
