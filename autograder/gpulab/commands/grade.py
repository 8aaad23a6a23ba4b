"""`gpulab grade SUBMISSION [--lab L]... [--stage S]... [--out DIR]`: grade one submission
(grading/pipeline.py); `gpulab grade --batch DIR --out DIR [--jobs J] [--gpus ...] [--slurm ...]
[--plan]`: a folder of them into a gradebook (batch/), in one of its modes. Both write, whatever
happens, a results.json that says what was graded or why nothing was."""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from gpulab.errors import EXIT_CHECKS_MISSING, EXIT_INTERNAL, EXIT_NO_GPU, EXIT_OK, GpulabError
from gpulab.paths import Course

NAME = "grade"
GRADE_EPILOG = """\
exit status: 0 graded, every check ran; 2 bad input (nothing graded); 3 the grader could not
build the pristine course; 4 graded without a GPU (GPU parts "not run: no GPU"); 5 graded on a
GPU but some checks not run (ncu counter permission, no compute-sanitizer); --batch: 1 when a
submission could not be graded at all (its gradebook row says why); 129/130/143 stopped by
SIGHUP/SIGINT/SIGTERM (everything it started is killed). With 2 or 3, OUT still gets a
results.json with score 0 and the reason.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("grade", help="grade a submission (or a folder of them with --batch)",
                       epilog=GRADE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    g.add_argument("submission", nargs="?", help="a folder, .zip, .tar.gz or git checkout")
    g.add_argument("--batch", metavar="DIR", help="grade every submission (folder or archive) in DIR")
    g.add_argument("--lab", action="append", help="grade only this lab (repeatable; default: every lab present)")
    g.add_argument("--out", metavar="DIR", help="results and reports (default: ./gpulab-grade/<name>)")
    g.add_argument("--work", metavar="DIR", help="grading workspace (default: <build>/grading)")
    g.add_argument("--jobs", type=int, help="--batch: submissions in flight per GPU (default and at most 4: builds in "
                        "parallel, untimed checks side by side, timings alone on the GPU)")
    g.add_argument("--force", action="store_true", help="--batch: regrade submissions already graded")
    g.add_argument("--stage", action="append", metavar="ID",
                   help="grade only this stage (repeatable): a partial grade, the others are left out")
    g.add_argument("--no-hidden", action="store_true", help="only the visible cases (student self-check)")
    g.add_argument("--no-sanitizers", action="store_true", help="skip compute-sanitizer (reported as not run)")
    g.add_argument("--no-conflicts", action="store_true", help="skip Nsight Compute (reported as not run)")
    g.add_argument("--no-performance", action="store_true", help="skip timing (reported as not run)")
    g.add_argument("--no-verify-timing", action="store_true",
                   help="skip the cross-check of each reported time against Nsight Compute's kernel time "
                        "(measured outside the student's code); the reported times are then believed")
    g.add_argument("--timer", choices=["sync", "events"], default="sync",
                   help="GPU clock of the timed runs, the reference's and the student's: sync (default: a device "
                        "synchronisation before the stop event) or events (the stop event right after the stage: "
                        "no host wake-up latency; autograder README, \"Timing noise\")")
    g.add_argument("--no-sandbox", action="store_true", help="run student code without limits/isolation")
    g.add_argument("--format", choices=["table", "json"], default="table", help="console output")
    g.add_argument("--quiet", action="store_true", help="no progress lines")
    _add_scale_out_options(g)


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    if bool(args.submission) == bool(args.batch):
        raise GpulabError("gpulab grade: give one SUBMISSION or --batch DIR (see gpulab grade --help)")
    if args.batch:
        _check_labs(course, args)
        return grade_batch(course, args, lambda: _make_grader(course, args))
    if args.jobs is None:
        args.jobs = 1
    batch_only = [f for f in ("gpus", "slurm", "slurm_dry_run", "plan", "worker") if getattr(args, f)]
    if batch_only:
        raise GpulabError(f"gpulab grade: --{batch_only[0].replace('_', '-')} needs --batch DIR")
    from gpulab import report  # noqa: PLC0415
    from gpulab.submission import submission_name  # noqa: PLC0415
    sub_path = Path(args.submission)
    name = submission_name(sub_path)
    out = Path(args.out) if args.out else Path("gpulab-grade") / name
    out.mkdir(parents=True, exist_ok=True)
    try:
        _check_labs(course, args)
        grader = _make_grader(course, args)
    except GpulabError as e:
        write_not_graded(out, name, e, grader_fault=True)
        raise
    grader.hide([out])
    # The reference is timed while the submission builds (the GPU is idle then): transpose's
    # reference took 7.5 s of a 65 s cold grade after the build (H100, 2026-11-24). Not for an
    # archive: unopened, it counts for every lab, and the other labs' timings would delay its own.
    try:
        with grader.references_timed_ahead([sub_path] if sub_path.is_dir() else [],
                                           args.lab or grader.graded_labs()):
            sub = grader.grade(sub_path, out, args.lab)
    except GpulabError as e:
        write_not_graded(out, name, e, grader_fault=e.exit_code == EXIT_INTERNAL)
        raise
    report.write_all(sub, out)
    if args.format == "json":
        print(json.dumps(sub.to_json(), indent=2))
    else:
        print(report.console(sub))
        print(f"reports: {out / 'report.md'}, {out / 'results.json'}")
    return exit_code_for(sub)


def _check_labs(course: Course, args: argparse.Namespace) -> None:
    for lab in args.lab or []:
        if not course.rubric_path(lab).is_file():
            known = ", ".join(l for l in course.labs() if course.rubric_path(l).is_file()) or "none"
            raise GpulabError(f"gpulab grade: no rubric for lab {lab!r} (labs with a rubric: {known})")


def _make_grader(course: Course, args: argparse.Namespace):
    from gpulab.checks.options import Options  # noqa: PLC0415
    from gpulab.grading.pipeline import Grader  # noqa: PLC0415
    log = (lambda m: None) if args.quiet else (lambda m: print(f"  .. {m}", file=sys.stderr, flush=True))
    opts = Options(sanitizers=not args.no_sanitizers, conflicts=not args.no_conflicts,
                   performance=not args.no_performance, hidden=not args.no_hidden, sandbox=not args.no_sandbox,
                   stages=set(args.stage) if args.stage else None, verify_timing=not args.no_verify_timing, timer=args.timer, log=log,
                   # One submission: its sanitizer runs and the library check's profiles start beside correctness
                   # (checks/sanitizers.py and checks/library.py, Ahead).
                   untimed_ahead=not args.batch)
    build = course.require_build()
    work = Path(args.work) if args.work else build / "grading"
    if args.jobs < 1:
        raise GpulabError("gpulab grade: --jobs must be at least 1")
    # A wait for a workspace slot held by another grade is said even with --quiet: it can be long.
    notify = lambda m: print(f"  .. {m}", file=sys.stderr, flush=True)  # noqa: E731
    return Grader(course, work, opts, jobs=args.jobs, grow_workspace=not args.work, notify=notify)


def exit_code_for(sub) -> int:
    """4 without a GPU, 5 when a check was not run for another reason, else 0."""
    if not sub.gpu:
        return EXIT_NO_GPU
    if any(lab.not_run() for lab in sub.labs):
        return EXIT_CHECKS_MISSING
    return EXIT_OK


def write_not_graded(out: Path, name: str, error: GpulabError, grader_fault: bool) -> None:
    """Every way a single grade can end without a grade still leaves a valid results.json
    (score 0, the reason) in OUT, so that Gradescope shows the reason, plus report.md and an
    error grade.json; the command still exits with the error's status. `grader_fault`: the
    reason is the grader's set-up (command line, build tree, pristine course), not the upload."""
    from gpulab import report  # noqa: PLC0415
    message = str(error).removeprefix("gpulab grade: ")
    report.write_failure(out, name, message, grader_fault=grader_fault)
    report.write_atomic(out / "grade.json", json.dumps(report.error_grade(name, message, error.exit_code), indent=2) + "\n")


# ----------------------------------------------------------------------------- grade --batch

# Options that only steer how a batch is spread out (or that a worker gets its own value of): not
# handed to a --gpus worker or a Slurm task as they are.
SCALE_DESTS = {"gpus", "slurm", "slurm_dry_run", "partition", "gres", "time", "array_limit", "per_task", "plan",
               "worker", "workers", "only", "regrade_before", "work", "out", "jobs", "force", "quiet", "format", "submission",
               "batch"}
_GRADE_PARSER: list[Any] = []


def _add_scale_out_options(g: argparse.ArgumentParser) -> None:
    """grade --batch's scale-out options (one host's GPUs, a Slurm cluster, a plan)."""
    _GRADE_PARSER[:] = [g]
    g.add_argument("--gpus", metavar="all|I,J,...",
                   help="--batch: one grading worker per GPU (CUDA_VISIBLE_DEVICES), each with its own "
                        "lock and up to --jobs submissions in flight")
    g.add_argument("--slurm", action="store_true", help="--batch: submit a Slurm job array that grades into --out")
    g.add_argument("--slurm-dry-run", action="store_true", help="--slurm: print the sbatch script, submit nothing")
    g.add_argument("--partition", metavar="P", help="--slurm: the partition (default: the cluster's)")
    g.add_argument("--gres", default="gpu:1", metavar="G",
                   help="--slurm: generic resources per task (default gpu:1; 'none' asks for no GPU)")
    g.add_argument("--time", default="00:30:00", metavar="HH:MM:SS",
                   help="--slurm: time limit per task (default 00:30:00; scale with --per-task)")
    g.add_argument("--array-limit", type=int, metavar="K",
                   help="--slurm: at most K tasks at once (%%K); --plan: the array width to estimate")
    g.add_argument("--per-task", type=int, default=1, metavar="N", help="--slurm: submissions per array task")
    g.add_argument("--plan", action="store_true",
                   help="--batch: print the submissions, labs and estimated GPU time; grade nothing")
    g.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    g.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)   # graders sharing the queue
    g.add_argument("--only", action="append", metavar="NAME", help=argparse.SUPPRESS)
    g.add_argument("--regrade-before", type=float, default=0.0, help=argparse.SUPPRESS)


def grading_options(args: Any) -> list[str]:
    """The command-line options of `args` that decide the grade (--lab, --stage, --no-hidden, ...),
    as a worker or task must be given them: every grade option not at its default, except the
    scale-out ones (SCALE_DESTS)."""
    out: list[str] = []
    for action in _GRADE_PARSER[0]._actions if _GRADE_PARSER else []:
        if not action.option_strings or action.dest in SCALE_DESTS or action.dest == "help":
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        flag = action.option_strings[-1]
        if isinstance(value, bool):
            out.append(flag)
        elif isinstance(value, list):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


def worker_command(args: Any, extra: Sequence[str]) -> list[str]:
    """`python -m gpulab grade ... --worker`: how a --gpus worker or a Slurm task is started, with
    the same grading options as the instructor's command."""
    return [sys.executable, "-m", "gpulab", "grade", *grading_options(args), *extra]


def grade_batch(course: Course, args: argparse.Namespace, make_grader: Callable[[], Any]) -> int:
    """grade --batch in one of its modes: --plan, --slurm, --gpus (parent), --worker, plain."""
    from gpulab.batch import gradebook, local, queue  # noqa: PLC0415
    from gpulab.submission import submission_name  # noqa: PLC0415
    if not args.out:
        raise GpulabError("gpulab grade --batch: give --out DIR for the gradebook and reports")
    if args.gpus and (args.slurm or args.slurm_dry_run):
        raise GpulabError("gpulab grade --batch: --gpus (this host's GPUs) and --slurm (a cluster) are separate "
                          "ways; give one")
    if args.jobs is None:   # a whole class overnight with no flag to know (autograder/README.md, "Batch")
        args.jobs = queue.IN_FLIGHT_PER_GPU
    if args.jobs < 1 or args.per_task < 1 or (args.array_limit is not None and args.array_limit < 1):
        raise GpulabError("gpulab grade --batch: --jobs, --per-task and --array-limit must be at least 1")
    folder, out = Path(args.batch), Path(args.out)
    maxima = gradebook.course_maxima(course, args.lab, args.stage)
    quiet = (lambda m: None) if args.quiet else None
    if args.plan:
        from gpulab.batch import plan  # noqa: PLC0415
        made = plan.make_plan(course, folder, out, maxima, args)
        print(json.dumps(plan.as_dict(made), indent=2) if args.format == "json" else plan.format_plan(made))
        return EXIT_OK
    if args.slurm or args.slurm_dry_run:
        from gpulab.batch import slurm  # noqa: PLC0415
        worker = worker_command(args, ["--batch", str(folder.resolve()), "--out", str(out.resolve()), "--worker",
                                       "--jobs", str(args.jobs)] + (["--force"] if args.force else []))
        return slurm.cmd_slurm(course, args, folder, out, maxima, worker)
    if args.gpus:
        from gpulab import gpulock  # noqa: PLC0415
        devices = gpulock.select_devices(args.gpus)
        work_root = Path(args.work) if args.work else course.require_build() / "grading"
        errors = local.run_workers(folder, out, devices, lambda d: worker_command(
            args, ["--batch", str(folder), "--out", str(out), "--worker", "--jobs", str(args.jobs),
                   "--workers", str(len(devices)), "--work", str(work_root / f"gpu{d.index}")]),
            maxima, force=args.force, gpu=True, log=quiet,
            in_flight=queue.in_flight(args.jobs, True))
        return 1 if errors else EXIT_OK
    grader = make_grader()
    if not grader.gpu and not args.quiet:
        # A job log must say it plainly: a Slurm task on a node without a GPU is the usual case.
        print(f"gpulab grade --batch: no GPU on {socket.gethostname()}: the GPU parts are not run and the rows "
              "say 'incomplete: no GPU' (a later run with a GPU completes them)", file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    grader.hide([folder, out])   # the other students' work and grades
    grader.device = local.device_label(grader.device) if grader.gpu else grader.device
    grade = lambda s, o: grader.grade(s, o, args.lab)  # noqa: E731
    subs = queue.find_submissions(folder)
    if args.worker and args.only:   # a Slurm array task's share
        subs = [s for s in subs if submission_name(s) in set(args.only)]
    pending = queue.to_grade(subs, out, args.force or bool(args.regrade_before), grader.gpu)
    with grader.references_timed_ahead(pending, list(maxima)):
        if args.worker:
            force_before = args.regrade_before or (time.time() if args.force else 0.0)
            errors = queue.work(subs, out, grade, maxima, local.worker_events(), grader.device or "no GPU",
                                args.jobs, force_before, grader.gpu, workers=args.workers)
        else:
            errors = local.run_batch(folder, out, grade, maxima, jobs=args.jobs, force=args.force, gpu=grader.gpu,
                                     log=quiet, device=grader.device)
    return 1 if errors else (EXIT_NO_GPU if not grader.gpu else EXIT_OK)
