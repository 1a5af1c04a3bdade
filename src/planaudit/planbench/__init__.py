"""PlanBench material: its roots load, its recorded results replay, its prompts regenerate.

`material` loads a root's configs and instances, `language` renders and reads its
natural language, `dialects` names the ways PlanBench read model text over time,
`query` recovers a test case's truth from a recorded prompt, `replay` scores a
results file, `generate` produces PlanBench-format cases with ground truth.
"""
