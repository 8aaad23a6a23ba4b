"""The student handout: what students receive, exported from the instructor's course.

Taken: the files git tracks (`git ls-files`), so nothing untracked (a self-grade folder, an
editor's scratch file) ever reaches students. Outside a git checkout (the Gradescope bundle, which
has no .git, builds its grading workspace from this export too) every file is taken except the
excluded folders below; `gpulab handout` itself refuses to run there (handout_check.py).

Left out: solutions/, the hidden tests (autograder/hidden/), the instructors' benches (autograder/bench/) and simulations
of references (autograder/sim/), the bad-submission suite
(autograder/testdata/, it contains near-solutions), the grader's own tests (autograder/tests/: their
fixtures are tool output captured from the reference and quote its source), the measurement logs
under labs/*/results/ (compute-sanitizer and ncu logs quote the reference's lines), build trees,
VCS and tool folders. The course README (instructor commands) is replaced by the student README
autograder/handout/README.md. In every other text file a block from a `BEGIN SOLUTION` marker line to an `END SOLUTION` marker line
(comment lines starting with // or #) is replaced by a stub: the text after `stub:` on the BEGIN
line, or a TODO comment. Unterminated, unopened or nested markers are errors, so that a typo never
leaks a solution. The grader builds submissions inside this same export.

What a student receives and what stays with the lecturer (autograder/README.md, "The handout"):
the lecture decks lose their slides of class `answer` (gpulab/decks.py), and a deck image that no
exported file shows any more (one drawn for an answer slide) is left out; the instructor's answer
lists (autograder/answers/), the lab template for course authors (common/template/), the tuning
records under labs/*/results/ (tune-*) and the course's own GPU verification scripts stay home.
`release=True` (`gpulab handout --release-solutions`, after the deadline) keeps the answer slides
and every image and adds solutions/ (the reference and its NOTES.md).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

from gpulab import decks, proc
from gpulab.errors import GpulabError

EXCLUDED_DIRS = {".git", "build", ".deps", ".device-out", "solutions", "submissions", "__pycache__",
                 ".cache", ".vscode", ".idea", "node_modules", "gpulab-grade"}
EXCLUDED_PATHS = {PurePosixPath("autograder/hidden"), PurePosixPath("autograder/testdata"),
                  PurePosixPath("autograder/bench"), PurePosixPath("autograder/tests"), PurePosixPath("autograder/sim"),
                  PurePosixPath("autograder/handout"), PurePosixPath("autograder/answers"),
                  PurePosixPath("common/template"), PurePosixPath("README.md"),
                  PurePosixPath("scripts/handout-selfgrade-gpu.sh")}
# Measurement logs quote the reference's lines; tuning records name its tuned constants. The
# course's own GPU verification is scripts/gpu-*.sh (a student runs setup.sh, fetch-deps.sh,
# render-slides.sh, slide_figures.py, plot_csv.py; the build uses the rest).
EXCLUDED_GLOBS = ("labs/*/results/*.log", "labs/*/results/tune-*", "labs/*/results/*/*.log", "scripts/gpu-*.sh")
DECK_IMAGES = PurePosixPath("slides/img")
_IMAGE_REF = re.compile(r"img/([\w.-]+\.(?:png|svg|jpe?g))")
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


def exported_text(text: str, name: str, release: bool = False) -> tuple[str, int]:
    """A text file as students receive it: solution blocks stubbed and (unless released) a deck's
    answer slides taken out; returns (text, solution blocks stubbed)."""
    n = 0
    if "SOLUTION" in text:
        text, n = strip_solutions(text, name)
    if not release:
        text, _ = decks.strip_answers(text)
    return text, n


def _read_text(path: Path) -> str | None:
    if path.suffix not in TEXT_SUFFIXES:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _changed_text(src: Path, release: bool = False) -> tuple[str | None, int]:
    """(the text students receive, solution blocks) when exporting changes src, else (None, 0):
    then the file travels byte for byte."""
    text = _read_text(src)
    if text is not None:
        new, n = exported_text(text, str(src), release)
        if new != text:
            return new, n
    return None, 0


def exported_bytes(src: Path) -> bytes:
    """What export_file writes for src (solution blocks stubbed), without writing it."""
    new, _ = _changed_text(src)
    return src.read_bytes() if new is None else new.encode("utf-8")


def export_file(src: Path, dst: Path, release: bool = False) -> int:
    """Copies one file, stripping solution blocks (and a deck's answer slides) from text files;
    returns the number of solution blocks."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    new, n = _changed_text(src, release)
    if new is None:
        shutil.copy2(src, dst)
        return 0
    dst.write_text(new, encoding="utf-8")
    shutil.copymode(src, dst)
    return n


def unshown_images(src: Path, files: list[PurePosixPath], release: bool = False) -> set[PurePosixPath]:
    """The deck images (slides/img/) that no exported text file shows: those drawn only for
    answer slides (or for nothing). Released solutions keep every image."""
    images = {rel for rel in files if rel.parent == DECK_IMAGES}
    if release or not images:
        return set()
    shown: set[str] = set()
    for rel in files:
        text = _read_text(src / rel)
        if text is not None and rel not in images:
            shown |= set(_IMAGE_REF.findall(exported_text(text, str(rel))[0]))
    return {rel for rel in images if rel.name not in shown}


def export(src: Path, dest: Path, release: bool = False) -> dict[str, int]:
    """Writes the handout of course `src` into `dest` (which must be empty or absent); returns
    {file: blocks stripped} for files that had solution blocks. `release`: the solutions are
    released (after the deadline): answer slides stay, and solutions/ is added."""
    src, dest = src.resolve(), dest.resolve()
    if dest == src or src in dest.parents and not _excluded(PurePosixPath(os.path.relpath(dest, src))):
        raise GpulabError(f"handout: {dest} is inside the course; choose a folder outside it or under build/")
    if dest.exists() and any(dest.iterdir()):
        raise GpulabError(f"handout: {dest} is not empty; remove it or choose another --out")
    stripped: dict[str, int] = {}
    files = exported_files(src)
    # Check every file before writing any: a marker error leaves no half-written handout.
    for rel in files:
        text = _read_text(src / rel)
        if text is not None and "SOLUTION" in text:
            strip_solutions(text, str(rel))
    unshown = unshown_images(src, files, release)   # once: it reads every text file of the course
    files = [rel for rel in files if rel not in unshown]
    for rel in files:
        n = export_file(src / rel, dest / destination(rel), release)
        if n:
            stripped[str(rel)] = n
    if release:
        for rel in released_solutions(src):
            dst = dest / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, dst)
    return stripped


def released_solutions(src: Path) -> list[PurePosixPath]:
    """What --release-solutions adds: every file of solutions/ (tracked ones in a git checkout)."""
    tracked = _git_files(src)
    if tracked is not None:
        return sorted(rel for rel in tracked if rel.parts[:1] == ("solutions",))
    root = src / "solutions"
    return sorted(PurePosixPath(p.relative_to(src).as_posix()) for p in root.rglob("*") if p.is_file()) \
        if root.is_dir() else []
