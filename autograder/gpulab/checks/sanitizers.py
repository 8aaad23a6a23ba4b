"""Sanitizers: compute-sanitizer memcheck (every eligible stage) and racecheck (GPU stages) on each
of the rubric's sanitizer shapes, one run per tool and shape over all its stages; only when a run
finds something is each of its stages rerun alone to attribute the findings (README, step 5)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from gpulab.checks.lab_run import LabRun, shared_gpu_suspect
from gpulab.rubric import StagePoints
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check
from gpulab.tools import compute_sanitizer
from gpulab.untrusted_files import copy_private_files


NAME = "sanitizers"


def run(lr: LabRun) -> None:
    eligible = lr.eligible("sanitizer", "sanitizer")
    if not eligible:
        return
    shapes = lr.rubric.sanitizer_shapes
    # One run per (tool, shape) over the stages the shape applies to, all at once: they are not
    # timed, and the GPU runs a few small sanitized processes side by side.
    plan = []
    for k, shape in enumerate(shapes):
        on_shape = [sp.id for sp in eligible if shape.applies_to(sp.id)]
        plan.append(("memcheck", k, on_shape))
        plan.append(("racecheck", k, [s for s in on_shape if lr.on_gpu[s]]))
    plan = [(tool, k, stages) for tool, k, stages in plan if stages]
    with ThreadPoolExecutor(max_workers=max(1, len(plan))) as pool:
        futs = [(tool, k, pool.submit(_tool, lr, tool, stages, k)) for tool, k, stages in plan]
        found = [(tool, k, f.result()) for tool, k, f in futs]
    _judge(lr, eligible, found)
    # A run that ran out of device memory or time beside other submissions runs again alone.
    suspects = [i for i, (_, _, by_stage) in enumerate(found) if any(_suspect(rep) for rep in by_stage.values())]
    if suspects:
        lr.again_alone[NAME] = lambda: _rerun_alone(lr, eligible, plan, found, suspects)


def _rerun_alone(lr: LabRun, eligible: list[StagePoints], plan: list[tuple[str, int, list[str]]],
                 found: list[tuple[str, int, dict[str, compute_sanitizer.SanitizerReport]]], suspects: list[int]) -> None:
    """The suspect runs (indices into plan) again while the caller holds the GPU alone; their
    reports replace the first ones and the stages are judged again."""
    with ThreadPoolExecutor(max_workers=len(suspects)) as pool:
        again = list(pool.map(lambda i: _tool(lr, plan[i][0], plan[i][2], plan[i][1]), suspects))
    for i, by_stage in zip(suspects, again):
        found[i] = (plan[i][0], plan[i][1], by_stage)
    _judge(lr, eligible, found)


def _suspect(rep: compute_sanitizer.SanitizerReport) -> bool:
    text = " ".join(f"{f.kind} {f.excerpt}" for f in rep.findings)
    return shared_gpu_suspect(rep.ran and not rep.clean, any(f.kind == "timeout" for f in rep.findings), text)


def _judge(lr: LabRun, eligible: list[StagePoints],
           found: list[tuple[str, int, dict[str, compute_sanitizer.SanitizerReport]]]) -> None:
    for sp in eligible:
        reports = [by_stage[sp.id] for tool in ("memcheck", "racecheck") for t, _, by_stage in found
                   if t == tool and sp.id in by_stage]
        lr.grades[sp.id].checks["sanitizer"] = verdict(sp.sanitizer, reports)


def _run_once(lr: LabRun, tool: str, stages: list[str], shape: int) -> compute_sanitizer.SanitizerReport:
    """The tool runs in the jail as the sandbox user in its own empty folder; its log is copied out."""
    rubric = lr.rubric
    case = rubric.sanitizer_shapes[shape]
    tag = f"shape{shape}" if len(rubric.sanitizer_shapes) > 1 else ""
    with lr.sandbox.workdir() as wd:
        rep = compute_sanitizer.run_sanitizer(tool, lr.runner, stages, case.runner_args(), wd, rubric.tool_timeout,
                                      env=lr.sandbox.env(wd),
                                      wrapper=lr.sandbox.wrap([], rubric.tool_timeout * 4 + 10, rw=[wd],
                                                              ro=[lr.runner.parent], chdir=wd, untimed=True),
                                      tag=tag)
        copy_private_files(wd, lr.logs, "sanitizer-*.log")   # regular files only, links not followed
    rep = compute_sanitizer.relativize(rep, lr.ws_root)
    rep.shape = case.name
    return rep


def _tool(lr: LabRun, tool: str, stages: list[str], shape: int) -> dict[str, compute_sanitizer.SanitizerReport]:
    rep = _run_once(lr, tool, stages, shape)
    if len(stages) == 1 or not rep.ran or rep.clean:
        return {s: rep for s in stages}
    return {s: _run_once(lr, tool, [s], shape) for s in stages}


def verdict(pts: float, reports: list[compute_sanitizer.SanitizerReport]) -> Check:
    """All or nothing: clean needs every tool's summary with 0 errors and a trusted exit status."""
    check = Check("sanitizer", max_points=pts, data={"reports": [r.to_json() for r in reports]})
    bad = [r for r in reports if r.ran and not r.clean]
    missing = [r for r in reports if not r.ran]
    for r in bad:
        for f in r.findings:
            check.details.append(f"{r.tool}{_on(r)}: {f.excerpt}" if f.kind == compute_sanitizer.UNSEEN_RUN
                                 else f"{r.tool}{_on(r)}: {f.kind} at {f.where}\n{f.excerpt}")
    if bad:
        check.status = FAIL
        check.summary = "; ".join(f"{r.tool}{_on(r)}: {_bad_summary(r)}" for r in bad)
        if all(f.kind == compute_sanitizer.UNSEEN_RUN for r in bad for f in r.findings):
            check.fix = ("run the same under a sanitizer as without one: no early exit, no other path "
                         "when a tool's library is loaded, output within the grader's limit")
    elif missing:
        check.status, check.summary, check.fix = NOT_RUN, missing[0].reason, missing[0].fix
    else:
        tools_used = list(dict.fromkeys(r.tool for r in reports))
        shapes = len({r.shape for r in reports})
        check.status, check.points = PASS, pts
        check.summary = " and ".join(tools_used) + " clean" + (f" on {shapes} shapes" if shapes > 1 else "")
    return check


def _bad_summary(r: compute_sanitizer.SanitizerReport) -> str:
    """A report that is not clean: its error count, or, for a stage the tool never saw run (its
    summary clean, but the runner reported nothing of it), that: it is no finding in the code,
    and a student reading "1 finding(s)" would look for one."""
    if any(f.kind == compute_sanitizer.UNSEEN_RUN for f in r.findings):
        return "the runner reported no result for the stage (its run was not seen under the tool)"
    return f"{sum(1 for f in r.findings if f.severity == 'error')} finding(s)"


def _on(r: compute_sanitizer.SanitizerReport) -> str:
    return f" (on {r.shape})" if r.shape else ""
