"""Where the installed package keeps its data: the workflow (Snakefile, rules, schemas,
report captions, profiles) and the built-in domains. Found beside this module, so that
a wheel installed outside the repository finds them as a checkout does."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
WORKFLOW = PACKAGE / "workflow"
SNAKEFILE = WORKFLOW / "Snakefile"
CONFIG_SCHEMA = WORKFLOW / "schemas" / "config.schema.yaml"
ROW_SCHEMA = WORKFLOW / "schemas" / "row.schema.yaml"
DOMAINS = PACKAGE / "domains"
