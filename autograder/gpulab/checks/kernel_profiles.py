"""The Nsight Compute kernel-time profiles of a lab's stages (their kernels' GPU time and names),
run in the sandbox's jail and kept in `lr.profiles` by stage and size, where the timing
cross-check (performance.py) and the library rule (library.py) share them.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from gpulab.checks.lab_run import LabRun
from gpulab.tools.ncu import report as ncu_report
from gpulab.tools.ncu import run as ncu_run


@contextlib.contextmanager
def _jailed_profiler(lr: LabRun) -> Iterator[tuple[list[str] | None, str, Path]]:
    """(the jail's ncu wrapper or None, why not, a private scratch folder) for one profiled run
    of the student's runner; the folder is removed afterwards."""
    scratch = lr.sandbox.mkdtemp("gpulab-ncu-")
    try:
        wrapper, why = lr.sandbox.profiler_wrap(lr.runner, scratch, lr.rubric.tool_timeout)
        yield wrapper, why, scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def profile_stages(lr: LabRun, stages: list[str], size_arg: str) -> None:
    """Profiles the stages not yet in `lr.profiles` at this size in one ncu run (grading time:
    one ncu and runner start instead of one per stage); a stage that run did not measure is left
    for profile() to run alone."""
    todo = [s for s in stages if (s, size_arg) not in lr.profiles]
    if len(todo) < 2:
        return
    with _jailed_profiler(lr) as (wrapper, _, scratch):
        if wrapper is not None:
            found = ncu_run.profile_stages_kernel_time(
                lr.runner, todo, size_arg, scratch, lr.rubric.tool_timeout * len(todo), wrapper=wrapper,
                scratch=scratch, env=lr.sandbox.env(scratch))
            lr.profiles.update({(s, size_arg): prof for s, prof in found.items()})


def profile(lr: LabRun, stage: str, size_arg: str) -> ncu_report.KernelProfile:
    """One ncu run of the stage in the jail (Sandbox.profiler_wrap): its kernels' time and names,
    kept in `lr.profiles` by stage and size, where the timing cross-check and the library rule
    share it (a run at another size never stands in: a one-pass stage launches other kernels
    at another n)."""
    key = (stage, size_arg)
    if key in lr.profiles:
        return lr.profiles[key]
    with _jailed_profiler(lr) as (wrapper, why, scratch):
        prof = (ncu_report.KernelProfile(None, why) if wrapper is None else
                ncu_run.profile_kernel_time(lr.runner, stage, size_arg, scratch, lr.rubric.tool_timeout, wrapper=wrapper,
                                        scratch=scratch, env=lr.sandbox.env(scratch)))
    lr.profiles[key] = prof
    return prof
