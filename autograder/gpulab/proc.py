"""Running child processes: a timeout that kills the whole tree, bounded output, nothing left behind.

Everything the grader runs (runners, compute-sanitizer, ncu, cmake) goes through `run`, so a hung
or chatty child never hangs or floods the grader.

Every child starts a new session, and everything it starts is killed with it: on its timeout,
after it exits (leftovers), and when the grader itself is stopped (SIGTERM, SIGINT, SIGHUP:
`terminate_all`). A process group is not enough: ninja puts each build command into a process
group of its own, and a daemon can leave the session with setsid. So the tree is found from
/proc: every process of the child's session and every descendant of those, stopped first
(SIGSTOP, so none can fork while it is collected) and then killed. The grader is made a child
subreaper (PR_SET_CHILD_SUBREAPER), so a process whose parent died is re-parented to the grader,
not to init, and is still found among the grader's descendants. Nothing survives a SIGKILL of the
grader itself (no process can act on its own SIGKILL): see autograder/README.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

MAX_OUTPUT = 4 * 1024 * 1024  # bytes kept of each stream; the rest is dropped (a student may print GBs)
# Builds and every untimed check (correctness cases, verdicts, sanitizer runs, Nsight Compute
# profiles and report reads) run at this niceness; only the timed runs keep 0. In a batch they
# share the CPUs with another row's timed run, whose measured time includes the host's wake-up
# after each synchronisation: at niceness 0 against the compilers that wake-up waited (scan's
# single-pass at 2^24 moved 7.6 % between two batches on two H200s, 2026-11-23), and with the
# builds niced the untimed checks beside it still moved the 0.06 ms stages up to 30 % between the
# two GPUs of a host (2026-11-29). Niceness orders the CPUs only: GPU times, counts and verdicts
# are the same.
BUILD_NICENESS = 10


@dataclass
class Result:
    """What a child did: exit status (negative: killed by that signal), output, time."""

    cmd: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False
    extra: dict = field(default_factory=dict)
    cancelled: bool = False   # ended by run()'s `cancel`, not by itself or its timeout

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.cancelled

    def describe_exit(self) -> str:
        """'exit 1', 'killed by SIGSEGV', 'timed out after 30 s' — for reports."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        if self.cancelled:
            return f"cancelled after {self.seconds:.1f} s"
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"killed by {name}"
        return f"exit {self.returncode}"


def _read_capped(path: Path, limit: int) -> tuple[str, bool]:
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    truncated = len(data) > limit
    return data[:limit].decode("utf-8", errors="replace"), truncated


PR_SET_CHILD_SUBREAPER = 36   # <linux/prctl.h>

_live: dict[int, subprocess.Popen] = {}   # session leaders of the children running now
_live_lock = threading.Lock()
_stopping = threading.Event()
_subreaper = threading.Event()   # become_subreaper() succeeded: every child of this process is gpulab's


class Stopped(Exception):
    """The grader is being stopped: no new child is started."""


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux >= 3.4); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    _subreaper.set()
    return True


def _process_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) of every process, from /proc/<pid>/stat."""
    table: dict[int, tuple[int, int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read().decode("ascii", errors="replace")
        except OSError:
            continue   # gone meanwhile
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
        fields = data[data.rfind(")") + 2:].split()
        if len(fields) >= 4:
            table[int(name)] = (int(fields[1]), int(fields[3]), fields[0])
    return table


def _collect(table: dict[int, tuple[int, int, str]], sessions: set[int], roots: set[int]) -> set[int]:
    """Members of `sessions`, `roots`, and every descendant of them (by parent links)."""
    found = {pid for pid, (_, sid, _) in table.items() if sid in sessions} | (roots & table.keys())
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tree(sessions: set[int], roots: set[int] = frozenset()) -> int:
    """Stops, then kills, every process of `sessions`, the `roots`, and all their descendants;
    returns how many. Collected until a pass finds no new process: stopped processes cannot
    fork, so nothing started meanwhile escapes. Never this process or its ancestors."""
    me = os.getpid()
    protected = {me}
    pid = me
    table = _process_table()
    while pid in table and table[pid][0] > 0:   # the grader's own ancestors (it may share a session)
        pid = table[pid][0]
        protected.add(pid)
    if _subreaper.is_set():
        own_session = os.getsid(0)
        with _live_lock:
            # Children of this process that no run() started and that live in another session:
            # re-parented here (the subreaper) when their parent died, i.e. leftovers of a child
            # of run() (which always starts a new session). A child started otherwise, in this
            # session, is never taken for one; nor is anything outside the command-line process.
            roots = set(roots) | {p for p, (ppid, sid, _) in table.items()
                                  if ppid == me and sid != own_session and p not in _live}
    seen: set[int] = set()      # stopped, to be killed
    dead: set[int] = set()      # zombies met on the way (to be reaped if they are this process's)
    for _ in range(100):
        found = _collect(table, sessions, roots | seen) - seen - protected
        dead |= {p for p in found if table[p][2] == "Z"}
        new = found - dead
        if not new:
            break
        _signal_all(new, signal.SIGSTOP)
        seen |= new
        table = _process_table()
    _signal_all(seen, signal.SIGKILL)
    _reap(seen | dead)
    return len(seen)


def _reap(pids: set[int], seconds: float = 5.0) -> None:
    """Waits (bounded) until every one of `pids` has died, so that when a run returns nothing of
    it still runs (SIGKILL takes effect asynchronously), and collects those that were
    re-parented to this process (subreaper); the others are reaped by their own parents."""
    me = os.getpid()
    deadline = time.monotonic() + seconds
    left = set(pids)
    while left and time.monotonic() < deadline:
        table = _process_table()
        for pid in list(left):
            entry = table.get(pid)
            if entry is None:
                left.discard(pid)
            elif entry[2] == "Z":
                if entry[0] == me:
                    with _live_lock:   # never one of the children a run() is waiting for
                        if pid not in _live:
                            with contextlib.suppress(ChildProcessError):
                                os.waitpid(pid, os.WNOHANG)
                left.discard(pid)
        if left:
            time.sleep(0.01)


def terminate_all() -> int:
    """Kills every child this process started (and theirs), and refuses to start new ones.
    For the signal handlers of the command line (cli.py)."""
    _stopping.set()
    with _live_lock:
        leaders = set(_live)
    # Everything below this process: the running children's sessions, and whatever was
    # re-parented here (the subreaper) after its parent died.
    return kill_tree(leaders, {os.getpid()})


def _wait_exited(pid: int, timeout: float | None, cancel: threading.Event | None = None) -> bool:
    """Waits for the child to exit without reaping it (WNOWAIT): while it is a zombie its pid,
    which is also its session id, cannot be reused, so its leftovers can be found safely.
    False when the timeout came first or `cancel` was set."""
    try:
        if timeout is None and cancel is None:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            return True
        deadline = time.monotonic() + timeout if timeout is not None else math.inf
        delay = 0.0005
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
            now = time.monotonic()
            if now >= deadline or (cancel is not None and cancel.is_set()):
                return False
            delay = min(delay * 2, 0.05)   # as subprocess.Popen.wait polls
            time.sleep(min(delay, deadline - now))
    except ChildProcessError:
        pass
    return True


def run(cmd: Sequence[str | os.PathLike], *, timeout: float | None = None,
        env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
        preexec: Callable[[], None] | None = None, max_output: int = MAX_OUTPUT,
        stdin_devnull: bool = True, cancel: threading.Event | None = None) -> Result:
    """Runs cmd to completion or until `timeout` seconds, capturing (bounded) stdout and stderr.
    Setting `cancel` (from another thread) ends it early, as a timeout does but reported as
    `cancelled` (work started on a guess that turned out not to be needed).

    Output goes to temporary files rather than pipes so that a child that prints without end
    cannot block or exhaust the grader's memory. When it ends, for whatever reason, nothing it
    started is left running (kill_tree).
    """
    argv = [str(c) for c in cmd]
    with tempfile.TemporaryDirectory(prefix="gpulab-proc-") as tmp:
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.monotonic()
            with _live_lock:   # registered before any reaper could see it
                if _stopping.is_set():
                    raise Stopped(f"gpulab: stopping; {argv[0]} not started")
                try:
                    proc = subprocess.Popen(
                        argv, stdout=out, stderr=err, env=dict(env) if env is not None else None,
                        cwd=cwd, start_new_session=True, preexec_fn=preexec,
                        stdin=subprocess.DEVNULL if stdin_devnull else None)
                except FileNotFoundError:
                    return Result(argv, 127, "", f"{argv[0]}: command not found", 0.0)
                except PermissionError:
                    return Result(argv, 126, "", f"{argv[0]}: permission denied", 0.0)
                _live[proc.pid] = proc
            try:
                ended_early = not _wait_exited(proc.pid, timeout, cancel)
            finally:
                # Timed out, exited with leftovers, or this thread interrupted: the whole tree
                # goes, while the leader is still unreaped (its session id stays its own).
                kill_tree({proc.pid}, {proc.pid})
                proc.wait()
                with _live_lock:
                    _live.pop(proc.pid, None)
            seconds = time.monotonic() - start
        stdout, t1 = _read_capped(out_path, max_output)
        stderr, t2 = _read_capped(err_path, max_output)
    cancelled = ended_early and cancel is not None and cancel.is_set()
    return Result(argv, proc.returncode, stdout, stderr, seconds, ended_early and not cancelled, t1 or t2,
                  cancelled=cancelled)


def background(argv: Sequence[str | os.PathLike]) -> list[str]:
    """argv run at BUILD_NICENESS (coreutils' nice; unchanged where there is none): for work whose
    speed matters less than the timings of what runs beside it (compilers, CMake, the untimed
    checks). An empty argv gives the prefix alone, for a wrapper."""
    nice = shutil.which("nice")
    return ([nice, "-n", str(BUILD_NICENESS)] if nice else []) + [str(a) for a in argv]


def spawn(argv: Sequence[str | os.PathLike], **popen_args) -> subprocess.Popen:
    """A child that outlives one call (a batch worker with its pipe), started and registered at
    once: the leftover sweep of kill_tree never takes it for an orphan, and terminate_all kills
    its tree. Call forget() once it has been waited for."""
    with _live_lock:
        if _stopping.is_set():
            raise Stopped(f"gpulab: stopping; {argv[0]} not started")
        child = subprocess.Popen([str(a) for a in argv], **popen_args)
        _live[child.pid] = child
    return child


def forget(child: subprocess.Popen) -> None:
    with _live_lock:
        _live.pop(child.pid, None)


def run_streaming(cmd: Sequence[str | os.PathLike], env: Mapping[str, str] | None = None) -> int:
    """Runs cmd with the terminal as its stdout/stderr (interactive commands); returns its status.
    It stays in the terminal's process group (Ctrl-C reaches it), and is tracked like run()'s."""
    argv = [str(c) for c in cmd]
    with _live_lock:
        if _stopping.is_set():
            raise Stopped(f"gpulab: stopping; {argv[0]} not started")
        try:
            child = subprocess.Popen(argv, env=dict(env) if env is not None else None)
        except FileNotFoundError:
            print(f"gpulab: {argv[0]}: command not found")
            return 127
        _live[child.pid] = child
    try:
        return child.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        if child.poll() is None:
            kill_tree(set(), {child.pid})
            child.wait()
        with _live_lock:
            _live.pop(child.pid, None)
