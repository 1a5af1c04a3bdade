"""A validator's diagnosis read back as formulas.

Validation names each failed condition as PDDL text (`Failure.unsatisfied`); what an
episode tells the model about it must go through the same templates as the brief, so
the text is read back into the form the domain's own formulas take (numeric comparisons
and equalities included), by the domain reader itself.
"""

from __future__ import annotations

from planaudit.formal.sexpr import PDDLError, parse
from planaudit.formal.syntax import _Reader


def read_formula(text: str, source: str = "<diagnosis>") -> tuple:
    """One condition such as "(not (clear b))" or "(< (load s1) 2)" as a formula."""
    items = parse(text, source)
    if len(items) != 1:
        raise PDDLError(f"expected one formula, found {len(items)}: {text!r}", source, None)
    return _Reader(text, source).formula(items[0], source)
