"""`gpulab handout --out DIR [--check] [--reference-archs ...] [--release-solutions]`: export the
student handout (gpulab/handout.py), search it for the reference and the graded answers, and with
--check build, test and grade it (gpulab/handout_check.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpulab.paths import Course

NAME = "handout"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("handout", help="export what students receive (no solutions, no hidden tests)",
                       allow_abbrev=False)
    sp.add_argument("--out", required=True, metavar="DIR", help="an empty or new folder")
    sp.add_argument("--check", action="store_true",
                   help="then configure, build and test the export, and grade it untouched (expect 0)")
    sp.add_argument("--reference-archs", default="common", metavar="LIST|common|none",
                   help="CUDA architectures of the compiled reference runners shipped in reference/ "
                        "(common: sm_70-sm_90 as nvcc supports them; none: ship none)")
    sp.add_argument("--release-solutions", action="store_true",
                   help="after the deadline: keep the decks' answer slides and add solutions/ (the reference "
                        "and its notes); the answer check is skipped (autograder/README.md, \"The handout\")")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab import handout_check  # noqa: PLC0415
    return handout_check.cmd_handout(course, Path(args.out), args.check, args.reference_archs,
                                     release=args.release_solutions)
