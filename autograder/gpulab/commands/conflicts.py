"""`gpulab conflicts LAB --stage S [--n N] [--impl I] [--format json] [--keep DIR]`: Nsight
Compute's excess shared wavefronts of a stage, total and per source line, read as the grader reads
them (tools/ncu/). Exit 0 conflict-free, 1 conflicts, 4 no GPU, 5 not measured."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from gpulab.commands import problem_size
from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "conflicts"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("conflicts", help="Nsight Compute: excess shared-memory wavefronts per source line",
                        allow_abbrev=False)
    sp.add_argument("lab")
    sp.add_argument("--stage", action="append", required=True, metavar="ID", help="stage (repeatable)")
    sp.add_argument("--n", type=problem_size, help="problem size (default: the rubric's [conflicts] n)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")
    sp.add_argument("--format", choices=["table", "json"], default="table")
    sp.add_argument("--keep", metavar="DIR", help="keep ncu's report and CSV files in DIR")
    sp.add_argument("--param", action="append", metavar="KEY=VALUE",
                    help="stage knob passed to the runner, e.g. colors=16 (repeatable)")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    """The grader's ncu reader, on one build."""
    from gpulab import gpulock, rubric  # noqa: PLC0415
    from gpulab.tools import locate  # noqa: PLC0415
    from gpulab.tools.ncu import report as ncu_report  # noqa: PLC0415
    from gpulab.tools.ncu import run as ncu_run  # noqa: PLC0415
    runner = course.require_runner(args.lab, args.impl)
    size = args.n
    params = [a for kv in (args.param or []) for a in ("--param", kv)]
    if size is None:
        rp = course.rubric_path(args.lab)
        rb = rubric.load_rubric(rp) if rp.is_file() else None
        if rb is None or rb.conflicts_size is None:
            raise GpulabError(f"gpulab: give --n (labs/{args.lab}/rubric.toml has no [conflicts] n)")
        size = rb.conflicts_size.arg
        if not args.param:   # the grader's profile: its size and its knob values
            params = rb.conflicts_args()
    if not locate.gpu_present():
        print("gpulab conflicts: not run: no GPU on this machine (ncu needs one)", file=sys.stderr)
        return 4
    work = Path(args.keep) if args.keep else None
    reports = []
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        base = work or Path(tmp)
        with gpulock.gpu_lock(shared=True):   # exact counts: other untimed work may run beside them
            for stage in args.stage:
                rep = ncu_run.profile_conflicts(runner, stage, size, base, runner_args=params)
                reports.append(ncu_report.relativize(rep, course.source))
    if args.format == "json":
        print(json.dumps({"lab": args.lab, "implementation": args.impl, "n": size, "params": params[1::2],
                          "stages": [r.to_json() for r in reports]}, indent=2))
    else:
        for r in reports:
            print(ncu_report.format_report(r))
    if any(not r.measured for r in reports):
        return 5
    return 0 if all(r.conflict_free for r in reports) else 1
