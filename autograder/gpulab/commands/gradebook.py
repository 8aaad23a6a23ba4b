"""`gpulab gradebook OUT`: rebuild OUT/gradebook.csv from every grade.json of a batch (the final
job of a Slurm batch runs it) and print it with a count per status (batch/gradebook.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "gradebook"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("gradebook", help="rebuild OUT/gradebook.csv from a batch's grades and show it",
                        allow_abbrev=False)
    sp.add_argument("out", metavar="OUT", help="the --out folder of gpulab grade --batch")
    sp.add_argument("--quiet", action="store_true", help="only write the CSV")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab.batch import gradebook  # noqa: PLC0415
    from gpulab.table import format_table  # noqa: PLC0415
    out, quiet = Path(args.out), args.quiet
    if not out.is_dir():
        raise GpulabError(f"gpulab gradebook: {out} is not a folder (give the --out of gpulab grade --batch)")
    maxima = gradebook.read_batch_info(out)
    path = gradebook.write(out, maxima)
    if not quiet:
        rows = gradebook.rows(out, maxima)
        labs = list(maxima)
        print(format_table(gradebook.header(labs), [r.csv(labs) for r in rows]))
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        print(f"{len(rows)} rows: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    print(f"gradebook: {path}", file=sys.stderr)
    return 0
