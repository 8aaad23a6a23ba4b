"""`gpulab submit LAB`: bundle exactly what is graded of one lab — its student files and its
write-up (answers.md) — check them, and write one archive that `gpulab grade` accepts.

Errors (nothing written, exit 2): a file missing, a link instead of a file, a file too large, a
student file the grader's include lint refuses. Warnings (the archive is written, and they are
printed): stages that still say `gpulab::not_implemented`, an answers.md whose name line or
questions are empty. The archive is then opened again and searched with the grader's own file
finder (submission.find_student_files): every file must be found, at the path the grader takes.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpulab import lint, submission
from gpulab.errors import EXIT_USAGE, GpulabError
from gpulab.paths import Course

TODO = re.compile(r'gpulab::not_implemented\(\s*"([^"]+)"')
QUESTION = re.compile(r"^##\s+(\d+)\.\s*(.*)$")


@dataclass
class Bundle:
    lab: str
    files: dict[str, Path] = field(default_factory=dict)     # name in labs/<lab>/ -> file on disk
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _graded_files(course: Course, lab: str) -> tuple[list[str], list[str]]:
    """(student files, write-up files) of a lab, from its rubric and manifest."""
    from gpulab.rubric import load_rubric  # noqa: PLC0415
    path = course.rubric_path(lab)
    if not path.is_file():
        known = ", ".join(l for l in course.labs() if course.rubric_path(l).is_file()) or "none"
        raise GpulabError(f"gpulab submit: no lab {lab!r} (labs: {known})", EXIT_USAGE)
    rubric = load_rubric(path)
    return list(rubric.student_files), [m.file for m in rubric.manual]


def check_answers(text: str) -> list[str]:
    """Warnings for a write-up that looks unfinished: no name, questions with no answer."""
    warnings = []
    name = re.search(r"^Name:[ \t]*(.*)$", text, re.MULTILINE)
    if name is not None and not name.group(1).strip():
        warnings.append("answers.md: the Name: line is empty")
    empty, current, body = [], None, []
    for line in text.splitlines() + ["## 0. end"]:
        m = QUESTION.match(line)
        if m:
            if current is not None and not any(l.strip() for l in body):
                empty.append(current)
            current, body = m.group(1), []
        elif current is not None:
            body.append(line)
    if empty:
        warnings.append(f"answers.md: question(s) {', '.join(empty)} unanswered (one of an extra-credit stage you did "
                        "not do may stay empty)")
    return warnings


def collect(course: Course, lab: str, source: Path | None = None) -> Bundle:
    """The lab's graded files from labs/<lab>/ (or `source`), checked."""
    student, manual = _graded_files(course, lab)
    folder = source if source is not None else course.source / "labs" / lab
    b = Bundle(lab)
    todo: list[str] = []
    for name in student + manual:
        p = folder / name
        if p.is_symlink():
            b.errors.append(f"{p}: {submission.LINKS_REFUSED}")
        elif not p.is_file():
            b.errors.append(f"{p}: missing (the lab's graded files are {', '.join(student + manual)})")
        elif p.stat().st_size > submission.MAX_STUDENT_FILE:
            b.errors.append(f"{p}: {p.stat().st_size} bytes, more than the grader reads "
                            f"({submission.MAX_STUDENT_FILE})")
        else:
            b.files[name] = p
            data = p.read_bytes()
            if name in student:
                b.errors += lint.forbidden_constructs(f"labs/{lab}/{name}", data)
                todo += TODO.findall(data.decode("utf-8", errors="replace"))
            else:
                b.warnings += check_answers(data.decode("utf-8", errors="replace"))
    if todo:
        b.warnings.append(f"still TODO (gpulab::not_implemented): {', '.join(sorted(set(todo)))}: "
                          "those stages score 0")
    return b


def write(b: Bundle, out: Path) -> None:
    """The archive: labs/<lab>/<file> for each graded file, nothing else."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, p in sorted(b.files.items()):
            info = zipfile.ZipInfo(str(PurePosixPath("labs", b.lab, name)), date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, p.read_bytes())
    tmp.replace(out)


def verify(b: Bundle, archive: Path) -> list[str]:
    """Problems the grader would have with the archive: every file found where it is taken from,
    byte for byte, and nothing else in it."""
    problems = []
    with submission.unpacked(archive) as up:
        files, links = submission.list_tree(up.root)
        found = submission.find_student_files(b.lab, list(b.files), files, links)
        problems += [f"{name}: not found in the archive" for name in found.missing] + found.notes
        for name, rel in found.files.items():
            if submission.read_student_file(up.root, rel) != b.files[name].read_bytes():
                problems.append(f"{name}: differs in the archive")
        extra = sorted(set(files) - set(found.files.values()))
        problems += [f"{p}: not a graded file" for p in extra]
    return problems
