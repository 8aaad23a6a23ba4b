"""Sanitizers: compute-sanitizer memcheck (every eligible stage) and racecheck (GPU stages) on each
of the rubric's sanitizer shapes, one run per tool and shape over all its stages; only when a run
finds something is each of its stages rerun alone to attribute the findings (README, step 5)."""

from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from types import TracebackType

from gpulab import gpulock
from gpulab.checks.lab_run import NOT_WORKING_FIX, LabRun, shared_gpu_suspect, wrong_in_every_run
from gpulab.rubric import StagePoints
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check
from gpulab.tools import compute_sanitizer
from gpulab.untrusted_files import copy_private_files


NAME = "sanitizers"


Plan = list[tuple[str, int, list[str]]]   # (tool, shape index, the stages of one run)

# racecheck costs per launch: on a shape of at least RACECHECK_SPLIT_MIN_N elements a lab's rubric
# may have its stages run `[sanitizers] racecheck_parts` processes apart, side by side (bitonic's
# racecheck of all eight GPU stages at n = 20000 and 40000 ended 11 s after every other sanitizer
# run, 8.8 s after correctness, H200 2026-11-30: phases 0 and 1 launch L(L+1)/2 kernels each; where
# racecheck is no tail, more processes beside correctness would only slow it). Dealt in stage-table
# order, so two stages of one seed's design land in different parts.
RACECHECK_SPLIT_MIN_N = 1 << 14


def run(lr: LabRun) -> None:
    eligible = lr.eligible("sanitizer", "sanitizer")
    ahead: Ahead | None = lr.sanitizers_ahead
    plan = _plan(lr, eligible)
    if ahead is not None:
        ahead.keep_only(plan)
    if not eligible:
        return
    with ThreadPoolExecutor(max_workers=max(1, len(plan))) as pool:
        runs = []
        for tool, k, stages in plan:
            started = ahead.take(tool, k, stages) if ahead is not None else None
            cancel = ahead.cancel_event(tool, k, stages) if started is not None else threading.Event()
            runs.append(_Run(tool, k, stages, started or pool.submit(_tool, lr, tool, stages, k, cancel), cancel))
        found = _stop_when_failed(lr, runs)
    _judge(lr, eligible, found)
    # A run that ran out of device memory or time beside other submissions runs again alone, unless
    # each of its stages already has a finding of its own (no second run can give its points back).
    failed = _failed_stages(found)
    suspects = [i for i, (_, _, by_stage) in enumerate(found)
                if any(_suspect(rep) and s not in failed for s, rep in by_stage.items())]
    if suspects:
        lr.again_alone[NAME] = lambda: _rerun_alone(lr, eligible, plan, found, suspects)


@dataclass
class _Run:
    tool: str
    shape: int
    stages: list[str]
    future: Future
    cancel: threading.Event


def _stop_when_failed(lr: LabRun, runs: list[_Run]) -> list[tuple[str, int, dict[str, compute_sanitizer.SanitizerReport]]]:
    """The runs' reports, in plan order. Sanitizer points are all or nothing, so once a tool has a
    finding of its own in a stage (not one that sharing the GPU may have caused), that tool's runs
    on other shapes whose every stage already failed it are stopped: a race reported on every
    access takes racecheck minutes per shape (bitonic's race-staged-writeback on an H200,
    2026-11-30: shape 1 in seconds, shapes 2 and 3 over 7 minutes each, 300 s limit and a rerun
    alone). The student sees each tool's first findings; the stopped runs are listed as such."""
    found: dict[int, dict[str, compute_sanitizer.SanitizerReport]] = {}
    failed: dict[tuple[str, str], str] = {}           # (tool, stage) -> the shape that found it
    stopped: dict[int, str] = {}
    pending = {r.future: i for i, r in enumerate(runs)}
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in done:
            i = pending.pop(fut)
            found[i] = fut.result()
            for stage, rep in found[i].items():
                if _own_finding(rep):
                    failed.setdefault((runs[i].tool, stage), rep.shape or lr.rubric.sanitizer_shapes[runs[i].shape].name)
        for fut, i in pending.items():
            r = runs[i]
            if i not in stopped and all((r.tool, s) in failed for s in r.stages):
                stopped[i] = failed[(r.tool, r.stages[0])]
                r.cancel.set()
    for i, shape in stopped.items():
        for rep in found[i].values():
            if not rep.ran:
                rep.reason = f"stopped: {runs[i].tool} had already found errors in the stage on {shape}"
    return [(r.tool, r.shape, found[i]) for i, r in enumerate(runs)]


def _own_finding(rep: compute_sanitizer.SanitizerReport) -> bool:
    """A finding the stage's code made: not a run the stage was never seen in, not one that sharing
    the GPU may have caused (that one is run again alone)."""
    return (rep.ran and not rep.clean and not _suspect(rep)
            and any(f.kind != compute_sanitizer.UNSEEN_RUN for f in rep.findings))


def _failed_stages(found: list[tuple[str, int, dict[str, compute_sanitizer.SanitizerReport]]]) -> set[str]:
    return {s for _, _, by_stage in found for s, rep in by_stage.items() if _own_finding(rep)}


def _plan(lr: LabRun, stages: list[StagePoints]) -> Plan:
    """One run per (tool, shape) over the stages the shape applies to, all at once: they are not
    timed, and the GPU runs a few small sanitized processes side by side."""
    plan = []
    for k, shape in enumerate(lr.rubric.sanitizer_shapes):
        on_shape = [sp.id for sp in stages if shape.applies_to(sp.id)]
        plan.append(("memcheck", k, on_shape))
        on_gpu = [s for s in on_shape if lr.on_gpu[s]]
        parts = (max(1, min(lr.rubric.racecheck_parts, len(on_gpu))) if shape.size.n >= RACECHECK_SPLIT_MIN_N
                 else 1)
        plan += [("racecheck", k, on_gpu[j::parts]) for j in range(parts)]
    return [(tool, k, on) for tool, k, on in plan if on]


class Ahead:
    """The sanitizer runs of a single grade, started beside correctness on every stage that could
    earn sanitizer points (radix-sort's reference, cold on an H200, 2026-11-29: correctness 15.6 s,
    then sanitizers 12.8 s, one after the other). Correctness then decides which stages are
    eligible: a run over exactly the eligible stages of its (tool, shape) is judged; any other is
    cancelled and run again on them, so a TODO or failing stage never puts its crash, hang or
    finding into a passing stage's run. Not in a batch: there other submissions fill the GPU and
    the CPUs, and work started on a guess would take it from them. Leaving cancels what still runs."""

    def __init__(self, lr: LabRun) -> None:
        self.lr = lr
        self.plan = _plan(lr, [sp for sp in lr.points if sp.sanitizer > 0])
        # Keyed by (tool, shape, stages): a shape's racecheck may be several runs (racecheck_parts).
        self._cancel = {(tool, k, tuple(st)): threading.Event() for tool, k, st in self.plan}
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.plan)), thread_name_prefix=f"gpulab-sanitizers-{lr.lab}")
        self._runs: dict[tuple[str, int, tuple[str, ...]], Future] = {
            (tool, k, tuple(stages)): self._pool.submit(self._run, tool, k, stages) for tool, k, stages in self.plan}
        if self.plan:
            lr.options.log(f"{lr.lab}: sanitizers (started beside correctness)")

    @staticmethod
    def wanted(lr: LabRun) -> bool:
        return (lr.gpu and lr.options.sanitizers and lr.options.untimed_ahead
                and any(sp.sanitizer > 0 for sp in lr.points) and bool(lr.rubric.sanitizer_shapes))

    def _run(self, tool: str, k: int, stages: list[str]) -> dict[str, compute_sanitizer.SanitizerReport]:
        cancel = self._cancel[(tool, k, tuple(stages))]
        if cancel.is_set():
            return {}
        with gpulock.gpu_lock(shared=True):
            return _tool(self.lr, tool, stages, k, cancel)

    def cancel_event(self, tool: str, k: int, stages: list[str]) -> threading.Event:
        return self._cancel[(tool, k, tuple(stages))]

    def take(self, tool: str, k: int, stages: list[str]) -> Future | None:
        """The run started ahead over exactly these stages (its result can be judged), or None."""
        key = (tool, k, tuple(stages))
        started = self._runs.get(key)
        if started is None or self._cancel[key].is_set():
            return None
        return started

    def keep_only(self, plan: Plan) -> None:
        """Correctness has decided: every run started ahead that is not exactly one of `plan`'s is
        cancelled (its stages changed, or none of them is eligible)."""
        wanted = {(tool, k, tuple(stages)) for tool, k, stages in plan}
        for key in self._runs:
            if key not in wanted:
                self._cancel[key].set()

    def __enter__(self) -> "Ahead":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for ev in self._cancel.values():
            ev.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _rerun_alone(lr: LabRun, eligible: list[StagePoints], plan: Plan,
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
        lr.grades[sp.id].checks["sanitizer"] = verdict(sp.sanitizer, reports, sp.id)


def _run_once(lr: LabRun, tool: str, stages: list[str], shape: int,
              cancel: threading.Event | None = None) -> compute_sanitizer.SanitizerReport:
    """The tool runs in the jail as the sandbox user in its own empty folder; its log is copied out."""
    rubric = lr.rubric
    case = rubric.sanitizer_shapes[shape]
    tag = f"shape{shape}" if len(rubric.sanitizer_shapes) > 1 else ""
    if len(stages) > 1 and tool == "racecheck" and rubric.racecheck_parts > 1 and case.size.n >= RACECHECK_SPLIT_MIN_N:
        tag += ("-" if tag else "") + "+".join(stages)   # one of the shape's parts: a log of its own
    with lr.sandbox.workdir() as wd:
        rep = compute_sanitizer.run_sanitizer(tool, lr.runner, stages, case.runner_args(), wd, rubric.tool_timeout,
                                      env=lr.sandbox.env(wd),
                                      wrapper=lr.sandbox.wrap([], rubric.tool_timeout * 4 + 10, rw=[wd],
                                                              ro=[lr.runner.parent], chdir=wd, untimed=True),
                                      tag=tag, cancel=cancel)
        copy_private_files(wd, lr.logs, "sanitizer-*.log")   # regular files only, links not followed
    rep = compute_sanitizer.relativize(rep, lr.ws_root)
    rep.shape = case.name
    return rep


def _tool(lr: LabRun, tool: str, stages: list[str], shape: int,
          cancel: threading.Event | None = None) -> dict[str, compute_sanitizer.SanitizerReport]:
    rep = _run_once(lr, tool, stages, shape, cancel)
    if len(stages) == 1 or not rep.ran or rep.clean:
        return {s: rep for s in stages}
    return {s: _run_once(lr, tool, [s], shape, cancel) for s in stages}


def verdict(pts: float, reports: list[compute_sanitizer.SanitizerReport], stage: str | None = None) -> Check:
    """All or nothing: clean needs every tool's summary with 0 errors and a trusted exit status,
    and, for `stage`, a run under the tools in which the stage did its job (wrong_in_every_run)."""
    check = Check("sanitizer", max_points=pts, data={"reports": [r.to_json() for r in reports]})
    bad = [r for r in reports if r.ran and not r.clean]
    missing = [r for r in reports if not r.ran]
    for r in bad:
        for f in r.findings:
            check.details.append(f"{r.tool}{_on(r)}: {f.excerpt}" if f.kind == compute_sanitizer.UNSEEN_RUN
                                 else f"{r.tool}{_on(r)}: {f.kind} at {f.where}\n{f.excerpt}")
    if bad:
        check.details += [f"{r.tool}{_on(r)}: not run ({r.reason})" for r in missing]
        check.status = FAIL
        check.summary = "; ".join(f"{r.tool}{_on(r)}: {_bad_summary(r)}" for r in bad)
        if all(f.kind == compute_sanitizer.UNSEEN_RUN for r in bad for f in r.findings):
            check.fix = ("run the same under a sanitizer as without one: no early exit, no other path "
                         "when a tool's library is loaded, output within the grader's limit")
        elif any(WARP_HAZARD in f.excerpt for r in bad for f in r.findings):
            check.fix = WARP_HAZARD_FIX
    elif missing:
        check.status, check.summary, check.fix = NOT_RUN, missing[0].reason, missing[0].fix
    elif stage is not None and wrong_in_every_run([r.statuses.get(stage) for r in reports]):
        check.status = FAIL
        check.summary = ("clean, but the stage's output was wrong in every run under the tools: sanitizer points are "
                         "for a stage that works on at least one of the rubric's sanitizer shapes")
        check.details = [f"{r.tool}{_on(r)}: the runner's check: {r.statuses[stage]}" for r in reports]
        check.fix = NOT_WORKING_FIX
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
    errors = sum(1 for f in r.findings if f.severity == "error")
    warnings = r.warnings if r.warnings is not None else sum(1 for f in r.findings if f.severity == "warning")
    if errors or not warnings:
        return f"{errors} finding(s)"
    # Only warnings, and the tool still failed the run: "0 finding(s)" above a list of hazards
    # (reduction's pipeline-lockstep-warp, H200, 2026-12-01) would read as a grader fault.
    return f"{warnings} hazard warning(s), which fail the run as errors do"


# The lanes of one warp need not run in lockstep since Volta (independent thread scheduling).
WARP_HAZARD = "Warp Level Programming"
WARP_HAZARD_FIX = ("order the shared-memory accesses of one warp's lanes with __syncwarp() (since Volta a warp's "
                   "lanes need not run in lockstep), as you order a block's with __syncthreads()")


def _on(r: compute_sanitizer.SanitizerReport) -> str:
    return f" (on {r.shape})" if r.shape else ""
