"""The tutorial's first run (the default experiment, from a folder `planaudit init` writes),
played as a reader plays it by tests/test_docs_snippets.py's harness (its GROUPS say which
file plays which page)."""

from __future__ import annotations

from tests.test_docs_snippets import pages_test

test_page = pages_test(__name__)
