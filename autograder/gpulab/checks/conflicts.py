"""Bank conflicts: Nsight Compute's excess shared wavefronts of each stage with `conflict_free`
points, profiled in the sandbox's jail (README, step 6).

The profiles start beside the correctness phase (`Ahead`, opened by the pipeline before it): the
excess wavefronts are instruction-level counts (Source Counters patch the stage's own code), so
what other processes run on the GPU does not move them. Each profile holds the GPU shared
(gpulock.py), on the profiling thread itself: the pipeline's thread waits for these profiles
holding no lock, so a timing that waits for the GPU never waits on a thread that waits for it.
Correctness decides afterwards which profiles count: a stage its gate turns away (TODO, no passing case) keeps the gate's verdict,
and its profile, if one is still running then, is cancelled.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, Iterator

from gpulab import gpulock, proc
from gpulab.checks import kernel_profiles
from gpulab.checks.lab_run import NOT_WORKING_FIX, SANDBOX_FIX, LabRun, wrong_in_every_run
from gpulab.kernel_names import shown_kernels
from gpulab.rubric import StagePoints
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check
from gpulab.tools.ncu import report as ncu_report
from gpulab.tools.ncu import run as ncu_run


# The kernel-time profile of the stages at the conflicts size (their markers), in conflicts-times.txt.
ESCAPES = "kernels outside the stages' ranges (one kernel-time profile)"
# The one Source Counters profile of several stages, and its kernel-time profile (the same run) for
# the escape check, in conflicts-times.txt.
TOGETHER = "one profile of {stages}"
ESCAPES_TOGETHER = "kernels outside the ranges of {stages} (the shared profile's run, kernel time)"


def run(lr: LabRun) -> None:
    """The stages' conflict_free checks: from the profiles started ahead (lr.conflicts_ahead),
    else profiled now, one stage after another."""
    ahead = lr.conflicts_ahead
    if ahead is None:
        with Ahead(lr, decided=True) as now:
            now.finish()
    else:
        ahead.finish()


class Ahead:
    """Profiles the stages with conflict_free points one after another on a thread of its own; a
    stage's report is read back (three ncu imports, CPU only) while the GPU profiles the next
    (~2 s of each stage's 4-7 s on the H200, 2026-11-23). Until `decide()` (correctness has run)
    every such stage is profiled; after it only those the gate lets through. `finish()` gives
    every stage its check. Use as a context manager: leaving cancels what still runs."""

    def __init__(self, lr: LabRun, decided: bool = False) -> None:
        self.lr = lr
        self.stages = [sp for sp in lr.points if sp.conflict_free > 0]
        self._readers = ThreadPoolExecutor(max_workers=2)
        self._results: dict[str, Future] = {}
        self._seconds: dict[str, float] = {}
        self._escapes: dict[str, ncu_report.KernelProfile] = {}
        self._cancel: dict[str, threading.Event] = {}
        # The one profile of several stages (profile_together): its stages and its cancel, set
        # only when the gate turns every one of them away.
        self._together: tuple[list[StagePoints], threading.Event] | None = None
        self._lock = threading.Lock()
        self._decided = threading.Event()
        if decided:
            self._decided.set()
        self._error: BaseException | None = None
        self._closing = False
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._profile_all, name=f"gpulab-conflicts-{lr.lab}", daemon=True)
        self._thread.start()

    @staticmethod
    def wanted(lr: LabRun) -> bool:
        """Worth starting before correctness: some stage has conflict points and nothing that
        correctness does not decide (no GPU, --no-conflicts) rules them all out."""
        return lr.gpu and lr.options.conflicts and any(sp.conflict_free > 0 for sp in lr.points)

    def __enter__(self) -> "Ahead":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with self._lock:
            self._closing = True
            for ev in self._cancel.values():
                ev.set()
            if self._together is not None:
                self._together[1].set()
        self._thread.join()
        self._readers.shutdown(wait=True, cancel_futures=True)

    def _gate(self, sp: StagePoints) -> Check | None:
        """The gate's verdict once correctness has decided; None before it, or to go on."""
        if not self._decided.is_set():
            return None
        return self.lr.gate(self.lr.grades[sp.id], "conflict_free", sp.conflict_free, True)

    def _profile_all(self) -> None:
        try:
            with self._lock:
                pending = [sp for sp in self.stages if not self._gate(sp)]
            if len(pending) > 1:
                self._profile_together(pending)
            for sp in self.stages:
                with self._lock:
                    if self._closing:
                        return
                    if self._gate(sp) or sp.id in self._results:
                        continue
                    cancel = self._cancel[sp.id] = threading.Event()
                with gpulock.gpu_lock(shared=True):
                    t0 = time.monotonic()
                    self.lr.options.log(f"{self.lr.lab}/{sp.id}: bank conflicts (ncu)")
                    self._results[sp.id] = stage(self.lr, sp, self._readers, cancel)
                self._seconds[sp.id] = time.monotonic() - t0
            with self._lock:
                # Not for a stage its gate has turned away: its profile is not counted either (a
                # starter's TODO stages paid 18-24 s for this profile beside other rows, 2026-11-29).
                # A stage judged from the shared profile has its escape profile already.
                todo = [sp.id for sp in self.stages
                        if sp.id in self._results and sp.id not in self._escapes and not self._closing
                        and not self._gate(sp)]
            if todo:
                with gpulock.gpu_lock(shared=True):
                    t0 = time.monotonic()
                    self._escapes.update(kernel_profiles.profile_conflict_runs(self.lr, todo))
                self._seconds[ESCAPES] = time.monotonic() - t0
        except BaseException as e:  # noqa: BLE001 (re-raised by finish() on the pipeline's thread)
            self._error = e

    def _profile_together(self, pending: list[StagePoints]) -> None:
        """One Source Counters profile of the pending stages (tools/ncu/run.py, "several stages in
        one profile"), then one kernel-time profile of the same run (the same stages in the same
        order, the same argv) for the escape check: a stage that both find honest (0 excess, its
        runner check passed, no kernel outside its range, as many kernels in its range in both)
        gets its verdict from them. Every other stage is profiled alone afterwards, as before: one
        with excess (its lines come from its own source page), and any whose share cannot be
        trusted. The escape check must see the program the shared profile saw: a stage could act
        honestly when run alone and move its kernels under another stage's range name only in a
        run of several stages (its argv says so), where the escape profile sees it."""
        with self._lock:
            # The gate may have decided since `pending` was read.
            pending = [sp for sp in pending if not self._gate(sp)]
            if self._closing or len(pending) < 2:
                return
            cancel = threading.Event()
            self._together = (pending, cancel)
        ids = [sp.id for sp in pending]
        with gpulock.gpu_lock(shared=True):
            t0 = time.monotonic()
            self.lr.options.log(f"{self.lr.lab}: bank conflicts of {', '.join(ids)} (ncu, one profile)")
            profiled = together(self.lr, ids, cancel)
        self._seconds[TOGETHER.format(stages=", ".join(ids))] = time.monotonic() - t0
        if profiled == ncu_run.PROFILE_CANCELLED:
            return
        if isinstance(profiled, str):
            self.lr.options.log(f"{self.lr.lab}: one profile of {', '.join(ids)} not used ({profiled}): "
                                "each stage profiled alone")
            return
        try:
            with _report_reader(self.lr) as reader:
                reports = ncu_run.read_stages_conflicts(profiled, **reader)
        except OSError as e:   # the report vanished or was replaced under the reader: alone, as before
            self.lr.options.log(f"{self.lr.lab}: one profile of {', '.join(ids)} not read ({e}): each stage profiled alone")
            return
        # Only a stage whose own check passed in that run: a failure there may be another stage's
        # doing in the shared process (a leftover), which its own run would not show.
        reports = {sid: rep for sid, rep in reports.items() if (profiled.runs.get(sid) or ("",))[0] == "pass"}
        if not reports:
            return
        with self._lock:
            if self._closing or cancel.is_set():
                return
        with gpulock.gpu_lock(shared=True):
            t0 = time.monotonic()
            escapes = kernel_profiles.profile_conflict_runs_together(self.lr, ids)
        self._seconds[ESCAPES_TOGETHER.format(stages=", ".join(ids))] = time.monotonic() - t0
        for sp in pending:
            rep, prof = reports.get(sp.id), escapes.get(sp.id)
            if rep is None or prof is None or not _honest_share(rep, prof):
                continue
            self._escapes[sp.id] = prof
            self._results[sp.id] = self._readers.submit(_verdict, self.lr, sp.id, sp.conflict_free, rep,
                                                        profiled.runs.get(sp.id))

    def decide(self) -> None:
        """Correctness has run: the gates are known. A running profile of a stage its gate turns
        away is cancelled, and no such stage is started."""
        with self._lock:
            self._decided.set()
            for sp in self.stages:
                if sp.id in self._cancel and self._gate(sp):
                    self._cancel[sp.id].set()
            # A stage of the shared profile turned away: the others are profiled alone instead (a
            # turned-away stage that hangs at the profile's size must not hold the profiler).
            if self._together is not None and any(self._gate(sp) for sp in self._together[0]):
                self._together[1].set()

    def finish(self) -> None:
        """Waits for the profiles and gives each stage its check: the gate's, else its report's."""
        self.decide()
        waited = time.monotonic()
        self._thread.join()
        if self._error is not None:
            raise self._error
        spent = {}
        for sp in self.stages:
            gated = self._gate(sp)
            self.lr.grades[sp.id].checks["conflict_free"] = gated or _escaped(
                self._results[sp.id].result(), self._escapes.get(sp.id), sp.id)
            if sp.id in self._seconds:
                spent[sp.id + (f" (not counted: {gated.summary})" if gated else "")] = self._seconds[sp.id]
        stage_ids = {sp.id for sp in self.stages}
        spent.update({k: v for k, v in self._seconds.items() if k not in stage_ids})
        end = time.monotonic()
        self.lr.write_times("conflicts", spent,
                            header=f"ncu per stage; {end - self._start:.1f} s from the first profile to the last "
                                   f"verdict, {end - waited:.1f} s of them after the phases beside it")


def _escaped(check: Check, prof: ncu_report.KernelProfile | None, sid: str) -> Check:
    """The check, or a FAIL when the stage's run at the conflicts size launched kernels outside its
    NVTX range (the Source Counters profile, filtered to the range, never saw them) or could not be
    read as the stage's run (ncu_run: a cut output, no markers and no kernel)."""
    if prof is None:
        return check
    # The Source Counters profile's own kernels (report.kernels) against the range's kernels in the
    # unfiltered run: fewer means some kernel of the range (inside a nested range of the student's,
    # say) was left out by the filter, whatever ncu's matching rules are. The same program at the
    # same size and knobs launches the same kernels: a stage profiled alone against the runs of
    # several stages (a stage's one-time set-up, done by an earlier stage of that run, can only make
    # the unfiltered count smaller; a run in which another stage wore this stage's range name is not
    # used: ncu_run.profile_stages_kernel_time), a stage of the shared profile against the same run
    # (_honest_share).
    profiled = (check.data.get("report") or {}).get("kernels") or []
    short = bool(prof.kernels) and check.status == PASS and len(profiled) < len(prof.kernels)
    if not (prof.escaped or prof.anomaly or short):
        return check
    shown = shown_kernels(prof.escaped)
    what = (f"kernels launched during its run outside the NVTX range gpulab:{sid} ({', '.join(shown[:3])})"
            if prof.escaped else prof.anomaly or
            f"{len(prof.kernels)} kernels in the stage's range, of which the Source Counters profile covered "
            f"{len(profiled)}")
    return Check("conflict_free", FAIL, 0, check.max_points,
                 f"the bank-conflict profile reads only the stage's NVTX range, and Nsight Compute saw {what}: "
                 "their conflicts were not counted",
                 fix="launch every kernel from the stage's run() on its calling thread, and leave the NVTX ranges "
                     "your code did not push alone", data=dict(check.data, escaped=prof.escaped, anomaly=prof.anomaly))


def _honest_share(rep: ncu_report.ConflictReport, prof: ncu_report.KernelProfile) -> bool:
    """A stage's share of the shared profile stands when the kernel-time profile of the same run saw
    its run whole (markers, times, no anomaly), nothing of it outside its range, and as many kernels
    inside its range as the Source Counters share holds."""
    return (prof.ms is not None and not prof.why and not prof.escaped and not prof.anomaly
            and bool(prof.kernels) and len(prof.kernels) == len(rep.kernels))


def together(lr: LabRun, ids: list[str], cancel: threading.Event) -> ncu_run.ProfiledStages | str:
    """The stages profiled in one ncu process, in the jail as stage() profiles one; a string says
    why not (then each is profiled alone)."""
    rubric = lr.rubric
    assert rubric.conflicts_size is not None
    with kernel_profiles.jailed_profiler(lr) as (wrapper, why, scratch):
        if wrapper is None:
            return why
        # One stage's time limit for the run of all: an honest one takes seconds, and a run past it
        # is profiled stage by stage, each with that limit, as before.
        return ncu_run.profile_stages_conflicts(lr.runner, ids, rubric.conflicts_size.arg, lr.logs,
                                                rubric.tool_timeout, wrapper=wrapper, scratch=scratch,
                                                runner_args=rubric.conflicts_args(), env=lr.sandbox.env(scratch),
                                                cancel=cancel)


@contextlib.contextmanager
def _report_reader(lr: LabRun) -> Iterator[dict[str, Any]]:
    """How a report is read back: the report lay where student code could replace it, so it is
    read in the jail too, as the sandbox user, from a copy in a folder of its own (the logs may lie
    where the sandbox user cannot enter). Reading is CPU work beside other rows' timings: at the
    builds' niceness."""
    with lr.sandbox.workdir() as rd:
        if not lr.sandbox.jailed:
            yield {"import_wrapper": proc.background([])}
            return
        wrapper = lr.sandbox.wrap([], lr.rubric.tool_timeout * 2 + 10, rw=[rd], ro=[lr.logs.resolve()], chdir=rd,
                                  untimed=True)
        yield {"import_wrapper": wrapper, "import_env": lr.sandbox.env(rd), "import_dir": rd}


def stage(lr: LabRun, sp: StagePoints, readers: ThreadPoolExecutor, cancel: threading.Event | None = None
          ) -> Future:
    """The stage profiled here (ncu on the GPU), its report read by `readers` (a future)."""
    sid, pts = sp.id, sp.conflict_free
    rubric = lr.rubric
    assert rubric.conflicts_size is not None
    with kernel_profiles.jailed_profiler(lr) as (wrapper, why, scratch):
        if wrapper is None:
            profiled = ncu_report.ConflictReport.not_run(sid, why, SANDBOX_FIX)
        else:
            profiled = ncu_run.profile_stage_conflicts(lr.runner, sid, rubric.conflicts_size.arg, lr.logs,
                                                       rubric.tool_timeout, wrapper=wrapper, scratch=scratch,
                                                       runner_args=rubric.conflicts_args(),
                                                       env=lr.sandbox.env(scratch), cancel=cancel)
    return readers.submit(_verdict, lr, sid, pts, profiled)


def _verdict(lr: LabRun, sid: str, pts: float, profiled: ncu_report.ConflictReport | ncu_run.ProfiledStage,
             run: tuple[str, str] | None = None) -> Check:
    """The stage's check from its report (`run`: the runner's own (status, message) in a shared
    profile's run; a stage's own profile carries it)."""
    rubric = lr.rubric
    run_status, run_message = (run[0] or None, run[1]) if run else (None, "")   # the runner's own check
    if isinstance(profiled, ncu_report.ConflictReport):
        rep = profiled
    else:
        run_status, run_message = profiled.run_status or None, profiled.run_message
        with _report_reader(lr) as reader:
            rep = ncu_run.read_conflicts(profiled, **reader)
    ncu_report.relativize(rep, lr.ws_root)
    _fill_source_lines(rep, lr.lab, lr.contents)
    check = Check("conflict_free", max_points=pts, data={"report": rep.to_json()})
    if not rep.measured:
        check.status, check.summary, check.fix = NOT_RUN, rep.reason, rep.fix
    elif rep.outside_range:
        # Conflict-free points are for the stage's own shared-memory code: a stage computed on the
        # host, or whose kernels run outside its range (another host thread, a popped range), shows
        # only the harness's kernels here, or none.
        check.status = FAIL
        check.summary = f"no kernel ran inside the stage's NVTX range gpulab:{sid}: nothing of the stage's own to check"
        check.fix = ("compute the stage with your own kernels, launched on the default stream from the "
                     "stage's function (not on the host, not from another thread)")
    elif rep.total_excessive == 0 and wrong_in_every_run([run_status]):
        # A copy through shared memory is conflict-free too.
        check.status = FAIL
        check.summary = (f"0 excess shared wavefronts, but the profiled run (n = {rubric.conflicts_size.arg}) "
                         "computed a wrong result: conflict-free points are for a stage that works")
        check.details = [f"the runner's check in the profiled run: {run_message}"] if run_message else []
        check.fix = NOT_WORKING_FIX
    elif rep.total_excessive == 0:
        check.status, check.points, check.summary = PASS, pts, "0 excess shared wavefronts"
    else:
        check.status = FAIL
        check.summary = f"{rep.total_excessive} excess shared wavefronts (bank conflicts)"
        check.details = ncu_report.format_report(rep).splitlines()[1:]
    return check


def _fill_source_lines(rep: ncu_report.ConflictReport, lab: str, contents: dict[str, bytes]) -> None:
    """Quote the line from the submitted file itself (the workspace may have moved on)."""
    for ln in rep.lines:
        for name, data in contents.items():
            if ln.file in (f"labs/{lab}/{name}", name):
                lines = data.decode("utf-8", errors="replace").splitlines()
                if 0 < ln.line <= len(lines):
                    ln.source = lines[ln.line - 1].strip()
