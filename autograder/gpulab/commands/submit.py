"""`gpulab submit LAB [--out ZIP] [--from DIR]`: a student's upload: exactly the lab's graded files,
checked as the grader will (gpulab/submit.py), in a zip `gpulab grade` takes."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpulab.errors import EXIT_USAGE, GpulabError
from gpulab.paths import Course

NAME = "submit"


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("submit", help="package one lab's student files and answers.md for upload, checked",
                       allow_abbrev=False,
                       description="Writes one .zip with exactly the files that are graded (labs/<lab>/...), after "
                                   "checking them as the grader will; upload that file.")
    s.add_argument("lab", help="the lab to package (see `gpulab list`)")
    s.add_argument("--out", metavar="ZIP", help="the archive to write (default: ./<lab>-submission.zip)")
    s.add_argument("--from", dest="source", metavar="DIR",
                   help="take the files from this lab folder instead of labs/<lab>/ of this checkout")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab.submit import collect, verify, write  # noqa: PLC0415
    lab = args.lab
    source = Path(args.source) if args.source else None
    b = collect(course, lab, source)
    for w in b.warnings:
        print(f"gpulab submit: warning: {w}")
    if b.errors:
        raise GpulabError("gpulab submit: nothing written:\n  " + "\n  ".join(b.errors), EXIT_USAGE)
    out = Path(args.out) if args.out else Path(f"{lab}-submission.zip")
    write(b, out)
    problems = verify(b, out)
    if problems:
        out.unlink(missing_ok=True)
        raise GpulabError("gpulab submit: the archive would not grade as written (bug):\n  " + "\n  ".join(problems))
    print(f"gpulab submit: wrote {out} ({len(b.files)} files: {', '.join(sorted(b.files))})")
    print(f"  check it as the grader will: gpulab grade {out} --lab {lab}")
    print("  then upload it where your task sheet says (README.md, \"What to submit\")")
    return 0
