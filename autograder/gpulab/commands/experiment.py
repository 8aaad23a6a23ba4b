"""`gpulab experiment LAB ID [...]`: one of a lab's experiments; options go to the runner."""

from __future__ import annotations

import argparse

from gpulab import proc
from gpulab.paths import Course

NAME = "experiment"
PASSTHROUGH = True   # options it does not know go to the runner


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("experiment", help="run one of a lab's experiments (options go to the runner)",
                        allow_abbrev=False)
    sp.add_argument("lab")
    sp.add_argument("id", help="experiment id (see `gpulab list`)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    """Passthrough to the runner's experiment command."""
    runner = course.require_runner(args.lab, args.impl)
    return proc.run_streaming([runner, "experiment", args.id] + extra)
