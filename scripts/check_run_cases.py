#!/usr/bin/env python3
"""ctest's <lab>.runner.cases and .runner.cases-cpu (common/cmake/GpulabLab.cmake): the runner's
`run --cases` (several correctness cases in one process, as the grader runs its small cases:
autograder/gpulab/checks/correctness.py, run_case_group) holds what the grader relies on:
one JSON line per case in order, each a run document of its own problem with every stage asked
for, the outputs saved in DIR/<index>/ and accepted by `verify` of the same binary; a case it
cannot run is an "error" line that does not stop the cases after it; exit 1 then, 0 when all pass.

Usage: check_run_cases.py RUNNER cpu|gpu
Exit: 0 as promised, 1 not (each broken promise on stderr), 77 no GPU (gpu: no stage could run).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

SKIPPED = 77   # ctest's SKIP_RETURN_CODE


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def main() -> int:
    runner, where = sys.argv[1], sys.argv[2]
    listing = json.loads(run([runner, "list", "--format", "json"]).stdout)
    stages = [s["id"] for s in listing["stages"] if s.get("where") == where]
    if not stages:
        print(f"check_run_cases: no {where} stage in this lab: nothing to check")
        return 0
    # The lab's default size, then another seed, then a case that cannot run, then one after it.
    cases = [{"args": [], "stages": stages}, {"args": ["--seed", "7"], "stages": stages},
             {"args": ["--n", "not-a-size"], "stages": stages[:1]}, {"args": ["--seed", "8"], "stages": stages[:1]}]
    broken = []
    with tempfile.TemporaryDirectory(prefix="gpulab-cases-") as out:
        res = run([runner, "run", "--cases", json.dumps(cases), "--no-time", "--format", "json", "--save-output", out])
        lines = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
        if [d.get("case") for d in lines] != list(range(len(cases))):
            return _fail([f"expected one line per case, in order; got cases {[d.get('case') for d in lines]}"
                          f" (exit {res.returncode}; stderr: {res.stderr.strip()[-300:]})"])
        if where == "gpu" and any(r.get("status") == "skipped" for r in lines[0].get("results", [])):
            print("check_run_cases: no GPU: skipped")
            return SKIPPED
        if "error" not in lines[2] or "not-a-size" not in lines[2]["error"]:
            broken.append(f"case 2 (--n not-a-size) should be an error line naming the option, got {lines[2]}")
        if res.returncode != 1:
            broken.append(f"exit {res.returncode} with a case that could not run (expected 1)")
        for i in (0, 1, 3):
            doc = lines[i]
            want_seed = {0: 1, 1: 7, 3: 8}[i]
            if (doc.get("problem") or {}).get("seed") != want_seed:
                broken.append(f"case {i}: problem {doc.get('problem')} is not its own (seed {want_seed})")
            rows = {r.get("stage"): r for r in doc.get("results", [])}
            for s in cases[i]["stages"]:
                status = (rows.get(s) or {}).get("status")
                if status not in ("pass", "todo"):
                    broken.append(f"case {i}, stage {s}: status {status} ({(rows.get(s) or {}).get('message', '')[:200]})")
            passed = [s for s in cases[i]["stages"] if (rows.get(s) or {}).get("status") == "pass"]
            if passed:
                argv = [runner, "verify", "--output-dir", str(Path(out) / str(i)), "--format", "json",
                        *cases[i]["args"]] + [x for s in passed for x in ("--stage", s)]
                verdict = json.loads(run(argv).stdout or "{}")
                bad = [r for r in verdict.get("results", []) if r.get("status") != "pass"]
                if bad or len(verdict.get("results", [])) != len(passed):
                    broken.append(f"case {i}: verify of the saved outputs: {bad or verdict}")
    return _fail(broken) if broken else 0


def _fail(broken: list[str]) -> int:
    for b in broken:
        print("check_run_cases:", b, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
