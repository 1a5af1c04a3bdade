# Analysis: every episode shard -> results/episodes.parquet -> the tables in
# results/report/. Both rules are thin shells over `planaudit collect` and
# `planaudit tables`; rerunning them alone changes no number (seeded bootstrap).
from planaudit.analysis.outputs import FORMATS, table_names

EPISODES = f"{RESULTS}/episodes.parquet"
TABLE_FILES = [f"{RESULTS}/report/{t}.{ext}" for t in table_names() for ext in FORMATS]

ROW_SCHEMA = str(Path(workflow.current_basedir).parent / "schemas" / "row.schema.yaml")
ANALYSIS = config.get("analysis", {})


# The shards' paths go to collect in a file, not on its command line: Snakemake runs a
# shell command as one argument of `bash -c`, which Linux caps at 128 KB (MAX_ARG_STRLEN),
# some 1,700 shard paths (12 models of the default matrix, 143 shards each). A script
# (workflow/scripts/shard_list.py), since no command line can carry the list. The
# listing is the config's list of shards, not their contents: a param, not an input, so
# that Snakemake resolves each shard file once (collect's input) rather than once per rule
# naming it (three times before, `all` included: some 30,000 files at 100 models); a
# changed list reruns it (the params trigger), and a rewritten shard reruns collect.
SHARD_LIST = f"{RESULTS}/episodes.shards"


rule shard_list:
    output:
        SHARD_LIST,
    params:
        shards=REGIME_SHARDS,
    log:
        f"{RESULTS}/logs/analysis/shard_list.log",  # lint: every rule has one (this writes none)
    localrule: True
    conda:
        "../envs/planaudit.yaml"
    script:
        "../scripts/shard_list.py"


rule collect:
    input:
        shards=REGIME_SHARDS,
        listing=SHARD_LIST,
        schema=ROW_SCHEMA,
    output:
        EPISODES,
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/collect.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit collect --schema {input.schema} --out {output} --shards-from {input.listing} "
        "2> {log} || (tail -n 20 {log} >&2; exit 1)"


rule tables:
    input:
        EPISODES,
    output:
        # the csv of each table goes into `snakemake --report` with its caption
        [
            (
                report(f, caption=f"../report/table-{Path(f).stem}.rst", category="Tables")
                if f.endswith(".csv")
                else f
            )
            for f in TABLE_FILES
        ],
    params:
        out=lambda wc, output: Path(output[0]).parent,
        seed=ANALYSIS.get("seed", 0),
        bootstrap=ANALYSIS.get("bootstrap", 2000),
        alpha=ANALYSIS.get("alpha", 0.05),
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/tables.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit tables --episodes {input} --out {params.out} --seed {params.seed} "
        "--bootstrap {params.bootstrap} --alpha {params.alpha} 2> {log} "
        "|| (tail -n 20 {log} >&2; exit 1)"


# Controls for the statistics: simulated experiments with known truth through the
# report's own McNemar, Holm and bootstrap code. Not part of `all`: it reads no episode,
# so it says nothing about this experiment's rows, only about the analysis code and the
# design in the `calibration:` section; it costs ~10 s of CPU (2,000 experiments per
# difference) and reruns only when that section changes. `snakemake --cores 2 calibrate`.
CALIBRATION_DIR = f"{RESULTS}/calibration"


rule calibrate:
    output:
        json=f"{CALIBRATION_DIR}/calibration.json",
        table=f"{CALIBRATION_DIR}/table.csv",
        figure=f"{CALIBRATION_DIR}/power.png",
    params:
        spec=lambda wc: json.dumps({k: config[k] for k in ("calibration", "analysis") if k in config}),
        out=lambda wc, output: Path(output.json).parent,
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/calibrate.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit calibrate --spec {params.spec:q} --out {params.out} > {log} 2>&1 "
        "|| (tail -n 20 {log} >&2; exit 1)"
