"""One suite domain as the curriculum generators see it: `planaudit.suite.world`, shared
material below the regimes (ACPBench builds its questions from it too), re-exported under
the names the curriculum has always used (`CurriculumError` is its `WorldError`)."""

from __future__ import annotations

from planaudit.suite.world import (
    Instance,
    World,
    WorldError,
    load_instances,
    load_world,
    optimal_plan,
    run,
)

CurriculumError = WorldError

__all__ = ["CurriculumError", "Instance", "World", "WorldError", "load_instances",
           "load_world", "optimal_plan", "run"]
