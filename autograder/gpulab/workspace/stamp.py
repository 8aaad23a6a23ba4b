"""Which course tree a grading workspace slot belongs to, so that a slot is never used for
another one.

A slot holds absolute paths everywhere (its CMake cache, build.ninja, the compiler's depfiles):
a slot copied with the course (`cp -a`) or moved still builds the files at its old place. And a
slot made from another checkout, or from an older version of this one, holds another course.
So each slot records, in <slot>/stamp.json, where it is, which course source tree it was
exported from, a fingerprint of that tree's exported content, and how it was configured; a slot
whose record does not match all four (or whose CMake cache says it lives elsewhere) is not used
as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulab import handout
from gpulab.paths import read_cmake_cache

STAMP = "stamp.json"


def fingerprint(course_src: Path) -> str:
    """sha256 over the path and content of every file the handout export takes from the course
    (content, not modification times: a copy with new times is the same course, an edit that
    keeps the time is not)."""
    h = hashlib.sha256()
    for rel in handout.exported_files(course_src):
        h.update(f"{rel}\0".encode())
        try:
            with open(course_src / rel, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:   # unreadable: still part of the identity, as such
            h.update(f"\0unreadable {e.errno}".encode())
        h.update(b"\0\n")
    return h.hexdigest()


def stamp(slot_root: Path, course_src: Path, fp: str, configure: list[str]) -> dict[str, Any]:
    return {"slot": str(slot_root.resolve()), "source": str(course_src.resolve()), "fingerprint": fp,
            "configure": configure}


@dataclass
class Verdict:
    current: bool       # the slot is ready for this course as it is
    foreign: str = ""   # non-empty: the slot was made elsewhere or for another course (why, for the notes)


def _cache_dir(build: Path) -> str | None:
    """Where the slot's CMake cache says its build tree is (CMAKE_CACHEFILE_DIR), or None."""
    return read_cmake_cache(build).get("CMAKE_CACHEFILE_DIR")


def check(slot_root: Path, build: Path, want: dict[str, Any]) -> Verdict:
    """Is the slot at slot_root what `want` describes?"""
    try:
        have = json.loads((slot_root / STAMP).read_text(encoding="utf-8"))
        if not isinstance(have, dict):
            have = {}
    except (OSError, ValueError):
        have = {}
    name = slot_root.name
    cache_dir = _cache_dir(build)
    if have.get("slot") not in (None, want["slot"]):
        return Verdict(False, f"grading workspace {name} was made at {have['slot']} (copied or moved here): "
                              "rebuilt from scratch")
    if cache_dir is not None and os.path.realpath(cache_dir) != os.path.realpath(build):
        return Verdict(False, f"grading workspace {name}'s build tree was configured at {cache_dir} "
                              "(copied or moved here): rebuilt from scratch")
    if have.get("source") not in (None, want["source"]):
        return Verdict(False, f"grading workspace {name} was made from another course tree ({have['source']}): "
                              "rebuilt from scratch")
    if have != want or cache_dir is None:
        return Verdict(False)   # new, unfinished, or the course/configuration changed: re-exported
    return Verdict(True)


def write(slot_root: Path, st: dict[str, Any]) -> None:
    tmp = slot_root / (STAMP + ".tmp")
    tmp.write_text(json.dumps(st, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, slot_root / STAMP)


def clear(slot_root: Path) -> None:
    for name in (STAMP, "stamp"):   # "stamp": the record of older graders (no location in it)
        try:
            (slot_root / name).unlink()
        except FileNotFoundError:
            pass
