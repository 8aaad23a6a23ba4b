"""The grading subcommands: grade, package, handout (argparse side)."""

from __future__ import annotations

import argparse

from gpulab.errors import GpulabError
from gpulab.paths import Course


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Registers grade / package / handout on the top-level parser."""


def dispatch(course: Course, args: argparse.Namespace) -> int:
    raise GpulabError(f"gpulab: unknown command {args.command}")
