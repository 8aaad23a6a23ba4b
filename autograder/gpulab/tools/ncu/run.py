"""Running Nsight Compute on a runner's stage: the bank-conflict profile (Source Counters, its
report read back page by page) and the kernel-time profile (gpu__time_duration.sum, the kernels'
names), each in its own ncu run whose output is logged. A profiled run is student code: it
starts after the caller's `wrapper` (the sandbox's jail) with the caller's `env`.

The readers of the output are parse.py; the verdicts and their text report.py.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from gpulab import gpulock, kernel_names, proc
from gpulab.tools import locate
from gpulab.tools.ncu.parse import (PROFILER_FAULT, ProfiledRun, StageKernels, diagnose_failure, parse_kernels,
                                    parse_profiled_run, split_raw_by_stage)
from gpulab.tools.ncu.report import ConflictReport, KernelProfile, build_report
from gpulab.tools.runner_json import parse_runner_json, stage_result

# What a kernel-time profile measures: each kernel's GPU time at the card's own clocks and with the
# caches as the kernel before it left them (--cache-control none). The timed runs it stands against
# flush L2 once before each run of a stage (common/include/gpulab/timing.hpp), and the stage's
# kernels then find in L2 what the one before left there; ncu's default flushes before every
# kernel, which measured more than an honest timing can: bitonic's phase0 at 2^23 keys (32 MiB,
# inside the H200's 60 MB L2, 276 kernels) summed 5.27 ms flushed and 4.23 ms unflushed, against a
# timed median of 4.35 ms (H200, 2026-11-28): flushed, the reference itself sat at 0.83x its kernel
# time, a hair above TIMING_TRUST, so it would be scored at the slower kernel time. Data larger than L2
# (radix-sort's 64 MiB) measured the same both ways (split-global 25.84 vs 26.03 ms).
KERNEL_TIME = ("--metrics", "gpu__time_duration.sum", "--clock-control", "none", "--cache-control", "none")

# The output of an ncu run kept for reading: a profiled run's CSV shares stdout with the student's
# program, which may print without end (proc.MAX_OUTPUT, 4 MiB, would drop ncu's rows printed after
# it), and a report's pages grow with the kernels profiled (bitonic's phase 1 at 65536 keys: a 4.2 MiB
# source page). An honest run stays far below; output cut at this size is never read as complete.
OUTPUT_LIMIT = 64 << 20
# Why a kernel-time profile whose output was cut is not trusted (the checks that read it fail the
# stage: checks/library.py, checks/performance.py).
# A profiled run in which the stage never ran: its points cannot be checked (library, timing).
NOT_SEEN = ("neither the grader's marker kernels nor any kernel of the stage ran under Nsight Compute: "
            "the stage's run was not seen (did the program end, or change course, under the profiler?)")
OUTPUT_CUT = (f"the profiled run printed more than {OUTPUT_LIMIT >> 20} MiB, and Nsight Compute's rows after that "
              "were cut: the stage's kernels could not all be seen")


def _run_ncu(ncu: Path, args: list[str], timeout: float, log: Path | None, tag: str,
             wrapper: list[str] | None = None, cwd: Path | None = None,
             env: dict[str, str] | None = None, cancel: threading.Event | None = None) -> proc.Result:
    """ncu with args (after `wrapper`, the sandbox's jail), its output logged. A profiling run
    (student code) gets the sandbox's clean `env` and holds the GPU's profiler lock (one profile
    at a time per GPU, gpulock.profiler_lock); reading a report back needs neither."""
    reading = "--import" in args
    cmd = (wrapper or []) + [str(ncu)] + args
    with contextlib.nullcontext(True) if reading else gpulock.profiler_lock(cancel=cancel) as got:
        if not got or (cancel is not None and cancel.is_set()):   # called off before it started
            return proc.Result(cmd, -1, "", "", 0.0, cancelled=True)
        res = proc.run(cmd, timeout=timeout, cwd=cwd, env=env, cancel=cancel, max_output=OUTPUT_LIMIT)
        if _profiler_fault(res) and not (cancel is not None and cancel.is_set()):
            if log is not None:
                _log_result(log, res, wrapper, tag + "; Nsight Compute's own fault: profiled again")
            time.sleep(PROFILER_FAULT_PAUSE_S)
            res = proc.run(cmd, timeout=timeout, cwd=cwd, env=env, cancel=cancel, max_output=OUTPUT_LIMIT)
    if log is not None:
        _log_result(log, res, wrapper, tag)
    return res


# A profile that Nsight Compute itself failed (parse.PROFILER_FAULT: the stage's conflicts went "not
# run" on two H200s, 2026-11-29, where the known-bad class expected them measured) runs once more;
# a second fault stands (not run, saying whose fault it was: parse.diagnose_failure).
PROFILER_FAULT_PAUSE_S = 2.0


def _profiler_fault(res: proc.Result) -> bool:
    return (not res.timed_out and not res.cancelled and res.returncode != 0
            and PROFILER_FAULT.search(res.stdout + res.stderr) is not None)


def _log_result(log: Path, res: proc.Result, wrapper: list[str] | None, tag: str) -> None:
    """Appends one ncu command (without the jail's prefix), its exit and its output to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    shown = res.cmd[len(wrapper or []):]
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(shown)}\n# {res.describe_exit()} in {res.seconds:.1f} s ({tag})\n")
        f.write(res.stdout)
        f.write(res.stderr)
        f.write("\n")


def profile_stages_kernel_time(runner: Path, stages: list[str], size_arg: str, work: Path, timeout: float = 300,
                               wrapper: list[str] | None = None, scratch: Path | None = None,
                               env: dict[str, str] | None = None,
                               runner_args: list[str] | None = None,
                               library_only: bool = False,
                               cancel: threading.Event | None = None) -> dict[str, KernelProfile]:
    """profile_kernel_time for several stages in one ncu run of one process (one start of ncu
    and of the runner instead of one per stage: ~2.5 s each on an H100). Kernels are attributed
    by the NVTX stack column. Only the stages this run measured are returned: a stage left
    out (it launched no kernel, the process broke before it, ncu printed no stack column)
    is for the caller to profile alone, where "no kernel in the range" is decided. With
    `library_only` (LIBRARY_ONLY) a stage without a kernel the filter let through is returned
    too when every stage's pair of markers was seen: its run was seen, and had no library kernel.
    `cancel` set: the run is stopped (or never started) and nothing is returned."""
    ncu = locate.find_tool("ncu")
    if ncu is None or not stages:
        return {}
    work.mkdir(parents=True, exist_ok=True)
    target = [str(runner), "run"]
    for s in stages:
        target += ["--stage", s]
    target += ["--n", size_arg, "--no-time", "--format", "json"] + (runner_args or [])
    # No NVTX include filter: every kernel is profiled (one pass each for this metric), and the
    # stack column says whose it is; it does not depend on how several filters combine.
    args = [*KERNEL_TIME, "--csv", *KERNEL_NAME_BASE, *_library_filter(library_only), "--nvtx"] + target
    res = _run_ncu(ncu, args, timeout, work / "ncu-time-stages.log",
                   _tag("kernel time, all stages", library_only), wrapper, scratch, env, cancel)
    if res.cancelled or res.timed_out or res.truncated or diagnose_failure(res.stdout + res.stderr):
        return {}
    run = parse_profiled_run(res.stdout)
    # One pair of markers per stage, each pair one stage's: anything else (an escape nobody's range
    # names, a marker launched by student code, a range named for a stage this run did not ask for)
    # is decided where one stage is profiled alone.
    if run.anomaly or run.unattributed or run.markers not in (0, len(stages)) or set(run.stages) - set(stages):
        return {}
    # The runner runs the stages in the order asked, one pair of markers each: a pair whose kernels
    # wear the range of a stage other than the one at its place is one stage's run under another's
    # name (its kernels would count as that stage's), decided alone, where it is an escape.
    if run.markers == len(stages) and any(o not in (None, s) for o, s in zip(run.pair_owners, stages)):
        return {}
    if library_only and any(kernel_names.library_kernel(k) for st in run.stages.values() for k in st.names + st.escaped):
        # Filtered, a pair shows only the library kernels in it, so a kernel in a range the stage
        # pushed under another checked stage's name ("gpulab:<other>") is that stage's here: whose
        # it is, is decided alone (where the other name is an escape). An honest run has none.
        return {}
    if library_only:
        # Every stage's pair of markers seen: each run was seen, and had no library kernel. Without
        # them (or without the stack column) each stage is decided alone, as profile_kernel_time does.
        return ({s: _stage_profile(run, s, library_only) for s in stages}
                if run.has_stack and run.markers == len(stages) else {})
    return {s: _stage_profile(run, s) for s, k in run.stages.items() if s in stages and k.names}


# How the kernel-time profiles name kernels: mangled, the one form that says which namespace a
# kernel is declared in (checks/library.py). The default (the bare function name) and
# "demangled" both printed CUB's scan as `DeviceScanKernel<...>` with no namespace on the H100
# (2026-11), and a demangled name mixes the kernel's own namespaces with its template arguments'.
KERNEL_NAME_BASE = ("--print-kernel-base", "mangled")

# A profile for the library check alone (checks/library.py: a stage the timing cross-check did not
# profile): only kernels whose mangled name could be a library's, and the grader's markers, are
# profiled (kernel_names.library_name_filter); every other launch passes at ~0.3 ms instead of
# ~7.5 ms (seed 003's split-global: 1656 kernels, 12 s profiled). Its time is the library kernels'
# only, and a kernel of the student's own that escaped the stage's range is not seen: no check
# that reads either (the timing cross-check, the conflicts' escape check) uses such a profile.
LIBRARY_ONLY = "library kernels only"


def _tag(what: str, library_only: bool) -> str:
    """The log's name for an ncu run: what it measures, and whether only library kernels."""
    return f"{what}, {LIBRARY_ONLY}" if library_only else what


def _library_filter(library_only: bool) -> list[str]:
    return (["--kernel-name-base", "mangled", "--kernel-name", "regex:" + kernel_names.library_name_filter()]
            if library_only else [])


def _stage_nvtx_filter(stage: str) -> list[str]:
    """Only the kernels inside the push/pop range "gpulab:<stage>" that the runner opens around
    the stage's run() (common/src/runner.cpp): not input generation, not output poisoning."""
    return ["--nvtx", "--nvtx-include", f"gpulab:{stage}/"]


def _stage_run(runner: Path, stage: str, size_arg: str) -> list[str]:
    """The profiled program: one untimed run of the stage."""
    return [str(runner), "run", "--stage", stage, "--n", size_arg, "--no-time", "--format", "json"]


def profile_kernel_time(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                        wrapper: list[str] | None = None, scratch: Path | None = None,
                        env: dict[str, str] | None = None,
                        runner_args: list[str] | None = None, library_only: bool = False) -> KernelProfile:
    """The GPU time of the stage's kernels as Nsight Compute measures it, and their names.

    This number does not come from the student's process: ncu reads it from the hardware. It is
    kernel time only (no launch gaps) at the card's own clocks, caches warm (KERNEL_TIME), so a
    stage's honest median is never far below it; a reported time far below it was not measured.
    The names say whose kernels ran (the student's, or a library's: rubric `library`).
    `library_only`: only the kernels that could be a library's, and the markers (LIBRARY_ONLY).
    """
    ncu = locate.find_tool("ncu")
    if ncu is None:
        return KernelProfile(None, "ncu (Nsight Compute) not found")
    work.mkdir(parents=True, exist_ok=True)
    # No include filter: the harness's own kernels are profiled too (a few), so that a kernel the
    # stage launched outside its range is seen between the runner's markers (parse_profiled_run).
    args = ([*KERNEL_TIME, "--csv", *KERNEL_NAME_BASE, *_library_filter(library_only), "--nvtx"]
            + _stage_run(runner, stage, size_arg) + (runner_args or []))
    res = _run_ncu(ncu, args, timeout, work / f"ncu-time-{stage}.log",
                   _tag("kernel time", library_only), wrapper, scratch, env)
    failed = _not_measured(res, timeout)
    if failed:
        return failed
    run = parse_profiled_run(res.stdout)
    if library_only and run.markers == 0:
        # The filter lets the runner's markers through and hides the stage's own kernels: without
        # markers (a runner built before them, or a program that ended first) nothing here says the
        # stage ran, and the whole profile decides (by the range, or "not seen"), as before the filter.
        return profile_kernel_time(runner, stage, size_arg, work, timeout, wrapper, scratch, env, runner_args)
    if res.returncode == 0 and "No kernels were profiled" in res.stdout + res.stderr:
        # Not one kernel in a run profiled without a filter, not even the harness's own (input
        # generation, the markers): the program ended, or took another course, before them (the
        # same rule as below; without this the range filter's run reads "no kernel in the range").
        return KernelProfile(0.0, "no kernel ran in the whole run", anomaly=NOT_SEEN, library_only=library_only)
    if not run.has_stack:
        return _profile_by_filter(ncu, runner, stage, size_arg, work, timeout, wrapper, scratch, env, runner_args,
                                  library_only)
    # The runner pushes one range in a run of one stage, "gpulab:<stage>": a kernel in a range named
    # for another stage ran in one the stage's code pushed (inside the markers, else an anomaly
    # already), after popping its own: it escaped the stage's range like a kernel with none.
    for other in [s for s in run.stages if s != stage]:
        run.unattributed.extend(run.stages.pop(other).names)
    if run.markers > 1 and not run.anomaly:
        run.anomaly = f"{run.markers} pairs of the grader's marker kernels in one run of one stage (the runner launches one)"
    if run.markers == 0 and stage not in run.stages and not run.anomaly:
        # Neither the runner's markers nor a kernel in the range: the stage never ran under the
        # profiler (the program ended first, or took another course when it saw one), so nothing
        # of it was checked. A stage computed on the host still shows its markers.
        run.anomaly = NOT_SEEN
    # In a run of one stage every escape is that stage's, also where none of its kernels stayed inside.
    run.stages.setdefault(stage, StageKernels()).escaped.extend(run.unattributed)
    prof = _stage_profile(run, stage, library_only)
    if prof.ms == 0.0 and not prof.kernels and not library_only:
        prof.why = "no kernel ran inside the stage's NVTX range"
    return prof


def _profile_by_filter(ncu: Path, runner: Path, stage: str, size_arg: str, work: Path, timeout: float,
                       wrapper: list[str] | None, scratch: Path | None, env: dict[str, str] | None,
                       runner_args: list[str] | None = None, library_only: bool = False) -> KernelProfile:
    """An ncu that prints no NVTX stack column cannot tell the stage's kernels from the harness's:
    the stage is profiled again with ncu's include filter on its range, as before the markers, and
    the profile says that an escape from the range is not excluded."""
    args = ([*KERNEL_TIME, "--csv", *KERNEL_NAME_BASE, *_library_filter(library_only)] + _stage_nvtx_filter(stage)
            + _stage_run(runner, stage, size_arg) + (runner_args or []))
    res = _run_ncu(ncu, args, timeout, work / f"ncu-time-{stage}.log", "kernel time, range filter", wrapper, scratch, env)
    failed = _not_measured(res, timeout)
    if failed:
        return failed
    unchecked = "ncu printed no NVTX stack column: an escape from the stage's NVTX range is not excluded"
    if res.returncode == 0 and "No kernels were profiled" in res.stdout + res.stderr:
        return (KernelProfile(0.0, unchecked, library_only=True) if library_only else
                KernelProfile(0.0, "no kernel ran inside the stage's NVTX range"))
    ms, names = parse_kernels(res.stdout)
    return KernelProfile(ms, unchecked if ms is not None else f"ncu printed no kernel time for the stage; {unchecked}", names,
                         library_only=library_only)


def _stage_profile(run: ProfiledRun, stage: str, library_only: bool = False) -> KernelProfile:
    """A stage's KernelProfile from a profiled run: its range's time and names, its escapes and the
    run's anomaly."""
    k = run.stages.get(stage)
    ms, names, escaped = (k.ms, k.names, k.escaped) if k else (0.0, [], [])
    why = "" if ms is not None else "ncu printed no kernel time for the stage"
    if run.markers == 0:
        why = (why + "; " if why else "") + "the runner's marker kernels were not seen: an escape from the stage's NVTX range is not excluded"
    return KernelProfile(ms, why, names, escaped=list(escaped), anomaly=run.anomaly, library_only=library_only)


def _not_measured(res: proc.Result, timeout: float) -> KernelProfile | None:
    """Why an ncu run of a kernel-time profile measured nothing (timed out, or ncu's own failure),
    or None when its output can be read."""
    if res.timed_out:
        return KernelProfile(None, f"ncu timed out after {timeout:.0f} s")
    if res.truncated:
        return KernelProfile(None, OUTPUT_CUT, anomaly=OUTPUT_CUT)
    diag = diagnose_failure(res.stdout + res.stderr)
    return KernelProfile(None, diag[0]) if diag else None


@dataclass
class ProfiledStage:
    """A stage's Source Counters report, written and moved to `work`, waiting to be read back
    (read_conflicts): the GPU half of profile_conflicts is done, the CPU half is not."""

    stage: str
    report_file: Path
    work: Path
    log: Path
    notes: list[str]
    timeout: float
    ncu: Path
    outside_range: bool = False   # no kernel ran inside the stage's range: every kernel was profiled
    # The runner's own check of the stage's output in the profiled run ("pass", "fail", ...; "" when
    # its document was not found). Printed by student code: it can only cost points (checks/conflicts.py).
    run_status: str = ""
    run_message: str = ""


def profile_conflicts(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                      wrapper: list[str] | None = None, scratch: Path | None = None,
                      runner_args: list[str] | None = None, env: dict[str, str] | None = None,
                      import_wrapper: list[str] | None = None,
                      import_env: dict[str, str] | None = None,
                      import_dir: Path | None = None) -> ConflictReport:
    """Profiles `runner run --stage S --n N --no-time` with Source Counters and reads the excess:
    profile_stage_conflicts, then read_conflicts (apart, a grader reads one stage's report on the
    CPU while the GPU profiles the next)."""
    profiled = profile_stage_conflicts(runner, stage, size_arg, work, timeout, wrapper, scratch, runner_args, env)
    if isinstance(profiled, ConflictReport):
        return profiled
    return read_conflicts(profiled, import_wrapper, import_env, import_dir)


# Why a profile stopped early: its `cancel` was set (checks/conflicts.py: the stage's gate turned it away).
PROFILE_CANCELLED = "profile cancelled: the stage's correctness decided it first"


def profile_stage_conflicts(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                            wrapper: list[str] | None = None, scratch: Path | None = None,
                            runner_args: list[str] | None = None,
                            env: dict[str, str] | None = None,
                            cancel: threading.Event | None = None) -> ConflictReport | ProfiledStage:
    """The GPU half: one Source Counters profile of the stage, its report moved to `work`; a
    ConflictReport when that already decides (not measured, no kernel, `cancel` set).

    Only the stage's own NVTX range "gpulab:<stage>" is profiled (the runner pushes it around the
    stage's run()), so input generation and output poisoning kernels do not count. The profiling
    run (student code) starts after `wrapper` (the sandbox's jail) with `env` in `scratch`, where
    ncu writes its report (moved to `work` afterwards): `work` may lie in a hidden folder.
    """
    ncu = locate.find_tool("ncu")
    if ncu is None:
        return ConflictReport.not_run(stage, "ncu (Nsight Compute) not found", locate.MISSING_FIX["ncu"])
    work.mkdir(parents=True, exist_ok=True)
    rep = (scratch or work) / f"ncu-{stage}"
    log = work / f"ncu-{stage}.log"
    log.unlink(missing_ok=True)
    target = _stage_run(runner, stage, size_arg) + (runner_args or [])
    base = ["--section", "SourceCounters", "--export", str(rep), "--force-overwrite"]
    nvtx = _stage_nvtx_filter(stage)
    res = _run_ncu(ncu, base + nvtx + target, timeout, log, "profile", wrapper, scratch, env, cancel)
    notes = []
    out = res.stdout + res.stderr
    if res.cancelled:
        return ConflictReport.not_run(stage, PROFILE_CANCELLED)
    if res.timed_out:
        return ConflictReport.not_run(stage, f"ncu timed out after {timeout:.0f} s",
                                      "raise [limits] tool_timeout or lower [conflicts] n in the rubric")
    diag = diagnose_failure(out)
    if diag:
        return ConflictReport.not_run(stage, *diag)
    if "No kernels were profiled" in out:
        notes.append("no kernel matched the NVTX range gpulab:%s; profiled every kernel of the run instead "
                     "(the harness's too): not the stage's own code, so a grade gives it no conflict-free points" % stage)
        res = _run_ncu(ncu, base + target, timeout, log, "profile without NVTX filter", wrapper, scratch, env,
                       cancel)
        out = res.stdout + res.stderr
        if res.cancelled:
            return ConflictReport.not_run(stage, PROFILE_CANCELLED)
        if "No kernels were profiled" in out:
            return ConflictReport(stage, True, 0, 0, notes=notes + ["the stage launched no kernel"],
                                  outside_range=True)
    report_file = rep.with_name(rep.name + ".ncu-rep")
    if scratch is not None and report_file.is_file() and not report_file.is_symlink():
        report_file = Path(shutil.move(report_file, work / report_file.name))
    if report_file.is_symlink() or not report_file.is_file():
        # (A link left where the report should be is the profiled program's, and would point the
        # reader at a file gone with the scratch folder.)
        last = (out.strip().splitlines() or ["no output"])[-1]
        return ConflictReport.not_run(stage, f"ncu wrote no report ({res.describe_exit()}): {last[:200]}",
                                      f"see {log}")
    row = stage_result(parse_runner_json(res.stdout), stage) or {}
    return ProfiledStage(stage, report_file, work, log, notes, timeout, ncu, outside_range=bool(notes),
                         run_status=str(row.get("status", "")), run_message=str(row.get("message", "")))


# The pages a verdict reads, each one `ncu --import` (about 0.5-1.2 s each on the H200 machine).
_CONFLICT_PAGES = (("raw", ["--page", "raw", "--csv"]),
                   ("source", ["--page", "source", "--csv", "--print-source", "cuda,sass"]),
                   ("details", ["--page", "details", "--csv"]))


def _readable(report_file: Path, import_dir: Path | None) -> Path:
    """The report as the jailed reader reads it: a copy in `import_dir` (a folder the sandbox user
    can read), else the file itself."""
    if import_dir is None:
        return report_file
    readable = import_dir / report_file.name
    shutil.copyfile(report_file, readable)
    readable.chmod(0o644)
    return readable


def read_conflicts(profiled: ProfiledStage, import_wrapper: list[str] | None = None,
                   import_env: dict[str, str] | None = None, import_dir: Path | None = None) -> ConflictReport:
    """The CPU half: the report's pages read back and the verdict built.

    The report was written where student code could replace it, so it is read after
    `import_wrapper` (the jail, as the sandbox user), not with the grader's rights: from a copy in
    `import_dir` (a folder the sandbox user can read; `work`, the grade's logs, may lie under a
    folder it cannot enter, as /root did on the GPU machine: every import failed there). The
    three pages are imported at once (each import is one ncu start on the CPU); the log keeps
    them in page order.
    """
    ncu, stage, work, log, timeout = profiled.ncu, profiled.stage, profiled.work, profiled.log, profiled.timeout
    readable = _readable(profiled.report_file, import_dir)

    def page(tag: str, args: list[str]) -> proc.Result:
        return _run_ncu(ncu, ["--import", str(readable)] + args, timeout, None, f"{tag} page", import_wrapper,
                        env=import_env)

    with ThreadPoolExecutor(max_workers=len(_CONFLICT_PAGES)) as pool:
        results = list(pool.map(lambda tp: page(*tp), _CONFLICT_PAGES))
    pages = {}
    for (tag, _), res in zip(_CONFLICT_PAGES, results):
        _log_result(log, res, import_wrapper, f"{tag} page")
        pages[tag] = res.stdout
        (work / f"ncu-{stage}-{tag}.csv").write_text(res.stdout, encoding="utf-8")
    cut = [tag for (tag, _), res in zip(_CONFLICT_PAGES, results) if res.truncated]
    if cut:
        # A cut page drops the last kernels' rows: the excess would be counted short.
        return ConflictReport.not_run(stage, f"the report's {', '.join(cut)} page ran past {OUTPUT_LIMIT >> 20} MiB "
                                      "(too many kernels profiled): its excess cannot be counted whole",
                                      "launch fewer kernels in the stage (or lower [conflicts] n in the rubric)")
    rep = build_report(stage, pages["source"], pages["details"], profiled.notes, raw_csv=pages["raw"])
    if rep.measured and rep.total_excessive and not rep.lines:
        # No per-line numbers in the CUDA+SASS view: try the CUDA-only view.
        res = _run_ncu(ncu, ["--import", str(readable), "--page", "source", "--csv", "--print-source", "cuda"],
                       timeout, log, "source page (cuda)", import_wrapper, env=import_env)
        (work / f"ncu-{stage}-source-cuda.csv").write_text(res.stdout, encoding="utf-8")
        alt = build_report(stage, res.stdout, pages["details"], profiled.notes, raw_csv=pages["raw"])
        if alt.lines:
            rep = alt
    rep.outside_range = profiled.outside_range
    return rep


# ---- several stages in one Source Counters profile --------------------------------------------------
# Each ncu process costs ~2.5 s before its first kernel (the target's start and CUDA context under
# the profiler), and a GPU profiles one process at a time (gpulock.profiler_lock): in a batch the
# grades queue on that lock. One profile of reduction's three conflict-free stages took 3.8 s
# against 2.6 + 2.8 + 2.6 s for three (H200, 2026-12-01). The raw page gives each kernel's
# excess and its NVTX range, so each stage's total is exact; the source page, which names the
# lines, is not cut by stage, so a stage with excess is profiled again alone for its lines.


@dataclass
class ProfiledStages:
    """One Source Counters profile of several stages (profile_stages_conflicts), before reading."""

    stages: list[str]
    report_file: Path
    work: Path
    log: Path
    timeout: float
    ncu: Path
    # The runner's own check of each stage in the profiled run: (status, message).
    runs: dict[str, tuple[str, str]]


SHARED_PROFILE_NOTE = "measured in one Source Counters profile with {others} (the raw page's rows of this stage's range)"


def profile_stages_conflicts(runner: Path, stages: list[str], size_arg: str, work: Path, timeout: float = 300,
                             wrapper: list[str] | None = None, scratch: Path | None = None,
                             runner_args: list[str] | None = None, env: dict[str, str] | None = None,
                             cancel: threading.Event | None = None) -> ProfiledStages | str:
    """The GPU half for several stages: `runner run --stage A --stage B ... --no-time` profiled once,
    only the kernels inside the stages' ranges. A string says why not (cancelled, the runner did
    not report every stage, ncu failed): the caller then profiles each stage on its own, which
    says whose failure it was."""
    ncu = locate.find_tool("ncu")
    if ncu is None:
        return "ncu (Nsight Compute) not found"
    work.mkdir(parents=True, exist_ok=True)
    rep = (scratch or work) / "ncu-stages"
    log = work / "ncu-stages.log"
    log.unlink(missing_ok=True)
    target = ([str(runner), "run"] + [a for sid in stages for a in ("--stage", sid)]
              + ["--n", size_arg, "--no-time", "--format", "json"] + (runner_args or []))
    nvtx = ["--nvtx"] + [a for sid in stages for a in ("--nvtx-include", f"gpulab:{sid}/")]
    base = ["--section", "SourceCounters", "--export", str(rep), "--force-overwrite"]
    res = _run_ncu(ncu, base + nvtx + target, timeout, log, "profile of " + ", ".join(stages), wrapper, scratch, env,
                   cancel)
    if res.cancelled:
        return PROFILE_CANCELLED
    if res.timed_out:
        return f"ncu timed out after {timeout:.0f} s"
    out = res.stdout + res.stderr
    diag = diagnose_failure(out)
    if diag:
        return diag[0]
    if res.truncated:
        return OUTPUT_CUT
    # A stage that failed its check exits 1 and still reports; one that crashed the runner leaves
    # no document (or no row of its own): then no stage's row of this run is trusted.
    doc = parse_runner_json(res.stdout)
    rows = {sid: stage_result(doc, sid) for sid in stages}
    missing = [sid for sid, row in rows.items() if row is None]
    if missing:
        return f"the runner did not report {', '.join(missing)} ({res.describe_exit()})"
    report_file = rep.with_name(rep.name + ".ncu-rep")
    if report_file.is_symlink() or not report_file.is_file():
        # A link where the report should be was made by the profiled program, not by ncu.
        return f"ncu wrote no report ({res.describe_exit()})"
    if scratch is not None:
        report_file = Path(shutil.move(report_file, work / report_file.name))
    runs = {sid: (str(row.get("status", "")), str(row.get("message", ""))) for sid, row in rows.items() if row}
    return ProfiledStages(list(stages), report_file, work, log, timeout, ncu, runs)


def read_stages_conflicts(profiled: ProfiledStages, import_wrapper: list[str] | None = None,
                          import_env: dict[str, str] | None = None,
                          import_dir: Path | None = None) -> dict[str, ConflictReport]:
    """The CPU half: the raw page read back (as read_conflicts reads a stage's, in the jail) and cut
    by range. A stage gets its report here only when that report is final: measured with 0 excess.
    A stage with excess (its lines come from its own profile's source page), without kernels in its
    range, or any page that cannot be cut, is left out: the caller profiles it alone."""
    readable = _readable(profiled.report_file, import_dir)
    res = _run_ncu(profiled.ncu, ["--import", str(readable), "--page", "raw", "--csv"], profiled.timeout, None,
                   "raw page", import_wrapper, env=import_env)
    _log_result(profiled.log, res, import_wrapper, "raw page")
    (profiled.work / "ncu-stages-raw.csv").write_text(res.stdout, encoding="utf-8")
    if res.returncode != 0 or res.truncated:
        return {}
    pages = split_raw_by_stage(res.stdout) or {}
    out = {}
    for sid in profiled.stages:
        if sid not in pages:
            continue
        others = ", ".join(o for o in profiled.stages if o != sid)
        rep = build_report(sid, "", "", [SHARED_PROFILE_NOTE.format(others=others)], raw_csv=pages[sid])
        if rep.measured and rep.total_excessive == 0:
            out[sid] = rep
    return out
