"""Where the timing cross-check's Nsight Compute time goes (instructor bench, GPU machine).

The cross-check (checks/performance.py) profiles every kernel of a lab's timed stages in one ncu
run of the reference runner. Measured with this bench (H200, 2026-11-30; autograder/README.md,
"Output", has the table): each kernel ncu profiles costs 7.3-7.8 ms whatever the replay mode, and
a launch it lets pass next to nothing (radix-sort: 1818 kernels profiled 15.9 s, a filter that
matches none 3.1 s, the runner alone 2.6 s). An earlier reading from a busy host, "8-14 ms per
launch, profiled or not", was wrong.

This bench runs each lab's reference at its rubric's performance size and stages (every lab, or
the labs named) in the ways that tell those costs apart, and prints one line per way: seconds,
kernels profiled, kernel launches the runner counted.

    python3 autograder/bench/ncu_overhead.py [--out DIR] [LAB ...]    (after the gpu preset's build)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpulab import proc  # noqa: E402
from gpulab.manifest import labs as course_labs  # noqa: E402
from gpulab.paths import Course  # noqa: E402
from gpulab.rubric import load_rubric  # noqa: E402
from gpulab.tools import locate  # noqa: E402
from gpulab.tools.ncu import run as ncu_run  # noqa: E402

# (name, ncu arguments before the runner, or None for the runner alone). The first is the grader's.
WAYS = (
    ("grader", [*ncu_run.KERNEL_TIME, "--csv", *ncu_run.KERNEL_NAME_BASE, "--nvtx"]),
    ("runner-alone", None),
    ("cache-flush", ["--metrics", "gpu__time_duration.sum", "--clock-control", "none", "--csv", "--nvtx"]),
    ("no-nvtx", [*ncu_run.KERNEL_TIME, "--csv"]),
    ("match-none", [*ncu_run.KERNEL_TIME, "--csv", "--nvtx", "-k", "regex:^no_kernel_is_named_this$"]),
    ("first-64", [*ncu_run.KERNEL_TIME, "--csv", "--nvtx", "-c", "64"]),
    # Nothing profiled and no filter to evaluate (the runner never calls cudaProfilerStart): ncu's
    # start-up and its interception of every API call. Near runner-alone: the cost is per launch
    # filtered; near match-none: it is ncu's being there at all.
    ("profile-off", ["--profile-from-start", "off", "--csv"]),
    # The grader's way with application replay: no memory saved and restored around a kernel (kernel
    # replay's cost, if ncu pays it even for a one-pass metric).
    ("app-replay", ["--replay-mode", "application", *ncu_run.KERNEL_TIME, "--csv", *ncu_run.KERNEL_NAME_BASE,
                    "--nvtx"]),
    # Every launch skipped by count: the cheapest filter ncu has (no name, no NVTX stack to match).
    ("skip-all", [*ncu_run.KERNEL_TIME, "--csv", "--launch-skip", "1000000000"]),
)


def timed_stages(course: Course, lab: str) -> tuple[list[str], str] | None:
    """The stages with performance points and the performance n of the lab's rubric."""
    rubric = load_rubric(course.source / "labs" / lab / "rubric.toml")
    if rubric.performance.size is None:
        return None
    return [sp.id for sp in rubric.stages if sp.performance > 0], rubric.performance.size.arg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="labs (default: every lab with a performance size)")
    ap.add_argument("--out", type=Path, default=Path("ncu-overhead"), help="where each way's output goes")
    args = ap.parse_args()
    course = Course.from_environment()
    ncu = locate.find_tool("ncu")
    if ncu is None:
        print("ncu-overhead: ncu (Nsight Compute) not found", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for lab in args.labs or course_labs(course.source):
        found = timed_stages(course, lab)
        if found is None:
            continue
        stages, n = found
        runner = course.require_runner(lab, "reference")
        target = [str(runner), "run"] + [a for s in stages for a in ("--stage", s)] + ["--n", n, "--no-time",
                                                                                      "--format", "json"]
        for name, ncu_args in WAYS:
            argv = target if ncu_args is None else [str(ncu)] + ncu_args + target
            t0 = time.monotonic()
            res = proc.run(argv, timeout=600)
            seconds = time.monotonic() - t0
            (args.out / f"{lab}-{name}.log").write_text(res.stdout + res.stderr, encoding="utf-8")
            profiled = len(re.findall(r'"gpu__time_duration\.sum"', res.stdout))
            launches = _launches(res.stdout)
            print(f"ncu-overhead: {lab} {name}: {res.describe_exit()} in {seconds:.1f} s, {profiled} kernels "
                  f"profiled, {launches} launches counted by the runner (stages: {' '.join(stages)}; n = {n})",
                  flush=True)
    return 0


def _launches(stdout: str) -> int | str:
    """The runner's own launch counts (its JSON document, printed after ncu's lines), summed."""
    start = stdout.find("{")
    try:
        doc, _ = json.JSONDecoder().raw_decode(stdout[start:]) if start >= 0 else ({}, 0)
    except ValueError:
        return "?"
    counts = [r.get("launches") for r in doc.get("results", []) if isinstance(r.get("launches"), int)]
    return sum(counts) if counts else "?"   # none under ncu: the runner's CUPTI counter is ncu's then


if __name__ == "__main__":
    sys.exit(main())
