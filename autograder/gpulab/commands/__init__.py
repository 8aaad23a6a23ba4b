"""The subcommands of `gpulab`, one module each (cli.py lists them in COMMANDS):

    list info run experiment conflicts measure grade gradebook package handout submit

Each module has NAME (the subcommand), add_parser(sub) (its options: building the parser imports
nothing else) and main(course, args, extra) -> exit status, which imports the work it runs only
then; PASSTHROUGH = True where options it does not know go to the runner, RAW = True where the
whole command line after the name does (info). What they share is here.
"""

from __future__ import annotations

import argparse

from gpulab.errors import GpulabError
from gpulab.paths import Course

RUNNER_EPILOG = """\
Labs are discovered from the build tree (labs/<lab>/gpulab-<lab>-<impl>) and labs/*/rubric.toml.
Options not listed here are passed to the runner unchanged (e.g. --where gpu, --dist sorted,
--param block=512, --warmup 3, --no-flush, --no-time); see `<build>/labs/<lab>/gpulab-<lab>-student --help`.
"""


def problem_size(text: str) -> str:
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


def all_labs(course: Course) -> list[str]:
    """Every lab of the course, or the error that says to build first."""
    labs = course.labs()
    if not labs:
        raise GpulabError("gpulab: no labs found (no runners in the build tree, no labs/*/rubric.toml); "
                          "build first: cmake --build --preset default")
    return labs
