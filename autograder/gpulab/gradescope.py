"""`gpulab package --lab L --out autograder.zip`: Gradescope's autograder bundle for one lab.

Gradescope unpacks the zip into /autograder/source, runs setup.sh once when building the image,
and run_autograder for each submission (the submission is in /autograder/submission, results go
to /autograder/results/results.json). The bundle carries the full instructor course (with
solutions/ and the hidden tests: the reference is timed next to the student), never .git or
build trees. Gradescope's default images have no GPU: see autograder/README.md.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path, PurePosixPath

from gpulab import handout
from gpulab.errors import GpulabError
from gpulab.paths import Course

SETUP_SH = """#!/usr/bin/env bash
# Gradescope image setup for gpulab (lab: {lab}). Needs the CUDA Toolkit (nvcc 12.4+, ncu,
# compute-sanitizer) in the image: use a CUDA base image; Gradescope's default one has neither
# CUDA nor a GPU (see autograder/README.md).
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends cmake ninja-build g++ python3 python3-rich catch2 nlohmann-json3-dev \\
    libcli11-dev util-linux git bubblewrap libseccomp2 >/dev/null
export PATH=/usr/local/cuda/bin:$PATH
cmake --preset default
# The reference runner and the pristine grading workspace are built once, here, not per submission.
cmake --build --preset default --target gpulab-{lab}-reference gpulab-{lab}-student
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope: grade /autograder/submission for lab {lab}; results.json lands in /autograder/results.
cd /autograder/source
export PATH=/usr/local/cuda/bin:$PATH
./build/default/gpulab grade /autograder/submission --lab {lab} --out /autograder/results --quiet
status=$?
# 4 (no GPU) and 5 (a check not run) still produced a results.json that says so.
[ -f /autograder/results/results.json ] || echo '{{"score": 0, "output": "gpulab grade failed (exit '$status'); see the logs"}}' >/autograder/results/results.json
exit 0
"""

EXCLUDED_FROM_BUNDLE = {"autograder/testdata"}


def bundle_files(course_src: Path) -> list[PurePosixPath]:
    """The instructor course minus VCS/build folders (solutions and hidden tests included)."""
    files = handout._git_files(course_src)  # noqa: SLF001 (same listing rules as the handout)
    if files is None:
        files = [PurePosixPath(p.relative_to(course_src).as_posix()) for p in course_src.rglob("*") if p.is_file()]
    skip_dirs = handout.EXCLUDED_DIRS - {"solutions"}
    return sorted(f for f in files
                  if not any(part in skip_dirs for part in f.parts[:-1])
                  and not any(str(f).startswith(x + "/") for x in EXCLUDED_FROM_BUNDLE))


def _add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def cmd_package(course: Course, lab: str, out: Path) -> int:
    if not course.rubric_path(lab).is_file():
        known = ", ".join(l for l in course.labs() if course.rubric_path(l).is_file()) or "none"
        raise GpulabError(f"gpulab package: no graded lab '{lab}' (labs/{lab}/rubric.toml not found); labs: {known}")
    if not (course.source / "solutions" / lab).is_dir():
        raise GpulabError(f"gpulab package: solutions/{lab}/ is missing: the autograder times the student "
                          "against the reference, package from the instructor's course")
    files = bundle_files(course.source)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        _add(zf, "setup.sh", SETUP_SH.format(lab=lab).encode(), 0o755)
        _add(zf, "run_autograder", RUN_AUTOGRADER.format(lab=lab).encode(), 0o755)
        for rel in files:
            if str(rel) in ("setup.sh", "run_autograder"):
                continue
            p = course.source / rel
            _add(zf, str(rel), p.read_bytes(), p.stat().st_mode & 0o777)
    os.replace(tmp, out)
    print(f"gpulab package: wrote {out} ({len(files)} course files + setup.sh, run_autograder) for lab {lab}")
    return 0
