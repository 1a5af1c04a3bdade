"""The names of the analysis stage's outputs: its tables, their formats and its figures.

The workflow reads these when it parses the Snakefile, which it does at every start (a
local run, a dry run, every cluster job's own start), so this module imports neither
polars nor matplotlib: importing the tables or the figures for their names cost one to
three seconds each time."""

from __future__ import annotations

TABLES = ("main", "comparisons", "per_domain", "per_task", "outcomes", "online_vs_offline", "power",
          "witness", "compliance", "compliance_tests", "settings", "determinism", "repair",
          "acpbench", "disguise", "calibrator", "same_tasks", "pass_k", "disruption", "reasoning")
FORMATS = ("csv", "md", "tex")
# drawn from the offline and online rows (`tables.main_rows`), always written
FIGURES = ("outcomes", "success_cost", "per_task", "sensing", "online_offline", "phase_flow",
           "calibrator")
# drawn from the ACPBench rows, and written only when the rows hold some (the workflow
# declares them when the config runs ACPBench: `Regime.figures`, `regime_figures`), so the
# other figures never change
ACPBENCH_FIGURES = ("acpbench",)
# drawn from the difficulty sweeps' rows (`suite.sweep`: domains named <domain>-sweep), and
# written only when the config sweeps (the workflow declares it then)
SWEEP_FIGURES = ("sweep",)
SWEEP_SUFFIX = "-sweep"


def regime_figures(running) -> list[str]:
    """The figures of the regimes a config runs (`Regime.figures`, in the registry's
    order): the report's outputs beyond FIGURES."""
    from planaudit.regime import regimes

    return [f for name, r in regimes().items() if name in running
            for f in (*r.figures, *r.drawings)]


def table_names() -> list[str]:
    """Every table the tables stage writes: TABLES, then each regime's own
    (`Regime.tables`, then `<name>_vs_<versus>` for a regime paired with another)."""
    from planaudit.regime import regimes

    return [*TABLES, *(name for r in regimes().values()
                       for name in (*r.tables, *versus_names(r)))]


def versus_names(regime) -> list[str]:
    """The paired table of a regime that names another (`Regime.versus`)."""
    return [f"{regime.name}_vs_{regime.versus}"] if regime.versus else []
