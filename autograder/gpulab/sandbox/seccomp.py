"""The system-call filter of the student-code jail (jail.py), compiled by libseccomp.

Why a filter: the Nsight Compute run keeps CAP_SYS_ADMIN (the NVIDIA driver checks it in the
profiled process before it lets it read performance counters), and with it root could undo the
jail: remount the read-only root, enter another namespace, load a kernel module, trace the
grader. The jail's mounts and namespaces (bubblewrap) stop the rest; this filter makes the system
calls that could undo them fail with EPERM, for every run of student code (as `nobody` too, so
one filter is tested everywhere).

libseccomp (Debian libseccomp2, already on every Debian/Ubuntu system because apt uses it) does
the BPF; it is reached through ctypes rather than the python3-seccomp binding, because that
binding is built for one Python minor version and the offline GPU machine's Python may differ.
The filter is exported as raw BPF and loaded by bubblewrap (`--seccomp FD`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from pathlib import Path

# Calls that change mounts, namespaces, the kernel or other processes. A profiler needs none of
# them (ncu injects into its target with LD_PRELOAD and talks to it over local sockets).
DENIED = (
    # mounts and the root (undo the read-only view)
    "mount", "umount", "umount2", "pivot_root", "chroot", "mount_setattr", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick",
    # namespaces (leave the jail's)
    "setns", "unshare",
    # other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # the kernel
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "iopl", "ioperm", "perf_event_open",
    "fanotify_init", "lookup_dcookie", "uselib", "vhangup", "nfsservctl",
    # keys, files by handle (escape through another mount), the clock, the host name
    "add_key", "request_key", "keyctl", "open_by_handle_at", "name_to_handle_at",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime", "sethostname", "setdomainname",
)
# clone() flags that make a namespace: clone() with any of them fails like unshare().
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
             "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}

_ACT_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


class SeccompError(Exception):
    """libseccomp is missing or refused the filter: the jail cannot be built (fail closed)."""


def _candidates() -> list[str]:
    """The system's libseccomp, then the copy scripts/fetch-deps.sh unpacks into .deps/."""
    out = [ctypes.util.find_library("seccomp") or "libseccomp.so.2"]
    src = os.environ.get("GPULAB_SOURCE_DIR")
    if src:
        out += sorted(str(p) for p in Path(src, ".deps", "usr", "lib").glob("*/libseccomp.so.2"))
    return out


def _lib() -> ctypes.CDLL:
    lib, errors = None, []
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name, use_errno=True)
            break
        except OSError as e:
            errors.append(str(e))
    if lib is None:
        raise SeccompError(f"libseccomp not found ({'; '.join(errors)}): install the Debian package libseccomp2")
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.restype = None
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def write_filter(path: Path) -> list[str]:
    """Writes the jail's filter as raw BPF to `path` (mode 600); returns the denied calls this
    kernel's architecture knows (calls it does not know cannot be made and need no rule).
    Raises SeccompError when libseccomp is unavailable or fails."""
    lib = _lib()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompError("seccomp_init failed")
    try:
        denied = []
        for name in DENIED:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue
            rc = lib.seccomp_rule_add_array(ctx, _act_errno(errno.EPERM), nr, 0, None)
            if rc < 0:
                raise SeccompError(f"seccomp_rule_add({name}) failed: {os.strerror(-rc)}")
            denied.append(name)
        clone = lib.seccomp_syscall_resolve_name(b"clone")
        for flag in CLONE_NEW.values():
            cmp = _ArgCmp(0, _CMP_MASKED_EQ, flag, flag)
            rc = lib.seccomp_rule_add_array(ctx, _act_errno(errno.EPERM), clone, 1, ctypes.byref(cmp))
            if rc < 0:
                raise SeccompError(f"seccomp_rule_add(clone) failed: {os.strerror(-rc)}")
        # clone3 passes its flags in memory a filter cannot read: make it unavailable, so that the
        # C library falls back to clone(), whose flags are checked above (as container runtimes do).
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if clone3 >= 0:
            rc = lib.seccomp_rule_add_array(ctx, _act_errno(errno.ENOSYS), clone3, 0, None)
            if rc < 0:
                raise SeccompError(f"seccomp_rule_add(clone3) failed: {os.strerror(-rc)}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
        finally:
            os.close(fd)
        if rc < 0:
            raise SeccompError(f"seccomp_export_bpf failed: {os.strerror(-rc)}")
        return denied
    finally:
        lib.seccomp_release(ctx)
