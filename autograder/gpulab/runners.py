"""The course commands that drive the C++ runners: list, run, experiment, info.

The runners (gpulab-<lab>-<impl>, common/src/runner.cpp) do the work and print the tables; this
module finds them, runs one or all labs, and merges their JSON.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gpulab import proc
from gpulab.errors import GpulabError
from gpulab.paths import Course
from gpulab.report import format_table
from gpulab.tools.runner import describe_lab

def _stage_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for st in doc.get("stages", []):
        flags = []
        if st.get("must_be_conflict_free"):
            flags.append("conflict-free")
        if st.get("expect_conflicts"):
            flags.append("conflicts expected")
        rows.append([doc.get("lab", ""), st.get("id", ""), st.get("where", ""), st.get("role", ""),
                     ", ".join(flags), st.get("title", "")])
    return rows


def _files_text(doc: dict[str, Any]) -> str:
    files = doc.get("student_files", [])
    return ", ".join(files) if isinstance(files, list) else str(files)


def _all_labs(course: Course) -> list[str]:
    labs = course.labs()
    if not labs:
        raise GpulabError("gpulab: no labs found (no runners in the build tree, no labs/*/rubric.toml); "
                          "build first: cmake --build --preset default")
    return labs


def cmd_list(course: Course, fmt: str) -> int:
    """`gpulab list`: every lab and its stages and experiments."""
    labs = _all_labs(course)
    docs, missing = [], []
    for lab in labs:
        try:
            docs.append(describe_lab(course, lab))
        except GpulabError as e:
            missing.append((lab, str(e)))
    if fmt == "json":
        out = {"labs": docs, "not_built": [{"lab": l, "message": m} for l, m in missing]}
        print(json.dumps(out, indent=2))
        return 0
    for doc in docs:
        print(f"{doc.get('lab')}: {doc.get('title', '')}   (student files: {_files_text(doc)})")
        print(format_table(["lab", "stage", "where", "role", "grading", "title"], _stage_rows(doc)))
        exps = doc.get("experiments", [])
        if exps:
            print("experiments: " + ", ".join(e.get("id", "") for e in exps))
        print()
    for lab, msg in missing:
        print(f"{lab}: not built ({msg})")
    return 0


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
    labs = _all_labs(course)
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
    ids = {s.get("id") for s in describe_lab(course, lab, impl).get("stages", [])}
    mine = [s for s in wanted if s in ids]
    return mine or None


def cmd_run(course: Course, args: Any, extra: list[str]) -> int:
    """`gpulab run LAB|all`: runs the runner(s); json output of several labs is merged."""
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


def cmd_experiment(course: Course, args: Any, extra: list[str]) -> int:
    """`gpulab experiment LAB ID ...`: passthrough to the runner's experiment command."""
    runner = course.require_runner(args.lab, args.impl)
    return proc.run_streaming([runner, "experiment", args.id] + extra)


def cmd_info(course: Course, extra: list[str]) -> int:
    """`gpulab info`: the C++ gpulab-info tool, output passed through."""
    tool = course.info_tool()
    if not tool.is_file():
        raise GpulabError(f"gpulab: {tool} is not built; run `cmake --build {course.require_build()} "
                          "--target gpulab-info`")
    return proc.run_streaming([tool] + extra)


def cmd_conflicts(course: Any, args: Any) -> int:
    """`gpulab conflicts LAB --stage S [--n N] [--impl I]`: the grader's ncu reader, on one build."""
    import tempfile  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from gpulab import gpulock, rubric  # noqa: PLC0415
    from gpulab.tools import locate  # noqa: PLC0415
    from gpulab.tools.ncu import report as ncu_report  # noqa: PLC0415
    from gpulab.tools.ncu import run as ncu_run  # noqa: PLC0415
    runner = course.require_runner(args.lab, args.impl)
    size = args.n
    if size is None:
        rp = course.rubric_path(args.lab)
        rb = rubric.load_rubric(rp) if rp.is_file() else None
        if rb is None or rb.conflicts_size is None:
            raise GpulabError(f"gpulab: give --n (labs/{args.lab}/rubric.toml has no [conflicts] n)")
        size = rb.conflicts_size.arg
    if not locate.gpu_present():
        print("gpulab conflicts: not run: no GPU on this machine (ncu needs one)", file=sys.stderr)
        return 4
    work = Path(args.keep) if args.keep else None
    reports = []
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        base = work or Path(tmp)
        with gpulock.gpu_lock():
            for stage in args.stage:
                params = [a for kv in (args.param or []) for a in ("--param", kv)]
                rep = ncu_run.profile_conflicts(runner, stage, size, base, runner_args=params)
                reports.append(ncu_report.relativize(rep, course.source))
    if args.format == "json":
        print(json.dumps({"lab": args.lab, "implementation": args.impl, "n": size, "params": args.param or [],
                          "stages": [r.to_json() for r in reports]}, indent=2))
    else:
        for r in reports:
            print(ncu_report.format_report(r))
    if any(not r.measured for r in reports):
        return 5
    return 0 if all(r.conflict_free for r in reports) else 1
