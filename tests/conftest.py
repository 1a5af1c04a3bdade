"""Shared paths and helpers for the tests (no network, no keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ROOT / "domains"
DATA = Path(__file__).resolve().parent / "data"
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "planbench"
SEMANTICS = ROOT.parent / "shared" / "conformance" / "semantics"
SUITE_DOMAINS = ("blocksworld", "gripper", "logistics", "loadbalancing", "hospital")


def suite_entries():
    from planaudit.suite.catalog import load_domain_tasks

    return [e for d in SUITE_DOMAINS for e in load_domain_tasks(DOMAINS, d)]


@pytest.fixture
def write(tmp_path):
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return _write
