"""planaudit: LLM planners and agents judged against hidden PDDL models."""

__version__ = "0.1.0"
