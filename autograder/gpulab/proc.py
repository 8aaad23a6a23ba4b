"""Running child processes: a timeout that kills the whole process group, bounded output.

Everything the grader runs (runners, compute-sanitizer, ncu, cmake) goes through `run`, so a hung
or chatty child never hangs or floods the grader.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

MAX_OUTPUT = 4 * 1024 * 1024  # bytes kept of each stream; the rest is dropped (a student may print GBs)


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

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe_exit(self) -> str:
        """'exit 1', 'killed by SIGSEGV', 'timed out after 30 s' — for reports."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
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


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (it was started in a new session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd: Sequence[str | os.PathLike], *, timeout: float | None = None,
        env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
        preexec: Callable[[], None] | None = None, max_output: int = MAX_OUTPUT,
        stdin_devnull: bool = True) -> Result:
    """Runs cmd to completion or until `timeout` seconds, capturing (bounded) stdout and stderr.

    Output goes to temporary files rather than pipes so that a child that prints without end
    cannot block or exhaust the grader's memory.
    """
    argv = [str(c) for c in cmd]
    with tempfile.TemporaryDirectory(prefix="gpulab-proc-") as tmp:
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv, stdout=out, stderr=err, env=dict(env) if env is not None else None,
                    cwd=cwd, start_new_session=True, preexec_fn=preexec,
                    stdin=subprocess.DEVNULL if stdin_devnull else None)
            except FileNotFoundError:
                return Result(argv, 127, "", f"{argv[0]}: command not found", 0.0)
            except PermissionError:
                return Result(argv, 126, "", f"{argv[0]}: permission denied", 0.0)
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
                proc.wait()
            else:
                _kill_group(proc)  # leftovers the child forked into its group
            seconds = time.monotonic() - start
        stdout, t1 = _read_capped(out_path, max_output)
        stderr, t2 = _read_capped(err_path, max_output)
    return Result(argv, proc.returncode, stdout, stderr, seconds, timed_out, t1 or t2)


def run_streaming(cmd: Sequence[str | os.PathLike], env: Mapping[str, str] | None = None) -> int:
    """Runs cmd with the terminal as its stdout/stderr (interactive commands); returns its status."""
    argv = [str(c) for c in cmd]
    try:
        return subprocess.call(argv, env=dict(env) if env is not None else None)
    except FileNotFoundError:
        print(f"gpulab: {argv[0]}: command not found")
        return 127
    except KeyboardInterrupt:
        return 130
