"""The semantics: every applicability, goal and optimality verdict comes from here."""

from planaudit.formal.ground import GroundingError, Task
from planaudit.formal.load import load_task
from planaudit.formal.plan import parse_plan
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.validate import Verdict, validate

__all__ = ["GroundingError", "PDDLError", "Task", "Verdict", "load_task", "parse_plan", "validate"]
