"""Files student code could have written or replaced (its saved outputs, a tool's log in its
folder, an ncu report): read or copied by the grader, which runs with root's rights, as regular
files only, never through a link student code planted (to the rubric, the reference).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path


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
