"""Finding instructor text where it must not be: one rule for the known-bad suite (nothing of the
rubric, the hidden cases or the reference in a grade's reports) and for the handout (nothing of
solutions/ in what students receive).

A "telling" line is a line of an instructor file that, stripped, has at least MIN_LINE characters:
shorter ones ("[[case]]", "seed = 2", "}") could appear anywhere by chance. A leak is a telling
line found as a substring of an output file (also in its JSON-escaped spelling, for results.json).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

MIN_LINE = 16

# Lines a starter shares with its reference without giving anything away: includes, namespace
# braces, punctuation, section rulers, template heads and function heads (the interface the
# starter must declare: a parameter list closed by `) {`, with no statement in it).
_BOILERPLATE = re.compile(r"^(#\s*(include|pragma|if|ifdef|ifndef|endif|define|else)\b.*"
                          r"|(inline\s+)?namespace\s+[\w:]*\s*\{"
                          r"|\}\s*//\s*namespace\b.*"
                          r"|//\s*-{3,}.*-{3,}"
                          r"|template\s*<[\w\s,]*>"
                          r"|[{}();,\s]*)$")
_FUNCTION_HEAD = re.compile(r"^(?!(if|for|while|switch|return)\b)[\w:<>,&*\s\[\]()]*\)\s*(const\s*)?\{$")


def telling_lines(text: str) -> set[str]:
    """The stripped lines of `text` long enough to identify it."""
    return {ln.strip() for ln in text.splitlines() if len(ln.strip()) >= MIN_LINE}


def is_boilerplate(line: str) -> bool:
    """Includes, namespace braces, rulers, template and function heads: shared by a starter and
    its reference by design."""
    line = line.strip()
    return bool(_BOILERPLATE.match(line) or _FUNCTION_HEAD.match(line))


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def spellings(line: str) -> set[str]:
    """How a line can appear in an output file: as written, and JSON-escaped (results.json)."""
    return {line, json.dumps(line)[1:-1]}


def _grep(option: str, patterns: Iterable[str], files: list[Path]) -> bytes | None:
    """GNU grep over `files` for every fixed-string pattern at once (one pass a file: thousands of
    reference lines against megabytes of runners took minutes as one Python search a line); its
    output, or None when it could not run (the callers then search in Python); a pattern with a
    line break cannot be one line of grep's pattern file, so it too leaves the search to Python."""
    pats = sorted({p for p in patterns if p})
    if any("\n" in p for p in pats):
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as f:
        f.write("".join(p + "\n" for p in pats))
        f.flush()
        try:
            res = subprocess.run(["grep", "-F", "-a", option, "-f", f.name, "--", *map(str, files)],
                                 capture_output=True, env=dict(os.environ, LC_ALL="C"), timeout=600)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return res.stdout if res.returncode in (0, 1) else None


def lines_holding(patterns: Iterable[str], files: list[Path]) -> str | None:
    """The lines of `files` that hold one of `patterns`, joined: a pattern is in a file exactly
    when it is in these lines. None when grep could not run."""
    out = _grep("-h", patterns, files) if files else b""
    return None if out is None else out.decode("utf-8", errors="replace")


def files_holding(patterns: Iterable[str], files: list[Path]) -> list[Path]:
    """The files (in order) that hold one of `patterns`; all of them when grep could not run."""
    out = _grep("-lZ", patterns, files) if files else b""
    if out is None:
        return files
    named = {os.fsdecode(n) for n in out.split(b"\0") if n}
    return [f for f in files if str(f) in named]


def find(wanted: Iterable[str], root: Path, skip: Iterable[Path] = ()) -> list[str]:
    """'<file>: <line>' for every wanted line found in a regular file under `root` (links are not
    followed; folders in `skip` are not searched)."""
    wanted = sorted(set(wanted))
    skip = [p.resolve() for p in skip]
    files = [f for f in sorted(root.rglob("*"))
             if not f.is_symlink() and f.is_file() and not any(s == f or s in f.parents for s in skip)]
    # Only the files that grep finds one of the lines in are searched line by line (to name each).
    held = files_holding({s for w in wanted for s in spellings(w)}, files) if wanted else []
    found = []
    for f in held:
        text = read_text(f)
        for w in wanted:
            if any(s in text for s in spellings(w)):
                found.append(f"{f.relative_to(root)}: {w[:60]!r}")
    return found
