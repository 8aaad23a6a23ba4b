"""The include lint that runs before a submission is built: a friendly early message for the
ways a student file could read what it must not. Not the protection (the build runs in the
sandbox's jail, where the course does not exist): it reads directives spelled `#include`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath


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
    return out
