# Suite: prepare each task (hidden model, names, briefs), prove its ground truth
# by two methods, audit its label (one job per domain), and gather the summary.


TASK_FILES = ("problem.pddl", "domain.pddl", "names.json", "brief.json", "truth.json")
TRUTH_LIMITS = (
    f"--bfs-states {config['truth']['bfs_states']} "
    f"--astar-seconds {config['truth']['astar_seconds']} "
    f"--external-seconds {config['truth']['external_seconds']} "
    f"--audit {SUITE.get('audit', 'strict')}" + ("" if config["truth"]["external"] else " --no-external")
)

# One job per domain prepares and proves all its tasks: a process per task spent more
# time starting (imports, planner set-up) than most tasks take to prove.
for _domain in SUITE_DOMAINS:

    rule:
        name:
            f"suite_{_domain}"
        input:
            domain_inputs(_domain),
        output:
            [
                f"{RESULTS}/suite/{_domain}/{t}/{f}"
                for d, t in ENTRIES
                if d == _domain
                for f in TASK_FILES
            ],
        params:
            suite=f"--source {SUITE.get('source', 'builtin')} --root {SUITE_ROOT}",
            domain=_domain,
            # the generic description rides on this param, so that the default config's
            # params (and so its finished jobs) stay exactly as they were
            obfuscate=(
                f"--obfuscate --seed {SUITE.get('seed', 0)}" if obfuscated(SUITE, _domain) else ""
            )
            + (" --description generic" if SUITE.get("description") == "generic" else ""),
            limits=TRUTH_LIMITS,
            suite_dir=lambda wc, output: Path(output[0]).parent.parent.parent,
        resources:
            **job_resources("suite"),
        log:
            f"{RESULTS}/logs/suite/{_domain}.log",
        conda:
            "../envs/planaudit.yaml"
        shell:
            "planaudit suite build {params.suite} --domain {params.domain} "
            "--suite-dir {params.suite_dir} {params.obfuscate} {params.limits} 2> {log} "
            "|| (tail -n 20 {log} >&2; exit 1)"

    # the disguised variants of the domain's tasks: prepared from the PDDL, proven on the
    # renamed model, and checked against the undisguised truth (a difference fails the job)
    for _disguise in DISGUISED:

        rule:
            name:
                f"suite_{_domain}_{_disguise}"
            input:
                domain_inputs(_domain),
                [f"{RESULTS}/suite/{d}/{t}/truth.json" for d, t in ENTRIES if d == _domain],
            output:
                [
                    f"{RESULTS}/suite/{_domain}/{t}@{_disguise}/{f}"
                    for d, t in ENTRIES
                    if d == _domain
                    for f in TASK_FILES
                ],
            params:
                suite=f"--source {SUITE.get('source', 'builtin')} --root {SUITE_ROOT}",
                domain=_domain,
                disguise=_disguise,
                obfuscate=(
                    "--obfuscate" if obfuscated(SUITE, _domain) else ""
                ) + f" --seed {SUITE.get('seed', 0)}",
                limits=TRUTH_LIMITS,
                suite_dir=lambda wc, output: Path(output[0]).parent.parent.parent,
            log:
                f"{RESULTS}/logs/suite/{_domain}@{_disguise}.log",
            conda:
                "../envs/planaudit.yaml"
            shell:
                "planaudit suite build {params.suite} --domain {params.domain} "
                "--disguise {params.disguise} --suite-dir {params.suite_dir} {params.obfuscate} "
                "{params.limits} 2> {log} || (tail -n 20 {log} >&2; exit 1)"


# One marker per domain (and per domain x disguise) that stands for its tasks' truth files:
# every episode job waits on a domain's marker instead of each task's truth.json, so a job
# has a few inputs instead of every task's (the DAG of 100 models x 13 methods x 7 plan
# settings resolved 386,641 input files, about a minute of `snakemake -n`). A rebuilt
# truth rewrites the marker, which reruns the jobs as the truth itself did. The marker
# lists the domain's task folders; a shell command writes it, not a `run:` block, which
# Snakemake runs in a Snakemake process of its own (some 2 s of CPU a marker).
for _domain in SUITE_DOMAINS:
    for _disguise in ["none", *DISGUISED]:
        _folders = [task_folder(t, _disguise) for d, t in ENTRIES if d == _domain]

        rule:
            name:
                f"ready_{_domain}_{_disguise}"
            input:
                [f"{RESULTS}/suite/{_domain}/{f}/truth.json" for f in _folders],
            output:
                ready_marker(_domain, _disguise),
            params:
                tasks=_folders,
            log:
                f"{RESULTS}/logs/suite/ready_{_domain}@{_disguise}.log",  # lint: writes none
            localrule: True
            conda:
                "../envs/planaudit.yaml"
            shell:
                "printf '%s\\n' {params.tasks:q} > {output:q}"


rule summary:
    input:
        TRUTHS,
    output:
        summary=SUMMARY,
        audit=AUDIT,
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/suite/summary.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        # the console gets the summary: single-method tasks and the label audit's count
        "planaudit suite summary --out {output.summary} --audit-out {output.audit} "
        "{input} 2> {log} || (tail -n 20 {log} >&2; exit 1); cat {log} >&2"


rule suite:
    input:
        SUMMARY,
        DISGUISED_TRUTHS,
