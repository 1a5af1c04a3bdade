# planaudit: the only entry point. Rules live in workflow/rules/; each is a thin
# shell over the `planaudit` command.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/suite.smk"
include: "workflow/rules/checks.smk"
include: "workflow/rules/regimes.smk"
include: "workflow/rules/estimate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/study.smk"


rule all:
    input:
        SUMMARY,
        TABLE_FILES,
        REPORT_INDEX,
        STUDY_OUTPUTS,
    default_target: True
