"""The memory and time bound every ACPBench gold computation runs within.

A gold answer is proven by exhaustive search, and on a task with many objects (ACPBench's
`alfred`) one item's search grew past 23 GB, taking the machine with it. So each gold
computation runs in a child process (forked: it inherits the parsed task, nothing is
pickled on the way in) which is stopped past `memory_mb` of memory of its own and killed
past `seconds` of wall-clock time. What runs past either is never asked: the caller gets
`PastBound`, which names the bound it passed, and counts and names the item; the machine
keeps the rest of its memory.

The memory bound is on what the computation costs the machine beyond its parent: the
child's private memory (`Private_Dirty` and swap of /proc/self/smaps_rollup, which counts
the parent's pages the child has written to, as well as new ones), sampled by a watchdog
thread every 0.1 s, over what it was at the fork. A forked child reuses its parent's freed
heap before its address space grows, so an address-space cap alone would give it that
much more room (tens of MB under pytest); `RLIMIT_AS` at the address space at the fork plus
`memory_mb` stays as the backstop a burst of allocation between two samples cannot pass.
A parent that holds a few hundred MB (a job with polars and the suite loaded) thus leaves
the computation the same room as a small one.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import resource
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MB = 1 << 20


@dataclass(frozen=True)
class Bound:
    """What one gold computation may take; None: no bound of that kind."""

    memory_mb: int | None = 4096
    seconds: float | None = 300.0

    def __str__(self) -> str:
        parts = [f"{self.memory_mb} MB" if self.memory_mb else "no memory bound",
                 f"{self.seconds:g} s" if self.seconds else "no time bound"]
        return ", ".join(parts)

    @classmethod
    def of(cls, section: dict | None) -> Bound:
        """The bound of a config's `acpbench.gold_bound` (the defaults where unset)."""
        given = (section or {}).get("gold_bound") or {}
        return cls(given.get("memory_mb", cls.memory_mb), given.get("seconds", cls.seconds))


DEFAULT = Bound()


class PastBound(Exception):
    """A computation stopped at its bound (`kind`: memory, time, or died); never asked."""

    def __init__(self, kind: str, bound: Bound, detail: str = ""):
        self.kind, self.bound, self.detail = kind, bound, detail
        what = {"memory": f"past its memory bound ({bound.memory_mb} MB)",
                "time": f"past its time bound ({bound.seconds:g} s)",
                "died": f"past its bound ({bound})"}[kind]
        super().__init__(what + (f": {detail}" if detail else ""))

    def __reduce__(self):
        return PastBound, (self.kind, self.bound, self.detail)


@dataclass(frozen=True)
class Usage:
    """What a computation took: wall-clock seconds and the peak private memory it added
    (MB, sampled every 0.1 s and at the end; None where /proc is not there to read it)."""

    seconds: float
    peak_mb: float | None


def _status(field: str) -> int | None:
    """A field of /proc/self/status in bytes (VmSize, VmRSS, VmHWM), None off Linux."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _private() -> int | None:
    """The process's private memory in bytes (dirty pages and swap), None off Linux."""
    total = None
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Dirty:", "Swap:")):
                    total = (total or 0) + int(line.split()[1]) * 1024
    except OSError:
        return None
    return total


class _Watch:
    """The child's watchdog: samples its private memory; past the bound it sends
    `memory` on the child's behalf and ends the process at once."""

    def __init__(self, conn, lock: threading.Lock, memory_mb: int | None):
        self.conn, self.lock, self.memory_mb = conn, lock, memory_mb
        self.start = _private()
        self.rss = _status("VmRSS")  # the high-water mark past it catches what sampling missed
        self.peak = 0
        if self.start is not None:
            threading.Thread(target=self.run, daemon=True).start()

    def sample(self) -> int:
        now = _private()
        if now is not None and self.start is not None:
            self.peak = max(self.peak, now - self.start)
        return self.peak

    def peak_mb(self) -> float | None:
        if self.start is None:
            return None
        hwm = _status("VmHWM")
        grown = hwm - self.rss if hwm is not None and self.rss is not None else 0
        return round(max(self.sample(), grown) / MB, 1)

    def run(self) -> None:
        while True:
            time.sleep(0.1)
            if self.memory_mb and self.sample() > self.memory_mb * MB:
                with self.lock:
                    self.conn.send(("memory", "", round(self.peak / MB, 1)))
                    os._exit(0)


def _child(conn, fn: Callable, args: tuple, memory_mb: int | None) -> None:
    # the parent's objects out of the collector's reach: a full collection would write to
    # every one of them, copying the parent's pages into this process's private memory
    gc.freeze()
    lock = threading.Lock()
    watch = _Watch(conn, lock, memory_mb)
    try:
        if memory_mb:
            base = _status("VmSize") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = base + memory_mb * MB
            if hard != resource.RLIM_INFINITY:
                cap = min(cap, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        try:
            message = ("ok", fn(*args))
        except MemoryError:
            message = ("memory", "")
        except BaseException as e:  # re-raised in the parent
            try:
                pickle.dumps(e)
                message = ("raise", e)
            except Exception:
                message = ("raise", RuntimeError(f"{type(e).__name__}: {e}"))
        with lock:
            here = watch.peak_mb()
            try:
                conn.send((*message, here))
            except MemoryError:  # the answer itself does not fit in what is left
                conn.send(("memory", "the answer did not fit", here))
    finally:
        conn.close()
        os._exit(0)


def bounded(fn: Callable[..., Any], args: tuple = (), bound: Bound = DEFAULT) -> tuple[Any, Usage]:
    """`fn(*args)` run within `bound` in a forked child: (its result, what it took);
    `PastBound` past the bound, and any exception of `fn` raised here as it was there.
    Without fork (not a POSIX system), `fn` runs here, unbounded, as before."""
    if "fork" not in multiprocessing.get_all_start_methods():
        start = time.perf_counter()
        return fn(*args), Usage(round(time.perf_counter() - start, 3), None)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    proc = ctx.Process(target=_child, args=(send, fn, args, bound.memory_mb), daemon=True)
    proc.start()
    send.close()
    try:
        if not recv.poll(bound.seconds):
            raise PastBound("time", bound)
        try:
            kind, payload, peak = recv.recv()
        except EOFError:  # killed (the kernel's OOM killer, a C allocation that aborted)
            proc.join()
            code = proc.exitcode or 0
            name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
            raise PastBound("died", bound, f"its process died ({name}), most likely of "
                            "memory") from None
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
    usage = Usage(round(time.perf_counter() - start, 3), peak)
    if kind == "memory":
        raise PastBound("memory", bound, payload)
    if kind == "raise":
        raise payload
    return payload, usage
