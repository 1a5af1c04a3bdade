# planaudit: the only entry point. The workflow itself is package data
# (src/planaudit/workflow/Snakefile, `workflow/` here), used as a Snakemake module: a
# folder made by `planaudit init` holds the same lines, naming the installed package's file.


configfile: "config/config.yaml"


module planaudit:
    snakefile:
        "workflow/Snakefile"
    config:
        config


use rule * from planaudit
