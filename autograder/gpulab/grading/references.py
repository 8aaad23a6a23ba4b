"""The trusted reference runner of each lab, as one grader uses it: prepared once per lab (built
on a GPU machine, asked what it can judge, its stage table read), its medians timed once per
device, lab and stage and reused for the next submissions ("Batch" in autograder/README.md), and
the thread that times them while a grader's first rows build (the GPU is idle then).

A grader is one process on one GPU (a --gpus worker, a Slurm task, one batch) built against one
course, so the cache never mixes devices or courses.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

from gpulab import gpulock, proc
from gpulab.checks import performance
from gpulab.checks.options import Options
from gpulab.paths import Course, read_cmake_cache
from gpulab.rubric import Rubric
from gpulab.tools.runner import stage_table_of
from gpulab.workspace import shipped_reference
from gpulab.workspace.calling_build import build_calling_target, not_release


class References:
    """The references of one grader's labs; shared by the threads of a batch."""

    def __init__(self, course: Course, build: Path, gpu: bool, options: Options,
                 rubric: Callable[[str], Rubric]) -> None:
        self.course = course
        self.build = build
        self.gpu = gpu
        self.options = options
        self._rubric = rubric
        self._lock = threading.Lock()
        self._runners: dict[str, Path | None] = {}
        self._tables: dict[str, dict[str, dict[str, Any]]] = {}
        self._verify: dict[str, Path | None] = {}
        self._untimed: dict[str, str] = {}   # lab -> why its reference's times would not be a grade's
        self.times_ms: dict[tuple[str, str, str], float] = {}   # (device, lab, stage) -> median ms
        self.rows_on_gpu = threading.Event()   # a submission has reached its GPU checks: time no more ahead

    # -- prepared once per lab by the pipeline; the getters only read ---------------------------
    def prepare(self, lab: str) -> None:
        """Builds the calling build's reference runner (on a GPU machine, where it is timed),
        asks it whether it can judge saved outputs (`run --help` mentions --save-output and
        `verify --help` exits 0) and reads its stage table: once per lab, under the lock, so
        that parallel batch jobs neither build twice nor see half of it. Without solutions/<lab>
        the reference is the compiled one shipped in the student's handout (reference/, see
        workspace/shipped_reference.py), or none (performance not graded)."""
        with self._lock:
            if lab in self._runners:
                return
            existing = self.course.runner(lab, "reference")
            shipped = shipped_reference.shipped_path(self.course.source, lab)
            ref = None
            if not (self.course.source / "solutions" / lab).is_dir():
                ref = shipped if shipped.is_file() and os.access(shipped, os.X_OK) else None
            elif not self.gpu:
                # Without a GPU nothing is timed: use a built reference for stage titles only, and
                # do not start a build in the calling tree.
                ref = existing if existing.is_file() else None
            else:
                res = build_calling_target(self.build, existing.name)
                if existing.is_file():
                    ref = existing
                    if not res.ok:
                        self.options.log(f"could not rebuild {existing.name}; using the existing binary")
                else:
                    self.options.log(f"reference runner for {lab} did not build: performance not graded")
            verify = None
            if ref is not None:
                # Asked of the trusted reference only: the student's runner is built from the same
                # common/, and its own --help could lie.
                # Untimed, as every run but a timing: at the builds' niceness (proc.background).
                run_help = proc.run(proc.background([ref, "run", "--help"]), timeout=30)
                verify_help = proc.run(proc.background([ref, "verify", "--help"]), timeout=30)
                if "--save-output" in run_help.stdout + run_help.stderr and verify_help.ok:
                    verify = ref
                self._tables[lab] = stage_table_of(proc.run(proc.background([str(ref), "list", "--format", "json"]),
                                                            timeout=60))
            self._runners[lab], self._verify[lab] = ref, verify
            if ref is not None and ref != shipped:
                differs = not_release(read_cmake_cache(self.build))
                if differs:
                    self._untimed[lab] = (f"the reference was built in {self.build} ({differs}), not in a Release build: "
                                          "its times are not the ones grades are made against")

    def runner(self, lab: str) -> Path | None:
        """The reference runner prepared for this lab (None: none, or not prepared yet)."""
        with self._lock:
            return self._runners.get(lab)

    def verifier(self, lab: str) -> Path | None:
        """The reference when it can check saved outputs (`verify`, `run --save-output`), else None."""
        with self._lock:
            return self._verify.get(lab)

    def untimed_reason(self, lab: str) -> str:
        """Why the prepared reference must not be timed ("" when it may): built in a Debug build."""
        with self._lock:
            return self._untimed.get(lab, "")

    def stage_table(self, lab: str) -> dict[str, dict[str, Any]]:
        """Stage titles and where they run, from the prepared reference ({}: none)."""
        with self._lock:
            return self._tables.get(lab) or {}

    # -- the reference's times ------------------------------------------------------------------
    def times(self, lab: str, rubric: Rubric, ids: list[str], device: str) -> dict[str, tuple[float | None, str]]:
        """The reference's medians on `device`, timed once per device, lab and stage and then
        reused; a time that failed is measured again next time."""
        ref = self.runner(lab)
        assert ref is not None
        with self._lock:
            have = {s: self.times_ms.get((device, lab, s)) for s in ids}
        missing = [s for s in ids if have[s] is None]
        got = performance.time_stages(ref, missing, rubric, None, self.options.timer) if missing else {}
        with self._lock:
            for s, (ms, _) in got.items():
                if ms is not None:
                    self.times_ms[(device, lab, s)] = ms
        return {s: (have[s], "") if have[s] is not None else got[s] for s in ids}

    def time_ahead(self, labs: list[str], device: str) -> threading.Thread | None:
        """A grader's first rows (a batch's, or the one submission of a plain grade) spend their
        first seconds building, with the GPU idle: the references of `labs` are timed then
        (the `times` cache), in this order, until the first row is ready for its GPU checks
        (that row never waits for more than one lab's timing). On two H200s a worker timed them
        inside its first rows (~2 s scan, ~7 s transpose, 2026-11-23), after the builds. Returns
        the thread (join it before exiting)."""
        if not (self.gpu and self.options.performance and labs):
            return None

        def run() -> None:
            for lab in labs:
                if self.rows_on_gpu.is_set():
                    return
                try:
                    rubric = self._rubric(lab)
                    ids = [sp.id for sp in rubric.stages if sp.performance > 0
                           and (self.options.stages is None or sp.id in self.options.stages)]
                    if not ids or rubric.performance.size is None:
                        continue
                    self.prepare(lab)
                    if self.runner(lab) is None or self.untimed_reason(lab):
                        continue
                    with gpulock.gpu_lock():
                        self.times(lab, rubric, ids, device)
                except Exception:  # noqa: BLE001 (an optimisation only: the rows time what is missing)
                    continue

        thread = threading.Thread(target=run, name="gpulab-reference-times", daemon=True)
        thread.start()
        return thread
