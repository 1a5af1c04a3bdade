"""Claims on batch requests: which job submits a request that several jobs ask at once.

Jobs of one model share the reply cache, and their first calls are often one request
(`direct`, `self-refine` and `modulo` open alike), so two such jobs running at once
would each upload it. Before a job uploads a request it claims the request's key: a file
`<cache>/batches/claims/<key>` made exclusively (written beside, then `os.link`ed into
place, which fails when the claim exists: atomic on a local disk and on NFS), naming its
owner. The owner is the job's lock file `<cache>/batches/owners/<host>-<pid>-<n>.lock`,
held with `flock` for as long as the job runs. The kernel releases that lock when the job
ends, however it ends (a kill included), so a claim whose owner's lock can be taken, or
whose owner file is gone, belongs to a job that is gone, and is taken over. Claiming and
taking over happen under one more lock (`claims/.lock`), so two jobs asking the same wave
at once do not split it: one claims it all, the other waits for its answers in the cache.

On a shared filesystem: Linux's NFS client carries `flock` as NFS locks (NLM, or NFSv4's
leases), which the server drops when a client host dies (after its lease). Where `flock`
is refused (a Lustre mount without `-o flock`, say), a job's liveness is read from its
owner file: on the same host, its pid still running since the recorded start; an owner on
another host cannot be checked and is taken as alive (a claim of a dead job there waits
until its file under `claims/` is removed by hand; the waiting job says which).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from planaudit import atomic

UNSUPPORTED = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})
_serial_numbers = count()  # two Claims of one process (two jobs in threads) are two owners


def _start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), None when it is not running:
    a pid reused by a later process is not the owner."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class Claims:
    """One job's claims in a batches folder; `close()` ends them (a killed job's end
    themselves, its lock released by the kernel)."""

    def __init__(self, folder: Path):
        self.folder = folder / "claims"
        self.owners = folder / "owners"
        self.me: str | None = None
        self._fd: int | None = None
        self.flock = True  # False where the filesystem refuses flock

    def _own(self) -> None:
        """Become an owner: the lock file made and locked under a temporary name, then
        renamed into place, so no one finds it unlocked and takes it for a dead job's."""
        if self.me is not None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self.owners.mkdir(parents=True, exist_ok=True)
        host, pid = socket.gethostname(), os.getpid()
        self.me = f"{host}-{pid}-{next(_serial_numbers)}"
        tmp = self.owners / f".{self.me}.tmp"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in UNSUPPORTED:
                os.close(fd)
                raise
            self.flock = False
        os.write(fd, json.dumps({"host": host, "pid": pid,
                                 "start": _start_time(pid)}).encode())
        os.replace(tmp, self.owners / f"{self.me}.lock")
        self._fd = fd

    def close(self) -> None:
        """The job's remaining claims released, its owner file removed."""
        if self.me is None:
            return
        if self.folder.is_dir():
            self.release(p.name for p in self.folder.iterdir() if not p.name.startswith("."))
        (self.owners / f"{self.me}.lock").unlink(missing_ok=True)
        if self._fd is not None:
            os.close(self._fd)
        self.me, self._fd = None, None

    @contextmanager
    def _serial(self) -> Iterator[None]:
        """One job at a time claims or takes over (a lock file held with flock)."""
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                if exc.errno not in UNSUPPORTED:
                    raise
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def owner(self, key: str) -> str | None:
        """Who holds the claim on `key`, or None."""
        try:
            return (self.folder / key).read_text().strip() or None
        except FileNotFoundError:
            return None

    def alive(self, owner: str) -> bool:
        """Whether the job that made claims as `owner` is still running."""
        if owner == self.me:
            return True
        path = self.owners / f"{owner}.lock"
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return False  # closed, or taken over and removed
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError as exc:
            if exc.errno not in UNSUPPORTED:
                raise
            return self._alive_by_pid(path)
        finally:
            os.close(fd)  # the lock, when taken, goes with it
        return False

    @staticmethod
    def _alive_by_pid(path: Path) -> bool:
        try:
            said = json.loads(path.read_text() or "{}")
        except (OSError, json.JSONDecodeError):
            return True  # being written
        if said.get("host") != socket.gethostname():
            return True  # cannot be checked from here
        return said.get("start") is not None and _start_time(int(said["pid"])) == said["start"]

    def claim(self, keys: Iterable[str]) -> tuple[list[str], dict[str, str]]:
        """(the keys now this job's, in order: new claims, its own, and claims of jobs
        that are gone, taken over; key -> owner for those a live job holds)."""
        self._own()
        assert self.me is not None
        mine: list[str] = []
        held: dict[str, str] = {}
        dead: set[str] = set()
        with self._serial():
            for key in keys:
                path = self.folder / key
                tmp = self.folder / f".{key}.{self.me}"
                tmp.write_text(self.me)
                try:
                    os.link(tmp, path)
                    mine.append(key)
                    continue
                except FileExistsError:
                    pass
                finally:
                    tmp.unlink(missing_ok=True)
                owner = self.owner(key)
                if owner is None or owner in dead or not self.alive(owner):
                    atomic.write_text(path, self.me)  # taken over, under the lock
                    if owner:
                        dead.add(owner)
                    mine.append(key)
                elif owner == self.me:
                    mine.append(key)
                else:
                    held[key] = owner
            for owner in dead:  # its claims are ours now: its file has nothing to say
                (self.owners / f"{owner}.lock").unlink(missing_ok=True)
        return mine, held

    def release(self, keys: Iterable[str]) -> None:
        """Claims this job holds (or a gone job left) on `keys` removed (under the lock: a
        gone job's claim may be being taken over)."""
        if not self.folder.is_dir():
            return
        with self._serial():
            for key in keys:
                owner = self.owner(key)
                if owner is not None and (owner == self.me or not self.alive(owner)):
                    (self.folder / key).unlink(missing_ok=True)
