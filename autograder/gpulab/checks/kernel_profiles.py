"""The Nsight Compute kernel-time profiles of a lab's stages (their kernels' GPU time and names),
run in the sandbox's jail and kept in `lr.profiles` by stage, size and whether they are the
library check's filtered kind, where the timing cross-check (performance.py) and the library rule
(library.py) share them.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from gpulab.checks.lab_run import LabRun
from gpulab.tools.ncu import report as ncu_report
from gpulab.tools.ncu import run as ncu_run


@contextlib.contextmanager
def jailed_profiler(lr: LabRun) -> Iterator[tuple[list[str] | None, str, Path]]:
    """(the jail's ncu wrapper or None, why not, a private scratch folder) for one profiled run
    of the student's runner (ncu and its target in the jail, as the sandbox user where the driver
    allows it, else as a root that can change nothing); the folder is removed afterwards."""
    scratch = lr.sandbox.mkdtemp("gpulab-ncu-")
    try:
        wrapper, why = lr.sandbox.profiler_wrap(lr.runner, scratch, lr.rubric.tool_timeout)
        yield wrapper, why, scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def profile_stages(lr: LabRun, stages: list[str], size_arg: str, library_only: bool = False,
                   cancel: threading.Event | None = None) -> None:
    """Profiles the stages not yet in `lr.profiles` at this size in one ncu run (grading time:
    one ncu and runner start instead of one per stage); a stage that run did not measure is left
    for profile() to run alone. `library_only`: for the library check alone (profile()). `cancel`
    set: the run stops and keeps nothing."""
    todo = [s for s in stages if _key(lr, s, size_arg, library_only) is None]
    if len(todo) < 2:
        return
    with jailed_profiler(lr) as (wrapper, _, scratch):
        if wrapper is not None:
            found = ncu_run.profile_stages_kernel_time(
                lr.runner, todo, size_arg, scratch, lr.rubric.tool_timeout * len(todo), wrapper=wrapper,
                scratch=scratch, env=lr.sandbox.env(scratch), library_only=library_only, cancel=cancel)
            lr.profiles.update({(s, size_arg, library_only): prof for s, prof in found.items()})


def _key(lr: LabRun, stage: str, size_arg: str, library_only: bool) -> tuple[str, str, bool] | None:
    """Where `lr.profiles` holds a profile that answers: a whole one always does, a library-only
    one (ncu_run.LIBRARY_ONLY) only where library kernels are all that is asked."""
    for key in [(stage, size_arg, False)] + ([(stage, size_arg, True)] if library_only else []):
        if key in lr.profiles:
            return key
    return None


def profile(lr: LabRun, stage: str, size_arg: str, library_only: bool = False) -> ncu_report.KernelProfile:
    """One ncu run of the stage in the jail (Sandbox.profiler_wrap): its kernels' time and names,
    kept in `lr.profiles` by stage and size, where the timing cross-check and the library rule
    share it (a run at another size never stands in: a one-pass stage launches other kernels
    at another n). `library_only`: the library check of a stage nobody profiled whole asks for
    its library kernels alone (ncu_run.LIBRARY_ONLY), a profile no timing check may read; a
    whole profile answers it too."""
    key = _key(lr, stage, size_arg, library_only)
    if key is not None:
        return lr.profiles[key]
    with jailed_profiler(lr) as (wrapper, why, scratch):
        prof = (ncu_report.KernelProfile(None, why) if wrapper is None else
                ncu_run.profile_kernel_time(lr.runner, stage, size_arg, scratch, lr.rubric.tool_timeout, wrapper=wrapper,
                                            scratch=scratch, env=lr.sandbox.env(scratch), library_only=library_only))
    if prof.ms is None and not prof.anomaly and wrapper is not None:
        prof.reference_measured = _reference_measured(lr, stage, size_arg, library_only)
        if prof.reference_measured:
            prof.why += "; Nsight Compute measured the reference's run of the stage on this machine"
    lr.profiles[(stage, size_arg, library_only)] = prof
    return prof


def _reference_measured(lr: LabRun, stage: str, size_arg: str, library_only: bool = False) -> bool:
    """Whether Nsight Compute measures the trusted reference's run of the stage here. What says a
    student's profile failed (ncu's "no permission", "Unknown Error", a timeout) is text and time
    the profiled program controls: a program that prints "ERR_NVGPUCTRPERM" and exits when it sees
    the profiler must not turn the timing cross-check into "not cross-checked", points standing. A
    machine whose Nsight Compute cannot measure the reference either is the machine's problem.
    `library_only`: profiled as the student's run was (the filter; split-global's 1656 kernels
    profiled whole took 12 s)."""
    if lr.reference is None:
        return False
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-ref-") as tmp:
        ref = ncu_run.profile_kernel_time(lr.reference, stage, size_arg, Path(tmp), lr.rubric.tool_timeout,
                                          library_only=library_only)
    return ref.ms is not None and not ref.anomaly


def profile_conflict_runs_together(lr: LabRun, stages: list[str]) -> dict[str, ncu_report.KernelProfile]:
    """The kernel-time profile of exactly the run the shared Source Counters profile made
    (checks/conflicts.py: the same stages in the same order, size and knobs, so the same argv),
    for the escape check of the stages judged from it; never a stage alone in its place: a stage
    it does not return (an anomaly, an escape into another stage's range) is profiled alone, in
    both profiles, by the caller."""
    rubric = lr.rubric
    if rubric.conflicts_size is None or len(stages) < 2:
        return {}
    with jailed_profiler(lr) as (wrapper, why, scratch):
        if wrapper is None:
            return {}
        return ncu_run.profile_stages_kernel_time(lr.runner, stages, rubric.conflicts_size.arg, scratch,
                                                  rubric.tool_timeout, wrapper=wrapper, scratch=scratch,
                                                  env=lr.sandbox.env(scratch), runner_args=rubric.conflicts_args())


def profile_conflict_runs(lr: LabRun, stages: list[str]) -> dict[str, ncu_report.KernelProfile]:
    """The stages' kernel-time profiles at the conflicts size and knobs, for the runner's markers:
    the Source Counters profile reads only the kernels inside a stage's NVTX range, so a kernel
    launched outside it at that size only (the range popped around it, another host thread) would
    have its conflicts go uncounted, and the library check looks at the performance size. One ncu
    run for all (a stage it leaves out is profiled alone); not kept in `lr.profiles` (other knobs)."""
    rubric = lr.rubric
    if rubric.conflicts_size is None or not stages:
        return {}
    size, args = rubric.conflicts_size.arg, rubric.conflicts_args()
    with jailed_profiler(lr) as (wrapper, why, scratch):
        if wrapper is None:
            return {s: ncu_report.KernelProfile(None, why) for s in stages}
        common = dict(wrapper=wrapper, scratch=scratch, env=lr.sandbox.env(scratch), runner_args=args)
        found = (ncu_run.profile_stages_kernel_time(lr.runner, stages, size, scratch,
                                                    rubric.tool_timeout * len(stages), **common)
                 if len(stages) > 1 else {})
        for s in stages:
            if s not in found:
                found[s] = ncu_run.profile_kernel_time(lr.runner, s, size, scratch, rubric.tool_timeout, **common)
    return found
