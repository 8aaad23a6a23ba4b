"""Library kernels in a stage that asks for the student's own (rubric `library`; README, step 8
and "What a stage may take from CUDA's libraries")."""

from __future__ import annotations

import threading
from types import TracebackType

from gpulab import gpulock
from gpulab.checks.kernel_profiles import profile, profile_stages
from gpulab.checks.lab_run import SANDBOX_FIX, LabRun
from gpulab.kernel_names import library_kernel, readable_names, shown_kernels
from gpulab.rubric import Rubric, Size, StagePoints
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check, StageGrade


def run(lr: LabRun) -> None:
    """A GPU stage whose policy is "none" or "block", that would earn points, and in whose NVTX
    range Nsight Compute sees a library kernel (a device-wide CUB/Thrust algorithm) earns 0, with
    the kernel named; so does one that launched kernels outside its range during its run (popped
    the range around them, or launched from another thread: the runner's marker kernels show it).
    The stages run at check_size, in the timing cross-check's profile where it profiled them at
    that size, else in one ncu run for all of them that profiles only the kernels that could be a
    library's (ncu_run.LIBRARY_ONLY: there an escape is seen when the escaped kernel could be a
    library's; a stage the cross-check did not time has no timing or conflict count to hide from).
    Then what the objects say (compiled_in): library kernels compiled into a student file that none
    of its stages showed."""
    size = check_size(lr.rubric)
    checked = [sp for sp in lr.points if sp.library != "any" and lr.gpu and lr.on_gpu[sp.id]
               and lr.grades[sp.id].points > 0]
    ahead = lr.library_ahead
    if ahead is not None:
        ahead.wait()   # what it measured is in lr.profiles
    if size is None or not checked:
        return
    # A stage the timing cross-check profiled whole at this size is read from that profile; the
    # others need their library kernels only (ncu_run.LIBRARY_ONLY: seed 003's split-global launches
    # 1656 kernels, ~12 s profiled whole, ~0.5 s filtered). A stage the run started ahead left out
    # is profiled alone (profile below), not in the same run again.
    if ahead is None or not ahead.ran or not {sp.id for sp in checked} <= set(ahead.stages):
        profile_stages(lr, [sp.id for sp in checked], size.arg, library_only=True)
    _profiled(lr, checked, size)
    compiled_in(lr, checked)


def _profiled(lr: LabRun, checked: list[StagePoints], size: Size) -> None:
    """Each checked stage judged by its profile at `size`."""
    for sp in checked:
        sg = lr.grades[sp.id]
        prof = profile(lr, sp.id, size.arg, library_only=True)
        lib = [k for k in prof.kernels + prof.escaped if library_kernel(k)]
        if lib:
            named = list(dict.fromkeys(readable_names(lib)))
            shown = shown_kernels(lib)
            _zero_stage(sg, Check(
                "library", FAIL, 0, 0,
                f"0: this stage asks for your own kernel (rubric library = \"{sp.library}\"), but Nsight "
                f"Compute saw library kernels in it at n={size.arg}: {', '.join(shown[:3])}",
                fix=("write the stage's kernels yourself: CUB/Thrust device-wide algorithms are not allowed here"
                     + ("; block- and warp-wide primitives are" if sp.library == "block" else "")),
                data={"n": size.arg, "kernels": prof.kernels, "library_kernels": named, "escaped": prof.escaped}))
        elif prof.escaped or prof.anomaly:
            # The checks read the stage's NVTX range; work it hides from the range is work nobody
            # graded (common/src/stage_marker.cu). An honest stage never does either.
            shown = shown_kernels(prof.escaped)
            what = (f"kernels launched during the stage's run outside its NVTX range \"gpulab:{sp.id}\": "
                    f"{', '.join(shown[:3])}" if prof.escaped else f"a run of the stage it cannot attribute: "
                    f"{prof.anomaly}")
            _zero_stage(sg, Check(
                "library", FAIL, 0, 0,
                f"0: Nsight Compute saw {what} at n={size.arg}; the grader cannot check work it cannot attribute",
                fix=("launch every kernel from the stage's run() on its calling thread, leave the NVTX "
                     "ranges your code did not push alone (no nvtxRangePop of the grader's range), and run "
                     "the same under a profiler as without one (no flood of output, no early exit)"),
                data={"n": size.arg, "kernels": prof.kernels, "escaped": prof.escaped, "anomaly": prof.anomaly}))
        elif prof.ms is None and prof.reference_measured:
            # Nsight Compute measures the reference's run here, not this one (a program that prints
            # a profiler failure and exits when it sees the profiler): unchecked is no pass
            # (kernel_profiles._reference_measured). For a stage the cross-check did not time this
            # was its only profile.
            _zero_stage(sg, Check(
                "library", FAIL, 0, 0,
                f"0: whose kernels the stage runs could not be checked at n={size.arg} ({prof.why})",
                fix="run the stage the same under a profiler as without one; if Nsight Compute failed on its own "
                    "(its log says so), grade again",
                data={"n": size.arg, "why": prof.why}))
        elif prof.ms is None:
            sg.checks["library"] = Check("library", NOT_RUN, 0, 0,
                                         f"whose kernels the stage runs was not checked: {prof.why}",
                                         fix=SANDBOX_FIX if "sandbox" in prof.why else "")
        else:
            note = f"; {prof.why}" if prof.why else ""
            sg.checks["library"] = Check("library", PASS, 0, 0, f"no library kernel in the stage at n={size.arg}{note}",
                                         data={"n": size.arg, "kernels": prof.kernels})


def compiled_in(lr: LabRun, checked: list[StagePoints]) -> None:
    """A student file whose object instantiates CUB/Thrust device-wide kernels (seen by nm, without
    running anything) while the profiles passed every stage of that file: the call ran only where
    the profiler could not see it (a program that looks for the profiler), or never (a call left
    in dead code), or Nsight Compute could not run. Either way the file asks for its own kernels:
    every stage of it this check covers earns 0, the kernels and the file named."""
    for file, kernels in sorted(lr.library_kernels.items()):
        if any(sp.library == "any" and lr.stage_files.get(sp.id) == file for sp in lr.points):
            continue   # a stage of the file may call the library: only the profiles can say which
        stages = [sp for sp in checked if lr.stage_files.get(sp.id) == file]
        # A stage of the file the profiles already failed (a library kernel, an escape, a run that
        # could not be read) may be where the call is: the profiles judged that file.
        judged = any(lr.grades[sp.id].checks.get("library") is not None
                     and lr.grades[sp.id].checks["library"].status == FAIL for sp in stages)
        if judged or not stages:
            continue
        named = list(dict.fromkeys(readable_names(kernels)))
        shown = shown_kernels(kernels)
        for sp in stages:
            _zero_stage(lr.grades[sp.id], Check(
                "library", FAIL, 0, 0,
                f"0: {file} compiles library kernels ({', '.join(shown[:3])}), and no profile of its stages "
                f"showed them: the stages of {file} ask for your own kernels (rubric library = "
                f"\"{sp.library}\")",
                fix=f"remove the CUB/Thrust device-wide call from {file} (a call in code that never runs "
                    "instantiates the kernels too); block- and warp-wide primitives inside your own kernels "
                    "are not affected" if sp.library == "block" else
                    f"remove the CUB/Thrust device-wide call from {file} (a call in code that never runs "
                    "instantiates the kernels too)",
                data={"file": file, "library_kernels": named}))


def _zero_stage(sg: StageGrade, verdict: Check) -> None:
    """The stage earns 0: every check that earned points or passed says why, and `verdict` is its
    library check."""
    for c in sg.checks.values():
        if c.points > 0 or c.status == PASS:
            c.points, c.status, c.summary = 0.0, FAIL, f"{verdict.summary} (was: {c.summary})"
    sg.checks["library"] = verdict


class Ahead:
    """The library check's filtered profile (one ncu run) of the stages no timing check profiles
    (no performance points), started beside correctness on a thread of its own under the shared GPU
    lock: a phase of its own after the timed runs otherwise (radix-sort's split-global and
    digit4-count, 4.6 s of a 59 s cold grade, H200 2026-11-30). A stage that then earns nothing is
    profiled for nothing, beside work that is not timed; the exclusive lock of the timed runs waits
    for it, unless `decide()` (correctness has run) stops it: none of its stages earned a point (a
    stage that hangs must not hold the grade for ncu's timeout). Use as a context manager: leaving
    stops the run and waits for it."""

    def __init__(self, lr: LabRun) -> None:
        self.lr = lr
        self.stages = ahead_stages(lr)
        self._cancel = threading.Event()
        self.ran = False   # its ncu run ended (not stopped): a stage it left out is for profile() alone
        self._thread = threading.Thread(target=self._profile, name=f"gpulab-library-{lr.lab}", daemon=True)
        self._thread.start()

    @staticmethod
    def wanted(lr: LabRun) -> bool:
        # Two or more: one ncu run for them (profile_stages); a single stage is profiled alone by
        # the library phase, where what a failed profile means is decided (kernel_profiles.profile).
        return (lr.gpu and lr.options.untimed_ahead and check_size(lr.rubric) is not None
                and len(ahead_stages(lr)) > 1)

    def _profile(self) -> None:
        size = check_size(self.lr.rubric)
        try:
            with gpulock.gpu_lock(shared=True):
                if not self._cancel.is_set():
                    profile_stages(self.lr, self.stages, size.arg, library_only=True, cancel=self._cancel)
                    self.ran = not self._cancel.is_set()
        except Exception as e:  # noqa: BLE001 - the library phase profiles what is missing itself
            self.lr.options.log(f"{self.lr.lab}: the library profile started ahead failed ({e}); the library phase runs it")

    def decide(self) -> None:
        """Correctness has run: stop the profile when none of its stages earned a point."""
        if not any(self.lr.grades[s].points > 0 for s in self.stages):
            self._cancel.set()

    def wait(self) -> None:
        self._thread.join()

    def __enter__(self) -> "Ahead":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._cancel.set()
        self.wait()


def ahead_stages(lr: LabRun) -> list[str]:
    """The GPU stages the library check reads and the timing cross-check never profiles (no
    performance points, or no timing at all): those Ahead profiles."""
    return [sp.id for sp in lr.points if sp.library != "any" and lr.on_gpu[sp.id]
            and (sp.performance == 0 or not lr.options.performance or not lr.options.verify_timing)]


def check_size(rubric: Rubric) -> Size | None:
    """Where a stage does the most: the performance size (the timed runs' n), else the largest
    case. At a small n (the sanitizer size, where this check used to look) a one-pass stage
    launches one block, and a library call made only for a multi-block grid never runs."""
    if rubric.performance.size is not None:
        return rubric.performance.size
    return max((c.size for c in rubric.cases), key=lambda s: s.n, default=None)
