"""The curriculum regime: PlanBench's test cases (t1-t8) on any loaded domain."""
