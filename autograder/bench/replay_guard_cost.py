"""What the replay guard costs (instructor bench, GPU machine).

The grader times every stage with a fresh input per timed run, each run's output judged (run_stage,
autograder/README.md "Known limits"). This bench runs each lab's reference at its rubric's
performance size, stages and repetitions twice, in one process each: as the grader does, and with
`--same-input` (the one input, no judging), and prints per lab the wall time of both and, per
stage, both medians: the medians should agree (the guard works untimed), the wall times say what
the guard adds to a grade's timing phase.

    python3 autograder/bench/replay_guard_cost.py [LAB ...]    (after the gpu preset's build)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ncu_overhead import timed_stages  # noqa: E402
from gpulab import proc  # noqa: E402
from gpulab.manifest import labs as course_labs  # noqa: E402
from gpulab.paths import Course  # noqa: E402
from gpulab.rubric import load_rubric  # noqa: E402
from gpulab.tools.runner_json import parse_runner_json, stage_result  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="labs (default: every lab with a performance size)")
    args = ap.parse_args()
    course = Course.from_environment()
    for lab in args.labs or course_labs(course.source):
        found = timed_stages(course, lab)
        if found is None:
            continue
        stages, n = found
        perf = load_rubric(course.source / "labs" / lab / "rubric.toml").performance
        runner = course.require_runner(lab, "reference")
        argv = [str(runner), "run"] + [a for s in stages for a in ("--stage", s)] + [
            "--n", n, "--reps", str(perf.reps), "--warmup", str(perf.warmup), "--no-cpu-baseline", "--format", "json"]
        medians: dict[str, dict[str, float | str]] = {}
        walls = {}
        for way, extra in (("fresh", []), ("same-input", ["--same-input"])):
            t0 = time.monotonic()
            res = proc.run(argv + extra, timeout=1200)
            walls[way] = time.monotonic() - t0
            doc = parse_runner_json(res.stdout)
            for s in stages:
                r = stage_result(doc, s) or {}
                ok = r.get("status") == "pass" and (way != "fresh" or r.get("fresh_inputs") is True)
                medians.setdefault(s, {})[way] = r.get("median_ms") if ok else f"{r.get('status')}: {r.get('message', '')[:80]}"
        print(f"replay-guard-cost: {lab} n={n} reps={perf.reps}+{perf.warmup}: fresh {walls['fresh']:.1f} s, "
              f"same-input {walls['same-input']:.1f} s (+{walls['fresh'] - walls['same-input']:.1f} s)", flush=True)
        for s, m in medians.items():
            f, o = m.get("fresh"), m.get("same-input")
            ratio = f" ({f / o:.3f}x)" if isinstance(f, float) and isinstance(o, float) and o > 0 else ""
            print(f"replay-guard-cost:   {s}: fresh {f} ms, same-input {o} ms{ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
