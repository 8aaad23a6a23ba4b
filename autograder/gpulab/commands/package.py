"""`gpulab package --lab L --out autograder.zip`: Gradescope's autograder bundle for one lab
(gpulab/gradescope.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpulab.paths import Course

NAME = "package"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("package", help="write Gradescope's autograder.zip for one lab", allow_abbrev=False)
    sp.add_argument("--lab", required=True)
    sp.add_argument("--out", default="autograder.zip", metavar="ZIP")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab import gradescope  # noqa: PLC0415
    return gradescope.cmd_package(course, args.lab, Path(args.out))
