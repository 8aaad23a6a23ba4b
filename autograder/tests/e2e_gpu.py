#!/usr/bin/env python3
"""GPU end to end: for every lab with a rubric and a reference, the untouched starter scores 0 and
the reference submitted as a student scores full marks (core and extra credit), with every check run. Exit 77 (ctest
SKIPPED) without a GPU, unless GPULAB_REQUIRE_GPU=1 (then it fails: a GPU machine must not skip).

Usage: e2e_gpu.py [LAB...]   (GPULAB_BUILD_DIR / GPULAB_SOURCE_DIR as set by ctest)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpulab import report  # noqa: E402
from gpulab.tools import locate  # noqa: E402
from gpulab.commands.grade import exit_code_for  # noqa: E402
from gpulab.checks.options import Options  # noqa: E402
from gpulab.grading.pipeline import Grader  # noqa: E402
from gpulab.paths import Course  # noqa: E402


def main() -> int:
    if not locate.gpu_present():
        print("e2e_gpu: no GPU: skipped")
        return locate.missing_gpu_exit_code()
    course = Course.from_environment()
    labs = sys.argv[1:] or [l for l in course.labs() if course.rubric_path(l).is_file()
                            and (course.source / "solutions" / l).is_dir()]
    out = Path(tempfile.mkdtemp(prefix="gpulab-e2e-"))
    # As `gpulab grade` grades one submission (its sanitizer runs and library profiles beside correctness).
    grader = Grader(course, course.require_build() / "grading", Options(log=lambda m: print("  ..", m, flush=True),
                                                                        untimed_ahead=True))
    failures = []
    for lab in labs:
        for what, sub, want_full in (("starter", course.source / "labs" / lab, False),
                                     ("reference", course.source / "solutions" / lab, True)):
            start = time.monotonic()
            g = grader.grade(sub, out / f"{lab}-{what}", [lab])
            report.write_all(g, out / f"{lab}-{what}")
            print(report.console(g))
            print(f"e2e_gpu: {lab} {what}: {report.total_line(g)} in {time.monotonic() - start:.1f} s "
                  f"(build {g.labs[0].build_seconds:.1f} s); report {out / f'{lab}-{what}' / 'report.md'}", flush=True)
            if exit_code_for(g) != 0:
                failures.append(f"{lab} {what}: checks not run: {g.labs[0].not_run()}")
            lg = g.labs[0]
            if want_full and (abs(lg.core_points - lg.max_points) > 1e-6 or abs(lg.extra_points - lg.extra_max) > 1e-6):
                failures.append(f"{lab} reference: {report.total_line(g)}")
            if not want_full and g.points != 0:
                failures.append(f"{lab} starter: {g.points:g} (expected 0)")
    for f in failures:
        print("e2e_gpu: FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    # As testdata_suite.py: a stop signal kills what the grades started.
    from gpulab.cli import guard_process
    with guard_process():
        sys.exit(main())
