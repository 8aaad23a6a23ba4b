"""Running student code: its own process, a cleaned environment, a timeout, resource limits, and
where the OS allows it no network, an unprivileged user and no view of the instructor's files.

Built from util-linux tools so that it works from a multi-threaded grader (Python's preexec_fn
is unsafe with threads): `unshare -n -m` (new network and mount namespaces, root only), a small
`sh -c` step that mounts an empty, mode-000 tmpfs over every folder that holds instructor data
(the course source tree with solutions/, autograder/hidden/ and the rubrics, the build tree with
the reference runners, the grading workspace), `setpriv` (drop to an unprivileged user, root only),
`prlimit` (CPU seconds, file size, core dumps, processes).

What student code still needs (its runner copy, its working directory and HOME, the folder it
saves its output to) lives in private temporary folders outside every hidden folder
(`Sandbox.mkdtemp`), and system folders (/usr, the CUDA Toolkit, the sanitizer) are never hidden.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from gpulab import proc, tools

KEEP_ENV = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
            "CUDA_HOME", "GPULAB_NO_GPU", "GPULAB_REQUIRE_GPU")
FILE_SIZE_LIMIT = 512 * 1024 * 1024   # bytes one student process may write to a single file
HIDE_EXIT = 125                       # the wrapper's exit status when it could not hide a folder
# Folders that must stay visible whatever is asked: the system, the CUDA Toolkit, the driver.
SYSTEM_DIRS = ("/", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr", "/usr/local", "/usr/local/cuda", "/etc",
               "/dev", "/proc", "/sys", "/run", "/opt", "/tmp", "/var", "/var/tmp", "/dev/shm")
# Mounts an empty tmpfs that nobody may enter over each folder given, then execs the command:
#   sh -c HIDE_SCRIPT gpulab-hide MOUNT COUNT DIR... -- ARGV...
HIDE_SCRIPT = (
    'mnt=$1; n=$2; shift 2\n'
    'while [ "$n" -gt 0 ]; do\n'
    '  "$mnt" -t tmpfs -o mode=000,size=4k,ro,nosuid,nodev,noexec gpulab-hidden "$1" '
    f'|| {{ echo "gpulab sandbox: could not hide $1" >&2; exit {HIDE_EXIT}; }}\n'
    '  shift; n=$((n - 1))\n'
    'done\n'
    'shift\n'
    'exec "$@"\n')


def _under(path: Path, folder: Path) -> bool:
    """path is folder or inside it (both absolute and resolved)."""
    return path == folder or folder in path.parents


@dataclass
class Sandbox:
    """How student processes are started. `notes` says what isolation is missing, for the report."""

    netns: bool = False
    mountns: bool = False                 # a private mount namespace can hide folders
    user: tuple[int, int] | None = None   # (uid, gid) to run as
    prlimit: str | None = None
    unshare: str | None = None
    setpriv: str | None = None
    mount: str | None = None
    hidden: tuple[Path, ...] = ()         # folders covered by an empty tmpfs for student code
    tmp_parent: Path | None = None        # where private temporary folders go (never hidden)
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def detect(enabled: bool = True, user_name: str | None = None) -> "Sandbox":
        """The strongest isolation this machine allows (root: network and mount namespaces +
        unprivileged user)."""
        sb = Sandbox(prlimit=shutil.which("prlimit"), unshare=shutil.which("unshare"), setpriv=shutil.which("setpriv"),
                     mount=shutil.which("mount"))
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
        if is_root and sb.unshare and sb.mount and sb._mount_works():
            sb.mountns = True
        elif is_root:
            sb.notes.append("instructor files not hidden from student code: no private mount namespace "
                            "(util-linux unshare -m and mount, and a kernel that allows them, are needed)")
        if is_root and sb.setpriv:
            name = user_name or os.environ.get("GPULAB_SANDBOX_USER", "nobody")
            try:
                pw = pwd.getpwnam(name)
                sb.user = (pw.pw_uid, pw.pw_gid)
            except KeyError:
                sb.notes.append(f"user {name!r} not found: student code ran as root")
        elif not is_root:
            sb.notes.append("student code ran as the grader's user and could read the course's files "
                            "(run the grader as root to use an unprivileged user and hide them)")
        return sb

    def _mount_works(self) -> bool:
        """Whether `unshare -m` + a tmpfs mount works here (a container may forbid it)."""
        with tempfile.TemporaryDirectory(prefix="gpulab-mnt-") as tmp:
            assert self.unshare and self.mount
            res = proc.run([self.unshare, "-m", "--propagation", "private", "--", "/bin/sh", "-c", HIDE_SCRIPT,
                            "gpulab-hide", self.mount, "1", tmp, "--", "true"], timeout=10)
            return res.ok

    # -- what student code must not see ---------------------------------------------------------
    def hide(self, paths: Iterable[Path | str | None]) -> None:
        """Adds folders that student processes must not see (instructor data). Only effective with
        a mount namespace; a folder holding what student code needs (the system, the CUDA
        Toolkit, the private temporary folders) is not hidden, and the notes say so."""
        if not self.mountns:
            return
        wanted = list(self.hidden)
        for p in paths:
            if p is None:
                continue
            path = Path(p).resolve()
            if path.is_dir() and path not in wanted:
                wanted.append(path)
        self.tmp_parent = self._choose_tmp_parent(wanted)
        keep = [Path(d).resolve() for d in SYSTEM_DIRS] + [Path(d) for d in self._tool_dirs()]
        keep.append(self.tmp_parent)
        hidden: list[Path] = []
        for path in wanted:
            blocker = next((k for k in keep if _under(k, path)), None)
            if blocker is not None:
                note = f"{path} not hidden from student code: it contains {blocker}, which student code needs"
                if note not in self.notes:
                    self.notes.append(note)
                continue
            hidden.append(path)
        # A folder inside another hidden one is covered already (and could not be mounted on).
        self.hidden = tuple(sorted(p for p in hidden if not any(q != p and _under(p, q) for q in hidden)))

    @staticmethod
    def _tool_dirs() -> list[str]:
        """Where the tools run inside the sandbox live (their folders and resolved folders)."""
        out = []
        for name in ("compute-sanitizer", "ncu"):
            exe = tools.find_tool(name)
            if exe is not None:
                out += [str(exe.parent.resolve()), str(exe.resolve().parent)]
                out.append(str(exe.resolve().parent.parent))   # e.g. the toolkit's compute-sanitizer/ folder
        return out

    @staticmethod
    def _choose_tmp_parent(hidden: Sequence[Path]) -> Path:
        """The system temporary folder, unless it is inside a hidden folder; then /tmp, /var/tmp or /dev/shm."""
        for cand in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
            p = Path(cand).resolve()
            if p.is_dir() and os.access(p, os.W_OK) and not any(_under(p, h) for h in hidden):
                return p
        return Path(tempfile.gettempdir()).resolve()

    def mkdtemp(self, prefix: str) -> Path:
        """A private temporary folder outside every hidden folder (the caller removes it)."""
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.tmp_parent))

    # -- starting student code ------------------------------------------------------------------
    def env(self, home: Path) -> dict[str, str]:
        """A minimal environment: nothing of the grader's (tokens, paths) leaks to student code."""
        env = {"PATH": "/usr/local/cuda/bin:/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home),
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        extra = [k for k in os.environ.get("GPULAB_SANDBOX_KEEP_ENV", "").split(",") if k]
        for k in (*KEEP_ENV, *extra):
            if k in os.environ:
                env[k] = os.environ[k]
        return env

    def hide_prefix(self, network: bool = False) -> list[str]:
        """`unshare [-n] -m ... sh -c <mount the tmpfs> ...`: the namespaces and the hiding step
        (empty when there is nothing to hide and no network to cut)."""
        if not self.unshare:
            return []
        hiding = self.mountns and bool(self.hidden) and self.mount is not None
        out: list[str] = []
        if network or hiding:
            out += [self.unshare] + (["-n"] if network else []) + (["-m", "--propagation", "private"] if hiding else [])
            out.append("--")
        if hiding:
            assert self.mount is not None
            out += ["/bin/sh", "-c", HIDE_SCRIPT, "gpulab-hide", self.mount, str(len(self.hidden)),
                    *[str(p) for p in self.hidden], "--"]
        return out

    def wrap(self, argv: Sequence[str], cpu_seconds: float, max_procs: int | None = 256) -> list[str]:
        """argv prefixed with the isolation commands (outermost first: unshare and the mounts need
        root, then setpriv drops it, then prlimit lowers the limits of what finally runs)."""
        out = self.hide_prefix(network=self.netns)
        if self.user and self.setpriv:
            uid, gid = self.user
            out += [self.setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        if self.prlimit:
            out += [self.prlimit, f"--cpu={int(cpu_seconds) + 1}", f"--fsize={FILE_SIZE_LIMIT}", "--core=0"]
            if self.user and max_procs:
                out.append(f"--nproc={max_procs}")   # per-user: only meaningful for a dedicated user
            out.append("--")
        return out + [str(a) for a in argv]

    def describe(self) -> str:
        """One line for logs: what isolates student code here."""
        parts = []
        if self.netns:
            parts.append("no network")
        if self.mountns and self.hidden:
            parts.append("hidden: " + ", ".join(str(p) for p in self.hidden))
        if self.user:
            parts.append(f"uid {self.user[0]}")
        if self.prlimit:
            parts.append("limits")
        return "; ".join(parts) or "none"

    @contextmanager
    def workdir(self) -> Iterator[Path]:
        """A fresh, empty current directory (and HOME) for one student process."""
        p = self.mkdtemp("gpulab-run-")
        try:
            if self.user:
                os.chown(p, *self.user)
            yield p
        finally:
            shutil.rmtree(p, ignore_errors=True)

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


def _open_private(path: Path) -> int | None:
    """A read-only descriptor of a regular file that student code could have written or replaced,
    or None. O_NOFOLLOW: a link planted by student code (to the rubric, the reference) is never
    followed by the grader, which reads with root's rights."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def read_private_file(path: Path, limit: int = 64 * 1024 * 1024) -> bytes | None:
    """At most `limit` bytes of a regular file student code could have touched (see _open_private)."""
    fd = _open_private(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def copy_private_files(src: Path, dest: Path, pattern: str = "*") -> list[Path]:
    """Copies the regular files directly in src that match pattern into dest (links, folders and
    anything else are skipped, see _open_private); returns the copies."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for f in sorted(src.glob(pattern)):
        fd = _open_private(f)
        if fd is None:
            continue
        target = dest / f.name
        with os.fdopen(fd, "rb") as fin, open(target, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        out.append(target)
    return out
