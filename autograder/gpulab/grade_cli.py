"""The grading subcommands: grade (one submission or --batch), package (Gradescope), handout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpulab import report
from gpulab.errors import (EXIT_CHECKS_MISSING, EXIT_INTERNAL, EXIT_NO_GPU, EXIT_OK, GpulabError)
from gpulab.paths import Course

GRADE_EPILOG = """\
exit status: 0 graded, every check ran; 2 bad input (nothing graded); 3 the grader could not
build the pristine course; 4 graded without a GPU (GPU parts "not run: no GPU"); 5 graded on a
GPU but some checks not run (ncu counter permission, no compute-sanitizer); --batch: 1 when a
submission could not be graded at all (its gradebook row says why); 129/130/143 stopped by
SIGHUP/SIGINT/SIGTERM (everything it started is killed). With 2 or 3, OUT still gets a
results.json with score 0 and the reason.
"""


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Registers grade / package / handout on the top-level parser."""
    g = sub.add_parser("grade", help="grade a submission (or a folder of them with --batch)",
                       epilog=GRADE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    g.add_argument("submission", nargs="?", help="a folder, .zip, .tar.gz or git checkout")
    g.add_argument("--batch", metavar="DIR", help="grade every submission (folder or archive) in DIR")
    g.add_argument("--lab", action="append", help="grade only this lab (repeatable; default: every lab present)")
    g.add_argument("--out", metavar="DIR", help="results and reports (default: ./gpulab-grade/<name>)")
    g.add_argument("--work", metavar="DIR", help="grading workspace (default: <build>/grading)")
    g.add_argument("--jobs", type=int, default=1, help="--batch: submissions graded at once (builds in parallel, GPU work serial per GPU; "
                        "with a GPU at most 3 per GPU)")
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
    from gpulab import batch  # noqa: PLC0415 (the batch's scale-out options live with it)
    batch.add_arguments(g)

    gb = sub.add_parser("gradebook", help="rebuild OUT/gradebook.csv from a batch's grades and show it",
                        allow_abbrev=False)
    gb.add_argument("out", metavar="OUT", help="the --out folder of gpulab grade --batch")
    gb.add_argument("--quiet", action="store_true", help="only write the CSV")

    p = sub.add_parser("package", help="write Gradescope's autograder.zip for one lab", allow_abbrev=False)
    p.add_argument("--lab", required=True)
    p.add_argument("--out", default="autograder.zip", metavar="ZIP")

    h = sub.add_parser("handout", help="export what students receive (no solutions, no hidden tests)",
                       allow_abbrev=False)
    h.add_argument("--out", required=True, metavar="DIR", help="an empty or new folder")
    h.add_argument("--check", action="store_true",
                   help="then configure, build and test the export, and grade it untouched (expect 0)")
    h.add_argument("--reference-archs", default="common", metavar="LIST|common|none",
                   help="CUDA architectures of the compiled reference runners shipped in reference/ "
                        "(common: sm_70-sm_90 as nvcc supports them; none: ship none)")
    h.add_argument("--release-solutions", action="store_true",
                   help="after the deadline: keep the decks' answer slides and add solutions/ (the reference "
                        "and its notes); the answer check is skipped (autograder/README.md, \"The handout\")")


def dispatch(course: Course, args: argparse.Namespace) -> int:
    if args.command == "grade":
        return cmd_grade(course, args)
    if args.command == "gradebook":
        from gpulab import batch  # noqa: PLC0415
        return batch.cmd_gradebook(Path(args.out), args.quiet)
    if args.command == "package":
        from gpulab import package  # noqa: PLC0415
        return package.cmd_package(course, args.lab, Path(args.out))
    if args.command == "handout":
        from gpulab import handout_check  # noqa: PLC0415
        return handout_check.cmd_handout(course, Path(args.out), args.check, args.reference_archs,
                                         release=args.release_solutions)
    raise GpulabError(f"gpulab: unknown command {args.command}")


def _make_grader(course: Course, args: argparse.Namespace):
    from gpulab.grading import Grader, Options  # noqa: PLC0415
    log = (lambda m: None) if args.quiet else (lambda m: print(f"  .. {m}", file=sys.stderr, flush=True))
    opts = Options(sanitizers=not args.no_sanitizers, conflicts=not args.no_conflicts,
                   performance=not args.no_performance, hidden=not args.no_hidden, sandbox=not args.no_sandbox,
                   stages=set(args.stage) if args.stage else None, verify_timing=not args.no_verify_timing, timer=args.timer, log=log)
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
    from gpulab.batch import error_grade  # noqa: PLC0415
    message = str(error).removeprefix("gpulab grade: ")
    report.write_failure(out, name, message, grader_fault=grader_fault)
    report.write_atomic(out / "grade.json", json.dumps(error_grade(name, message, error.exit_code), indent=2) + "\n")


def cmd_grade(course: Course, args: argparse.Namespace) -> int:
    if bool(args.submission) == bool(args.batch):
        raise GpulabError("gpulab grade: give one SUBMISSION or --batch DIR (see gpulab grade --help)")
    if args.batch:
        _check_labs(course, args)
        from gpulab import batch  # noqa: PLC0415
        return batch.cmd_batch(course, args, lambda: _make_grader(course, args))
    batch_only = [f for f in ("gpus", "slurm", "slurm_dry_run", "plan", "worker") if getattr(args, f)]
    if batch_only:
        raise GpulabError(f"gpulab grade: --{batch_only[0].replace('_', '-')} needs --batch DIR")
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


__all__ = ["add_parsers", "dispatch", "EXIT_INTERNAL"]
