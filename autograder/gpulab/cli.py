"""`gpulab`: the course command line (argparse). Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Iterator, Sequence

from gpulab import proc

from gpulab.errors import EXIT_INTERNAL, EXIT_USAGE, GpulabError
from gpulab.paths import Course

EPILOG = """\
Labs are discovered from the build tree (labs/<lab>/gpulab-<lab>-<impl>) and labs/*/rubric.toml.
Options not listed here are passed to the runner unchanged (e.g. --where gpu, --dist sorted,
--param block=512, --warmup 3, --no-flush, --no-time); see `<build>/labs/<lab>/gpulab-<lab>-student --help`.
"""


def _size(text: str) -> str:
    """--n accepts what the runner accepts — N, 2^k (k <= 40) or RxC (2-D labs) — checked here so a
    typo gets a clear message before any runner starts (common/src/runner_cli.cpp, parse_size)."""
    t = text.lower()

    def count(part: str) -> bool:
        if part.startswith("2^"):
            return part[2:].isdigit() and int(part[2:]) <= 40
        return part.isdigit()

    parts = t.split("x")
    if len(parts) in (1, 2) and all(count(p) for p in parts):
        return t
    raise argparse.ArgumentTypeError(
        f"'{text}' is not a size: write N (e.g. 1048576), 2^k (e.g. 2^24) or RxC (e.g. 4096x4096)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpulab", description="gpulab: run, measure and grade the CUDA labs.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sp = sub.add_parser("list", help="labs, their stages and experiments", allow_abbrev=False)
    sp.add_argument("--format", choices=["table", "json"], default="table")

    sub.add_parser("info", help="the GPU, its measured copy bandwidth, the machine-model parameters "
                   "(options go to gpulab-info)", allow_abbrev=False, add_help=False)

    sp = sub.add_parser("run", help="check and time a lab's stages (or every lab: all)",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                        allow_abbrev=False)
    sp.add_argument("lab", help="a lab id (see `gpulab list`) or all")
    sp.add_argument("--stage", action="append", metavar="ID", help="only this stage (repeatable)")
    sp.add_argument("--n", type=_size, help="problem size: N, or RxC for 2-D labs")
    sp.add_argument("--seed", type=int)
    sp.add_argument("--reps", type=int, help="timed repetitions (median reported)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")
    sp.add_argument("--format", choices=["table", "csv", "json"], default="table")

    sp = sub.add_parser("experiment", help="run one of a lab's experiments (options go to the runner)",
                        allow_abbrev=False)
    sp.add_argument("lab")
    sp.add_argument("id", help="experiment id (see `gpulab list`)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")

    sp = sub.add_parser("conflicts", help="Nsight Compute: excess shared-memory wavefronts per source line",
                        allow_abbrev=False)
    sp.add_argument("lab")
    sp.add_argument("--stage", action="append", required=True, metavar="ID", help="stage (repeatable)")
    sp.add_argument("--n", type=_size, help="problem size (default: the rubric's [conflicts] n)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")
    sp.add_argument("--format", choices=["table", "json"], default="table")
    sp.add_argument("--keep", metavar="DIR", help="keep ncu's report and CSV files in DIR")
    sp.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="stage knob passed to the runner, e.g. colors=16 (repeatable)")

    from gpulab import measure  # noqa: PLC0415
    measure.add_parser(sub)

    from gpulab import grade_cli  # noqa: PLC0415 (the grading options live with the grader)
    grade_cli.add_parsers(sub)
    from gpulab import submit  # noqa: PLC0415
    submit.add_parser(sub)
    return p


PASSTHROUGH = {"run", "experiment", "info"}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv and argv[0] == "info":
        args, extra = argparse.Namespace(command="info"), argv[1:]
    else:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command not in PASSTHROUGH:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return _dispatch(args, extra)
    except GpulabError as e:
        print(e, file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("gpulab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _stop(signum: int, _frame: object) -> None:
    """SIGTERM/SIGINT/SIGHUP: kill every process the grader started (builds, runners, tools, and
    whatever they started), then exit at once: no thread of this process writes anything after
    it (the grading workspace, reports)."""
    killed = proc.terminate_all()
    with contextlib.suppress(OSError):
        os.write(2, f"gpulab: stopped by {signal.Signals(signum).name}; {killed} process(es) it had started "
                    "were killed\n".encode())
    os._exit(128 + signum)


@contextlib.contextmanager
def guard_process() -> Iterator[None]:
    """For the command-line process only (not for code that imports gpulab): orphans of the
    grader's children are re-parented to it, a stop signal kills the whole tree (proc.py), and
    whatever a child left running is killed when the command ends."""
    proc.become_subreaper()
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)   # ending anyway: no handler half-way through cleanup
        proc.terminate_all()


def _dispatch(args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab import runners  # noqa: PLC0415
    course = Course.from_environment()
    if args.command == "list":
        return runners.cmd_list(course, args.format)
    if args.command == "info":
        return runners.cmd_info(course, extra)
    if args.command == "run":
        return runners.cmd_run(course, args, extra)
    if args.command == "experiment":
        return runners.cmd_experiment(course, args, extra)
    if args.command == "conflicts":
        return runners.cmd_conflicts(course, args)
    if args.command == "measure":
        from gpulab import measure  # noqa: PLC0415
        return measure.cmd_measure(course, args)
    if args.command == "submit":
        from gpulab import submit  # noqa: PLC0415
        return submit.cmd_submit(course, args)
    from gpulab import grade_cli  # noqa: PLC0415
    return grade_cli.dispatch(course, args)


if __name__ == "__main__":
    sys.exit(main())
