#!/usr/bin/env python3
"""Builds the `slides` target of a standalone configure of slides/ on a machine without Marp and
checks that it fails with the install hint (issue: it died with `/bin/sh: Syntax error: "("
unexpected`, the hint's parentheses reaching the shell unquoted).

Usage: test_target_without_marp.py SLIDES_SOURCE_DIR WORK_DIR
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def main(source: Path, work: Path) -> int:
    shutil.rmtree(work, ignore_errors=True)
    # No marp anywhere: neither the pinned one (GPULAB_MARP points at nothing) nor one on PATH.
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not (Path(d) / "marp").exists())
    env = {**os.environ, "PATH": path}
    env.pop("MARP", None)
    generator = ["-G", "Ninja"] if shutil.which("ninja", path=path) else []
    configure = subprocess.run(["cmake", "-S", str(source), "-B", str(work), *generator,
                                "-DGPULAB_MARP=GPULAB_MARP-NOTFOUND"],
                               env=env, capture_output=True, text=True)
    if configure.returncode != 0:
        print(configure.stdout + configure.stderr)
        print("FAIL: the standalone slides project did not configure")
        return 1
    build = subprocess.run(["cmake", "--build", str(work), "--target", "slides"],
                           env=env, capture_output=True, text=True)
    output = build.stdout + build.stderr
    print(output)
    problems = []
    if build.returncode == 0:
        problems.append("the target succeeded without Marp")
    if "Syntax error" in output:
        problems.append("the shell choked on the hint")
    if "Marp CLI is not installed" not in output or "npm" not in output:
        problems.append("no install hint (expected 'Marp CLI is not installed' and the npm command)")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print("ok: the slides target without Marp fails with its install hint")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
