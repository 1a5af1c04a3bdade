"""The how-to guides that need no service, played as a reader plays them by
tests/test_docs_snippets.py's harness (its GROUPS say which file plays which page)."""

from __future__ import annotations

from tests.test_docs_snippets import pages_test

test_page = pages_test(__name__)
