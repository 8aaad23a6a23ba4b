"""`gpulab run LAB|all [--stage S]... [--n N|RxC] [--seed S] [--reps R] [--impl student|reference]
[--format table|csv|json] [runner options]`: runs the runner(s). The runners
(gpulab-<lab>-<impl>, common/src/runner.cpp) do the work and print the tables; this finds them,
runs one or all labs, and merges their JSON (csv: one header)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpulab import proc
from gpulab.commands import RUNNER_EPILOG, all_labs, problem_size
from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "run"
PASSTHROUGH = True   # options it does not know go to the runner


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("run", help="check and time a lab's stages (or every lab: all)",
                        epilog=RUNNER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                        allow_abbrev=False)
    sp.add_argument("lab", help="a lab id (see `gpulab list`) or all")
    sp.add_argument("--stage", action="append", metavar="ID", help="only this stage (repeatable)")
    sp.add_argument("--n", type=problem_size, help="problem size: N, or RxC for 2-D labs")
    sp.add_argument("--seed", type=int)
    sp.add_argument("--reps", type=int, help="timed repetitions (median reported)")
    sp.add_argument("--impl", choices=["student", "reference"], default="student")
    sp.add_argument("--format", choices=["table", "csv", "json"], default="table")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    """Runs the runner(s); json output of several labs is merged."""
    labs, skipped = _labs_for_run(course, args.lab, args.impl)
    for s in skipped:
        print(f"gpulab: skipping {s}", file=sys.stderr)
    many = args.lab == "all"
    status = 0
    merged: list[dict[str, Any]] = []
    csv_header: str | None = None
    for lab in labs:
        stages = _stages_for(course, lab, args.impl, args.stage or [], many)
        if stages is None:
            print(f"gpulab: {lab} has none of the stages {', '.join(args.stage)}; skipped", file=sys.stderr)
            continue
        argv = [str(course.require_runner(lab, args.impl)), "run"]
        for s in stages:
            argv += ["--stage", s]
        argv += _runner_args(args) + extra
        if not many or args.format == "table":
            if many:
                print(f"== {lab} ({args.impl}) ==", flush=True)
            rc = proc.run_streaming(argv)
            if many:
                print(flush=True)
        else:
            res = proc.run(argv)
            rc = res.returncode
            sys.stderr.write(res.stderr)
            if args.format == "json":
                merged.append(_parse_run_json(lab, res))
            else:
                csv_header = _print_csv(res.stdout, csv_header)
        status = max(status, rc if rc >= 0 else 1)
    if many and args.format == "json":
        print(json.dumps({"implementation": args.impl, "labs": merged, "exit_code": status}, indent=2))
    return status


def _runner_args(args: Any) -> list[str]:
    """The options `gpulab run` forwards to every runner (stages are handled per lab)."""
    out: list[str] = []
    if args.n is not None:
        out += ["--n", str(args.n)]
    if args.seed is not None:
        out += ["--seed", str(args.seed)]
    if args.reps is not None:
        out += ["--reps", str(args.reps)]
    out += ["--format", args.format]
    return out


def _labs_for_run(course: Course, lab_arg: str, impl: str) -> tuple[list[str], list[str]]:
    """(labs to run, labs skipped because they lack this implementation)."""
    if lab_arg != "all":
        course.require_runner(lab_arg, impl)
        return [lab_arg], []
    labs = all_labs(course)
    ok, skipped = [], []
    for lab in labs:
        try:
            course.require_runner(lab, impl)
            ok.append(lab)
        except GpulabError as e:
            skipped.append(f"{lab} ({e})")
    if not ok:
        raise GpulabError(skipped[0].split("(", 1)[1].rstrip(")") if len(skipped) == 1 else
                          f"gpulab: no lab has a built {impl} runner: " + "; ".join(skipped))
    return ok, skipped


def _stages_for(course: Course, lab: str, impl: str, wanted: list[str], many: bool) -> list[str] | None:
    """The --stage options for one lab; None when `all` was asked and the lab has none of them."""
    if not wanted or not many:
        return wanted
    from gpulab.tools.runner import describe_lab  # noqa: PLC0415
    ids = {s.get("id") for s in describe_lab(course, lab, impl).get("stages", [])}
    mine = [s for s in wanted if s in ids]
    return mine or None


def _parse_run_json(lab: str, res: proc.Result) -> dict[str, Any]:
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError:
        return {"lab": lab, "error": f"runner {res.describe_exit()} without valid JSON",
                "output": (res.stdout + res.stderr)[-2000:]}


def _print_csv(text: str, header: str | None) -> str | None:
    """Prints one lab's CSV, dropping its header line when it repeats the previous lab's."""
    lines = text.splitlines()
    if not lines:
        return header
    if header is not None and lines[0] == header:
        lines = lines[1:]
    print("\n".join(lines), flush=True)
    return header if header is not None else text.splitlines()[0]
