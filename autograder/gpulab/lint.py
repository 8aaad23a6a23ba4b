"""The include lint that runs before a submission is built: a friendly early message for the
ways a student file could read what it must not, or rename CUDA's libraries so that the library
check cannot name their kernels. Not the protection (the build runs in the sandbox's jail, where
the course does not exist; the library check reads mangled names): it reads directives spelled
`#include` and `#define`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from gpulab.kernel_names import CCCL_KERNELS


INCLUDE = re.compile(r'^\s*#\s*(include|include_next|import|embed)\b\s*(.*)$', re.MULTILINE)


def forbidden_constructs(name: str, data: bytes) -> list[str]:
    """Ways a student file could read what it must not (the reference, hidden tests, the grader):
    includes by absolute path or with `..`, computed (macro) includes, #embed, and .incbin."""
    text = data.decode("utf-8", errors="replace")
    # Join continued lines so a directive cannot be hidden across a backslash-newline.
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    out = []
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        directive, arg = m.group(1), m.group(2).strip()
        target = re.match(r'^(["<])([^">]*)[">]', arg)
        if directive == "embed":
            out.append(f"{name}:{line}: #embed is not allowed")
        elif target is None:
            out.append(f"{name}:{line}: computed #{directive} ({arg[:60]}) is not allowed; include a file by name")
        else:
            path = target.group(2)
            if path.startswith("/") or "\\" in path or ".." in PurePosixPath(path).parts:
                close = '"' if target.group(1) == '"' else ">"
                out.append(f"{name}:{line}: #{directive} {target.group(1)}{path}{close}: only the lab's own files, "
                           "gpulab/ headers and system headers may be included")
    for m in re.finditer(r"\.incbin\b", text):
        out.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: .incbin is not allowed")
    for m in LIBRARY_MACRO.finditer(text):
        if _renames_library(m.group(2)):
            out.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: #{m.group(1)} {m.group(2)} renames CUDA's "
                       "libraries (their kernels are told apart by their namespaces and names): not allowed")
    return out


LIBRARY_MACRO = re.compile(r"^\s*#\s*(define|undef)\s+([A-Za-z_]\w*)", re.MULTILINE)


def _renames_library(macro: str) -> bool:
    """A macro that would change what CUB's, Thrust's or libcu++'s kernels are called: the
    namespaces themselves, the switches of their namespace machinery, or a kernel's name (the
    library check reads both: kernel_names.py). CCCL_DISABLE_NVTX and the like stay allowed."""
    if macro in ("cub", "thrust", "cuda") or macro in CCCL_KERNELS:
        return True
    return "NAMESPACE" in macro and macro.startswith(("CUB_", "THRUST_", "CCCL_", "_CCCL_", "LIBCUDACXX_", "_LIBCUDACXX_"))
