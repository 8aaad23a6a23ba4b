"""Running student code: its own process, a cleaned environment, a timeout, resource limits, and
where the OS allows it no network, an unprivileged user and no view of the instructor's files.

Everything is started through command-line tools, so that it works from a multi-threaded grader
(Python's preexec_fn is unsafe with threads). As root, with bubblewrap installed, every run of
student code (and the student build) goes into **the jail** (`Sandbox.wrap`): bubblewrap gives a
read-only view of the whole filesystem, a private writable /tmp, a minimal /dev (the NVIDIA
devices, null, zero, urandom, ...), a new /proc of its own PID namespace (/proc/sys read-only),
no network (a loopback only), its own IPC and UTS namespaces, an empty tmpfs over every folder
that holds instructor data (the course with solutions/, autograder/hidden/ and the rubrics, the
build tree with the reference runners, the grading workspace, a batch's submissions and grades),
and the system-call filter of seccomp.py; only the folders a run names (its working directory,
its output folder) are writable, and the runner copy is bound read-only. Inside it `setpriv`
drops to an unprivileged user and `prlimit` sets CPU seconds, file size, core dumps, processes.
The one exception is Nsight Compute where the driver restricts the counters to admin users: the
profiled process must keep CAP_SYS_ADMIN, so it stays root in the same jail with every other
capability dropped (`privileged=True`) - the jail is what makes that root harmless.

Without bubblewrap (or in a container that forbids its namespaces) the older util-linux path
remains: `unshare -n -m`, a `sh -c` step that mounts an empty, mode-000 tmpfs over every hidden
folder, `setpriv`, `prlimit`; /tmp is then shared, and Nsight Compute, which would need root
outside any jail, is not run (fail closed; the report says why and how to fix it).

What student code still needs (its runner copy, its working directory and HOME, the folder it
saves its output to) lives in private temporary folders outside every hidden folder
(`Sandbox.mkdtemp`), and system folders (/usr, the CUDA Toolkit, the sanitizer) are never hidden.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from gpulab import proc
from gpulab.sandbox import seccomp
from gpulab.tools import locate

KEEP_ENV = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
            "CUDA_HOME", "GPULAB_NO_GPU", "GPULAB_REQUIRE_GPU")
FILE_SIZE_LIMIT = 512 * 1024 * 1024   # bytes one student process may write to a single file
# RLIMIT_NPROC counts every task (thread) of the sandbox user, across *all* grades running at once
# on the host, not those of one process tree: a CUDA process starts several threads and
# compute-sanitizer or ncu many more. At 256 for the whole user, 12 grades at once on one GPU
# (gpulab grade --batch --gpus 0, H200, 2026-11-23) made one starter's CUDA start-up fail ("CUDA is
# unusable: OS call failed") and its row incomplete. 256 per grade for up to 16 grades at once
# still stops a fork bomb long before the system's limits.
MAX_SANDBOX_TASKS = 256 * 16
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


# The jail's /dev gets these on top of bubblewrap's minimal one (null, zero, full, random, urandom,
# tty, shm, pts): the GPU, its control and unified-memory devices, MIG capabilities.
NVIDIA_DEVICES = ("/dev/nvidia[0-9]*", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                  "/dev/nvidia-modeset", "/dev/nvidia-caps")
# Folders every process may write that the jail replaces by an empty private tmpfs.
PRIVATE_TMP = ("/tmp", "/var/tmp")
# Opens the filter on fd 9 and execs bubblewrap with it: `sh -c SECCOMP_FD FILTER bwrap ...`.
SECCOMP_FD = 'f=$1; shift; exec "$@" 9<"$f"'
NVIDIA_PARAMS = Path("/proc/driver/nvidia/params")


class SandboxError(Exception):
    """A run that must be jailed cannot be (fail closed: the run does not happen)."""


def find_bwrap() -> str | None:
    """bubblewrap: GPULAB_BWRAP, PATH, or the copy scripts/fetch-deps.sh unpacks into .deps/."""
    env = os.environ.get("GPULAB_BWRAP")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("bwrap")
    if found:
        return found
    src = os.environ.get("GPULAB_SOURCE_DIR")
    cand = Path(src) / ".deps" / "usr" / "bin" / "bwrap" if src else None
    return str(cand) if cand is not None and os.access(cand, os.X_OK) else None


def profiling_restricted(params: Path = NVIDIA_PARAMS) -> bool | None:
    """Whether the NVIDIA driver restricts performance counters to admin users
    (`RmProfilingAdminOnly: 1`, the default; NVreg_RestrictProfilingToAdminUsers=0 turns it off);
    None when the driver's parameters cannot be read (no driver: nothing will be profiled)."""
    try:
        text = params.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "RmProfilingAdminOnly":
            return value.strip() != "0"
    return None


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
    bwrap: str | None = None              # the jail (bubblewrap), when it works here
    seccomp_filter: Path | None = None    # the jail's system-call filter (raw BPF, seccomp.py)
    enabled: bool = True                  # False: --no-sandbox (student code runs with the grader's rights)

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
            sb.enabled = False
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
        if is_root:
            sb._detect_jail()
        return sb

    def _detect_jail(self) -> None:
        """Sets up the jail (bubblewrap + the seccomp filter) when both work here; else a note."""
        bwrap = find_bwrap()
        if bwrap is None:
            self.notes.append("bubblewrap not found: /tmp and /dev/shm are shared with student code, the student "
                              "build can reach the course, and Nsight Compute is not run (install the Debian "
                              "package bubblewrap, or run scripts/fetch-deps.sh for an offline machine)")
            return
        folder = Path(tempfile.mkdtemp(prefix="gpulab-seccomp-"))
        atexit.register(shutil.rmtree, folder, True)
        try:
            seccomp.write_filter(folder / "filter.bpf")
        except seccomp.SeccompError as e:
            self.notes.append(f"no system-call filter ({e}): the jail is not used and Nsight Compute is not run")
            return
        self.bwrap, self.seccomp_filter = bwrap, folder / "filter.bpf"
        # The jail's /dev gets the NVIDIA device nodes that exist now, and nothing inside it can
        # create one: make the unified-memory node before the first CUDA program would.
        modprobe = shutil.which("nvidia-modprobe")
        if modprobe and os.path.exists("/dev/nvidiactl") and not os.path.exists("/dev/nvidia-uvm"):
            proc.run([modprobe, "-u", "-c=0"], timeout=30)
        probe = proc.run(self.wrap(["true"], cpu_seconds=10), timeout=30, env=self.env(Path("/")), cwd="/")
        if not probe.ok:
            why = (probe.stderr.strip().splitlines() or [probe.describe_exit()])[-1][:200]
            self.bwrap = self.seccomp_filter = None
            self.notes.append(f"the jail (bubblewrap) does not work here ({why}): /tmp is shared with student code, "
                              "the student build can reach the course, and Nsight Compute is not run")
            return
        self.mountns = self.netns = True
        self.notes = [n for n in self.notes if not n.startswith(("network not isolated", "instructor files not hidden"))]

    @property
    def jailed(self) -> bool:
        return self.bwrap is not None and self.seccomp_filter is not None

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
            exe = locate.find_tool(name)
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

    def jail_prefix(self, rw: Sequence[Path] = (), ro: Sequence[Path] = (), privileged: bool = False,
                    chdir: Path | None = None) -> list[str]:
        """`sh -c <open the filter> bwrap ...`: the jail (see the module docstring). `rw`: folders
        the run may write (bound at the same path), `ro`: folders it may read that would be
        hidden (its runner copy, headers the build needs); `privileged`: stay root with
        CAP_SYS_ADMIN only (Nsight Compute's target where the counters need admin)."""
        if not self.jailed:
            raise SandboxError("the jail is not available")
        assert self.bwrap and self.seccomp_filter
        out = ["/bin/sh", "-c", SECCOMP_FD, "gpulab-seccomp", str(self.seccomp_filter), self.bwrap,
               "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc",
               "--unshare-uts", "--unshare-cgroup-try",
               "--ro-bind", "/", "/", "--dev", "/dev"]
        for pattern in NVIDIA_DEVICES:
            for dev in sorted(glob.glob(pattern)):
                out += ["--dev-bind", dev, dev]
        out += ["--proc", "/proc"]
        for tmp in PRIVATE_TMP:
            if os.path.isdir(tmp) and not os.path.islink(tmp):
                out += ["--perms", "1777", "--tmpfs", tmp]
        # A folder the sandbox user cannot enter (a home of mode 0700 or 0750 above a student's
        # handout, /root above a grade's folders) would stop it before anything bound beneath:
        # it gets an empty tmpfs too, in which the binds below recreate only what the run needs.
        blockers = self._untraversable_ancestors([*self.hidden, *ro, *rw, *([chdir] if chdir else [])],
                                                 privileged)
        for b in blockers:
            out += ["--perms", "0755", "--tmpfs", str(b)]
        # Hidden folders: an empty tmpfs each (made read-only once the binds inside are in place).
        empty = [*blockers, *self.hidden]
        for h in self.hidden:
            out += ["--tmpfs", str(h)]
        for flag, paths in (("--ro-bind", ro), ("--bind", rw)):
            for p in paths:
                # A folder bound back inside a hidden one (the student build's workspace): its
                # parents inside the empty tmpfs must be traversable by the sandbox user.
                h = next((h for h in empty if _under(Path(p), h) and Path(p) != h), None)
                if h is not None:
                    for parent in reversed(Path(p).parents):
                        if _under(parent, h) and parent != h:
                            out += ["--perms", "0755", "--dir", str(parent)]
                out += [flag, str(p), str(p)]
        for h in empty:
            out += ["--remount-ro", str(h)]
        if privileged:
            out += ["--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN"]
        elif self.user and self.setpriv:
            out += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]   # for setpriv only
        else:
            out += ["--cap-drop", "ALL"]
        out += ["--seccomp", "9"]
        if chdir is not None:
            out += ["--chdir", str(chdir)]
        return out + ["--"]

    def _untraversable_ancestors(self, paths: Sequence[Path], privileged: bool) -> list[Path]:
        """The topmost folders above `paths` that the sandbox user cannot enter (no execute
        permission for others, not its own), outside the hidden folders (those are recreated
        traversable). None when the run stays root (privileged) or keeps the grader's user."""
        if privileged or not self.user:
            return []
        found: list[Path] = []
        for p in paths:
            for a in reversed(Path(p).parents):          # from / down
                if any(_under(a, h) for h in self.hidden) or any(_under(a, f) for f in found):
                    break
                try:
                    st = a.stat()
                except OSError:
                    break
                if st.st_uid != self.user[0] and not st.st_mode & 0o001:
                    found.append(a)
                    break
        return sorted(set(found), key=lambda f: len(f.parts))

    def wrap(self, argv: Sequence[str], cpu_seconds: float, max_procs: int | None = MAX_SANDBOX_TASKS, *,
             rw: Sequence[Path] = (), ro: Sequence[Path] = (), privileged: bool = False,
             chdir: Path | None = None, untimed: bool = False) -> list[str]:
        """argv prefixed with the isolation commands, outermost first: the jail (or, without it,
        unshare and the hiding mounts), then setpriv drops root, then prlimit lowers the limits of
        what finally runs. `privileged` (Nsight Compute's target where the counters need root)
        is only possible in the jail: without it SandboxError (fail closed). `untimed`: all of it
        at the builds' niceness (proc.background), behind any timed run beside it: every run but
        a timing (builds, correctness cases, sanitizers, profiles, report reads)."""
        if self.jailed:
            out = self.jail_prefix(rw, ro, privileged, chdir)
        elif privileged and self.enabled:
            raise SandboxError("it would run as root outside a jail")
        else:
            out = self.hide_prefix(network=self.netns)
        if self.user and self.setpriv and not privileged:
            uid, gid = self.user
            out += [self.setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        if self.prlimit:
            out += [self.prlimit, f"--cpu={int(cpu_seconds) + 1}", f"--fsize={FILE_SIZE_LIMIT}", "--core=0"]
            if self.user and max_procs and not privileged:
                out.append(f"--nproc={max_procs}")   # per-user: only meaningful for a dedicated user
            out.append("--")
        out += [str(a) for a in argv]
        return proc.background(out) if untimed else out

    def describe(self) -> str:
        """One line for logs: what isolates student code here."""
        parts = []
        if self.netns:
            parts.append("no network")
        if self.jailed:
            parts.append("jail (read-only filesystem, private /tmp, own PID namespace, system-call filter)")
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
                # The jail enters it as a root without capabilities before setpriv: traversable.
                os.chmod(p, 0o711)
            yield p
        finally:
            shutil.rmtree(p, ignore_errors=True)

    def run(self, argv: Sequence[str], timeout: float, rw: Sequence[Path] = (), untimed: bool = False,
            **kw) -> proc.Result:
        """Runs student code: fresh cwd, clean env, limits; killed (whole group) at the timeout.
        The runner's folder (argv[0]'s) is readable in the jail; `rw`: folders it may also write.
        `untimed`: at the builds' niceness (proc.background), behind any timed run beside it."""
        ro = [Path(argv[0]).parent] if os.path.isabs(str(argv[0])) and Path(argv[0]).parent != Path("/") else []
        with self.workdir() as cwd:
            return proc.run(self.wrap(argv, cpu_seconds=timeout * 2 + 10, rw=[cwd, *rw], ro=ro, chdir=cwd, untimed=untimed),
                            timeout=timeout, env=self.env(cwd), cwd=cwd, **kw)

    # -- the student build ---------------------------------------------------------------------
    def build(self, argv: Sequence[str], timeout: float, writable: Path, readable: Sequence[Path] = ()) -> proc.Result:
        """Runs the student build (`cmake --build` of the grading workspace) in the jail as the
        sandbox user: the course, the build tree, the submissions and the grades are hidden, so
        no preprocessor spelling can reach solutions/ or the hidden cases; `writable` (the
        workspace's build folder) and `readable` (its sources, headers the build was configured
        with) are bound back at their own paths, which the workspace's CMake cache records.
        Without the jail the build runs as before (the grader's notes say so)."""
        if not self.jailed:
            return proc.run(proc.background(argv), timeout=timeout)
        writable = writable.resolve()
        if self.user:
            _chown_tree(writable, *self.user)
        with self.workdir() as home:
            env = self.env(home)
            env["PATH"] = os.environ.get("PATH", env["PATH"])   # cmake, ninja, the compilers as configured
            return proc.run(self.wrap(argv, cpu_seconds=timeout * 2 + 10, max_procs=None, rw=[home, writable],
                                      ro=[Path(p).resolve() for p in readable], chdir=home, untimed=True),
                            timeout=timeout, env=env, cwd=home)

    def hidden_paths(self, paths: Iterable[Path]) -> list[Path]:
        """The paths (resolved, existing) that lie inside a hidden folder."""
        out = []
        for p in paths:
            r = Path(p).resolve()
            if r.exists() and any(_under(r, h) for h in self.hidden) and r not in out:
                out.append(r)
        return out

    # -- Nsight Compute ------------------------------------------------------------------------
    def profiler_wrap(self, runner: Path, scratch: Path, timeout: float) -> tuple[list[str] | None, str]:
        """(the prefix that starts ncu, "") or (None, why not). Where the driver lets every user
        read the counters, ncu runs as the sandbox user like every other student run; where
        they need admin rights the profiled process keeps CAP_SYS_ADMIN as root inside the jail;
        as root without the jail nothing is profiled (the run would have root's reach). A profile
        is never timed by the host's clock: it runs at the builds' niceness (proc.background)."""
        if not self.enabled or os.geteuid() != 0:
            return self.wrap([], timeout * 2 + 10, untimed=True) if self.enabled else proc.background([]), ""
        if not self.jailed:
            return None, ("not run: Nsight Compute's target would run as root outside a sandbox "
                          "(install bubblewrap and libseccomp2; see the grader's notes)")
        restricted = profiling_restricted()
        if restricted is False and self.user:
            os.chown(scratch, *self.user)
            os.chmod(scratch, 0o711)
            return self.wrap([], timeout * 2 + 10, rw=[scratch], ro=[runner.parent], chdir=scratch, untimed=True), ""
        return self.wrap([], timeout * 2 + 10, rw=[scratch], ro=[runner.parent], privileged=True, chdir=scratch,
                         untimed=True), ""

    def make_runnable(self, binary: Path) -> None:
        """The unprivileged user must be able to execute the copied runner: its folder is a private
        temporary directory made traversable, the file world-executable (it holds no secret)."""
        if not self.user:
            return
        os.chmod(binary.parent, 0o711)
        os.chmod(binary, 0o755)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Gives a folder and everything in it to the sandbox user (links themselves, never their
    targets): the grader configured the workspace as root, the jailed build writes it as nobody."""
    os.lchown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)
