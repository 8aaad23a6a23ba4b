"""Grading one submission: a short pipeline over one module per check.

    files -> lint (lint.py) -> build (workspace/slots.py, in the sandbox's jail) -> reference
    (references.py: built and probed once per lab) -> correctness -> sanitizers -> conflicts ->
    performance -> library (checks/*.py, over one checks.lab_run.LabRun; the conflicts'
    profiles start beside correctness)

Every run of student code is its own process (sandbox/jail.py) with a timeout, so a crash or a hang
costs only that case. The untimed checks hold the machine-wide GPU lock shared and the timings
hold it alone (gpulock.py), so other submissions build and run their untimed checks beside this
one while no timing is ever disturbed; a case or sanitizer run that ran out of memory or time
beside them is run again alone. The time each phase took is kept in the lab's grade (`phases`)
and printed with it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import shutil
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

from gpulab import gpulock, proc, report, scoring, submission
from gpulab.checks import conflicts, correctness, library, performance, sanitizers
from gpulab.checks.lab_run import LabRun
from gpulab.checks.options import Options
from gpulab.errors import GpulabError
from gpulab.grading.references import References
from gpulab.lint import forbidden_constructs
from gpulab.paths import Course, read_cmake_cache
from gpulab.rubric import Rubric, load_rubric
from gpulab.sandbox.jail import Sandbox
from gpulab.scoring import FAIL, Check, LabGrade, ManualResult, StageGrade, SubmissionGrade
from gpulab.tools.locate import gpu_present
from gpulab.tools.runner import stage_table_of
from gpulab.tools.runner_json import Expect
from gpulab.workspace import shipped_reference
from gpulab.workspace.calling_build import INHERITED
from gpulab.workspace.slots import Workspace

MAX_IGNORED_LISTED = 200
MANUAL_MIN_WORDS = 20   # a write-up with fewer new words than this is the template, untouched
# What a self-grade (the student's handout: no hidden cases, no solutions/) cannot check, said in
# every report it writes so that nobody mistakes it for the instructor's grade.
SELF_GRADE_NO_HIDDEN = ("self-grade: visible cases only; the instructor's grade also runs hidden cases "
                        "(other sizes, seeds and distributions), so this score can drop")
SELF_GRADE_NO_REFERENCE = ("self-grade: no reference runner, so the performance points were not scored; "
                           "the instructor's grade times your code against the reference")
SELF_GRADE_SHIPPED = ("self-grade: performance is scored against the compiled reference shipped with the handout "
                      "(reference/), timed on this machine's GPU; the instructor's grade times it on the grading GPU")
# The checks in the order the pipeline runs them (after the build), each a module of checks/, and
# how each holds the GPU (gpulock.py): "shared" beside other submissions' untimed work, "alone" for
# timing, "" where the check's own threads take the lock (conflicts: the profiles started ahead).
SHARED, ALONE = "shared", "alone"
CHECKS = (("correctness", correctness, SHARED), ("sanitizers", sanitizers, SHARED), ("conflicts", conflicts, ""),
          ("performance", performance, ALONE), ("library", library, SHARED))
GPU_WAIT = "gpu-wait"   # the phase that counts the time the checks waited for the GPU lock


class Grader:
    """Grades submissions against one course; shared by the threads of a batch."""

    def __init__(self, course: Course, work: Path, options: Options, jobs: int = 1, grow_workspace: bool = True,
                 notify: Callable[[str], None] | None = None) -> None:
        self.course = course
        self.build = course.require_build()
        self.options = options
        self.workspace = Workspace(course.source, work, self.build, jobs, grow=grow_workspace,
                                   log=notify or options.log)
        self.sandbox = Sandbox.detect(options.sandbox)
        work.mkdir(parents=True, exist_ok=True)
        # Instructor data student code must not see: the course (solutions/, autograder/hidden/,
        # the rubrics), the build tree (the reference runners) and the grading workspace.
        self.sandbox.hide([course.source, self.build, work])
        self.gpu = gpu_present()
        self.device = self._device_name() if self.gpu else ""
        self.parallel = options.parallel or max(1, min(8, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._rubrics: dict[str, Rubric] = {}
        self.references = References(course, self.build, self.gpu, options, self.rubric)

    def hide(self, paths: list[Path]) -> None:
        """More folders student code must not see (a batch's other submissions and their grades)."""
        self.sandbox.hide(paths)

    @staticmethod
    def _device_name() -> str:
        res = proc.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], timeout=30)
        return res.stdout.strip().splitlines()[0] if res.ok and res.stdout.strip() else "GPU"

    # -- per-lab data, computed once ------------------------------------------------------
    def rubric(self, lab: str) -> Rubric:
        with self._lock:
            if lab not in self._rubrics:
                hidden = self.course.hidden_path(lab) if self.options.hidden else None
                self._rubrics[lab] = load_rubric(self.course.rubric_path(lab), hidden)
            return self._rubrics[lab]

    def graded_labs(self) -> list[str]:
        return [lab for lab in self.course.labs() if self.course.rubric_path(lab).is_file()]

    def stage_table(self, lab: str, student_runner: Path) -> dict[str, dict[str, Any]]:
        """Stage titles and where they run, from the prepared reference (trusted); without one,
        from the student's runner, which is student code and so runs in the sandbox."""
        table = self.references.stage_table(lab)
        if table:
            return table
        return stage_table_of(self.sandbox.run([str(student_runner), "list", "--format", "json"], timeout=60,
                                               untimed=True))

    # -- one submission -------------------------------------------------------------------
    def grade(self, path: Path, out: Path, labs: list[str] | None = None) -> SubmissionGrade:
        """Grades one submission into `out` (logs under out/logs); returns the grade."""
        start = time.monotonic()
        out.mkdir(parents=True, exist_ok=True)
        sub = SubmissionGrade(submission.submission_name(Path(path)), gpu=self.gpu, device=self.device,
                              started=dt.datetime.now().astimezone().isoformat(timespec="seconds"))
        sub.notes += self.sandbox.notes
        if not self.gpu:
            sub.notes.append("no GPU on this machine: the GPU parts were not run")
        with submission.unpacked(Path(path)) as up:
            files, links = submission.list_tree(up.root)
            links += up.links
            wanted = labs or self.graded_labs()
            found = {lab: submission.find_student_files(lab, self.rubric(lab).student_files, files, links)
                     for lab in wanted}
            if labs is None:
                wanted = [lab for lab in wanted if found[lab].any]
                if not wanted:
                    raise GpulabError(f"gpulab grade: {path}: "
                                      + submission.nothing_found(list(found.values()), files, links))
            taken: set[PurePosixPath] = set()
            for lab in wanted:
                taken |= set(found[lab].files.values())
                lg = self._grade_lab(lab, up.root, found[lab], out)
                manual = submission.find_student_files(lab, [m.file for m in self.rubric(lab).manual], files)
                taken |= set(manual.files.values())
                lg.manual = [self._manual(lab, m, up.root, manual.files.get(m.file)) for m in self.rubric(lab).manual]
                sub.labs.append(lg)
            ignored = [str(f) for f in files if f not in taken] + up.skipped
            sub.ignored = ignored[:MAX_IGNORED_LISTED] + (
                [f"... and {len(ignored) - MAX_IGNORED_LISTED} more"] if len(ignored) > MAX_IGNORED_LISTED else [])
        sub.seconds = time.monotonic() - start
        return sub

    def _manual(self, lab: str, item: Any, root: Path, rel: PurePosixPath | None) -> ManualResult:
        """Submitted, and more than the handout's template? The instructor grades the content."""
        res = ManualResult(item.id, item.file, item.points)
        if rel is None:
            res.summary = f"labs/{lab}/{item.file} not in the submission: the instructor will grade it 0"
            return res
        try:
            text = submission.read_student_file(root, rel).decode("utf-8", errors="replace")
        except GpulabError as e:
            res.summary = str(e)
            return res
        template_path = self.course.source / "labs" / lab / item.file
        template = template_path.read_text(encoding="utf-8", errors="replace") if template_path.is_file() else ""
        known = {ln.strip() for ln in template.splitlines()}
        words = sum(len(ln.split()) for ln in text.splitlines() if ln.strip() and ln.strip() not in known)
        if words < MANUAL_MIN_WORDS:
            res.status = "template"
            res.summary = (f"{rel}: {words} word(s) beyond the handout's template: looks unanswered "
                           f"(graded by the instructor)")
        else:
            res.status = "answered"
            res.summary = f"{rel}: {words} words beyond the template; graded by the instructor"
        return res

    def _grade_lab(self, lab: str, root: Path, found: submission.Found, out: Path) -> LabGrade:
        start = time.monotonic()
        rubric = self.rubric(lab)
        graded = [sp for sp in rubric.stages if self.options.stages is None or sp.id in self.options.stages]
        lg = LabGrade(lab, max_points_rubric=sum(sp.total for sp in graded if not sp.extra_credit),
                      extra_max_rubric=sum(sp.total for sp in graded if sp.extra_credit),
                      missing=list(found.missing), notes=list(found.notes))
        if self.options.stages is not None:
            lg.notes.append("partial grade: only stages " + ", ".join(sp.id for sp in graded))
        lg.taken = {k: str(v) for k, v in found.files.items()}
        if not any(c.hidden for c in rubric.cases):
            lg.notes.append(SELF_GRADE_NO_HIDDEN)
        try:
            self._pipeline(lg, rubric, root, found, out)
        except GpulabError as e:
            lg.status, lg.message = "error", str(e)
        lg.seconds = time.monotonic() - start
        if lg.phases:
            self.options.log(f"{lab}: " + report.format_phases(lg.phases))
        return lg

    def _pipeline(self, lg: LabGrade, rubric: Rubric, root: Path, found: submission.Found, out: Path) -> None:
        """files -> lint -> build -> reference -> the checks; stops at the first step that decides."""
        lab = lg.lab

        phase = functools.partial(scoring.add_time, lg.phases)

        if not found.any:
            lg.status = "missing"
            lg.message = "none of " + found.missing_paths() + " in the submission" + found.links_note()
            return
        contents = {name: submission.read_student_file(root, rel) for name, rel in found.files.items()}
        if found.missing:
            lg.notes.append("not in the submission, the starter was used: " + found.missing_paths() + found.links_note())
        with phase("lint"):
            problems = [p for name, data in contents.items() for p in forbidden_constructs(name, data)]
        if problems:
            lg.status = "rejected"
            lg.message = "the submission reaches outside its allowed files:\n" + "\n".join(problems)
            return
        bin_dir = self.sandbox.mkdtemp("gpulab-bin-")   # outside every folder hidden from student code
        try:
            self.options.log(f"{lab}: building the student runner")
            with contextlib.ExitStack() as held:
                # "workspace": waiting for a free slot and, the first time, exporting and
                # configuring it (a cold grade's extra cost); "build": the student runner itself.
                with phase("workspace"):
                    slot = held.enter_context(self.workspace.slot())
                with phase("build"):
                    br = slot.build_student(lab, list(rubric.student_files), contents, bin_dir,
                                            run=self._build_runner(slot))
                ws_root = slot.src
                if slot.note:
                    lg.notes.append(slot.note)
            lg.build_seconds = br.seconds
            if not br.ok or br.runner is None:
                lg.status, lg.message = "compile-error", br.log
                return
            if br.symbol_problems:
                lg.status = "rejected"
                lg.message = "the compiled submission replaces or patches code it must not:\n" + "\n".join(br.symbol_problems)
                return
            if br.symbol_note:
                lg.notes.append(br.symbol_note)
            self.sandbox.make_runnable(br.runner)
            logs = out / "logs" / lab
            logs.mkdir(parents=True, exist_ok=True)
            with phase("reference"):
                self.references.prepare(lab)
                lr = self._lab_run(lab, rubric, br.runner, logs, ws_root, contents)
                lr.library_kernels = br.library_kernels
            if any(sp.performance > 0 for sp in lr.points) and self.options.performance:
                if lr.reference is None:
                    lg.notes.append(SELF_GRADE_NO_REFERENCE)
                elif lr.reference == shipped_reference.shipped_path(self.course.source, lab):
                    lg.notes.append(SELF_GRADE_SHIPPED)
            # Untimed GPU work holds the GPU shared: correctness and sanitizer processes run in
            # parallel, the bank-conflict profiles (exact counts, checks/conflicts.py) beside
            # both, and the same phases of other submissions of a batch beside them. The
            # performance phase holds it alone, so no other grading job ever disturbs a timing.
            self.references.rows_on_gpu.set()
            uses_gpu = self.gpu and any(lr.on_gpu.values())
            with contextlib.ExitStack() as beside:
                if conflicts.Ahead.wanted(lr):
                    lr.conflicts_ahead = beside.enter_context(conflicts.Ahead(lr))
                if sanitizers.Ahead.wanted(lr):
                    lr.sanitizers_ahead = beside.enter_context(sanitizers.Ahead(lr))
                if library.Ahead.wanted(lr):
                    lr.library_ahead = beside.enter_context(library.Ahead(lr))
                for name, check, hold in CHECKS:
                    self.options.log(f"{lab}: {name}")
                    with contextlib.ExitStack() as gpu:
                        if hold and uses_gpu:
                            with phase(GPU_WAIT):
                                gpu.enter_context(gpulock.gpu_lock(shared=hold == SHARED))
                        with phase(name):
                            check.run(lr)
                    again = lr.again_alone.pop(name, None)
                    if again is not None and hold == SHARED and uses_gpu:
                        # Out of device memory or time beside other submissions: again, alone.
                        with phase(f"{name}-alone"), gpulock.gpu_lock():
                            again()
                    if name == "correctness" and lr.conflicts_ahead is not None:
                        lr.conflicts_ahead.decide()
                    if name == "correctness" and lr.library_ahead is not None:
                        lr.library_ahead.decide()
            order = {sp.id: i for i, sp in enumerate(rubric.stages)}
            lg.stages = sorted(lr.grades.values(), key=lambda g: order.get(g.id, 0))
        finally:
            shutil.rmtree(bin_dir, ignore_errors=True)

    def _lab_run(self, lab: str, rubric: Rubric, runner: Path, logs: Path, ws_root: Path,
                 contents: dict[str, bytes]) -> LabRun:
        """What the checks need: the graded stages the runner knows (an unknown one fails now),
        where each runs, and what a genuine runner document says (the trusted stage table)."""
        table = self.stage_table(lab, runner)
        points = [sp for sp in rubric.stages if self.options.stages is None or sp.id in self.options.stages]
        grades = {sp.id: StageGrade(sp.id, table.get(sp.id, {}).get("title", ""), sp.extra_credit) for sp in points}
        on_gpu = {sp.id: table.get(sp.id, {}).get("where", "gpu") == "gpu" for sp in points}
        unknown = [sp for sp in points if table and sp.id not in table]
        for sp in unknown:
            grades[sp.id].checks["correctness"] = Check("correctness", FAIL, 0, sp.correctness,
                                                        f"the runner has no stage {sp.id!r} (rubric error?)")
        expect = Expect(lab, {sid: str(info.get("title", "")) for sid, info in table.items()})
        files = {sid: Path(str(info.get("file", ""))).name for sid, info in table.items() if info.get("file")}
        return LabRun(lab, rubric, runner, self.references.runner(lab), self.references.verifier(lab), logs, ws_root,
                      contents,
                      [sp for sp in points if sp not in unknown], grades, on_gpu, expect, self.sandbox, self.options,
                      self.gpu, self.parallel,
                      reference_times=functools.partial(self.references.times, lab, rubric, device=self.device),
                      reference_untimed=self.references.untimed_reason(lab),
                      stage_files=files)

    def labs_in(self, subs: list[Path], labs: list[str]) -> list[str]:
        """The labs of `labs` that some of `subs` hands in, most submissions first (a folder is
        looked into; an archive, unpacked only when graded, counts for every lab)."""
        count = dict.fromkeys(labs, 0)
        wanted = {lab: self.rubric(lab).student_files for lab in labs}
        for sub in subs:
            for lab in submission.labs_handed_in(sub, wanted):
                count[lab] += 1
        return [lab for lab in sorted(labs, key=lambda l: -count[l]) if count[lab]]

    @contextlib.contextmanager
    def references_timed_ahead(self, subs: list[Path], labs: list[str]) -> Iterator[None]:
        """Grade `subs` inside this: the references of the labs they hand in (of `labs`) are timed
        while their first builds run (References.time_ahead), and that thread is joined at the end."""
        ahead = self.references.time_ahead(self.labs_in(subs, labs), self.device)
        try:
            yield
        finally:
            if ahead is not None:
                ahead.join()

    def _build_runner(self, slot: Any) -> Callable[..., proc.Result]:
        """How the student build runs: in the jail (Sandbox.build), the slot's build folder
        writable and its sources readable at their own paths, with the folders its CMake cache
        names (CMAKE_PREFIX_PATH, package folders, compilers) readable where they lie in a
        hidden folder (e.g. the GPU machine's .deps/ inside the course)."""
        cache = read_cmake_cache(slot.build)
        named = [Path(v) for key in INHERITED for v in cache.get(key, "").split(";") if v.startswith("/")]
        readable = [slot.src] + ([slot.prebuilt] if slot.prebuilt.is_dir() else []) + self.sandbox.hidden_paths(named)
        return lambda argv, timeout: self.sandbox.build(argv, timeout, slot.build, readable)


