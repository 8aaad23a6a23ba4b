"""Running student code: its own process, a cleaned environment, a timeout, resource limits, and
where the OS allows it no network and an unprivileged user.

Built from util-linux tools so that it works from a multi-threaded grader (Python's preexec_fn
is unsafe with threads): `unshare -n` (new network namespace, root only), `setpriv` (drop to an
unprivileged user, root only), `prlimit` (CPU seconds, file size, core dumps, processes).
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from gpulab import proc

KEEP_ENV = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
            "CUDA_HOME", "GPULAB_NO_GPU", "GPULAB_REQUIRE_GPU")
FILE_SIZE_LIMIT = 512 * 1024 * 1024   # bytes one student process may write to a single file


@dataclass
class Sandbox:
    """How student processes are started. `notes` says what isolation is missing, for the report."""

    netns: bool = False
    user: tuple[int, int] | None = None   # (uid, gid) to run as
    prlimit: str | None = None
    unshare: str | None = None
    setpriv: str | None = None
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def detect(enabled: bool = True, user_name: str | None = None) -> "Sandbox":
        """The strongest isolation this machine allows (root: network namespace + unprivileged user)."""
        sb = Sandbox(prlimit=shutil.which("prlimit"), unshare=shutil.which("unshare"), setpriv=shutil.which("setpriv"))
        if os.environ.get("GPULAB_SANDBOX") == "0":
            enabled = False
        if not enabled:
            sb.prlimit = None
            sb.notes.append("sandbox disabled (--no-sandbox or GPULAB_SANDBOX=0): student code ran with the grader's rights")
            return sb
        if sb.prlimit is None:
            sb.notes.append("prlimit not found: no CPU-time / file-size limits (install util-linux)")
        is_root = os.geteuid() == 0
        if is_root and sb.unshare and proc.run([sb.unshare, "-n", "true"], timeout=10).ok:
            sb.netns = True
        else:
            sb.notes.append("network not isolated (a network namespace needs root and util-linux unshare)")
        if is_root and sb.setpriv:
            name = user_name or os.environ.get("GPULAB_SANDBOX_USER", "nobody")
            try:
                pw = pwd.getpwnam(name)
                sb.user = (pw.pw_uid, pw.pw_gid)
            except KeyError:
                sb.notes.append(f"user {name!r} not found: student code ran as root")
        elif not is_root:
            sb.notes.append("student code ran as the grader's user (run the grader as root to use an unprivileged user)")
        return sb

    def env(self, home: Path) -> dict[str, str]:
        """A minimal environment: nothing of the grader's (tokens, paths) leaks to student code."""
        env = {"PATH": "/usr/local/cuda/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home),
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        extra = [k for k in os.environ.get("GPULAB_SANDBOX_KEEP_ENV", "").split(",") if k]
        for k in (*KEEP_ENV, *extra):
            if k in os.environ:
                env[k] = os.environ[k]
        return env

    def wrap(self, argv: Sequence[str], cpu_seconds: float, max_procs: int | None = 256) -> list[str]:
        """argv prefixed with the isolation commands (outermost first: unshare needs root, then
        setpriv drops it, then prlimit lowers the limits of what finally runs)."""
        out: list[str] = []
        if self.netns and self.unshare:
            out += [self.unshare, "-n", "--"]
        if self.user and self.setpriv:
            uid, gid = self.user
            out += [self.setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        if self.prlimit:
            out += [self.prlimit, f"--cpu={int(cpu_seconds) + 1}", f"--fsize={FILE_SIZE_LIMIT}", "--core=0"]
            if self.user and max_procs:
                out.append(f"--nproc={max_procs}")   # per-user: only meaningful for a dedicated user
            out.append("--")
        return out + [str(a) for a in argv]

    @contextmanager
    def workdir(self) -> Iterator[Path]:
        """A fresh, empty current directory (and HOME) for one student process."""
        with tempfile.TemporaryDirectory(prefix="gpulab-run-") as tmp:
            p = Path(tmp)
            if self.user:
                os.chown(p, *self.user)
            yield p

    def run(self, argv: Sequence[str], timeout: float, **kw) -> proc.Result:
        """Runs student code: fresh cwd, clean env, limits; killed (whole group) at the timeout."""
        with self.workdir() as cwd:
            return proc.run(self.wrap(argv, cpu_seconds=timeout * 2 + 10), timeout=timeout, env=self.env(cwd),
                            cwd=cwd, **kw)

    def make_runnable(self, binary: Path) -> None:
        """The unprivileged user must be able to execute the copied runner: its folder is a private
        temporary directory made traversable, the file world-executable (it holds no secret)."""
        if not self.user:
            return
        os.chmod(binary.parent, 0o711)
        os.chmod(binary, 0o755)
