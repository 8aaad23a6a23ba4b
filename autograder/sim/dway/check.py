#!/usr/bin/env python3
"""Runs the merge-dway host simulation (dway-sim) on the grader's own cases of merge-dway: the
rubric's visible cases and sanitizer shapes, the hidden cases, and a small sweep of every d, input
and pairs setting at sizes with partial tiles, partial groups and several passes.

    check.py SIM [--course-only]      every case must pass (the reference; --course-only: no sweep)
    check.py SIM --class NAME         a known-bad class built into SIM (extract.py --submission):
                                      its expectation in autograder/testdata/shearsort.toml, on
                                      these cases: "merge-dway.correctness" = "fail" needs a
                                      failing case (or one that crashes or that AddressSanitizer
                                      stops: an ASan build stands in for memcheck), `cases = {
                                      merge-dway = ["pass"] }` a passing one

The cases are read from the course, so a case added to the rubric is simulated too.
"""
import argparse
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STAGE = "merge-dway"


def course_cases() -> list[tuple[str, list[str]]]:
    rubric = tomllib.load(open(ROOT / "labs/shearsort/rubric.toml", "rb"))
    hidden = tomllib.load(open(ROOT / "autograder/hidden/shearsort.toml", "rb"))
    out = []
    for origin, cases in (("visible", rubric.get("case", [])), ("sanitizer shape", rubric["sanitizers"].get("shape", [])),
                          ("hidden", hidden.get("case", []))):
        for c in cases:
            if STAGE not in c.get("stages", [STAGE]):
                continue
            p = c.get("params", {})
            args = [c.get("distribution", "uniform"), p.get("input", "dist"), str(c["n"]), str(p.get("d", 8)),
                    str(p.get("pairs", 0)), str(p.get("chunk", 0)), str(c.get("seed", 1))]
            out.append((origin, args))
    return out


def sweep_cases() -> list[tuple[str, list[str]]]:
    out = []
    for d in (2, 4, 8, 16, 32, 64, 128, 256):
        for dist, inp in (("uniform", "dist"), ("few-unique", "dist"), ("all-equal", "dist"), ("sorted", "dist"),
                          ("reverse", "dist"), ("uniform", "zero-one"), ("uniform", "extremes")):
            for pairs in (0, 1):
                for n in (1, 33, 1025, 5000):
                    out.append(("sweep", [dist, inp, str(n), str(d), str(pairs), "0", str(n + d)]))
                out.append(("sweep", [dist, inp, "3000", str(d), str(pairs), "64", "7"]))   # many tasks a group
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sim")
    ap.add_argument("--class", dest="klass")
    ap.add_argument("--course-only", action="store_true", help="the course's cases, no sweep (the AddressSanitizer build)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    cases = course_cases() + ([] if a.klass or a.course_only else sweep_cases())
    t0 = time.monotonic()

    def run(case):
        origin, args = case
        r = subprocess.run([a.sim] + args, capture_output=True, text=True, timeout=600)
        return origin, args, r.returncode, (r.stdout + r.stderr).strip()

    with ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(run, cases))
    crashed = [r for r in results if r[2] not in (0, 1)]
    failed = [r for r in results if r[2] == 1]
    passed = [r for r in results if r[2] == 0]
    secs = time.monotonic() - t0
    if not a.klass:
        for origin, args, rc, out in failed + crashed:
            print(f"{origin}: {' '.join(args)}: {out.splitlines()[-1] if out else f'exit {rc}'}")
        print(f"dway-sim: {len(passed)} of {len(results)} cases as the sort (course cases and sweep), {secs:.0f} s")
        return 0 if len(passed) == len(results) else 1
    spec = {s["name"]: s for s in tomllib.load(open(ROOT / "autograder/testdata/shearsort.toml", "rb"))["submission"]}[a.klass]
    expect = spec.get("expect", {})
    want_fail = expect.get("checks", {}).get(f"{STAGE}.correctness") == "fail"
    want_pass = "pass" in expect.get("cases", {}).get(STAGE, [])
    for origin, args, rc, out in failed + crashed:
        print(f"{origin}: {' '.join(args)}: {out.splitlines()[-1] if out else f'exit {rc}'}")
    print(f"dway-sim {a.klass}: {len(passed)} pass, {len(failed)} fail, {len(crashed)} other of {len(results)} course cases, {secs:.0f} s")
    ok = (not want_fail or failed or crashed) and (not want_pass or passed)
    if not ok:
        print(f"dway-sim {a.klass}: MISMATCH with autograder/testdata/shearsort.toml (wants "
              f"{'a failing case' if want_fail else ''}{' and ' if want_fail and want_pass else ''}"
              f"{'a passing case' if want_pass else ''})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
