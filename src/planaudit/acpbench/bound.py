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
thread every 0.1 s, over what it was when the computation began. One child proves a batch
in turn (`bounded_each`: a fork costs more than many a small proof), each computation
measured from its own start, and past a bound a new child takes the rest. A forked child
reuses its parent's freed heap before its address space grows, so an address-space cap
alone would give it that much more room (tens of MB under pytest); `RLIMIT_AS` at the
address space at its start plus `memory_mb` stays as the backstop a burst of allocation
between two samples cannot pass. A parent that holds a few hundred MB (a job with polars
and the suite loaded) thus leaves the computation the same room as a small one.
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
from collections.abc import Callable, Iterator, Sequence
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

    def restart(self) -> None:
        """Measure from here: the next computation of a child that runs several
        (`bounded_each`) is bounded by what it adds, as a child of its own would be. What
        the last one freed is handed back first (a full collection, then glibc's
        malloc_trim), so that it cannot reuse that room unseen, and the peak RSS is reset."""
        gc.collect()
        _trim()
        with self.lock:
            try:  # 5: reset the peak resident set size (VmHWM), Linux 4.0 and later
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                pass
            self.start, self.rss, self.peak = _private(), _status("VmRSS"), 0

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
            with self.lock:
                if self.memory_mb and self.sample() > self.memory_mb * MB:
                    self.conn.send(("memory", "", round(self.peak / MB, 1)))
                    os._exit(0)


def _trim() -> None:
    """Return the freed heap to the system (glibc's malloc_trim); nothing elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _cap(memory_mb: int | None) -> None:
    """The address-space backstop: what the process has now plus `memory_mb`."""
    if not memory_mb:
        return
    base = _status("VmSize") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = base + memory_mb * MB
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _picklable(e: BaseException) -> BaseException:
    try:
        pickle.dumps(e)
        return e
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


def _each_child(conn, fn: Callable, items: Sequence, carry: Any, memory_mb: int | None) -> None:
    """`bounded_each`'s child: each item in turn, each measured from its own start, its
    answer sent as soon as it is known; past the memory bound the watchdog ends it."""
    gc.freeze()
    lock = threading.Lock()
    watch = _Watch(conn, lock, memory_mb)
    try:
        for item in items:
            watch.restart()
            _cap(memory_mb)
            try:
                value, carry = fn(item, carry)
                message: tuple = ("ok", (value, carry))
            except MemoryError:
                message = ("memory", "")
            except Exception as e:  # the item's own failure, given back with it
                message = ("raise", _picklable(e))
            with lock:
                here = watch.peak_mb()
                try:
                    conn.send((*message, here))
                except MemoryError:
                    conn.send(("memory", "the answer did not fit", here))
                    return
            if message[0] == "memory":
                return
    finally:
        conn.close()
        os._exit(0)


def bounded_each(fn: Callable[[Any, Any], tuple[Any, Any]], items: Sequence,
                 bound: Bound = DEFAULT, carry: Any = None,
                 ) -> Iterator[tuple[Any, Any, BaseException | None, Usage]]:
    """`fn(item, carry) -> (value, carry)` for each item, each within `bound` (the module
    docstring says how), in one forked child for as many items as stay within it: a fork costs
    about 20 ms of a parent that holds a few hundred MB, more than many a small proof.
    Yields (item, value, error, usage) in order; `error` is the item's `PastBound` or the
    exception `fn` raised on it (then value is None). Past a bound the child is ended and
    a new one takes the rest, with the carry of the last item that finished (`carry`
    threads what one item's answer tells the next: the states already drawn)."""
    todo = list(items)
    if "fork" not in multiprocessing.get_all_start_methods():
        for item in todo:
            start = time.perf_counter()
            try:
                value, carry = fn(item, carry)
                yield item, value, None, Usage(round(time.perf_counter() - start, 3), None)
            except Exception as e:
                yield item, None, e, Usage(round(time.perf_counter() - start, 3), None)
        return
    ctx = multiprocessing.get_context("fork")
    while todo:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_each_child, args=(send, fn, todo, carry, bound.memory_mb),
                           daemon=True)
        proc.start()
        send.close()
        done = 0
        try:
            while done < len(todo):
                item, start = todo[done], time.perf_counter()
                done += 1
                if not recv.poll(bound.seconds):
                    yield item, None, PastBound("time", bound), _took(start, None)
                    break
                try:
                    kind, payload, peak = recv.recv()
                except EOFError:
                    proc.join()
                    code = proc.exitcode or 0
                    name = signal.Signals(-code).name if code < 0 else f"exit code {code}"
                    yield item, None, PastBound("died", bound, f"its process died ({name}), "
                                                "most likely of memory"), _took(start, None)
                    break
                if kind == "memory":
                    yield item, None, PastBound("memory", bound, payload), _took(start, peak)
                    break
                if kind == "raise":
                    yield item, None, payload, _took(start, peak)
                    continue
                value, carry = payload
                yield item, value, None, _took(start, peak)
        finally:
            recv.close()
            if proc.is_alive():
                proc.kill()
            proc.join()
        todo = todo[done:]


def _took(start: float, peak: float | None) -> Usage:
    return Usage(round(time.perf_counter() - start, 3), peak)
