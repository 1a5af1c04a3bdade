# Figures and the standalone report, thin shells over `planaudit figures` and
# `planaudit report`. Every figure of FIGURES is always written (a placeholder stating
# why when the rows cannot support it), so those outputs are the same for every config;
# A regime's own figures (`Regime.figures`: ACPBench's) are outputs exactly when the
# config runs that regime.
# The figures carry their captions for `snakemake --report report.html`; the tables'
# captions are ../report/table-<name>.rst, for the csv outputs of the tables rule.
import json

from planaudit.analysis.outputs import FIGURES, SWEEP_FIGURES, regime_figures

# the regimes this config runs (jobs planned), whose own figures are outputs
RUNNING = [name for name, files in SHARDS.items() if files]
# and the difficulty sweep's figure, when the suite sweeps (suite.sweep)
SWEEPS = bool(SUITE.get("sweep"))
DRAWN = list(FIGURES) + regime_figures(RUNNING) + (list(SWEEP_FIGURES) if SWEEPS else [])


report: "../report/workflow.rst"


FIGURE_DIR = f"{RESULTS}/report/figures"
REPORT_INDEX = f"{RESULTS}/report/index.html"


rule figures:
    input:
        EPISODES,
    output:
        png=[
            report(
                f"{FIGURE_DIR}/{name}.png",
                caption=f"../report/figure-{name}.rst",
                category="Figures",
            )
            for name in DRAWN
        ],
        svg=[f"{FIGURE_DIR}/{name}.svg" for name in DRAWN],
    params:
        out=lambda wc, output: Path(output.png[0]).parent,
        # the calibrator figure's intervals and decisions are the calibrator table's
        seed=ANALYSIS.get("seed", 0),
        bootstrap=ANALYSIS.get("bootstrap", 2000),
        alpha=ANALYSIS.get("alpha", 0.05),
        # a running regime's own figures are outputs: drawn even from no rows
        running=" ".join(f"--regime {name}" for name in [*RUNNING, *(["sweep"] if SWEEPS else [])]),
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/figures.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit figures --episodes {input} --out {params.out} --seed {params.seed} "
        "--bootstrap {params.bootstrap} --alpha {params.alpha} {params.running} 2> {log} "
        "|| (tail -n 20 {log} >&2; exit 1)"


rule report:
    input:
        episodes=EPISODES,
        tables=TABLE_FILES,
        figures=rules.figures.output,
        # the design section counts its certificates (and names tasks kept without one)
        summary=SUMMARY,
    output:
        REPORT_INDEX,
    params:
        # the effective config (command-line overrides included), as the shard rules pass it
        spec=json.dumps(config),
        tables=lambda wc, input: Path(input.tables[0]).parent,
        figures=lambda wc, input: Path(input.figures[0]).parent,
    resources:
        **job_resources("analysis"),
    log:
        f"{RESULTS}/logs/analysis/report.log",
    conda:
        "../envs/planaudit.yaml"
    shell:
        "planaudit report --episodes {input.episodes} --spec {params.spec:q} "
        "--tables {params.tables} --figures {params.figures} --out {output} 2> {log} "
        "|| (tail -n 20 {log} >&2; exit 1)"
