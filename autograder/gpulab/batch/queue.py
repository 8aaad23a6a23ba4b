"""The batch's queue: the submissions of a folder, which of them need grading (regrade_reason), and
the loop every grader runs over them (work): a thread pool of a plain batch, a --gpus worker
process, a Slurm task. Each submission is claimed with a lock file (claim) before it is graded,
and its files are written grade.json last, each atomically (grade_into).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from gpulab import locks, report
from gpulab.batch import gradebook
from gpulab.errors import EXIT_INTERNAL, EXIT_USAGE, GpulabError
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


# Submissions a grader with a GPU holds at once (fewer if --jobs says so): enough that the next
# ones build while the GPU works, and that the untimed phases of several rows (correctness,
# sanitizers, conflicts, library: the GPU lock held shared, gpulock.py) fill the GPU beside each
# other while each row's timing runs alone. More only slowed the start and the balance: on two
# H200s (2026-11-23, when every GPU phase was serial) --jobs 12 put 6 rows in flight per GPU, 12
# cold builds shared the CPUs for ~50 s before any GPU work, and each worker had claimed its whole
# share at the start, so a GPU whose rows were longer could not hand any over (1.38x over one GPU).
IN_FLIGHT_PER_GPU = 4


ADMIN = ".batch"          # OUT/.batch: claims, worker logs, Slurm scripts (hidden from the gradebook)

Event = dict[str, Any]     # {"ev": "start"|"done", "worker": label, "name": student, "what": ..., "failed": bool}


def in_flight(jobs: int, gpu: bool) -> int:
    """Submissions one grader holds at once: --jobs, at most IN_FLIGHT_PER_GPU with a GPU."""
    return max(1, min(jobs, IN_FLIGHT_PER_GPU) if gpu else jobs)


@contextlib.contextmanager
def claim(out: Path, name: str) -> Iterator[bool]:
    """True while this process holds the submission (a non-blocking lock on OUT/.batch/claims/
    <name>, locks.FileLock); False when another grader holds it. The lock dies with its holder."""
    lock = locks.FileLock(out / ADMIN / "claims" / f"{name}.lock")
    got = lock.acquire(wait=False)
    try:
        yield got
    finally:
        lock.release()


def grade_into(sub: Path, dest: Path, grade_one: Callable[[Path, Path], SubmissionGrade]) -> tuple[str, bool]:
    """Grades one submission and writes its files (grade.json last, each atomically: a grader
    killed half-way leaves the previous row or none, never half of one). (summary, failed)."""
    name = submission_name(sub)
    try:
        g = grade_one(sub, dest)
        report.write_all(g, dest)
        return f"{g.points:g}/{g.max_points:g} in {g.seconds:.0f} s", False
    except GpulabError as e:
        msg, code = str(e), e.exit_code
    except Exception as e:  # noqa: BLE001 (one submission's crash must not stop the batch)
        msg, code = f"internal error: {e.__class__.__name__}: {e}", EXIT_INTERNAL
        dest.mkdir(parents=True, exist_ok=True)
        report.write_atomic(dest / "traceback.txt", traceback.format_exc())
    # The student's view too (results.json, report.md), as for a single grade (commands/grade.py).
    report.write_failure(dest, name, msg.removeprefix("gpulab grade: "), grader_fault=code != EXIT_USAGE)
    report.write_atomic(dest / "grade.json", json.dumps(report.error_grade(name, msg, code), indent=2) + "\n")
    return f"ERROR: {msg.splitlines()[0] if msg else ''}", True


def to_grade(subs: Sequence[Path], out: Path, force: bool, gpu: bool) -> list[Path]:
    return [s for s in subs if force or regrade_reason(s, out / submission_name(s), gpu)]


def _graded_before(dest: Path, t: float) -> bool:
    try:
        return (dest / "grade.json").stat().st_mtime < t
    except OSError:
        return True


def work(subs: Sequence[Path], out: Path, grade_one: Callable[[Path, Path], SubmissionGrade],
         maxima: dict[str, float], emit: Callable[[Event], None], worker: str = "", jobs: int = 1,
         force_before: float = 0.0, gpu: bool = True, workers: int = 1) -> int:
    """One grader's loop (a plain batch, a --gpus worker, a Slurm task): every submission of
    `subs` that needs grading and that no other grader holds, `jobs` at a time; `force_before`
    (--force): also every row written before that time (so that --force with several workers
    regrades each submission once, not once per worker). Returns errors.

    A grader holds a claim from its submission's build to its last GPU check, so one with
    `jobs` threads takes up to `jobs` submissions at once (with a GPU: at most
    IN_FLIGHT_PER_GPU, claimed one by one as earlier ones finish). Among `workers` graders sharing the
    queue (--gpus), each holds at most its share of what is left to grade: on a two-GPU H200
    host one worker with --jobs 12 claimed all 12 submissions of a batch before the other
    started, and graded them all on its GPU while the other stood idle (2026-11-23)."""
    errors = 0
    lock = threading.Lock()

    def one(sub: Path) -> None:
        nonlocal errors
        name = submission_name(sub)
        with claim(out, name) as mine:
            # Checked again under the claim: another grader may have finished it meanwhile.
            if not mine or not (_graded_before(out / name, force_before) or regrade_reason(sub, out / name, gpu)):
                return
            emit({"ev": "start", "worker": worker, "name": name})
            what, failed = grade_into(sub, out / name, grade_one)
            with lock:
                errors += failed
                gradebook.write(out, maxima)
            emit({"ev": "done", "worker": worker, "name": name, "what": what, "failed": failed})

    threads = in_flight(jobs, gpu)
    if workers > 1:
        pending = len(to_grade(subs, out, bool(force_before), gpu))
        threads = max(1, min(threads, math.ceil(pending / workers)))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(one, s) for s in subs]:
            f.result()
    return errors
