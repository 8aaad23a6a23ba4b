"""`gpulab handout --out DIR [--check]`: export the student handout and prove it is usable.

The check configures and builds the export like the calling build, runs its tests (GPU tests
skip without a GPU), and grades the untouched export: every lab must score 0.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpulab import handout, proc
from gpulab.errors import EXIT_FAILED, GpulabError
from gpulab.paths import Course
from gpulab.workspace import configure_args, read_cmake_cache, trim_compiler_output


def cmd_handout(course: Course, out: Path, check: bool) -> int:
    stripped = handout.export(course.source, out)
    n = len(handout.exported_files(course.source))
    print(f"gpulab handout: wrote {out} ({n} files; solution blocks stubbed in {len(stripped)} file(s))")
    for f, k in sorted(stripped.items()):
        print(f"  {f}: {k} block(s)")
    leaked = [p for p in ("solutions", "autograder/hidden", "autograder/testdata") if (out / p).exists()]
    if leaked:
        raise GpulabError(f"gpulab handout: {', '.join(leaked)} present in the export (bug)", EXIT_FAILED)
    if not check:
        return 0
    return check_handout(course, out)


STUDENT_TESTS = re.compile(r"^[\w-]+\.tests\.")   # a lab's own tests: on the untouched starter they may fail


def ctest_verdict(output: str) -> tuple[list[str], list[str]]:
    """(broken, expected failures) from ctest's output. A lab's own tests (<lab>.tests.*) test the
    student's code, which in the handout is the starter: failing there is expected, as long as
    they ran. Anything else that did not pass or skip (crash, timeout, not run) is broken."""
    broken, expected = [], []
    section = output.split("The following tests FAILED:", 1)
    if len(section) < 2:
        return broken, expected
    for m in re.finditer(r"^\s+\d+ - (\S+) \(([^)]*)\)", section[1], re.MULTILINE):
        name, what = m.group(1), m.group(2)
        if what == "Failed" and STUDENT_TESTS.match(name):
            expected.append(name)
        else:
            broken.append(f"{name}: {what}")
    return broken, expected


def check_handout(course: Course, out: Path) -> int:
    # A check inside a check (the export's own ctest) would export and build again, forever.
    if os.environ.get("GPULAB_IN_HANDOUT_CHECK") == "1":
        print("gpulab handout --check: already inside a handout check: not nested")
        return 0
    os.environ["GPULAB_IN_HANDOUT_CHECK"] = "1"
    build = out / "build" / "check"
    cache = read_cmake_cache(course.build) if course.build else {}
    steps = [
        ("configure", ["cmake", "-S", str(out), "-B", str(build)] + configure_args(cache), 900),
        ("build", ["cmake", "--build", str(build)], 3600),
    ]
    for name, cmd, timeout in steps:
        print(f"gpulab handout --check: {name} ...", flush=True)
        res = proc.run(cmd, timeout=timeout)
        if not res.ok:
            print(trim_compiler_output(res.stdout + res.stderr))
            print(f"gpulab handout --check: {name} FAILED ({res.describe_exit()})")
            return EXIT_FAILED
    print("gpulab handout --check: tests ...", flush=True)
    # Not the suites that grade whole courses again, and never this check itself (it would recurse).
    res = proc.run(["ctest", "--test-dir", str(build), "-E", "^autograder\\.(testdata|e2e|handout)", "-j2"],
                   timeout=1800)
    broken, expected = ctest_verdict(res.stdout)
    if res.timed_out or broken or (not res.ok and not expected):
        print(res.stdout[-3000:])
        print("gpulab handout --check: tests FAILED: " + ("; ".join(broken) or res.describe_exit()))
        return EXIT_FAILED
    if expected:
        print("  ran; failing on the untouched starter, as expected: " + ", ".join(expected))
    print("gpulab handout --check: grading the untouched handout (expect 0) ...", flush=True)
    from gpulab.grading import Grader, Options  # noqa: PLC0415
    grader = Grader(course, (course.build or out) / "grading", Options(performance=False, conflicts=False,
                                                                         sanitizers=False))
    sub = grader.grade(out, out / "build" / "grade-untouched")
    bad = [l for l in sub.labs if l.points > 0]
    for l in sub.labs:
        print(f"  {l.lab}: {l.points:g} / {l.max_points:g} ({l.status})")
    if bad:
        print("gpulab handout --check: FAILED: the untouched handout earns points in " + ", ".join(l.lab for l in bad))
        return EXIT_FAILED
    print("gpulab handout --check: ok")
    return 0
