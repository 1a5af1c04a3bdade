# Suite: prepare each task (hidden model, names, briefs), prove its ground truth
# by two methods, audit its label, and gather the summary.


rule prepare:
    input:
        task_inputs,
    output:
        problem=f"{RESULTS}/suite/{{domain}}/{{task}}/problem.pddl",
        domain=f"{RESULTS}/suite/{{domain}}/{{task}}/domain.pddl",
        names=f"{RESULTS}/suite/{{domain}}/{{task}}/names.json",
        brief=f"{RESULTS}/suite/{{domain}}/{{task}}/brief.json",
    params:
        suite=f"--source {SUITE.get('source', 'builtin')} --root {SUITE_ROOT}",
        outdir=lambda wc, output: Path(output.problem).parent,
        obfuscate=lambda wc: (
            f"--obfuscate --seed {SUITE.get('seed', 0)}" if obfuscated(SUITE, wc.domain) else ""
        ),
    log:
        f"{RESULTS}/logs/suite/{{domain}}/{{task}}.prepare.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite prepare {params.suite} --domain {wildcards.domain} "
        "--task {wildcards.task} --outdir {params.outdir} {params.obfuscate} 2> {log} "
        "|| (tail -n 20 {log} >&2; exit 1)"


rule truth:
    input:
        problem=rules.prepare.output.problem,
        domain=rules.prepare.output.domain,
    output:
        truth=f"{RESULTS}/suite/{{domain}}/{{task}}/truth.json",
    params:
        suite=f"--source {SUITE.get('source', 'builtin')} --root {SUITE_ROOT}",
        outdir=lambda wc, output: Path(output.truth).parent,
        limits=(
            f"--bfs-states {config['truth']['bfs_states']} "
            f"--astar-seconds {config['truth']['astar_seconds']} "
            f"--external-seconds {config['truth']['external_seconds']} "
            f"--audit {SUITE.get('audit', 'strict')}"
            + ("" if config["truth"]["external"] else " --no-external")
        ),
    log:
        f"{RESULTS}/logs/suite/{{domain}}/{{task}}.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        "planaudit suite truth {params.suite} --domain {wildcards.domain} "
        "--task {wildcards.task} --outdir {params.outdir} {params.limits} 2> {log} "
        "|| (tail -n 20 {log} >&2; exit 1)"


rule summary:
    input:
        TRUTHS,
    output:
        summary=SUMMARY,
        audit=AUDIT,
    log:
        f"{RESULTS}/logs/suite/summary.log",
    conda:
        "../../envs/planaudit.yaml"
    shell:
        # the console gets the summary: single-method tasks and the label audit's count
        "planaudit suite summary --out {output.summary} --audit-out {output.audit} "
        "{input} 2> {log} || (tail -n 20 {log} >&2; exit 1); cat {log} >&2"


rule suite:
    input:
        SUMMARY,
