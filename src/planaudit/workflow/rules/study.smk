# A study with people beside the models: when the config names a study's exported records
# (`study: {records: [DIR, ...]}`, folders written by `planaudit study export`), the human
# regime's jobs judge them into people's rows (regimes.smk, like any regime's), collect
# lays them beside the models' and this rule writes the study's statistics, a thin shell
# over `planaudit study analyze`. New records (a new export) rerun the judging, collect,
# the tables, the report and this analysis; nothing else.
STUDY = config.get("study") or {}
STUDY_DIR = f"{RESULTS}/study/analysis"
STUDY_OUTPUTS = (
    [f"{STUDY_DIR}/{f}" for f in ("analysis.json", "arms.csv", "tests.csv", "people.png")]
    if STUDY.get("records")
    else []
)


rule study_analysis:
    input:
        EPISODES,
    output:
        STUDY_OUTPUTS or [f"{STUDY_DIR}/analysis.json"],
    params:
        out=lambda wc, output: Path(output[0]).parent,
        alternative=STUDY.get("alternative", "two-sided"),
        # each measure's own direction (study.alternatives)
        each=" ".join(f"--alternative-of {m}={a}"
                      for m, a in (STUDY.get("alternatives") or {}).items()),
        rates=" ".join(str(r) for r in (STUDY.get("power") or {}).get("rates", [0.74, 0.82])),
        power=(STUDY.get("power") or {}).get("power", 0.8),
        alpha=ANALYSIS.get("alpha", 0.05),
        seed=ANALYSIS.get("seed", 0),
        bootstrap=ANALYSIS.get("bootstrap", 2000),
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/study_analysis.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit study analyze --episodes {input} --out {params.out} "
        "--alternative {params.alternative} {params.each} --rates {params.rates} --power {params.power} "
        "--alpha {params.alpha} --seed {params.seed} --bootstrap {params.bootstrap} "
        "> {log} 2>&1 || (tail -n 20 {log} >&2; exit 1)"
