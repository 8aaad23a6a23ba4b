"""Bank conflicts: Nsight Compute's excess shared wavefronts of each stage with `conflict_free`
points, profiled in the sandbox's jail (README, step 6)."""

from __future__ import annotations

import shutil
from concurrent.futures import Future, ThreadPoolExecutor

from gpulab import ncu
from gpulab.checks import SANDBOX_FIX, LabRun
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check


def run(lr: LabRun) -> None:
    # A stage's report is read back (three ncu imports, CPU only) while the GPU profiles the next
    # stage: ~2 s of each stage's 4-7 s on the H200 (2026-11-23) no longer adds up.
    with ThreadPoolExecutor(max_workers=2) as readers:
        pending = {}
        for sp in lr.points:
            if sp.conflict_free > 0:
                lr.options.log(f"{lr.lab}/{sp.id}: bank conflicts (ncu)")
                pending[sp.id] = stage(lr, sp.id, sp.conflict_free, readers)
        for sid, check in pending.items():
            lr.grades[sid].checks["conflict_free"] = check.result() if isinstance(check, Future) else check


def stage(lr: LabRun, sid: str, pts: float, readers: ThreadPoolExecutor) -> Check | Future:
    """The stage's check when its gate decides, else its future: profiled here, read by `readers`."""
    gated = lr.gate(lr.grades[sid], "conflict_free", pts, True)
    if gated:
        return gated
    rubric = lr.rubric
    assert rubric.conflicts_size is not None
    # ncu and its target run in the jail (as the sandbox user where the driver allows it,
    # else as a root that can change nothing), with its files in a private folder.
    scratch = lr.sandbox.mkdtemp("gpulab-ncu-")
    try:
        wrapper, why = lr.sandbox.profiler_wrap(lr.runner, scratch, rubric.tool_timeout)
        if wrapper is None:
            profiled = ncu.ConflictReport.not_run(sid, why, SANDBOX_FIX)
        else:
            profiled = ncu.profile_stage_conflicts(lr.runner, sid, rubric.conflicts_size.arg, lr.logs,
                                                   rubric.tool_timeout, wrapper=wrapper, scratch=scratch,
                                                   env=lr.sandbox.env(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return readers.submit(_verdict, lr, sid, pts, profiled)


def _verdict(lr: LabRun, sid: str, pts: float, profiled: ncu.ConflictReport | ncu.ProfiledStage) -> Check:
    rubric = lr.rubric
    if isinstance(profiled, ncu.ConflictReport):
        rep = profiled
    else:
        with lr.sandbox.workdir() as rd:
            # The report lay where student code could replace it: it is read back in the jail
            # too, as the sandbox user, from a copy in its own folder (the logs may lie where the
            # sandbox user cannot enter).
            reader = (lr.sandbox.wrap([], rubric.tool_timeout * 2 + 10, rw=[rd], ro=[lr.logs.resolve()],
                                      chdir=rd) if lr.sandbox.jailed else None)
            rep = ncu.read_conflicts(profiled, import_wrapper=reader,
                                     import_env=lr.sandbox.env(rd) if reader is not None else None,
                                     import_dir=rd if reader is not None else None)
    ncu.relativize(rep, lr.ws_root)
    _fill_source_lines(rep, lr.lab, lr.contents)
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


def _fill_source_lines(rep: ncu.ConflictReport, lab: str, contents: dict[str, bytes]) -> None:
    """Quote the line from the submitted file itself (the workspace may have moved on)."""
    for ln in rep.lines:
        for name, data in contents.items():
            if ln.file in (f"labs/{lab}/{name}", name):
                lines = data.decode("utf-8", errors="replace").splitlines()
                if 0 < ln.line <= len(lines):
                    ln.source = lines[ln.line - 1].strip()
