"""`gpulab`: the course command line (argparse): the top parser from the table of subcommands
(COMMANDS, one module each in commands/), the dispatch, and the process guard."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Iterator, Sequence

from gpulab import proc
from gpulab.commands import (RUNNER_EPILOG, conflicts, experiment, grade, gradebook, handout, info, measure, package,
                             run, submit)
from gpulab.commands import list as list_labs
from gpulab.errors import GpulabError
from gpulab.paths import Course

# The subcommands, in the order `gpulab --help` lists them: each module adds its own parser and
# imports the work it runs only when it runs (commands/__init__.py).
COMMANDS = (list_labs, info, run, experiment, conflicts, measure, grade, gradebook, package, handout, submit)
BY_NAME = {c.NAME: c for c in COMMANDS}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpulab", description="gpulab: run, measure and grade the CUDA labs.",
                                epilog=RUNNER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                                allow_abbrev=False)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv and argv[0] in BY_NAME and getattr(BY_NAME[argv[0]], "RAW", False):
        args, extra = argparse.Namespace(command=argv[0]), argv[1:]
    else:
        args, extra = parser.parse_known_args(argv)
        if extra and not getattr(BY_NAME[args.command], "PASSTHROUGH", False):
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
    course = Course.from_environment()
    return BY_NAME[args.command].main(course, args, extra)


if __name__ == "__main__":
    sys.exit(main())
