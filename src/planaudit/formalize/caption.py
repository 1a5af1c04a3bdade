"""The formalizer figure's caption: the registry (`regime.py`) and the report section
(`report.py`) both show it, and neither may import the other."""

CAPTION = ("Planner or formalizer? Per model (a panel each), the score (a valid plan on a "
           "solvable task, UNSOLVABLE on an unsolvable one) of each offline strategy (grey: "
           "the model plans) and of each formalize method (blue: the model writes the PDDL "
           "and a planner plans on it), with 95% Wilson intervals over tasks; the open "
           "diamond on a formalize row is the share of episodes whose files are equivalent "
           "to the hidden model (the route can succeed on files that are not). The tasks the "
           "formalize section posed, undisguised, error episodes left out; the paired tests "
           "are in the formalize_vs_offline table. Reference models are calibrators with "
           "privileged access, not LLMs.")
