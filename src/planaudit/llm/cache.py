"""A persistent cache of model replies, keyed by exactly what decides a reply.

The key covers the model string, the server that answers it (`api_base`), the
messages, the tools, the `tool_choice` sent with them (when it is not "auto", the
default, whose key stays what it was before the field was keyed), the temperature,
the output cap, the sample index and the call's metadata (task, purpose, a reference
model's fault rates; the task's folder only for a reference model, which reads its
answer there: `Client._keyed`), and nothing else: retries, timeouts, concurrency or the
API key do not change what a model would say, so they do
not change the key. Entries are JSON files written atomically (a temporary file
renamed into place), so a killed run never leaves a half-written entry, and a
rerun never pays twice for a call that already succeeded.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

KEY_FIELDS = ("model", "messages", "tools", "temperature", "max_tokens", "sample", "metadata")
# who answers: a model string served elsewhere is another model; and `tool_choice`: a
# model told it must call a tool ("required") or told nothing ("omit") answers otherwise
# than one left to choose ("auto"). Only in the key when set (the client sets tool_choice
# only with tools and when it is not "auto"), so that entries written before they were
# part of the key are still found. `reasoning` (an effort or a token budget) and a provider
# `seed` are factors of the experiment: the same prompt at another is another trial.
IF_SET_FIELDS = ("api_base", "tool_choice", "reasoning", "seed")


def cache_key(request: dict) -> str:
    decisive = {k: request.get(k) for k in KEY_FIELDS}
    decisive.update({k: request[k] for k in IF_SET_FIELDS if request.get(k)})
    canonical = json.dumps(decisive, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def planner_key(model: str, task_dir: Path, seconds) -> dict:
    """A classical planner's request as its key sees it: what decides its answer, the
    planner, the task's PDDL (its content, not its folder: a rerun on a changed task asks
    again) and its budget; no prompt, which it never reads. A folder without its files
    keys by its path (the planner will then fail and say why)."""
    try:
        pddl = hashlib.sha256(b"\0".join((task_dir / f).read_bytes() for f in
                                          ("domain.pddl", "problem.pddl"))).hexdigest()
    except OSError:
        pddl = str(task_dir)
    return {"model": model, "metadata": {"pddl": pddl, "seconds": seconds}}


class CacheUnwritable(ValueError):
    """The cache folder cannot take an entry: said before any request is sent, since every
    paid reply would otherwise be lost (invariant 5)."""


class Cache:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def require_writable(self) -> None:
        """Create the folder if need be and write (then remove) a probe entry the way `put`
        writes one; CacheUnwritable names the folder and the reason when that fails."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-probe-")
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            raise CacheUnwritable(
                f"cache {self.root}: cannot write a reply there ({e.strerror or e}); "
                "no request was sent. Make it writable or set `cache:` in the config "
                "to a folder this job can write (on a cluster, a shared filesystem)"
            ) from None

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._path(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def set_aside(self, keys, folder: str) -> tuple[Path, int]:
        """Move the entries of `keys` out of the cache's reach, into `set-aside/<folder>/`
        beside them (kept, not deleted: the replies were paid for), so that the same requests
        are sent again; (the folder, how many entries were moved)."""
        target = self.root / "set-aside" / folder
        moved = 0
        for key in sorted(keys):
            path = self._path(key)
            if path.is_file():
                target.mkdir(parents=True, exist_ok=True)
                os.replace(path, target / path.name)
                moved += 1
        return target, moved

    def put(self, key: str, value: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as fh:
            json.dump(value, fh)
        os.replace(tmp, path)
