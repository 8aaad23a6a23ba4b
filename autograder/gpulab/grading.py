"""Grading one submission: find the files, build the student runner, run every check, score.

Every run of student code is its own process (sandbox.py) with a timeout, so a crash or a hang
costs only that case. GPU work holds the machine-wide GPU lock (gpulock.py), so builds of other
submissions may run in parallel while timings stay clean.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from gpulab import gpulock, ncu, proc, sanitizer, scoring, shipped_reference, submission, tools
from gpulab.errors import GpulabError
from gpulab.paths import Course
from gpulab.rubric import Case, Rubric, load_rubric
from gpulab.sandbox import Sandbox, copy_private_files
from gpulab.scoring import (FAIL, NOT_RUN, PASS, CaseResult, Check, LabGrade, ManualResult, StageGrade,
                            SubmissionGrade)
from gpulab.workspace import Workspace

MAX_IGNORED_LISTED = 200
NO_GPU = "no GPU"
MANUAL_MIN_WORDS = 20   # a write-up with fewer new words than this is the template, untouched
# What a self-grade (the student's handout: no hidden cases, no solutions/) cannot check, said in
# every report it writes so that nobody mistakes it for the instructor's grade.
SELF_GRADE_NO_HIDDEN = ("self-grade: visible cases only; the instructor's grade also runs hidden cases "
                        "(other sizes, seeds and distributions), so this score can drop")
SELF_GRADE_NO_REFERENCE = ("self-grade: no reference runner, so the performance points were not scored; "
                           "the instructor's grade times your code against the reference")
SELF_GRADE_SHIPPED = ("self-grade: performance is scored against the compiled reference shipped with the handout "
                      "(reference/), timed on this machine's GPU; the instructor's grade times it on the grading GPU")


@dataclass
class Options:
    sanitizers: bool = True
    conflicts: bool = True
    performance: bool = True
    hidden: bool = True
    sandbox: bool = True
    stages: set[str] | None = None    # grade only these stages (partial grade: the others are left out)
    parallel: int = 0                 # concurrent correctness processes (0: min(8, CPUs))
    case_timeout: float | None = None # overrides the rubric's [limits] case_timeout
    verify_timing: bool = True        # cross-check the student's reported times with ncu's kernel time
    log: Callable[[str], None] = lambda msg: None


# A stage's honest median (events around all its work) is never far below the kernel time
# Nsight Compute measures for it; well below means the student's process did not measure it.
TIMING_TRUST = 0.8


# ----------------------------------------------------------------------------- runner output

def parse_runner_json(text: str) -> dict[str, Any] | None:
    """The runner's JSON document, even when student code printed other lines before it: the
    last top-level object that has "results" (or "stage" for verify) wins."""
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, dict) else None
    except json.JSONDecodeError:
        pass
    dec = json.JSONDecoder()
    found = None
    for m in re.finditer(r"(?m)^\{", text):
        try:
            doc, _ = dec.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and ("results" in doc or "status" in doc):
            found = doc
    return found


def stage_result(doc: dict[str, Any] | None, stage: str) -> dict[str, Any] | None:
    if not doc:
        return None
    return next((r for r in doc.get("results", []) if isinstance(r, dict) and r.get("stage") == stage), None)


def problem_matches(doc: dict[str, Any], case: Case) -> bool:
    """The runner echoes the problem it ran; a document for another problem is not this case's."""
    p = doc.get("problem")
    if not isinstance(p, dict):
        return False
    dist = str(p.get("distribution", case.distribution)).replace("_", "-")
    return p.get("n") == case.size.n and p.get("seed") == case.seed and dist == case.distribution


@dataclass
class Expect:
    """What a genuine runner document of this lab says (from the trusted stage table): a document
    that differs was not printed by the runner, whatever it claims."""

    lab: str = ""
    titles: dict[str, str] = field(default_factory=dict)

    def forged(self, doc: dict[str, Any], row: dict[str, Any], stage: str) -> str:
        """Why this document cannot be the runner's, or '' when it looks genuine."""
        if self.lab and doc.get("lab") != self.lab:
            return f"lab {doc.get('lab')!r}"
        if doc.get("implementation") != "student" or "device" not in doc or "results" not in doc:
            return "not the runner's document shape"
        want = self.titles.get(stage)
        if want is not None and row.get("title") != want:
            return f"stage title {row.get('title')!r}"
        return ""


def case_outcome(res: proc.Result, stage: str, case: Case, doc: dict[str, Any] | None = None,
                 expect: Expect | None = None) -> CaseResult:
    """Turns one case's process into a verdict. The JSON must be the runner's (shape, lab, stage
    title), name this stage and problem, say pass, and the process must exit 0: else no pass."""
    cr = CaseResult(case.name, case.hidden, "error", seconds=res.seconds)
    if res.timed_out:
        cr.status, cr.message = "timeout", f"no result within {res.seconds:.0f} s (hang?)"
        return cr
    doc = doc if doc is not None else parse_runner_json(res.stdout)
    r = stage_result(doc, stage)
    if res.returncode < 0:
        cr.status, cr.message = "crash", f"the runner was {res.describe_exit()}"
        return cr
    if r is None:
        tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
        cr.message = f"no result ({res.describe_exit()})" + (": " + " | ".join(tail)[:300] if tail else "")
        return cr
    status, message = str(r.get("status", "")), str(r.get("message", ""))
    if status == "pass":
        why = (expect or Expect()).forged(doc, r, stage)
        if res.returncode != 0 or not problem_matches(doc, case) or why:
            cr.message = ("reported pass, but " + (why or f"{res.describe_exit()} / problem mismatch")
                          + ": not the runner's verdict")
            return cr
    if status == "skipped":
        cr.status, cr.message = "not-run", message or NO_GPU
        return cr
    cr.status = status if status in ("pass", "fail", "todo", "error") else "error"
    cr.message = message
    return cr


# ----------------------------------------------------------------------------- the grader

class Grader:
    """Grades submissions against one course; shared by the threads of a batch."""

    def __init__(self, course: Course, work: Path, options: Options, jobs: int = 1) -> None:
        self.course = course
        self.build = course.require_build()
        self.options = options
        self.workspace = Workspace(course.source, work, self.build, jobs)
        self.sandbox = Sandbox.detect(options.sandbox)
        work.mkdir(parents=True, exist_ok=True)
        # Instructor data student code must not see: the course (solutions/, autograder/hidden/,
        # the rubrics), the build tree (the reference runners) and the grading workspace.
        self.sandbox.hide([course.source, self.build, work])
        self.gpu = tools.gpu_present()
        self.device = self._device_name() if self.gpu else ""
        self.parallel = options.parallel or max(1, min(8, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._rubrics: dict[str, Rubric] = {}
        self._refs: dict[str, Path | None] = {}
        self._tables: dict[str, dict[str, dict[str, Any]]] = {}
        self._verify: dict[str, Path | None] = {}

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

    def reference(self, lab: str) -> Path | None:
        """The reference runner: the calling build's (built once) when solutions/<lab> exists, else
        the compiled one shipped in the handout (reference/, see shipped_reference.py); None without
        either."""
        with self._lock:
            if lab in self._refs:
                return self._refs[lab]
            ref = None
            existing = self.course.runner(lab, "reference")
            shipped = shipped_reference.shipped_path(self.course.source, lab)
            if not (self.course.source / "solutions" / lab).is_dir():
                ref = shipped if shipped.is_file() and os.access(shipped, os.X_OK) else None
            elif not self.gpu:
                # Without a GPU nothing is timed: use a built reference for stage titles only, and
                # do not start a build in the calling tree.
                ref = existing if existing.is_file() else None
            else:
                path = existing
                res = proc.run(["cmake", "--build", str(self.build), "--target", path.name], timeout=900)
                if path.is_file():
                    ref = path
                    if not res.ok:
                        self.options.log(f"could not rebuild {path.name}; using the existing binary")
                else:
                    self.options.log(f"reference runner for {lab} did not build: performance not graded")
            self._refs[lab] = ref
            return ref

    def stage_table(self, lab: str, fallback_runner: Path) -> dict[str, dict[str, Any]]:
        """Stage titles and where they run, from the reference runner (trusted) or the student's."""
        with self._lock:
            if lab in self._tables:
                return self._tables[lab]
        runner = self.reference(lab) or fallback_runner
        argv = [str(runner), "list", "--format", "json"]
        # Without a reference the student's runner answers: it is student code, so it is sandboxed.
        res = proc.run(argv, timeout=60) if runner != fallback_runner else self.sandbox.run(argv, timeout=60)
        table: dict[str, dict[str, Any]] = {}
        try:
            doc = json.loads(res.stdout)
            table = {s["id"]: s for s in doc.get("stages", []) if isinstance(s, dict) and "id" in s}
        except (json.JSONDecodeError, KeyError, TypeError):
            pass
        with self._lock:
            if runner != fallback_runner:
                self._tables[lab] = table
        return table

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
            files = submission.list_files(up.root)
            wanted = labs or self.graded_labs()
            found = {lab: submission.find_student_files(lab, self.rubric(lab).student_files, files) for lab in wanted}
            if labs is None:
                wanted = [lab for lab in wanted if found[lab].any]
                if not wanted:
                    looked = ", ".join(f"labs/{l}/{f}" for l in self.graded_labs() for f in self.rubric(l).student_files)
                    raise GpulabError(f"gpulab grade: {path}: no lab's student files found (looked for {looked})")
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
        if any(sp.performance > 0 for sp in graded) and self.options.performance:
            ref = self.reference(lab)
            if ref is None:
                lg.notes.append(SELF_GRADE_NO_REFERENCE)
            elif ref == shipped_reference.shipped_path(self.course.source, lab):
                lg.notes.append(SELF_GRADE_SHIPPED)
        try:
            self._grade_lab_inner(lg, rubric, root, found, out)
        except GpulabError as e:
            lg.status, lg.message = "error", str(e)
        lg.seconds = time.monotonic() - start
        return lg

    def _grade_lab_inner(self, lg: LabGrade, rubric: Rubric, root: Path, found: submission.Found, out: Path) -> None:
        lab = lg.lab
        if not found.any:
            lg.status = "missing"
            lg.message = "none of " + ", ".join(f"labs/{lab}/{f}" for f in rubric.student_files) + " in the submission"
            return
        contents = {name: submission.read_student_file(root, rel) for name, rel in found.files.items()}
        if found.missing:
            lg.notes.append("not in the submission, the starter was used: " + ", ".join(found.missing))
        problems = [p for name, data in contents.items() for p in forbidden_constructs(name, data)]
        if problems:
            lg.status = "rejected"
            lg.message = "the submission reaches outside its allowed files:\n" + "\n".join(problems)
            return
        bin_dir = self.sandbox.mkdtemp("gpulab-bin-")   # outside every folder hidden from student code
        try:
            self.options.log(f"{lab}: building the student runner")
            with self.workspace.slot() as slot:
                br = slot.build_student(lab, list(rubric.student_files), contents, bin_dir)
                ws_root = slot.src
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
            lg.stages = self._grade_stages(lab, rubric, br.runner, logs, ws_root, contents)
        finally:
            shutil.rmtree(bin_dir, ignore_errors=True)

    # -- the checks -------------------------------------------------------------------------
    def _grade_stages(self, lab: str, rubric: Rubric, runner: Path, logs: Path, ws_root: Path,
                      contents: dict[str, bytes]) -> list[StageGrade]:
        """Every check of every graded stage. GPU work holds the GPU lock for the whole lab so
        that no other grading job disturbs the timings; inside it, independent correctness and
        sanitizer processes run in parallel (they are not timed)."""
        table = self.stage_table(lab, runner)
        points = [sp for sp in rubric.stages if self.options.stages is None or sp.id in self.options.stages]
        grades = {sp.id: StageGrade(sp.id, table.get(sp.id, {}).get("title", ""), sp.extra_credit) for sp in points}
        on_gpu = {sp.id: table.get(sp.id, {}).get("where", "gpu") == "gpu" for sp in points}
        unknown = [sp for sp in points if table and sp.id not in table]
        for sp in unknown:
            grades[sp.id].checks["correctness"] = Check("correctness", FAIL, 0, sp.correctness,
                                                        f"the runner has no stage {sp.id!r} (rubric error?)")
        points = [sp for sp in points if sp not in unknown]
        lock = gpulock.gpu_lock() if self.gpu and any(on_gpu.values()) else _nullcontext()
        with lock:
            self.options.log(f"{lab}: correctness ({len(rubric.cases)} cases x {len(points)} stages)")
            expect = Expect(lab, {sid: str(info.get("title", "")) for sid, info in table.items()})
            cases = self._run_cases(points, rubric, runner, on_gpu, expect)
            for sp in points:
                self._correctness(grades[sp.id], sp, rubric, cases.get(sp.id, []), on_gpu[sp.id])
            self.options.log(f"{lab}: sanitizers")
            self._sanitizers(points, grades, rubric, runner, logs, ws_root, on_gpu)
            for sp in points:
                if sp.conflict_free > 0:
                    self.options.log(f"{lab}/{sp.id}: bank conflicts (ncu)")
                    grades[sp.id].checks["conflict_free"] = self._conflicts(
                        grades[sp.id], sp.conflict_free, rubric, runner, logs, ws_root, contents, lab)
            self.options.log(f"{lab}: performance")
            self._performance(points, grades, rubric, runner, lab, on_gpu)
        order = {sp.id: i for i, sp in enumerate(rubric.stages)}
        return sorted(grades.values(), key=lambda g: order.get(g.id, 0))

    # -- correctness: one process per case (all stages), per (stage, case) when that one fails --
    def _run_cases(self, points: list[Any], rubric: Rubric, runner: Path, on_gpu: dict[str, bool],
                   expect: Expect) -> dict[str, list[CaseResult]]:
        jobs = []
        out: dict[str, list[CaseResult | None]] = {sp.id: [] for sp in points}
        for case in rubric.cases:
            stages = [sp.id for sp in points if case.applies_to(sp.id)]
            runnable = [s for s in stages if not (on_gpu[s] and not self.gpu)]
            for s in stages:
                out[s].append(None if s in runnable else CaseResult(case.name, case.hidden, "not-run", NO_GPU))
            if runnable:
                jobs.append((case, runnable))
        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            timeout = self.options.case_timeout or rubric.case_timeout
            verifier = self.verifier(expect.lab)
            done = list(pool.map(lambda job: self._run_verified_case(runner, job[0], job[1], timeout, expect, verifier),
                                 jobs))
        for (case, _), results in zip(jobs, done):
            for s, cr in results.items():
                slot = next(i for i, c in enumerate(out[s]) if c is None)
                out[s][slot] = cr
        return {s: [c for c in v if c is not None] for s, v in out.items()}

    def verifier(self, lab: str) -> Path | None:
        """The reference runner when it can check saved outputs (`verify`, `run --save-output`),
        else None. Decided from the trusted reference only: the student's runner is built from
        the same common/, and its own --help could lie."""
        with self._lock:
            if lab in self._verify:
                return self._verify[lab]
        ref = self.reference(lab)
        ok = False
        if ref is not None:
            run_help = proc.run([ref, "run", "--help"], timeout=30)
            verify_help = proc.run([ref, "verify", "--help"], timeout=30)
            ok = "--save-output" in run_help.stdout + run_help.stderr and verify_help.ok
        with self._lock:
            self._verify[lab] = ref if ok else None
        return self._verify[lab]

    def _run_verified_case(self, runner: Path, case: Case, stages: list[str], timeout: float, expect: Expect,
                           verifier: Path | None) -> dict[str, CaseResult]:
        """_run_case, then (when the runners support it) every pass is re-decided by the reference
        runner from the output the student process saved: a verdict no student code takes part in."""
        if verifier is None:
            return self._run_case(runner, case, stages, timeout, expect)
        save = self.sandbox.mkdtemp("gpulab-out-")
        checked = Path(tempfile.mkdtemp(prefix="gpulab-verify-"))
        try:
            if self.sandbox.user:
                os.chown(save, *self.sandbox.user)
            results = self._run_case(runner, case, stages, timeout, expect, save)
            passed = [s for s, r in results.items() if r.status == PASS]
            if passed:
                # The trusted reference reads copies of the regular files only: a link the student
                # process left in its folder (to the rubric, /etc/shadow) is never followed.
                copy_private_files(save, checked, "*.bin")
                argv = [str(verifier), "verify"]
                for s in passed:
                    argv += ["--stage", s]
                res = proc.run(argv + case.runner_args() + ["--output-dir", str(checked), "--format", "json"],
                               timeout=max(timeout, 60))
                doc = parse_runner_json(res.stdout)
                for s in passed:
                    row = stage_result(doc, s)
                    if row is None:
                        results[s].status = "error"
                        results[s].message = f"the reference could not verify the saved output ({res.describe_exit()})"
                    elif row.get("status") != "pass":
                        results[s].status = "fail"
                        results[s].message = "the reference's check of the saved output: " + str(row.get("message", ""))
            return results
        finally:
            shutil.rmtree(save, ignore_errors=True)
            shutil.rmtree(checked, ignore_errors=True)

    def _run_case(self, runner: Path, case: Case, stages: list[str], timeout: float,
                  expect: Expect, save: Path | None = None) -> dict[str, CaseResult]:
        """All stages of one case in one process. A stage whose result that process cannot be
        trusted for is rerun on its own: after a crash, hang, early exit or inconsistent exit
        status every stage; after a CUDA error (the context is lost for the stages after it)
        every stage that did not pass."""
        extra = ["--save-output", str(save)] if save is not None else []

        def alone(s: str) -> CaseResult:
            single = self.sandbox.run([str(runner), "run", "--stage", s] + case.runner_args()
                                      + ["--no-time", "--format", "json"] + extra, timeout=timeout)
            return case_outcome(single, s, case, expect=expect)

        if len(stages) == 1:
            return {stages[0]: alone(stages[0])}
        argv = [str(runner), "run"]
        for s in stages:
            argv += ["--stage", s]
        res = self.sandbox.run(argv + case.runner_args() + ["--no-time", "--format", "json"] + extra, timeout=timeout)
        doc = parse_runner_json(res.stdout)
        rows = {s: stage_result(doc, s) for s in stages}
        trusted = (doc is not None and not res.timed_out and res.returncode in (0, 1)
                   and problem_matches(doc, case) and all(rows.values())
                   and (res.returncode == 0) == all(r.get("status") in ("pass", "todo", "skipped") for r in rows.values()))
        if not trusted:
            return {s: alone(s) for s in stages}
        context_lost = any(r.get("status") == "error" for r in rows.values())
        results: dict[str, CaseResult] = {}
        for s in stages:
            one = proc.Result(res.cmd, 0 if rows[s].get("status") == "pass" else 1, "", "", res.seconds)
            cr = case_outcome(one, s, case, doc=doc, expect=expect)
            results[s] = alone(s) if context_lost and cr.status != "pass" else cr
        return results

    def _correctness(self, sg: StageGrade, sp: Any, rubric: Rubric, cases: list[CaseResult], on_gpu: bool) -> None:
        sg.cases = cases
        sg.todo = bool(sg.cases) and all(c.status == "todo" for c in sg.cases)
        check = Check("correctness", max_points=sp.correctness)
        run = [c for c in sg.cases if c.status != "not-run"]
        if not sg.cases:
            check.status, check.summary = FAIL, "no correctness case applies to this stage (rubric)"
        elif not run:
            check.status, check.summary = NOT_RUN, (sg.cases[0].message or NO_GPU)
        elif sg.todo:
            check.status, check.summary = FAIL, "TODO: not implemented (NotImplemented)"
        else:
            check.points = scoring.correctness_points(sp.correctness, sg.passed_cases, len(run))
            check.status = PASS if sg.passed_cases == len(run) else FAIL
            check.summary = f"{sg.passed_cases}/{len(run)} cases pass"
            check.details = [f"{'hidden ' if c.hidden else ''}case {c.name}: {c.status}"
                             + (f": {c.message}" if c.message else "") for c in run if c.status != PASS]
        sg.checks["correctness"] = check

    # The option that turns each optional check off, and the flag that sets it.
    _SWITCHES = {"sanitizer": ("sanitizers", "--no-sanitizers"), "conflict_free": ("conflicts", "--no-conflicts"),
                 "performance": ("performance", "--no-performance")}

    def _gate(self, sg: StageGrade, name: str, pts: float, on_gpu: bool, need_all: bool = False) -> Check | None:
        """The outcome when a check cannot or need not run: no GPU, TODO, nothing works, or turned
        off on the command line."""
        if on_gpu and not self.gpu:
            return Check(name, NOT_RUN, 0, pts, NO_GPU)
        if sg.todo:
            return Check(name, FAIL, 0, pts, "not implemented")
        if need_all and not sg.all_pass:
            return Check(name, FAIL, 0, pts, "0: not every correctness case passes")
        if not sg.does_work:
            return Check(name, FAIL, 0, pts, "0: no correctness case passes")
        option, flag = self._SWITCHES[name]
        if not getattr(self.options, option):
            return Check(name, NOT_RUN, 0, pts, f"disabled ({flag})")
        return None

    # -- sanitizers: one run per tool over every eligible stage; per stage only to attribute --
    def _sanitize_run(self, tool: str, stages: list[str], rubric: Rubric, runner: Path, logs: Path,
                      ws_root: Path) -> sanitizer.SanitizerReport:
        """The tool runs as the sandbox user in its own empty folder; its log is copied out."""
        assert rubric.sanitizer_size is not None
        with self.sandbox.workdir() as wd:
            rep = sanitizer.run_sanitizer(tool, runner, stages, rubric.sanitizer_size.arg, wd, rubric.tool_timeout,
                                          env=self.sandbox.env(wd),
                                          wrapper=self.sandbox.wrap([], rubric.tool_timeout * 4 + 10))
            copy_private_files(wd, logs, "sanitizer-*.log")   # regular files only, links not followed
        return sanitizer.relativize(rep, ws_root)

    def _sanitize_tool(self, tool: str, stages: list[str], rubric: Rubric, runner: Path, logs: Path,
                       ws_root: Path) -> dict[str, sanitizer.SanitizerReport]:
        rep = self._sanitize_run(tool, stages, rubric, runner, logs, ws_root)
        if len(stages) == 1 or not rep.ran or rep.clean:
            return {s: rep for s in stages}
        return {s: self._sanitize_run(tool, [s], rubric, runner, logs, ws_root) for s in stages}

    def _sanitizers(self, points: list[Any], grades: dict[str, StageGrade], rubric: Rubric, runner: Path,
                    logs: Path, ws_root: Path, on_gpu: dict[str, bool]) -> None:
        eligible = []
        for sp in points:
            if sp.sanitizer <= 0:
                continue
            gated = self._gate(grades[sp.id], "sanitizer", sp.sanitizer, on_gpu[sp.id])
            if gated:
                grades[sp.id].checks["sanitizer"] = gated
            else:
                eligible.append(sp)
        if not eligible:
            return
        plan = {"memcheck": [sp.id for sp in eligible],
                "racecheck": [sp.id for sp in eligible if on_gpu[sp.id]]}
        with ThreadPoolExecutor(max_workers=2) as pool:
            futs = {tool: pool.submit(self._sanitize_tool, tool, stages, rubric, runner, logs, ws_root)
                    for tool, stages in plan.items() if stages}
            by_tool = {tool: f.result() for tool, f in futs.items()}
        for sp in eligible:
            reports = [by_tool[t][sp.id] for t in ("memcheck", "racecheck") if t in by_tool and sp.id in by_tool[t]]
            grades[sp.id].checks["sanitizer"] = self._sanitizer_check(sp.sanitizer, reports)

    @staticmethod
    def _sanitizer_check(pts: float, reports: list[sanitizer.SanitizerReport]) -> Check:
        check = Check("sanitizer", max_points=pts, data={"reports": [r.to_json() for r in reports]})
        bad = [r for r in reports if r.ran and not r.clean]
        missing = [r for r in reports if not r.ran]
        for r in bad:
            for f in r.findings:
                check.details.append(f"{r.tool}: {f.kind} at {f.where}\n{f.excerpt}")
        if bad:
            check.status = FAIL
            check.summary = "; ".join(f"{r.tool}: {sum(1 for f in r.findings if f.severity == 'error')} finding(s)"
                                      for r in bad)
        elif missing:
            check.status, check.summary, check.fix = NOT_RUN, missing[0].reason, missing[0].fix
        else:
            check.status, check.points, check.summary = PASS, pts, " and ".join(r.tool for r in reports) + " clean"
        return check

    def _conflicts(self, sg: StageGrade, pts: float, rubric: Rubric, runner: Path, logs: Path, ws_root: Path,
                   contents: dict[str, bytes], lab: str) -> Check:
        gated = self._gate(sg, "conflict_free", pts, True)
        if gated:
            return gated
        assert rubric.conflicts_size is not None
        # ncu runs as the grader's user (the counters need it), with the instructor's folders
        # hidden in its own mount namespace and its files in a private folder.
        scratch = self.sandbox.mkdtemp("gpulab-ncu-")
        try:
            rep = ncu.profile_conflicts(runner, sg.id, rubric.conflicts_size.arg, logs, rubric.tool_timeout,
                                        wrapper=self.sandbox.hide_prefix(), scratch=scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        ncu.relativize(rep, ws_root)
        _fill_source_lines(rep, lab, contents)
        check = Check("conflict_free", max_points=pts, data={"report": rep.to_json()})
        if not rep.measured:
            check.status, check.summary, check.fix = NOT_RUN, rep.reason, rep.fix
        elif rep.total_excessive == 0:
            check.status, check.points, check.summary = PASS, pts, "0 excess shared wavefronts"
        else:
            check.status = FAIL
            check.summary = f"{rep.total_excessive} excess shared wavefronts (bank conflicts)"
            check.details = ncu.format_report(rep).splitlines()[1:]
        return check

    # -- performance: every eligible stage timed in one process each for student and reference --
    def _time(self, runner: Path, stages: list[str], rubric: Rubric, trusted: bool) -> dict[str, tuple[float | None, str]]:
        """{stage: (median ms, why not)} from `run --stage ... --n <perf n> --reps R` (own process)."""
        perf = rubric.performance
        assert perf.size is not None
        argv = [str(runner), "run"]
        for s in stages:
            argv += ["--stage", s]
        argv += ["--n", perf.size.arg, "--reps", str(perf.reps), "--warmup", str(perf.warmup), "--format", "json"]
        timeout = max(rubric.case_timeout, 120.0) * max(1, len(stages))
        res = proc.run(argv, timeout=timeout) if trusted else self.sandbox.run(argv, timeout=timeout)
        doc = parse_runner_json(res.stdout)
        out: dict[str, tuple[float | None, str]] = {}
        for s in stages:
            r = stage_result(doc, s)
            ms = r.get("median_ms") if r else None
            if r is None or res.timed_out or res.returncode not in (0, 1):
                out[s] = (None, f"no timing ({res.describe_exit()})")
            elif r.get("status") != "pass":
                out[s] = (None, f"{r.get('status')} at n={perf.size.arg}: {str(r.get('message', ''))[:200]}")
            elif not isinstance(ms, (int, float)) or ms <= 0:
                out[s] = (None, "no median_ms in the result")
            else:
                out[s] = (float(ms), "")
        missing = [s for s in stages if out[s][0] is None and "no timing" in out[s][1]]
        if len(stages) > 1 and missing:   # one stage broke the shared process: time the others alone
            for s in missing:
                out[s] = self._time(runner, [s], rubric, trusted)[s]
        return out

    def _performance(self, points: list[Any], grades: dict[str, StageGrade], rubric: Rubric, runner: Path,
                     lab: str, on_gpu: dict[str, bool]) -> None:
        eligible = []
        for sp in points:
            if sp.performance <= 0:
                continue
            gated = self._gate(grades[sp.id], "performance", sp.performance, on_gpu[sp.id], need_all=True)
            if gated is None and self.reference(lab) is None:
                gated = Check("performance", NOT_RUN, 0, sp.performance,
                              "no reference runner (no solutions/, no shipped reference/)",
                              fix="grade in the handout, which ships reference/, or in the instructor's course")
            if gated:
                grades[sp.id].checks["performance"] = gated
            else:
                eligible.append(sp)
        if not eligible:
            return
        ids = [sp.id for sp in eligible]
        ref = self.reference(lab)
        assert ref is not None
        t_ref = self._time(ref, ids, rubric, trusted=True)
        t_student = self._time(runner, ids, rubric, trusted=False)
        ratio = rubric.performance.full_credit_ratio
        for sp in eligible:
            (tr, why_ref), (t, why) = t_ref[sp.id], t_student[sp.id]
            if tr is None:
                check = Check("performance", NOT_RUN, 0, sp.performance, f"the reference could not be timed: {why_ref}")
            elif t is None:
                check = Check("performance", FAIL, 0, sp.performance, why, data={"t_ref_ms": tr})
            else:
                got = scoring.performance_points(sp.performance, t, tr, ratio)
                check = Check("performance", PASS if got >= sp.performance else FAIL, got, sp.performance,
                              f"{t:.4g} ms vs reference {tr:.4g} ms ({t / tr:.2f}x; full credit <= {ratio:g}x)",
                              data={"t_ms": t, "t_ref_ms": tr, "ratio": t / tr, "full_credit_ratio": ratio,
                                    "n": rubric.performance.size.arg if rubric.performance.size else None})
                if self.options.verify_timing:
                    check = self._cross_check_time(check, runner, sp, rubric, t)
            grades[sp.id].checks["performance"] = check

    def _cross_check_time(self, check: Check, runner: Path, sp: Any, rubric: Rubric, t: float) -> Check:
        """The student's time is measured inside the student's process; Nsight Compute's kernel time
        is not. A reported median below TIMING_TRUST x the profiled kernel time was not measured
        honestly: 0 points; one between that and the kernel time is scored as the kernel time.
        ncu unavailable: the check stands, with a note saying it is unverified."""
        if rubric.performance.size is None:
            return check
        scratch = self.sandbox.mkdtemp("gpulab-ncu-")
        try:
            t_ncu, why = ncu.profile_kernel_time(runner, sp.id, rubric.performance.size.arg, scratch,
                                                 rubric.tool_timeout, wrapper=self.sandbox.hide_prefix(),
                                                 scratch=scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        check.data["t_ncu_kernels_ms"] = t_ncu
        if t_ncu is None:
            check.summary += f"; timing not cross-checked ({why})"
        elif t_ncu == 0:
            # A GPU stage whose kernels all run outside its range (another thread, a popped range,
            # the CPU) cannot be timed from outside: no points for a time nobody can confirm.
            return Check("performance", FAIL, 0, sp.performance,
                         f"Nsight Compute saw no kernel inside the stage ({why}): the reported {t:.4g} ms "
                         "is not trusted", fix="launch the stage's kernels from run(), on the calling thread",
                         data=dict(check.data))
        elif t < TIMING_TRUST * t_ncu:
            return Check("performance", FAIL, 0, sp.performance,
                         f"reported {t:.4g} ms, but Nsight Compute measured {t_ncu:.4g} ms of kernel time for this "
                         f"stage: the reported time is not trusted", data=dict(check.data))
        elif t < t_ncu:
            # Between TIMING_TRUST and 1 x the kernel time: within noise, or shaved. Either way the
            # time scored is never below what the profiler measured.
            tr, ratio = check.data["t_ref_ms"], check.data["full_credit_ratio"]
            got = scoring.performance_points(sp.performance, t_ncu, tr, ratio)
            return Check("performance", PASS if got >= sp.performance else FAIL, got, sp.performance,
                         f"{t_ncu:.4g} ms (Nsight Compute's kernel time, above the reported {t:.4g} ms) vs "
                         f"reference {tr:.4g} ms ({t_ncu / tr:.2f}x; full credit <= {ratio:g}x)",
                         data=dict(check.data, scored_ms=t_ncu, ratio=t_ncu / tr))
        else:
            check.summary += f"; ncu kernel time {t_ncu:.4g} ms"
        return check


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _fill_source_lines(rep: ncu.ConflictReport, lab: str, contents: dict[str, bytes]) -> None:
    """Quote the line from the submitted file itself (the workspace may have moved on)."""
    for ln in rep.lines:
        for name, data in contents.items():
            if ln.file in (f"labs/{lab}/{name}", name):
                lines = data.decode("utf-8", errors="replace").splitlines()
                if 0 < ln.line <= len(lines):
                    ln.source = lines[ln.line - 1].strip()


INCLUDE = re.compile(r'^\s*#\s*(include|include_next|import|embed)\b\s*(.*)$', re.MULTILINE)


def forbidden_constructs(name: str, data: bytes) -> list[str]:
    """Ways a student file could read what it must not (the reference, hidden tests, the grader):
    includes by absolute path or with `..`, computed (macro) includes, #embed, and .incbin."""
    text = data.decode("utf-8", errors="replace")
    # Join continued lines so a directive cannot be hidden across a backslash-newline.
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    out = []
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        directive, arg = m.group(1), m.group(2).strip()
        target = re.match(r'^(["<])([^">]*)[">]', arg)
        if directive == "embed":
            out.append(f"{name}:{line}: #embed is not allowed")
        elif target is None:
            out.append(f"{name}:{line}: computed #{directive} ({arg[:60]}) is not allowed; include a file by name")
        else:
            path = target.group(2)
            if path.startswith("/") or "\\" in path or ".." in PurePosixPath(path).parts:
                close = '"' if target.group(1) == '"' else ">"
                out.append(f"{name}:{line}: #{directive} {target.group(1)}{path}{close}: only the lab's own files, "
                           "gpulab/ headers and system headers may be included")
    for m in re.finditer(r"\.incbin\b", text):
        out.append(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: .incbin is not allowed")
    return out
