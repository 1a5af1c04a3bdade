"""What the tests ask of a process they started and stopped."""

from __future__ import annotations

import os
from pathlib import Path


def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie has: it waits only to be reaped by a
    parent that may itself be gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
