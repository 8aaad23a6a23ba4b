"""Whose kernel a name is: one of CUDA's C++ libraries' (CCCL: CUB, Thrust, libcu++) or the
student's own, from the name Nsight Compute prints for it (the library check, checks/library.py;
the include lint refuses macros that would rename the libraries, lint.py).

Nsight Compute prints the kernels' mangled names (tools/ncu/run.py asks for --print-kernel-base
mangled): its demangled form has dropped every namespace (on the H100, 2026-11: `void
DeviceScanKernel<policy_hub<int, int, int, unsigned int, cuda::plus<void>>::Policy1000, ...>(T1,
...)`), and a demangled or bare name cannot tell a kernel's own namespace from its template
arguments'.
"""

from __future__ import annotations

import re
import shutil

from gpulab import proc

# The namespaces of CUDA's C++ libraries (CCCL). CUB's and Thrust's device-wide algorithms launch
# kernels declared in them (cub::CUB_300001_SM_900::detail::scan::DeviceScanKernel, thrust::
# THRUST_300001_SM_900_NS::cuda_cub::core::detail::_kernel_agent); libcu++ is `cuda`. Matched at
# any depth: CUB_WRAPPED_NAMESPACE / THRUST_CUB_WRAPPED_NAMESPACE put CUB and Thrust inside a
# namespace of the user's choosing (reduction::cub::detail::reduce::DeviceReduceKernel).
LIBRARY_NAMESPACES = frozenset({"cub", "thrust", "cuda"})
# CCCL's versioned ABI namespaces (inline, inside cub:: and thrust::): they remain when a macro
# renames `cub` itself (`#define cub scanlib` gives scanlib::CUB_300001_SM_900::detail::...).
ABI_NAMESPACE = re.compile(r"(?:CUB|THRUST)_\d+_SM_\w*")

# The __global__ functions of CCCL's device-wide algorithms (CUDA 13.0: every function declared
# with CUB_DETAIL_KERNEL_ATTRIBUTES or THRUST_DETAIL_KERNEL_ATTRIBUTES under include/cccl; the
# test holds this list to the installed headers), for names printed without their namespaces.
CCCL_KERNELS = frozenset({
    "BatchMemcpyKernel", "DeviceAdjacentDifferenceDifferenceKernel", "DeviceAdjacentDifferenceInitKernel",
    "DeviceCompactInitKernel", "DeviceHistogramInitKernel", "DeviceHistogramSweepKernel",
    "DeviceMergeSortBlockSortKernel", "DeviceMergeSortMergeKernel", "DeviceMergeSortPartitionKernel",
    "DeviceRadixSortDownsweepKernel", "DeviceRadixSortExclusiveSumKernel", "DeviceRadixSortHistogramKernel",
    "DeviceRadixSortOnesweepKernel", "DeviceRadixSortSingleTileKernel", "DeviceRadixSortUpsweepKernel",
    "DeviceReduceByKeyKernel", "DeviceReduceKernel", "DeviceReduceSingleTileKernel", "DeviceRleSweepKernel",
    "DeviceScanByKeyInitKernel", "DeviceScanByKeyKernel", "DeviceScanInitKernel", "DeviceScanKernel",
    "DeviceSegmentedRadixSortKernel", "DeviceSegmentedReduceKernel", "DeviceSegmentedSortContinuationKernel",
    "DeviceSegmentedSortFallbackKernel", "DeviceSegmentedSortKernelLarge", "DeviceSegmentedSortKernelSmall",
    "DeviceSelectSweepKernel", "DeviceThreeWayPartitionInitKernel", "DeviceThreeWayPartitionKernel",
    "DeviceUniqueByKeySweepKernel", "FillAndResetDrainKernel", "InitTileStateKernel",
    "MultiBlockBatchMemcpyKernel", "RadixSortScanBinsKernel", "_kernel_agent", "_kernel_agent_vshmem",
})
# Kernels of other CCCL versions that follow CUB's naming (DeviceFooKernel, DeviceFooSweepKernel).
CUB_KERNEL_NAME = re.compile(r"Device[A-Z]\w*Kernel\w*")
# CCCL kernels whose names a student's kernel could have (transform_kernel in the transpose lab):
# flagged only with template arguments, which every CCCL kernel has and no extern "C" kernel can.
GENERIC_KERNELS = frozenset({"EmptyKernel", "device_merge_kernel", "device_partition_merge_path_kernel",
                             "dynamic_kernel", "static_kernel", "transform_kernel"})

# The anonymous namespace: `_GLOBAL__N_1` in a mangled name (nvcc: `_GLOBAL__N__<hash>_<file>`),
# `(anonymous namespace)` demangled.
ANONYMOUS = "(anonymous namespace)"


# The grader's own marker kernels (common/src/stage_marker.cu), which delimit each stage's run.
MARKER_KERNELS = ("stage_begin_marker", "stage_end_marker")


def library_name_filter() -> str:
    """An Nsight Compute kernel filter (`--kernel-name-base mangled --kernel-name regex:<this>`)
    that matches every name library_kernel() flags, and the grader's marker kernels: a profile
    that only has to find library kernels (checks/library.py, a stage the timing cross-check did
    not profile) skips every other kernel, at ~0.3 ms a launch instead of ~7.5 ms a profiled one
    (autograder/bench/ncu_overhead.py). Over-wide on purpose: a substring of a mangled name, not
    its parse, so a student's kernel may match too (`4cuda` in a template argument, "Kernel" in a
    name) and is profiled for nothing; no library name can be missed. Every flagged mangled name
    has a library namespace or a CCCL ABI namespace in its scope, or is a CCCL kernel's name in a
    `detail` namespace (library_kernel); every unscoped one is a CCCL kernel's name; and every
    CCCL kernel's name has "Kernel" in it or is listed here. (`detail` itself is no word of it: the
    labs' own kernels live in such namespaces, bitonic::detail::global_step_kernel.)"""
    words = sorted(LIBRARY_NAMESPACES) + ["CUB_", "THRUST_", "Kernel", *MARKER_KERNELS]
    words += sorted(k for k in CCCL_KERNELS | GENERIC_KERNELS if "Kernel" not in k)
    # Searched for, not matched whole: ncu profiles the kernels whose name "has" the expression
    # (Nsight Compute's CLI documentation, --kernel-name). No `.*` around it: a backtracking regex
    # engine pays for those on the very long names deep templates give. Were the name matched whole,
    # nothing would pass, not even the markers, and the run would be profiled whole after all
    # (tools/ncu/run.py: no marker seen): slower, never wrong.
    return "(" + "|".join(re.escape(w) for w in words) + ")"


def library_kernel(name: str) -> bool:
    """Whether the kernel Nsight Compute printed as `name` is a CCCL library kernel: by the
    namespaces its mangled name declares it in (never its template arguments: a student's
    `combine<cuda::std::plus<int>>` is the student's). A name that is not mangled (an extern "C"
    kernel, or a tool that printed another form) is judged by its printed namespaces, and one
    printed with none at all by CCCL's kernel names."""
    parsed = mangled_scope(name.strip())
    if parsed is not None:
        scope, function = parsed
        # CUB's kernels live in a `detail` namespace under `cub`: a macro that renames `cub`
        # (with CUB_DISABLE_NAMESPACE_MAGIC) leaves `<x>::detail::scan::DeviceScanKernel`. A
        # student's own kernel of that name outside a `detail` namespace stays the student's.
        return _library_scope(scope) or ("detail" in scope and function in CCCL_KERNELS)
    scope, function, templated = printed_scope(name)
    if scope:
        return _library_scope(scope)
    if function in GENERIC_KERNELS:
        return templated
    return function in CCCL_KERNELS or CUB_KERNEL_NAME.fullmatch(function) is not None


def _library_scope(scope: tuple[str, ...]) -> bool:
    return any(part in LIBRARY_NAMESPACES or ABI_NAMESPACE.fullmatch(part) for part in scope)


def mangled_scope(name: str) -> tuple[tuple[str, ...], str] | None:
    """(the namespaces a function is declared in, outermost first; its own name) from an
    Itanium-mangled name, or None when `name` is not one this reads. Only the prefix is parsed:
    `_Z`, optional `L` (internal linkage), then `N` [CV- and ref-qualifiers] <names> `E`, or one
    unscoped name (optionally `St`); template arguments and parameters are never read. A kernel
    is neither a class member nor local to a function, so its nested name is namespaces and then
    the function: `_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelI...` gives
    (("cub", "CUB_300001_SM_900", "detail", "scan"), "DeviceScanKernel")."""
    if not name.startswith("_Z"):
        return None
    pos = 2 + name.startswith("L", 2)
    if name.startswith("N", pos):
        return _nested_name(name, pos + 1)
    scope: tuple[str, ...] = ()
    if name.startswith("St", pos):
        scope, pos = ("std",), pos + 2
    got = _source_name(name, pos)
    return None if got is None else (scope, got[0])


def _nested_name(name: str, pos: int) -> tuple[tuple[str, ...], str] | None:
    """The names of `N [r][V][K] [R|O] [St] <name>+ (I|E)`, read from just after the `N`."""
    while pos < len(name) and name[pos] in "rVK":
        pos += 1
    if pos < len(name) and name[pos] in "RO":
        pos += 1
    parts = []
    if name.startswith("St", pos):
        parts.append("std")
        pos += 2
    while pos < len(name) and name[pos] not in "IE":
        pos += name.startswith("L", pos)   # internal linkage inside a namespace (GCC's static)
        got = _source_name(name, pos)
        if got is None:
            return None
        part, pos = got
        while name.startswith("B", pos):   # ABI tags ([[gnu::abi_tag]]) qualify the name before them
            tag = _source_name(name, pos + 1)
            if tag is None:
                return None
            pos = tag[1]
        parts.append(ANONYMOUS if part.startswith("_GLOBAL__N") else part)
    if not parts or pos >= len(name):
        return None
    return tuple(parts[:-1]), parts[-1]


_LENGTH = re.compile(r"[1-9][0-9]*")


def _source_name(name: str, pos: int) -> tuple[str, int] | None:
    """(identifier, position after it) of the `<length><identifier>` at `pos`, or None."""
    m = _LENGTH.match(name, pos)
    if m is None:
        return None
    end = m.end() + int(m.group())
    return (name[m.end():end], end) if end <= len(name) else None


def printed_scope(name: str) -> tuple[tuple[str, ...], str, bool]:
    """(namespaces, function, whether template arguments follow) of a name as a demangler prints
    it: `void cub::...::DeviceScanKernel<...>(...)`, `void DeviceScanInitKernel<ScanTileState<int,
    1>>(T1, int)` (no namespaces), `DeviceScanKernel` (the bare function name)."""
    text = re.sub(r"^void\s+", "", name.strip().replace(ANONYMOUS, "_GLOBAL__N"))
    qualified = re.match(r"[^<(]*", text).group()
    parts = [p.strip() for p in qualified.split("::")]
    scope = tuple(ANONYMOUS if p == "_GLOBAL__N" else p for p in parts[:-1])
    return scope, parts[-1], text[len(qualified):].startswith("<")


def readable_names(names: list[str]) -> list[str]:
    """The names for a report, in order: c++filt's demangling of the mangled ones (binutils),
    else the namespaces and function read from the mangled name; other names as they are."""
    mangled = [n for n in names if mangled_scope(n) is not None]
    demangled = _cxxfilt(mangled)
    out = []
    for n in names:
        parsed = mangled_scope(n)
        if parsed is None:
            out.append(n)
        else:
            out.append(demangled.get(n) or "::".join(parsed[0] + (parsed[1],)))
    return out


def _cxxfilt(mangled: list[str]) -> dict[str, str]:
    """{mangled: demangled} from one c++filt run ({} without binutils or when it fails). Every
    name starts with `_Z`, so none can be read as an option."""
    tool = shutil.which("c++filt")
    if tool is None or not mangled:
        return {}
    res = proc.run([tool, *mangled], timeout=30)
    lines = res.stdout.splitlines()
    if not res.ok or len(lines) != len(mangled):
        return {}
    return {m: d for m, d in zip(mangled, lines) if d != m}


def short_kernel(name: str) -> str:
    """`cub::...::DeviceScanKernel` for a report line (no template arguments or parameters)."""
    text = re.sub(r"^void\s+", "", name.strip())
    while True:   # innermost template argument lists and parameter lists first
        shorter = re.sub(r"<[^<>()]*>|\([^()]*\)", "", text)
        if shorter == text:
            break
        text = shorter
    parts = [p for p in text.split("::") if p]
    if len(parts) <= 1:
        return text or name[:80]
    return "::".join(parts[:1] + (["..."] if len(parts) > 2 else []) + parts[-1:])


def shown_kernels(names: list[str]) -> list[str]:
    """Kernels as a report lists them: readable, shortened, each once, in launch order."""
    return list(dict.fromkeys(short_kernel(k) for k in readable_names(names)))
