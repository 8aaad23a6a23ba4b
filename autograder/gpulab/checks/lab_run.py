"""One lab of one submission, built and ready to be checked (LabRun), and the gate every check
passes first: no GPU, TODO, nothing works, or turned off on the command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gpulab.checks.options import SWITCHES, Options
from gpulab.rubric import Rubric, StagePoints
from gpulab.sandbox.jail import Sandbox
from gpulab.scoring import FAIL, NOT_RUN, Check, StageGrade
from gpulab.tools.ncu.report import KernelProfile
from gpulab.tools.runner_json import NO_GPU, Expect

# What another submission's untimed work on the same GPU can do to a run (gpulock.py: the
# correctness cases and sanitizers of a batch's submissions share the GPU): take the device memory
# it needed, or slow it past its time limit. A case or sanitizer run that ended so is run again
# with the GPU held alone (LabRun.again_alone, the pipeline's "<check>-alone" phase), and that run
# stands.
_SHARED_GPU_HARM = re.compile(r"out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY", re.IGNORECASE)


def shared_gpu_suspect(failed: bool, timed_out: bool, text: str) -> bool:
    """A failure that sharing the GPU may have caused (out of device memory, out of time)."""
    return failed and (timed_out or bool(_SHARED_GPU_HARM.search(text or "")))


def wrong_in_every_run(statuses: list[str | None]) -> bool:
    """A stage that copies its input passes the cases whose input is already the answer, and a copy
    runs clean and conflict-free. The gate stops it where the reference's verify says which passes
    those are (CaseResult.input_is_answer); for a lab or stage that cannot say, a check
    that measures runs of the stage (sanitizers, bank conflicts) asks what the runner's own check
    said of the output in each of them (None: no document, or the stage is not in it): wrong in
    every one ("fail") earns none of its points (2026-11-30: shearsort's tile stage that sorted
    nothing kept its sanitizer and conflict points). That document is the student process's own
    word, so it only ever takes points away: a missing one, or an error status (the stage threw,
    perhaps because of the tool), leaves the check to the tool."""
    return bool(statuses) and all(s == FAIL for s in statuses)


NOT_WORKING_FIX = "make the stage pass its correctness cases (this report lists the failing ones)"

SANDBOX_FIX = ("install bubblewrap (Debian package; scripts/fetch-deps.sh for an offline machine) and grade as "
               "root, or set NVreg_RestrictProfilingToAdminUsers=0 (autograder/README.md)")


@dataclass
class LabRun:
    """One lab of one submission, built and ready to be checked."""

    lab: str
    rubric: Rubric
    runner: Path                      # the student's runner copy (student code: always sandboxed)
    reference: Path | None            # the trusted reference runner (None: no solutions/)
    verifier: Path | None             # the reference when it can judge saved outputs
    logs: Path                        # out/logs/<lab>
    ws_root: Path                     # the grading workspace's course (paths in tool output)
    contents: dict[str, bytes]        # the submitted files
    points: list[StagePoints]         # the graded stages (known to the runner)
    grades: dict[str, StageGrade]
    on_gpu: dict[str, bool]
    expect: Expect
    sandbox: Sandbox
    options: Options
    gpu: bool
    parallel: int
    # ncu's view, per (stage, n, library kernels only: checks/kernel_profiles.py)
    profiles: dict[tuple[str, str, bool], KernelProfile] = field(default_factory=dict)
    # The reference's medians {stage: (ms, why not)}: the grader's per-device cache (References.times);
    # None times the reference afresh.
    reference_times: Callable[[list[str]], dict[str, tuple[float | None, str]]] | None = None
    # Why the reference must not be timed ("" when it may): built in a Debug build (References.untimed_reason).
    reference_untimed: str = ""
    # The bank-conflict profiles started beside the correctness phase (checks.conflicts.Ahead);
    # None: the conflicts phase profiles its stages itself.
    conflicts_ahead: Any = None
    sanitizers_ahead: Any = None      # sanitizers.Ahead: the runs started beside correctness (a single grade)
    library_ahead: Any = None         # library.Ahead: the untimed stages' library profile, beside correctness
    # Check name -> what that check asks to run again with the GPU held alone (its runs that
    # failed as sharing the GPU can make them fail: shared_gpu_suspect); the pipeline calls it.
    again_alone: dict[str, Callable[[], None]] = field(default_factory=dict)
    # {student file: the CUB/Thrust kernels its object instantiates} (workspace/symbols.py) and
    # {stage: the student file it is written in} (the stage table): checks/library.py.
    library_kernels: dict[str, list[str]] = field(default_factory=dict)
    stage_files: dict[str, str] = field(default_factory=dict)

    def write_times(self, phase: str, parts: dict[str, float | dict[str, float]], header: str = "") -> None:
        """logs/<lab>/<phase>-times.txt: where a phase's time went, longest first; a part given as
        {sub-part: seconds} is listed with them."""
        rows = []
        for name, t in parts.items():
            total = sum(t.values()) if isinstance(t, dict) else t
            detail = (": " + ", ".join(f"{k} {v:.1f} s" for k, v in t.items())) if isinstance(t, dict) else ""
            rows.append((total, f"{total:8.1f} s  {name}{detail}\n"))
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.logs / f"{phase}-times.txt").write_text(
            (header + "\n" if header else "") + "".join(r for _, r in sorted(rows, key=lambda r: -r[0])),
            encoding="utf-8")

    def gate(self, sg: StageGrade, name: str, pts: float, on_gpu: bool, need_all: bool = False) -> Check | None:
        """The outcome when a check cannot or need not run: no GPU, TODO, nothing works, or turned
        off on the command line."""
        if on_gpu and not self.gpu:
            return Check(name, NOT_RUN, 0, pts, NO_GPU)
        if sg.todo:
            return Check(name, FAIL, 0, pts, "not implemented")
        if need_all and not sg.all_pass:
            return Check(name, FAIL, 0, pts, "0: not every correctness case passes")
        if not sg.does_work:
            return Check(name, FAIL, 0, pts, "0: no correctness case passes" if not sg.passed_cases else
                         "0: the only correctness cases that pass are ones whose input already was the answer")
        option, flag = SWITCHES[name]
        if not getattr(self.options, option):
            return Check(name, NOT_RUN, 0, pts, f"disabled ({flag})")
        return None

    def eligible(self, name: str, attr: str, need_all: bool = False, extra: Callable[[Any], Check | None] | None = None
                 ) -> list[StagePoints]:
        """The stages with points for check `name` (rubric field `attr`) that pass its gate; the
        others get the gate's outcome now."""
        out = []
        for sp in self.points:
            pts = getattr(sp, attr)
            if pts <= 0:
                continue
            gated = self.gate(self.grades[sp.id], name, pts, self.on_gpu[sp.id], need_all)
            if gated is None and extra is not None:
                gated = extra(sp)
            if gated:
                self.grades[sp.id].checks[name] = gated
            else:
                out.append(sp)
        return out
