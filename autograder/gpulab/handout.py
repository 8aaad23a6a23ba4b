"""The student handout: what students receive, exported from the instructor's course.

Taken: the files git tracks (`git ls-files`), so nothing untracked (a self-grade folder, an
editor's scratch file) ever reaches students. Outside a git checkout (the Gradescope bundle, which
has no .git, builds its grading workspace from this export too) every file is taken except the
excluded folders below; `gpulab handout` itself refuses to run there (handout_check.py).

Left out: solutions/, the hidden tests (autograder/hidden/), the instructors' benches (autograder/bench/), the bad-submission suite
(autograder/testdata/, it contains near-solutions), the grader's own tests (autograder/tests/: their
fixtures are tool output captured from the reference and quote its source), the measurement logs
under labs/*/results/ (compute-sanitizer and ncu logs quote the reference's lines), build trees,
VCS and tool folders. The course README (instructor commands) is replaced by the student README
autograder/handout/README.md. In every other text file a block from a `BEGIN SOLUTION` marker line to an `END SOLUTION` marker line
(comment lines starting with // or #) is replaced by a stub: the text after `stub:` on the BEGIN
line, or a TODO comment. Unterminated, unopened or nested markers are errors, so that a typo never
leaks a solution. The grader builds submissions inside this same export.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

from gpulab import proc
from gpulab.errors import GpulabError

EXCLUDED_DIRS = {".git", "build", ".deps", ".device-out", "solutions", "submissions", "__pycache__",
                 ".cache", ".vscode", ".idea", "node_modules", "gpulab-grade"}
EXCLUDED_PATHS = {PurePosixPath("autograder/hidden"), PurePosixPath("autograder/testdata"),
                  PurePosixPath("autograder/bench"), PurePosixPath("autograder/tests"),
                  PurePosixPath("autograder/handout"), PurePosixPath("README.md")}
EXCLUDED_GLOBS = ("labs/*/results/*.log",)
# Files exported under another name: the student README replaces the course's.
RENAMED = {PurePosixPath("autograder/handout/README.md"): PurePosixPath("README.md")}
TEXT_SUFFIXES = {".cu", ".cuh", ".cpp", ".hpp", ".h", ".cc", ".c", ".py", ".cmake", ".txt", ".toml", ".md",
                 ".sh", ".in", ".json", ".yml", ".yaml", ""}
BEGIN = re.compile(r"^(?P<indent>\s*)(?P<c>//|#)\s*BEGIN SOLUTION\b(?P<rest>.*)$")
END = re.compile(r"^\s*(//|#)\s*END SOLUTION\b")


def _excluded(rel: PurePosixPath) -> bool:
    if rel in RENAMED:
        return False
    if any(part in EXCLUDED_DIRS for part in rel.parts[:-1]) or rel.name in {".DS_Store"}:
        return True
    if any(rel.match(g) and len(rel.parts) == len(PurePosixPath(g).parts) for g in EXCLUDED_GLOBS):
        return True
    return any(rel == ex or ex in rel.parents for ex in EXCLUDED_PATHS)


def destination(rel: PurePosixPath) -> PurePosixPath:
    """Where a course file lands in the handout."""
    return RENAMED.get(rel, rel)


def is_git_checkout(src: Path) -> bool:
    return (src / ".git").exists()


def _git_files(src: Path) -> list[PurePosixPath] | None:
    """The files git tracks when src is a git checkout (None otherwise)."""
    if not is_git_checkout(src):
        return None
    res = proc.run(["git", "-C", str(src), "ls-files", "-z", "--cached"], timeout=60)
    if not res.ok:
        return None
    return [PurePosixPath(p) for p in res.stdout.split("\0") if p and (src / p).is_file()]


def exported_files(src: Path) -> list[PurePosixPath]:
    """The course files the handout contains (relative paths in the course, sorted; see
    destination() for where each lands)."""
    files = _git_files(src)
    if files is None:
        files = []
        for dirpath, dirnames, filenames in os.walk(src):
            rel_dir = PurePosixPath(os.path.relpath(dirpath, src).replace(os.sep, "/"))
            dirnames[:] = [d for d in dirnames if d not in EXCLUDED_DIRS]
            for f in filenames:
                files.append(PurePosixPath(f) if str(rel_dir) == "." else rel_dir / f)
    return sorted(f for f in files if not _excluded(f))


def strip_solutions(text: str, name: str = "<text>") -> tuple[str, int]:
    """(text with every solution block replaced by its stub, number of blocks). Errors name file:line."""
    out: list[str] = []
    blocks = 0
    open_line: int | None = None
    for i, line in enumerate(text.splitlines(keepends=True), start=1):
        b, e = BEGIN.match(line), END.match(line)
        if b:
            if open_line is not None:
                raise GpulabError(f"handout: {name}:{i}: BEGIN SOLUTION inside the block opened at line "
                                  f"{open_line} (nested markers are not allowed)")
            open_line = i
            blocks += 1
            rest = b.group("rest").strip()
            nl = "\n" if line.endswith("\n") else ""
            if rest.startswith("stub:"):
                out.append(f"{b.group('indent')}{rest[5:].strip()}{nl}")
            else:
                out.append(f"{b.group('indent')}{b.group('c')} TODO: your code here{nl}")
            continue
        if e:
            if open_line is None:
                raise GpulabError(f"handout: {name}:{i}: END SOLUTION without a BEGIN SOLUTION")
            open_line = None
            continue
        if open_line is None:
            out.append(line)
    if open_line is not None:
        raise GpulabError(f"handout: {name}:{open_line}: BEGIN SOLUTION is never closed by END SOLUTION")
    return "".join(out), blocks


def export_file(src: Path, dst: Path) -> int:
    """Copies one file, stripping solution blocks from text files; returns the number of blocks."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix in TEXT_SUFFIXES:
        try:
            text = src.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and "SOLUTION" in text:
            new, n = strip_solutions(text, str(src))
            dst.write_text(new, encoding="utf-8")
            shutil.copymode(src, dst)
            return n
    shutil.copy2(src, dst)
    return 0


def export(src: Path, dest: Path) -> dict[str, int]:
    """Writes the handout of course `src` into `dest` (which must be empty or absent); returns
    {file: blocks stripped} for files that had solution blocks."""
    src, dest = src.resolve(), dest.resolve()
    if dest == src or src in dest.parents and not _excluded(PurePosixPath(os.path.relpath(dest, src))):
        raise GpulabError(f"handout: {dest} is inside the course; choose a folder outside it or under build/")
    if dest.exists() and any(dest.iterdir()):
        raise GpulabError(f"handout: {dest} is not empty; remove it or choose another --out")
    stripped: dict[str, int] = {}
    files = exported_files(src)
    # Check every file before writing any: a marker error leaves no half-written handout.
    for rel in files:
        p = src / rel
        if p.suffix in TEXT_SUFFIXES:
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if "SOLUTION" in text:
                strip_solutions(text, str(rel))
    for rel in files:
        n = export_file(src / rel, dest / destination(rel))
        if n:
            stripped[str(rel)] = n
    return stripped
