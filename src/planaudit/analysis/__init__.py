"""Analysis: episode rows → one frame, statistics, tables, figures and the report.

Reads only what the episode rules wrote; never calls a model, never re-judges a plan.
"""
