"""Grading a folder of submissions into a gradebook: resumable, parallel builds, serial GPU work.

Layout of OUT: OUT/<student>/{report.md, results.json, grade.json, logs/} and OUT/gradebook.csv.
A submission counts as graded when its grade.json exists, is newer than the submission, has no
grader error and is complete (regrade_reason): a row graded without a GPU is graded again by a
run that has one. The gradebook is rebuilt from every grade.json after each
submission and replaced atomically, so a crash never loses rows already graded.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from gpulab import gradebook, report
from gpulab.errors import EXIT_INTERNAL, GpulabError
from gpulab.scoring import SubmissionGrade
from gpulab.submission import submission_name

ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def find_submissions(folder: Path) -> list[Path]:
    """Every directory or archive directly in folder (hidden names skipped), sorted by name."""
    if not folder.is_dir():
        raise GpulabError(f"gpulab grade --batch: {folder} is not a folder of submissions")
    subs = [p for p in sorted(folder.iterdir()) if not p.name.startswith(".")
            and (p.is_dir() or p.name.lower().endswith(ARCHIVES))]
    names = [submission_name(p) for p in subs]
    dups = {n for n in names if names.count(n) > 1}
    if dups:
        raise GpulabError(f"gpulab grade --batch: two submissions are both named {sorted(dups)[0]!r} "
                          "(e.g. alice/ and alice.zip); keep one")
    return subs


def _mtime(p: Path) -> float:
    """Newest modification time in a submission (a folder's files can change without the folder)."""
    if p.is_file():
        return p.stat().st_mtime
    newest = p.stat().st_mtime
    for f in p.rglob("*"):
        try:
            newest = max(newest, f.lstat().st_mtime)
        except OSError:
            pass
    return newest


def regrade_reason(sub: Path, out: Path, gpu: bool) -> str:
    """Why the submission must be graded (again) into `out`, or '' when its row stands: no or an
    unreadable grade.json, a submission changed since, a grader error, or an incomplete grade
    that this run can complete (a row graded without a GPU, when this run has one)."""
    g = out / "grade.json"
    if not g.is_file():
        return "new"
    if g.stat().st_mtime < _mtime(sub):
        return "changed"
    doc = gradebook.read_grade(g)
    if doc is None:
        return "unreadable grade.json"
    status = gradebook.status_of(doc)
    if status == gradebook.ERROR and not gradebook.is_input_error(doc):
        return "error"
    if status == gradebook.INCOMPLETE_NOT_RUN or (status == gradebook.INCOMPLETE_NO_GPU and gpu):
        return status
    return ""


def error_grade(name: str, message: str, exit_code: int) -> dict[str, Any]:
    """grade.json of a submission that could not be graded; exit_code 2 (bad input) is not retried."""
    return {"name": name, "labs": [], "points": 0, "max_points": 0, "error": message, "exit_code": exit_code}


def _eta(done: int, total: int, elapsed: float) -> str:
    if done == 0:
        return "?"
    left = elapsed / done * (total - done)
    return f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m" if left >= 3600 else f"{int(left // 60)}m{int(left % 60):02d}s"


def run_batch(folder: Path, out: Path, grade_one: Callable[[Path, Path], SubmissionGrade], maxima: dict[str, float],
              jobs: int = 1, force: bool = False, gpu: bool = True,
              log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> int:
    """Grades every submission that needs it (regrade_reason; `gpu`: this run has a GPU); `maxima`
    is the course's max points per lab (the gradebook's columns). Returns how many failed with
    an error (not a low score)."""
    subs = find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in subs if force or regrade_reason(s, out / submission_name(s), gpu)]
    skipped = len(subs) - len(todo)
    log(f"gpulab grade --batch: {len(subs)} submissions, {skipped} already graded (--force regrades), "
        f"{len(todo)} to grade with {jobs} parallel build(s)")
    lock = threading.Lock()
    start, done, errors = time.monotonic(), 0, 0

    def one(sub: Path) -> tuple[str, str, bool]:
        name = submission_name(sub)
        dest = out / name
        try:
            g = grade_one(sub, dest)
            report.write_all(g, dest)
            return name, f"{g.points:g}/{g.max_points:g} in {g.seconds:.0f} s", False
        except GpulabError as e:
            msg, code = str(e), e.exit_code
        except Exception as e:  # noqa: BLE001 (one submission's crash must not stop the batch)
            msg, code = f"internal error: {e.__class__.__name__}: {e}", EXIT_INTERNAL
            (dest).mkdir(parents=True, exist_ok=True)
            report.write_atomic(dest / "traceback.txt", traceback.format_exc())
        report.write_atomic(dest / "grade.json", json.dumps(error_grade(name, msg, code), indent=2) + "\n")
        return name, f"ERROR: {msg.splitlines()[0] if msg else ''}", True

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, s) for s in todo]
        for fut in as_completed(futures):
            name, what, failed = fut.result()
            with lock:
                done += 1
                errors += failed
                gradebook.write(out, maxima)
                log(f"[{done}/{len(todo)}] {name}: {what}  (ETA {_eta(done, len(todo), time.monotonic() - start)})")
    path = gradebook.write(out, maxima)
    log(f"gradebook: {path}")
    return errors
