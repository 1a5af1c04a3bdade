"""Domains, tasks, their ground-truth records and the label audit."""
