"""Sphinx configuration of planaudit's documentation (`make docs`, warnings as errors).

Pages are MyST Markdown. The reference is generated from the code: the CLI from the
argument parsers (sphinx-argparse), the config fields and row columns from the schemas
(the local extension in _ext/)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "planaudit"
author = "the planaudit developers"
copyright = "2026, the planaudit developers"

extensions = [
    "myst_parser",
    "sphinxarg.ext",
    "benchmark_records",  # _ext/: the benchmark pages' figures, from docs/benchmarks/records
    "planaudit_reference",  # _ext/: the config and row reference, the CLI's help texts made safe
]
# the CLI reference titles each subcommand with its whole command (`planaudit suite show`)
sphinxarg_full_subcommand_name = True
# no smart quotes: `--config` written in prose, a help text or a schema's description must
# stay two hyphens (not an en dash), and JSON in a help text keeps its straight quotes
smartquotes = False

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings: list[str] = []

html_theme = "furo"
html_title = "planaudit"
html_static_path = ["_static"]
