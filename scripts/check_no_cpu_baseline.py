#!/usr/bin/env python3
"""ctest's <lab>.runner.no-cpu-baseline (common/cmake/GpulabLab.cmake): runs the runner command
given (`gpulab-<lab>-<impl> run --where gpu --no-cpu-baseline --format json ...`), reads its JSON
and holds it to what --no-cpu-baseline promises the grader's timing runs: every stage ran on the
GPU, passed and was timed (or says TODO: the handout's unwritten stages), and none has a "vs CPU"
number. The key must be there, null: a check
that only looks for a number would pass for ever once the key is renamed or dropped.

Usage: check_no_cpu_baseline.py RUNNER [ARG...]
Exit: 0 as promised, 1 not (each broken promise on stderr), 77 the runner's own 77 (no GPU).
"""

from __future__ import annotations

import json
import subprocess
import sys

SKIPPED = 77   # ctest's SKIP_RETURN_CODE: the runner found no GPU (--require-gpu)


def problems(doc: object) -> list[str]:
    """What the runner's JSON breaks of the promise, in words (empty: none)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        return ["no \"results\" list in the runner's JSON"]
    if not doc["results"]:
        return ["\"results\" is empty: no stage ran"]
    out = []
    for r in doc["results"]:
        stage = r.get("stage", "?") if isinstance(r, dict) else "?"
        if not isinstance(r, dict):
            out.append(f"a result is not an object: {r!r}")
            continue
        if r.get("where") != "gpu":
            out.append(f"stage {stage}: where = {r.get('where')!r}, want gpu (--where gpu, no CPU baseline run)")
        # todo: a stage of the handout not written yet (the runner does not count it as failed).
        if r.get("status") not in ("pass", "todo"):
            out.append(f"stage {stage}: status {r.get('status')!r} {r.get('message', '')}")
        elif r["status"] == "pass" and not isinstance(r.get("median_ms"), (int, float)):
            out.append(f"stage {stage}: median_ms = {r.get('median_ms')!r}, want the time of a passing stage")
        if "speedup_vs_cpu" not in r:
            out.append(f"stage {stage}: no key speedup_vs_cpu (the runner's JSON changed: update this check)")
        elif r["speedup_vs_cpu"] is not None:
            out.append(f"stage {stage}: speedup_vs_cpu = {r['speedup_vs_cpu']!r} with --no-cpu-baseline, want null")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    run = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
    if run.returncode == SKIPPED:
        sys.stdout.write(run.stdout)
        return SKIPPED
    if run.returncode != 0:
        print(f"check_no_cpu_baseline: the runner exited {run.returncode}:\n{run.stdout}", file=sys.stderr)
        return 1
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        print(f"check_no_cpu_baseline: the runner's output is not JSON ({e}):\n{run.stdout}", file=sys.stderr)
        return 1
    bad = problems(doc)
    for line in bad:
        print(f"check_no_cpu_baseline: {line}", file=sys.stderr)
    if not bad:
        print(f"check_no_cpu_baseline: {len(doc['results'])} GPU stages, none with a CPU speedup")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
