"""planaudit's regimes as Inspect tasks, for `inspect eval planaudit/<regime>`.

A second way in, beside the Snakemake pipeline: the same prepared suite (`suite/`), the
same prompts (the regimes' own strategy, tool, case and question code), the same
judgement (`formal/` through the functions the shards build rows with), but Inspect's
loop, agents, providers and logs. Every score follows the sample contract of
`planaudit.interop`, so `planaudit import inspect` turns these logs into rows.

Only this package (and `interop/`) imports inspect_ai; the entry point
`[project.entry-points.inspect_ai] planaudit = "planaudit.harness.registry"` loads it.
"""
