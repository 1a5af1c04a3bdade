"""Where the installed package keeps its data: the workflow (Snakefile, rules, schemas,
report captions, profiles), the default config and the built-in domains. Found beside this
module, so that a wheel installed outside the repository finds them as a checkout does
(the repository's `workflow/`, `domains/`, `config/config.yaml` and
`config/plan_settings.yaml` are symlinks to these)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
WORKFLOW = PACKAGE / "workflow"
SNAKEFILE = WORKFLOW / "Snakefile"
CONFIG_SCHEMA = WORKFLOW / "schemas" / "config.schema.yaml"
ROW_SCHEMA = WORKFLOW / "schemas" / "row.schema.yaml"
PROFILES = WORKFLOW / "profiles"
DEFAULT_CONFIG = WORKFLOW / "config" / "config.yaml"  # the default experiment
PLAN_SETTINGS = WORKFLOW / "config" / "plan_settings.yaml"  # the default config's plan settings
DOMAINS = PACKAGE / "domains"
