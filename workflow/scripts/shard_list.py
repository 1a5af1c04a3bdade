"""The shard listing (rule shard_list, analysis.smk): the config's shards, a path a line,
written whole or not at all. A script, not a `run:` block: Snakemake runs a `run:` block in
a Snakemake process of its own (some 2 s of CPU), a script in a bare Python (0.2 s)."""

from pathlib import Path

from planaudit import atomic

snakemake = globals()["snakemake"]  # set by Snakemake's script preamble
atomic.write_text(Path(snakemake.output[0]), "".join(f"{f}\n" for f in snakemake.params.shards))
