"""Grading a folder of submissions into a gradebook: resumable, parallel builds, serial GPU work.

Layout of OUT: OUT/<student>/{report.md, results.json, grade.json, logs/} and OUT/gradebook.csv.
A submission counts as graded when its grade.json exists, is newer than the submission and has
no error; otherwise it is (re)graded. The gradebook is rebuilt from every grade.json after each
submission and replaced atomically, so a crash never loses rows already graded.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from gpulab import report
from gpulab.errors import GpulabError
from gpulab.scoring import LabGrade, SubmissionGrade
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


def already_graded(sub: Path, out: Path) -> bool:
    g = out / "grade.json"
    if not g.is_file() or g.stat().st_mtime < _mtime(sub):
        return False
    try:
        doc = json.loads(g.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return not doc.get("error")


def gradebook_rows(out: Path, labs: list[str]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) from every OUT/*/grade.json: student, one column per lab, total, max, status."""
    header = ["student"] + labs + ["total", "max", "status"]
    rows = []
    for g in sorted(out.glob("*/grade.json")):
        try:
            doc = json.loads(g.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            rows.append([g.parent.name] + [""] * len(labs) + ["", "", "unreadable grade.json"])
            continue
        by_lab = {l.get("lab"): l for l in doc.get("labs", [])}
        cells = [f"{by_lab[l]['points']:g}" if l in by_lab else "" for l in labs]
        status = "error: " + doc["error"] if doc.get("error") else "ok"
        not_run = sorted({n for l in doc.get("labs", []) for n in l.get("not_run", [])})
        if not_run and not doc.get("error"):
            status = "incomplete: not run " + "; ".join(not_run)
        rows.append([doc.get("name", g.parent.name)] + cells +
                    [f"{doc.get('points', 0):g}", f"{doc.get('max_points', 0):g}", status])
    return header, rows


def write_gradebook(out: Path, labs: list[str]) -> Path:
    header, rows = gradebook_rows(out, labs)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    path = out / "gradebook.csv"
    report.write_atomic(path, buf.getvalue())
    return path


def error_grade(name: str, message: str) -> dict[str, Any]:
    return {"name": name, "labs": [], "points": 0, "max_points": 0, "error": message}


def _eta(done: int, total: int, elapsed: float) -> str:
    if done == 0:
        return "?"
    left = elapsed / done * (total - done)
    return f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m" if left >= 3600 else f"{int(left // 60)}m{int(left % 60):02d}s"


def run_batch(folder: Path, out: Path, grade_one: Callable[[Path, Path], SubmissionGrade], labs: list[str],
              jobs: int = 1, force: bool = False, log: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> int:
    """Grades every submission; returns how many failed with an error (not a low score)."""
    subs = find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    todo = [s for s in subs if force or not already_graded(s, out / submission_name(s))]
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
            msg = str(e)
        except Exception as e:  # noqa: BLE001 (one submission's crash must not stop the batch)
            msg = f"internal error: {e.__class__.__name__}: {e}"
            (dest).mkdir(parents=True, exist_ok=True)
            report.write_atomic(dest / "traceback.txt", traceback.format_exc())
        report.write_atomic(dest / "grade.json", json.dumps(error_grade(name, msg), indent=2) + "\n")
        return name, f"ERROR: {msg.splitlines()[0] if msg else ''}", True

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, s) for s in todo]
        for fut in as_completed(futures):
            name, what, failed = fut.result()
            with lock:
                done += 1
                errors += failed
                write_gradebook(out, labs)
                log(f"[{done}/{len(todo)}] {name}: {what}  (ETA {_eta(done, len(todo), time.monotonic() - start)})")
    path = write_gradebook(out, labs)
    log(f"gradebook: {path}")
    return errors
