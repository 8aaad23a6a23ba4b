"""The gradebook of a batch: one row per student from every OUT/<student>/grade.json.

Every row has the same columns and the same max (the course's, from the rubrics of the batch's
labs), so a spreadsheet can sort and sum them: a lab not submitted, not built or not gradable is 0,
never a blank. The status column says what happened:

- graded          every check ran (a lab may still score 0: see detail)
- compile-error   a lab did not build (detail names it)
- rejected        a lab reached outside its files (forbidden include, patched symbols)
- incomplete: no GPU     graded where there was no GPU: the GPU parts are 0 and will be graded
                         by the next run on a machine that has one
- incomplete: not run    a check could not run (ncu permission, no compute-sanitizer): regraded
- error           the submission could not be graded at all (detail says why)

Checks turned off on the command line (--no-conflicts, ...) are the instructor's choice, not an
incomplete grade: the row is `graded` and detail lists them.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from gpulab import report
from gpulab.errors import EXIT_USAGE, GpulabError
from gpulab.rubric import load_rubric
from gpulab.scoring import rounded

GRADEBOOK = "gradebook.csv"
BATCH_JSON = "batch.json"    # OUT/batch.json: the gradebook's labs and their max points
GRADED, COMPILE_ERROR, REJECTED, ERROR = "graded", "compile-error", "rejected", "error"
INCOMPLETE_NO_GPU, INCOMPLETE_NOT_RUN = "incomplete: no GPU", "incomplete: not run"
NO_GPU_REASON = "(no GPU)"   # tools/runner_json.NO_GPU as it appears in LabGrade.not_run()
DISABLED_REASON = "(disabled ("


@dataclass
class Row:
    student: str
    cells: dict[str, float]     # lab -> points (0 when not submitted / not built)
    total: float
    max: float
    status: str
    detail: str
    gpu: str                    # the device that graded it ("none" without a GPU)

    def csv(self, labs: list[str]) -> list[str]:
        return ([self.student] + [f"{self.cells.get(l, 0):g}" for l in labs]
                + [f"{self.total:g}", f"{self.max:g}", self.status, self.gpu, self.detail])


def header(labs: list[str]) -> list[str]:
    return ["student"] + labs + ["total", "max", "status", "gpu", "detail"]


def read_grade(path: Path) -> dict[str, Any] | None:
    """grade.json, or None when it is missing or unreadable (then the row is graded again)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def is_input_error(doc: dict[str, Any]) -> bool:
    """An error the submission itself causes (empty, not an archive, too big): grading it again
    gives the same answer until the student's files change."""
    return bool(doc.get("error")) and doc.get("exit_code") == EXIT_USAGE


def _not_run(doc: dict[str, Any]) -> list[str]:
    return [f"{lab.get('lab')}: {n}" for lab in doc.get("labs", []) if isinstance(lab, dict)
            for n in lab.get("not_run", []) if DISABLED_REASON not in n]


def status_of(doc: dict[str, Any]) -> str:
    """One of the statuses in this module's docstring (without the error's message)."""
    if doc.get("error"):
        return ERROR
    not_run = _not_run(doc)
    if any(NO_GPU_REASON in n for n in not_run):
        return INCOMPLETE_NO_GPU
    if not_run:
        return INCOMPLETE_NOT_RUN
    statuses = {lab.get("status", GRADED) for lab in doc.get("labs", []) if isinstance(lab, dict)}
    for s in (ERROR, COMPILE_ERROR, REJECTED):
        if s in statuses:
            return s
    return GRADED


def row_of(doc: dict[str, Any] | None, name: str, maxima: dict[str, float]) -> Row:
    """The gradebook row of one grade.json (None: unreadable) against the course's lab maxima."""
    course_max = sum(maxima.values())
    if doc is None:
        return Row(name, {}, 0, course_max, ERROR, "grade.json unreadable: graded again by the next run", "")
    by_lab = {l.get("lab"): l for l in doc.get("labs", []) if isinstance(l, dict)}
    cells: dict[str, float] = {}
    detail: list[str] = []
    for lab, lab_max in maxima.items():
        l = by_lab.get(lab)
        if l is None:
            cells[lab] = 0
            if not doc.get("error"):
                detail.append(f"{lab}: not submitted")
            continue
        cells[lab] = float(l.get("points", 0))
        if l.get("status", GRADED) != GRADED:
            # The message's first line with content: "compile error:" is only its header.
            lines = [x.strip() for x in str(l.get("message", "")).splitlines() if x.strip()]
            first = [x for x in lines if not x.endswith(":")][:1] or lines[:1]
            detail.append(f"{lab}: {l.get('status')}" + (f" ({first[0][:120]})" if first else ""))
        if l.get("max_points") is not None and abs(float(l["max_points"]) - lab_max) > 1e-9 \
                and l.get("status", GRADED) == GRADED:
            detail.append(f"{lab}: graded out of {float(l['max_points']):g}, not {lab_max:g} (--stage or another rubric)")
    if doc.get("error"):
        detail.insert(0, str(doc["error"]).splitlines()[0] if str(doc["error"]).strip() else "error")
    detail += [f"not run {n}" for n in _not_run(doc)]
    detail += [f"{l.get('lab')}: not run {n}" for l in by_lab.values()
               for n in l.get("not_run", []) if DISABLED_REASON in n]
    gpu = str(doc.get("device") or ("none" if not doc.get("error") else ""))
    return Row(str(doc.get("name", name)), cells, rounded(sum(cells.values())), course_max,
               status_of(doc), "; ".join(detail), gpu)


def rows(out: Path, maxima: dict[str, float]) -> list[Row]:
    return [row_of(read_grade(g), g.parent.name, maxima) for g in sorted(out.glob("*/grade.json"))]


def write(out: Path, maxima: dict[str, float]) -> Path:
    """OUT/gradebook.csv, replaced atomically (a reader never sees half of it)."""
    labs = list(maxima)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header(labs))
    w.writerows(r.csv(labs) for r in rows(out, maxima))
    path = out / GRADEBOOK
    report.write_atomic(path, buf.getvalue())
    return path


def course_maxima(course: Any, labs: Sequence[str] | None, stages: Sequence[str] | None) -> dict[str, float]:
    """The gradebook's columns: each lab's max points, its core (extra credit comes on top, as in
    a grade; of the --stage's graded, if given)."""
    chosen = list(labs) if labs else [l for l in course.labs() if course.rubric_path(l).is_file()]
    if not chosen:
        raise GpulabError("gpulab grade --batch: no lab has a rubric (labs/<lab>/rubric.toml)")
    return {lab: sum(sp.total for sp in load_rubric(course.rubric_path(lab)).stages
                     if not sp.extra_credit and (not stages or sp.id in stages))
            for lab in chosen}


def write_batch_info(out: Path, maxima: dict[str, float]) -> None:
    """OUT/batch.json: the gradebook's labs and max points, so that `gpulab gradebook OUT` (run by
    the final Slurm job, or by hand) rebuilds the same columns without the grading options."""
    report.write_atomic(out / BATCH_JSON, json.dumps({"max_points": maxima}, indent=2) + "\n")


def read_batch_info(out: Path) -> dict[str, float]:
    try:
        doc = json.loads((out / BATCH_JSON).read_text(encoding="utf-8"))
        maxima = doc["max_points"]
        if isinstance(maxima, dict) and all(isinstance(v, (int, float)) for v in maxima.values()):
            return {str(k): float(v) for k, v in maxima.items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise GpulabError(f"gpulab gradebook: {out / BATCH_JSON} is missing or unreadable: is {out} the --out "
                      "of a gpulab grade --batch?")
