"""What the student's compiled objects define and call: a link-time check that student code does
not replace the harness or the runtime (symbol interposition) or reach for process-level tricks.

The student's files are linked into the runner that times and checks them. A definition of a
function that common/ or the C runtime / CUDA runtime also defines would win over it at link or
load time (e.g. a fake `gpulab::measure_gpu` or `cudaEventElapsedTime`), and code patching needs
`mprotect`/`dlsym`/`ptrace`. None of these has a place in a lab, so each rejects the lab.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gpulab import proc
from gpulab.kernel_names import library_kernel

FORBIDDEN_CALLS = {"mprotect", "dlopen", "dlsym", "dlvsym", "ptrace", "process_vm_writev", "process_vm_readv",
                   "syscall", "fork", "vfork", "execve", "execv", "execvp", "execl", "execlp", "system", "popen",
                   "posix_spawn", "posix_spawnp", "clone", "prctl", "setrlimit", "prlimit", "prlimit64",
                   "kill", "killpg", "unshare", "setns", "chroot", "pivot_root", "mount", "umount", "umount2",
                   "open_by_handle_at", "name_to_handle_at"}
STRONG = set("TDBR")
# Weak and unique definitions (nm W/V/u): what a header's inline or "link once" definitions
# compile to; the linker keeps one copy and never lets them replace a strong definition.
WEAK = set("WVu")
# The C-linkage symbols NVIDIA's header-only NVTX v3 defines in every object that includes it
# (CUB's device-wide headers do since CUDA 13, and common/'s runner does): nvtxGlobals_v3,
# nvtxInitOnce_v3, nvtxDomainCreateA_impl_init_v3, InitializeInjectionNvtx2_fnptr, ... They are
# weak: the linker keeps one copy of them and of common/'s identical ones, and no strong symbol
# is replaced. Including a CUB header is not tampering. (A hand-written weak copy could at worst
# break the stage's NVTX ranges; the profiler-based checks then see no kernel in the stage and
# give its performance 0.) A strong definition of these names, or a weak one of any other
# C name, is still rejected.
NVTX_HEADER_SYMBOL = re.compile(r"^(nvtx\w*_v3|InitializeInjectionNvtx2_fnptr)$")
# The one thing NVTX's header calls that a lab may not: its injection loader (the tool library
# named by NVTX_INJECTION64_PATH, e.g. Nsight's) uses dlopen/dlsym, inlined by the optimiser into
# every `nvtx*_impl_init_v3`. Those calls are allowed from the sections of NVTX's own functions
# (`.text.<NVTX header symbol>`) only; the same calls anywhere else still reject the lab.
NVTX_LOADER_CALLS = {"dlopen", "dlsym", "dlclose", "dlerror"}


def _nm(args: list[str]) -> list[tuple[str, str]] | None:
    """(type letter, name) rows of `nm args`, or None when nm is unavailable or fails."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    res = proc.run([nm, *args], timeout=120)
    if not res.ok:
        return None
    rows = []
    for line in res.stdout.splitlines():
        m = re.match(r"^\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(\S+)$", line)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def _callers(obj: Path) -> dict[str, set[str]] | None:
    """{symbol: the sections whose code refers to it} from `objdump -r` (None: objdump failed)."""
    objdump = shutil.which("objdump")
    if objdump is None:
        return None
    res = proc.run([objdump, "-r", str(obj)], timeout=120)
    if not res.ok:
        return None
    out: dict[str, set[str]] = {}
    section = ""
    for line in res.stdout.splitlines():
        m = re.match(r"^RELOCATION RECORDS FOR \[(.*)\]:$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^[0-9a-fA-F]+\s+\S+\s+([^\s+-]+)", line)
        if m:
            out.setdefault(m.group(1).split("@")[0], set()).add(section)
    return out


def _nvtx_loader_only(name: str, callers: dict[str, set[str]] | None) -> bool:
    """Every reference to `name` lies in a function of NVTX's header (see NVTX_LOADER_CALLS)."""
    sections = (callers or {}).get(name)
    return (name in NVTX_LOADER_CALLS and bool(sections)
            and all(sec.startswith(".text.") and NVTX_HEADER_SYMBOL.match(sec[len(".text."):]) for sec in sections))


def strong_definitions(archive: Path) -> set[str] | None:
    """Names that common/'s library defines strongly (what a student definition would replace)."""
    rows = _nm(["--defined-only", "-g", str(archive)])
    return None if rows is None else {n for t, n in rows if t in STRONG}


def _demangle(name: str) -> str:
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt or not name.startswith("_Z"):
        return name
    res = proc.run([cxxfilt, name], timeout=10)
    return res.stdout.strip() or name


def check_objects(objects: list[Path], protected: set[str] | None) -> tuple[list[str], str]:
    """(problems, note): problems reject the lab; a note says when the check could not run."""
    problems: list[str] = []
    for obj in objects:
        defined = _nm(["--defined-only", "-g", str(obj)])
        undefined = _nm(["--undefined-only", str(obj)])
        if defined is None or undefined is None:
            return [], "symbol check not run (nm not found or failed)"
        for t, name in defined:
            if name.startswith("DW.ref.") or name.startswith("__nv") or name.startswith("__cuda"):
                continue
            if t in WEAK and NVTX_HEADER_SYMBOL.match(name):
                continue
            if not name.startswith("_Z"):
                problems.append(f"{obj.name}: defines the C function/variable `{name}` (would replace the "
                                "runtime's or the harness's; student code needs no extern \"C\" definitions)")
            elif protected and name in protected:
                problems.append(f"{obj.name}: defines `{_demangle(name)}`, which common/ defines: it would replace "
                                "the harness's code")
        callers = None
        for _, name in undefined:
            base = name.split("@")[0]
            if base in FORBIDDEN_CALLS and base in NVTX_LOADER_CALLS:
                callers = callers if callers is not None else _callers(obj)
                if _nvtx_loader_only(base, callers):
                    continue
            if base in FORBIDDEN_CALLS:
                problems.append(f"{obj.name}: calls `{base}`, which a lab has no use for (process or memory tricks)")
    return problems, ""


# nvcc's host stub of a kernel, the identifier `__device_stub__<kernel's mangled name without its
# leading "_">`, appears in the object's symbols (the stub itself, `_Z90__device_stub__ZN4scan...`,
# or a local static of it, `_ZZL143__device_stub__ZN3cub...E5__tmp`) beside the kernel's own host
# symbol, for each kernel instantiated in that translation unit; the digits before it are the
# identifier's length.
_DEVICE_STUB = re.compile(r"(\d+)(__device_stub__)")


# CUB's PTX-version probe, `cub::detail::EmptyKernel<void>`: including CUB's or Thrust's device
# headers instantiates it with no call at all (nvcc 13.0: device_scan.cuh, device_radix_sort.cuh,
# thrust/device_vector.h), and it runs no algorithm. Including a header is not a library call.
_HEADER_KERNEL = re.compile(r"11EmptyKernelI")


def _stubbed_kernels(names: set[str]) -> set[str]:
    """The kernels' mangled names that the stubs among `names` name."""
    out = set()
    for n in names:
        for m in _DEVICE_STUB.finditer(n):
            ident = n[m.start(2):m.start(2) + int(m.group(1))]
            if len(ident) > len("__device_stub__"):
                out.add("_" + ident[len("__device_stub__"):])
    return out


def library_kernels(objects: list[Path]) -> dict[str, list[str]]:
    """{object's source file name: the CUB/Thrust kernels (mangled) it instantiates}: a device-wide
    library algorithm's kernels are templates, compiled into the object whose code calls it, so
    this is seen without running anything (checks/library.py holds it beside what the profiles
    saw). Objects nm cannot read are left out."""
    found: dict[str, list[str]] = {}
    for obj in objects:
        rows = _nm(["--defined-only", str(obj)])
        if rows is None:
            continue
        names = {n for _, n in rows}
        kernels = sorted(k for k in _stubbed_kernels(names) if library_kernel(k) and not _HEADER_KERNEL.search(k))
        if kernels:
            found[obj.name.removesuffix(".o")] = kernels
    return found
