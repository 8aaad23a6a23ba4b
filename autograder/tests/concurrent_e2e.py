#!/usr/bin/env python3
"""Two `gpulab grade` processes at once, with the real build (issue 10, item 1): per lab, the
reference is graded alone, then the reference and the untouched starter are graded by two
`<build>/gpulab grade` processes, the second started while the first builds. The concurrent
reference must score what it scored alone (with a GPU: full marks) and the starter 0.

Usage: concurrent_e2e.py [--cpu] [--delay S] [LAB...]   (GPULAB_BUILD_DIR / GPULAB_SOURCE_DIR as
set by ctest; reports under $OUT when set). Without a GPU it exits 77 (skipped) unless --cpu:
then only the CPU stages are graded, and the comparison with the solo grade still holds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpulab.tools import locate  # noqa: E402
from gpulab.paths import Course  # noqa: E402


def start(build: Path, sub: Path, lab: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen([str(build / "gpulab"), "grade", str(sub), "--lab", lab, "--out", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(p: subprocess.Popen, out: Path, what: str) -> dict:
    _, err = p.communicate(timeout=3600)
    if p.returncode not in (0, 4, 5):
        raise SystemExit(f"concurrent_e2e: {what}: gpulab grade exited {p.returncode}: {err.strip()[-2000:]}")
    return json.loads((out / "grade.json").read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labs", nargs="*")
    ap.add_argument("--cpu", action="store_true", help="run without a GPU too (CPU stages only)")
    ap.add_argument("--delay", type=float, default=3.0, help="seconds between the two starts (the issue's 3)")
    args = ap.parse_args()
    gpu = locate.gpu_present()
    if not gpu and not args.cpu:
        print("concurrent_e2e: no GPU: skipped (--cpu grades the CPU stages)")
        return locate.missing_gpu_exit_code()
    course = Course.from_environment()
    build = course.require_build()
    labs = args.labs or [l for l in course.labs() if course.rubric_path(l).is_file()
                         and (course.source / "solutions" / l).is_dir()]
    out = Path(os.environ.get("OUT") or tempfile.mkdtemp(prefix="gpulab-concurrent-")) / "concurrent"
    failures = []
    for lab in labs:
        ref, starter = course.source / "solutions" / lab, course.source / "labs" / lab
        t0 = time.monotonic()
        solo = finish(start(build, ref, lab, out / lab / "solo"), out / lab / "solo", f"{lab} solo")
        t1 = time.monotonic()
        a = start(build, ref, lab, out / lab / "reference")
        time.sleep(args.delay)
        b = start(build, starter, lab, out / lab / "starter")
        got_a = finish(a, out / lab / "reference", f"{lab} reference")
        got_b = finish(b, out / lab / "starter", f"{lab} starter")
        print(f"concurrent_e2e: {lab}: alone {solo['points']:g}/{solo['max_points']:g} ({t1 - t0:.0f} s); at once: "
              f"reference {got_a['points']:g}, starter {got_b['points']:g} ({time.monotonic() - t1:.0f} s)", flush=True)
        if got_a["points"] != solo["points"]:
            failures.append(f"{lab}: the reference scored {got_a['points']:g} beside another grade, "
                            f"{solo['points']:g} alone")
        if got_b["points"] != 0:
            failures.append(f"{lab}: the starter scored {got_b['points']:g} beside another grade (expected 0)")
        # Full marks: the whole core and the whole extra credit (scan: 100 + 25), every lab.
        full = all(abs(l["core_points"] - l["max_points"]) < 1e-6 and abs(l["extra_points"] - l["extra_max"]) < 1e-6
                   for l in solo["labs"])
        if gpu and not full:
            failures.append(f"{lab}: the reference scored {solo['points']:g} of {solo['max_points']:g} "
                            f"(+ extra credit) alone")
    for f in failures:
        print("concurrent_e2e: FAIL:", f)
    print(f"concurrent_e2e: reports under {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
