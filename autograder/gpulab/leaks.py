"""Finding instructor text where it must not be: one rule for the known-bad suite (nothing of the
rubric, the hidden cases or the reference in a grade's reports) and for the handout (nothing of
solutions/ in what students receive).

A "telling" line is a line of an instructor file that, stripped, has at least MIN_LINE characters:
shorter ones ("[[case]]", "seed = 2", "}") could appear anywhere by chance. A leak is a telling
line found as a substring of an output file (also in its JSON-escaped spelling, for results.json).
"""

from __future__ import annotations

import json
import re
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


def find(wanted: Iterable[str], root: Path, skip: Iterable[Path] = ()) -> list[str]:
    """'<file>: <line>' for every wanted line found in a regular file under `root` (links are not
    followed; folders in `skip` are not searched)."""
    wanted = sorted(set(wanted))
    skip = [p.resolve() for p in skip]
    found = []
    for f in sorted(root.rglob("*")):
        if f.is_symlink() or not f.is_file() or any(s == f or s in f.parents for s in skip):
            continue
        text = read_text(f)
        for w in wanted:
            if w in text or json.dumps(w)[1:-1] in text:
                found.append(f"{f.relative_to(root)}: {w[:60]!r}")
    return found
