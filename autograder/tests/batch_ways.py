#!/usr/bin/env python3
"""One batch graded several ways, compared (scripts/gpu-throughput-check.sh on one GPU,
scripts/gpu-multi-batch-check.sh on several): every submission has a row in every way, the same
status, and the same total except where performance points moved with ratios inside the noise the
grader's README states (scoring.TIMING_NOISE); each way's wall time, submissions per GPU-hour and
where its rows' time went (build, waiting for the GPU, the checks).

Usage: batch_ways.py OUT --way NAME=LABEL[=SECONDS[=GPUS]] ... [--gpus N]
  OUT/subs holds the submissions, OUT/<NAME> each way's --out; the first way is the baseline.
  SECONDS: the way's wall time, GPUS the GPUs it ran on (default --gpus), for the throughput line.
  The noise bound holds for stages whose reference takes TIMING_NOISE_FROM_MS or more; shorter
  stages' moves are shown, not held to it (the README's "Timing noise"). Exit 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpulab.scoring import TIMING_NOISE, TIMING_NOISE_FROM_MS  # noqa: E402

TOTAL_ROUNDING = 0.011   # the gradebook rounds totals to 2 decimals


def book(folder: Path) -> dict[str, dict[str, str]]:
    """The gradebook's rows by student ({} when the way wrote none)."""
    try:
        with open(folder / "gradebook.csv", newline="") as f:
            t = list(csv.reader(f))
    except OSError:
        return {}
    return {r[0]: dict(zip(t[0], r)) for r in t[1:] if r}


def performance(folder: Path, who: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(lab, stage) -> the performance check of a row that has a ratio."""
    g = folder / who / "grade.json"
    doc = json.loads(g.read_text()) if g.exists() else {}
    return {(lab["lab"], s["id"]): c for lab in doc.get("labs", []) for s in lab["stages"]
            for n, c in s["checks"].items() if n == "performance" and c.get("data", {}).get("ratio")}


def _short(*checks: dict[str, Any]) -> bool:
    """A stage too short for the noise bound: its reference median under TIMING_NOISE_FROM_MS in
    any of the ways (a check without the reference's time is held to the bound)."""
    return any(float(c["data"].get("t_ref_ms") or TIMING_NOISE_FROM_MS) < TIMING_NOISE_FROM_MS for c in checks)


def compare(out: Path, ways: dict[str, str]) -> tuple[list[str], tuple[float, float], list[str]]:
    """(mismatches, the largest relative move of a performance ratio (stages held to the bound,
    shorter stages), the table's lines): each way against the first."""
    names = list(ways)
    books = {w: book(out / w) for w in names}
    bad, worst, worst_short = [], 0.0, 0.0
    lines = [f"{'submission':42} " + " ".join(f"{w:>9}" for w in names) + "  status (each way)"]
    for who in sorted(p.name for p in (out / "subs").iterdir()):
        rows = {w: books[w].get(who) for w in names}
        missing = [ways[w] for w, r in rows.items() if r is None]
        if missing:
            bad.append(f"{who}: no row in " + ", ".join(missing))
            continue
        lines.append(f"{who:42} " + " ".join(f"{rows[w]['total']:>9}" for w in names)
                     + "  " + " / ".join(sorted({r["status"] for r in rows.values()})))
        base = names[0]
        for w in names[1:]:
            a, b = rows[base], rows[w]
            if a["status"] != b["status"]:
                bad.append(f"{who}: status {a['status']} ({ways[base]}) vs {b['status']} ({ways[w]})")
            pa, pb = performance(out / base, who), performance(out / w, who)
            moves = {k: abs(pa[k]["data"]["ratio"] / pb[k]["data"]["ratio"] - 1) for k in pa.keys() & pb.keys()}
            held = {k: m for k, m in moves.items() if not _short(pa[k], pb[k])}
            worst = max([worst, *held.values()])
            worst_short = max([worst_short, *(m for k, m in moves.items() if k not in held)])
            diff = abs(float(a["total"]) - float(b["total"]))
            if diff > TOTAL_ROUNDING:
                # Only performance points may differ, where the ratios moved within the noise.
                explained = sum(abs(pa[k]["points"] - pb[k]["points"]) for k in moves)
                if abs(explained - diff) > TOTAL_ROUNDING or any(m > TIMING_NOISE for m in held.values()):
                    bad.append(f"{who}: total {a['total']} ({ways[base]}) vs {b['total']} ({ways[w]}): "
                               "not explained by timing noise")
    if worst > TIMING_NOISE:
        bad.append(f"a performance ratio moved {worst:.3f} between ways, more than the stated {TIMING_NOISE} "
                   f"(stages of {TIMING_NOISE_FROM_MS} ms or more)")
    return bad, (worst, worst_short), lines


def phase_seconds(folder: Path) -> dict[str, float]:
    """The rows' seconds summed by phase group: build (and workspace), gpu-wait, checks."""
    sums = {"build": 0.0, "gpu-wait": 0.0, "checks": 0.0}
    for g in folder.glob("*/grade.json"):
        for lab in json.loads(g.read_text()).get("labs", []):
            for k, v in (lab.get("phases") or {}).items():
                sums["build" if k in ("lint", "workspace", "build") else k if k == "gpu-wait" else "checks"] += float(v)
    return sums


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--way", action="append", required=True, help="NAME=LABEL[=SECONDS]")
    ap.add_argument("--gpus", type=int, default=1, help="GPUs a way ran on unless its spec says (for submissions per GPU-hour)")
    args = ap.parse_args()
    ways, walls, gpus = {}, {}, {}
    for spec in args.way:
        name, label, *rest = spec.split("=")
        ways[name] = label
        if rest:
            walls[name] = float(rest[0])
        if len(rest) > 1:
            gpus[name] = int(rest[1])
    bad, (worst, worst_short), lines = compare(args.out, ways)
    print("\n".join(lines))
    print(f"performance ratios: largest relative move between ways {worst:.3f} for stages of "
          f"{TIMING_NOISE_FROM_MS} ms or more (the README's bound {TIMING_NOISE}), {worst_short:.3f} for shorter ones")
    n = len(list((args.out / "subs").iterdir()))
    for w, label in ways.items():
        ph = phase_seconds(args.out / w)
        wall = walls.get(w)
        rate = (f"{n / (wall * gpus.get(w, args.gpus) / 3600):.0f} submissions per GPU-hour on "
                f"{gpus.get(w, args.gpus)} GPU(s)" if wall else "wall time not given")
        print(f"{label}: {n} submissions in {wall or 0:.1f} s: {rate}; the rows' seconds: build {ph['build']:.0f}, "
              f"waiting for the GPU {ph['gpu-wait']:.0f}, checks {ph['checks']:.0f}")
    print("\n".join("batch-ways: FAIL: " + b for b in bad) or "batch-ways: the ways agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
