"""Sanitizers: compute-sanitizer memcheck (every eligible stage) and racecheck (GPU stages), one
run per tool over all stages; only when a run finds something is each stage rerun alone to
attribute the findings (README, step 5)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from gpulab import sanitizer
from gpulab.checks import LabRun
from gpulab.sandbox import copy_private_files
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check


def run(lr: LabRun) -> None:
    eligible = lr.eligible("sanitizer", "sanitizer")
    if not eligible:
        return
    plan = {"memcheck": [sp.id for sp in eligible],
            "racecheck": [sp.id for sp in eligible if lr.on_gpu[sp.id]]}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futs = {tool: pool.submit(_tool, lr, tool, stages) for tool, stages in plan.items() if stages}
        by_tool = {tool: f.result() for tool, f in futs.items()}
    for sp in eligible:
        reports = [by_tool[t][sp.id] for t in ("memcheck", "racecheck") if t in by_tool and sp.id in by_tool[t]]
        lr.grades[sp.id].checks["sanitizer"] = verdict(sp.sanitizer, reports)


def _run_once(lr: LabRun, tool: str, stages: list[str]) -> sanitizer.SanitizerReport:
    """The tool runs in the jail as the sandbox user in its own empty folder; its log is copied out."""
    rubric = lr.rubric
    assert rubric.sanitizer_size is not None
    with lr.sandbox.workdir() as wd:
        rep = sanitizer.run_sanitizer(tool, lr.runner, stages, rubric.sanitizer_size.arg, wd, rubric.tool_timeout,
                                      env=lr.sandbox.env(wd),
                                      wrapper=lr.sandbox.wrap([], rubric.tool_timeout * 4 + 10, rw=[wd],
                                                              ro=[lr.runner.parent], chdir=wd))
        copy_private_files(wd, lr.logs, "sanitizer-*.log")   # regular files only, links not followed
    return sanitizer.relativize(rep, lr.ws_root)


def _tool(lr: LabRun, tool: str, stages: list[str]) -> dict[str, sanitizer.SanitizerReport]:
    rep = _run_once(lr, tool, stages)
    if len(stages) == 1 or not rep.ran or rep.clean:
        return {s: rep for s in stages}
    return {s: _run_once(lr, tool, [s]) for s in stages}


def verdict(pts: float, reports: list[sanitizer.SanitizerReport]) -> Check:
    """All or nothing: clean needs every tool's summary with 0 errors and a trusted exit status."""
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
