"""Advisory file locks (flock) that the operating system drops when their holder dies.

flock belongs to the open file, not to the process: two opens of the same lock file conflict even
inside one process, so threads of one grader (batch --jobs) exclude each other the same way
separate `gpulab grade` processes do. A crash or a SIGKILL releases the lock with the process;
there is never a stale lock to clean up by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
from pathlib import Path
from typing import Iterator


class FileLock:
    """One lock on `path` (created if needed): exclusive, or `shared` with other shared holders.
    An exclusive holder writes its pid and command line into the file so that a process that
    has to wait can say who it is waiting for."""

    def __init__(self, path: Path, shared: bool = False) -> None:
        self.path = path
        self.shared = shared
        self._fd: int | None = None

    def acquire(self, wait: bool = True) -> bool:
        """Takes the lock; with wait=False returns False at once when another holder has it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        if self.shared:   # several holders: none owns the file's text
            return True
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {' '.join(sys.argv)[:300]}\n".encode())
        return True

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def holder(self) -> str:
        """'pid N (command)' of the current holder as it wrote itself into the file, or ''."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        pid, _, cmd = text.partition(" ")
        return f"pid {pid}" + (f" ({cmd})" if cmd else "") if pid.isdigit() else ""


@contextlib.contextmanager
def held(path: Path, shared: bool = False) -> Iterator[None]:
    """Blocks until this thread's open of `path` holds the lock (`shared`: beside other shared
    holders); released on exit or on death."""
    lock = FileLock(path, shared)
    lock.acquire(wait=True)
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def held_unless(path: Path, cancel: threading.Event | None, shared: bool = False,
                poll_seconds: float = 0.1) -> Iterator[bool]:
    """held(), unless `cancel` is set before the lock comes: yields True holding it, or False
    (not holding it) as soon as `cancel` is set while waiting. Work that another thread may call
    off (a profile of a stage its correctness gate turned away) stops waiting for it: a starter's
    profile waited 87 s for other submissions' profiles, then was not counted (two H200s,
    2026-11-29)."""
    if cancel is None:
        with held(path, shared):
            yield True
        return
    lock = FileLock(path, shared)
    while not lock.acquire(wait=False):
        if cancel.wait(poll_seconds):
            yield False
            return
    try:
        yield True
    finally:
        lock.release()


@contextlib.contextmanager
def held_fair(path: Path, shared: bool) -> Iterator[None]:
    """A readers-writer lock on `path` in which a waiting writer is never starved: every holder
    first passes a turnstile (`path`.turnstile, exclusive). A shared holder passes it and lets
    go at once; an exclusive one keeps it until it holds `path`, so holders that arrive after it
    wait behind it instead of overtaking it while the shared holders before it finish. flock
    alone would let a stream of overlapping shared holders keep an exclusive one out forever."""
    turnstile = path.with_name(path.name + ".turnstile")
    if shared:
        with held(turnstile):
            pass
        with held(path, shared=True):
            yield
        return
    with held(turnstile):
        lock = FileLock(path)
        lock.acquire(wait=True)
    try:
        yield
    finally:
        lock.release()
