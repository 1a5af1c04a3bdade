"""Atomic file writes: a file is either absent, its old self, or complete.

Every output a later stage (or a rerun) reads is written to a temporary file in the
same folder and renamed into place (`os.replace`, atomic on POSIX), so a process
killed mid-write (SIGKILL, OOM, a cluster's time limit) never leaves half a file
under the real name. A leftover temporary (`.<name>.<pid>.tmp<suffix>`) is never an
output anyone reads. Crash safety is against a killed process, not a lost machine:
there is no fsync.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` (same suffix, so writers that infer the format from
    it still work); renamed onto `path` when the block ends without an exception."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)


def write_parquet(frame, path: str | Path) -> None:
    """A polars frame to Parquet, atomically."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp)


def copy_file(src: str | Path, dst: str | Path) -> None:
    import shutil

    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
