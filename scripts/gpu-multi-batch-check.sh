#!/usr/bin/env bash
# Batch grading across the GPUs of one host (issue 15), on a machine with two or more GPUs, after
# the build (scripts/gpu-verify.sh build). Twelve submissions of two labs (per lab: the reference,
# the starter and four known-bad classes of autograder/testdata/<lab>.toml) are graded
#   1. with --gpus 0 (one GPU), timed;
#   2. with --gpus all, killed half-way (SIGKILL to its whole process group: a crash, not a
#      polite stop), then the same command again, which grades only what is missing;
# and the two gradebooks are compared: the same status and points for every submission
# (performance points within the noise autograder/README.md states), every row's GPU recorded,
# no partial row after the kill, no grading process left behind, and the wall-time speed-up.
# Usage: scripts/gpu-multi-batch-check.sh [preset]   (default gpu; logs in $OUT or build/<preset>/multi-batch)
# Exit 1 on any mismatch; 77 when the host has fewer than two GPUs (nothing to compare).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
preset=${1:-gpu}
G=$root/build/$preset/gpulab
out=${OUT:-$root/build/$preset/multi-batch}
[ -x "$G" ] || { echo "multi-batch: $G missing: build the $preset preset first"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
nvidia-smi -L
[ "$ngpu" -ge 2 ] || { echo "multi-batch: $ngpu GPU(s): this check needs two or more"; exit 77; }
py=${PYTHON:-python3}
rm -rf "$out/subs" "$out/one" "$out/all"; mkdir -p "$out/subs"

# The submissions: one folder per student, each holding one lab.
GPULAB_SOURCE_DIR=$root PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} "$py" - "$root" "$out/subs" <<'PY' || exit 1
import shutil, sys, tempfile
from pathlib import Path
from gpulab.paths import Course
from gpulab.rubric import load_rubric
from tests.testdata_suite import load_specs, materialize
root, subs = Path(sys.argv[1]), Path(sys.argv[2])
course = Course.from_environment()
# Classes whose grade does not depend on luck (a race may pass a case or not: not these).
picks = {"scan": ["compile-error", "powers-of-two-only", "unpadded-shared-conflict-free", "stale-output"],
         "transpose": ["compile-error", "powers-of-two-only", "unpadded-conflict-free-stage", "stale-output"]}
for lab, names in picks.items():
    files = load_rubric(root / "labs" / lab / "rubric.toml").student_files
    for who, base in (("reference", root / "solutions" / lab), ("starter", root / "labs" / lab)):
        dest = subs / f"{lab}-{who}" / "labs" / lab
        dest.mkdir(parents=True)
        for f in files:
            shutil.copy(base / f, dest / f)
    specs = {s["name"]: s for s in load_specs(lab)}
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            made = materialize(course, lab, specs[n], Path(tmp))
            shutil.copytree(made, subs / f"{lab}-{n}")
print("multi-batch: submissions:", " ".join(sorted(p.name for p in subs.iterdir())))
PY

jobs=$(( $(nproc) / 2 )); [ "$jobs" -gt 12 ] && jobs=12
grade() { "$G" grade --batch "$out/subs" --jobs "$jobs" "$@"; }

t0=$(date +%s.%N)
grade --out "$out/one" --gpus 0 >"$out/one.log" 2>&1
echo "multi-batch: --gpus 0: exit $? in $(echo "$(date +%s.%N) - $t0" | bc) s"
one_s=$(echo "$(date +%s.%N) - $t0" | bc)

# --gpus all, killed once half-way through: SIGKILL to its process group when half the rows exist.
t0=$(date +%s.%N)
setsid "$G" grade --batch "$out/subs" --jobs "$jobs" --out "$out/all" --gpus all >"$out/all-1.log" 2>&1 &
pid=$!
total=$(ls "$out/subs" | wc -l)
while kill -0 "$pid" 2>/dev/null; do
  done_rows=$(ls "$out"/all/*/grade.json 2>/dev/null | wc -l)
  [ "$done_rows" -ge $((total / 2)) ] && break
  sleep 0.5
done
killed_at=$(ls "$out"/all/*/grade.json 2>/dev/null | wc -l)
kill -KILL -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
first_s=$(echo "$(date +%s.%N) - $t0" | bc)
sleep 1
# What could outlive it: the workers (their argv names the OUT folder), builds and jailed runners.
left=$(pgrep -f -- "$out/all|/grading/slot-|gpulab-[a-z]+-student" | wc -l)
echo "multi-batch: --gpus all killed after ${first_s} s with $killed_at of $total rows; grading processes left: $left"
partial=$(for d in "$out"/all/*/; do [ -e "$d/grade.json" ] || echo "$(basename "$d")"; done | tr '\n' ' ')
echo "multi-batch: folders without grade.json after the kill (no row: graded again): ${partial:-none}"
t1=$(date +%s.%N)
grade --out "$out/all" --gpus all >"$out/all-2.log" 2>&1
echo "multi-batch: --gpus all resumed: exit $? in $(echo "$(date +%s.%N) - $t1" | bc) s"
all_s=$(echo "$(date +%s.%N) - $t0" | bc)
grep -m1 "already graded" "$out/all-2.log"

PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} "$py" - "$out" "$one_s" "$all_s" "$left" <<'PY'
import csv, json, sys
from pathlib import Path
from gpulab.scoring import TIMING_NOISE
out, one_s, all_s, left = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
def book(name):
    with open(out / name / "gradebook.csv") as f:
        t = list(csv.reader(f))
    return {r[0]: dict(zip(t[0], r)) for r in t[1:]}
def perf(name, who):
    doc = json.loads((out / name / who / "grade.json").read_text())
    return {(lab["name"], s["id"]): c for lab in doc.get("labs", []) for s in lab["stages"]
            for n, c in s["checks"].items() if n == "performance" and c.get("data", {}).get("ratio")}
one, all_ = book("one"), book("all")
bad = []
subs = sorted(p.name for p in (out / "subs").iterdir())
print(f"{'submission':40} {'--gpus 0':>10} {'--gpus all':>10}  status / GPU (--gpus all)")
for who in subs:
    a, b = one.get(who), all_.get(who)
    if a is None or b is None:
        bad.append(f"{who}: missing row (--gpus 0: {a is not None}, --gpus all: {b is not None})")
        continue
    print(f"{who:40} {a['total']:>10} {b['total']:>10}  {b['status']} / {b['gpu']}")
    if a["status"] != b["status"]:
        bad.append(f"{who}: status {a['status']} vs {b['status']}")
    if b["status"] == "graded" and "GPU" not in b["gpu"]:
        bad.append(f"{who}: no GPU recorded ({b['gpu']!r})")
    diff = abs(float(a["total"]) - float(b["total"]))
    if diff > 1e-6:
        # Only performance points may differ, and only where a ratio lies within the noise of the
        # full-credit line (the CS149 rule scales points below it).
        pa, pb = perf("one", who), perf("all", who)
        explained = sum(abs(pa[k]["points"] - pb[k]["points"]) for k in pa if k in pb)
        near = all(abs(pa[k]["data"]["ratio"] / pb[k]["data"]["ratio"] - 1) <= TIMING_NOISE for k in pa if k in pb)
        if abs(explained - diff) > 1e-6 or not near:
            bad.append(f"{who}: total {a['total']} vs {b['total']} (not explained by timing noise)")
ratios = [(k, perf("one", w)[k]["data"]["ratio"], perf("all", w)[k]["data"]["ratio"])
          for w in subs if (out / "one" / w / "grade.json").exists() and (out / "all" / w / "grade.json").exists()
          for k in perf("one", w) if k in perf("all", w)]
if ratios:
    worst = max(abs(x / y - 1) for _, x, y in ratios)
    print(f"performance ratios (student/reference) compared: {len(ratios)}, largest relative difference "
          f"{worst:.3f} (README's noise bound {TIMING_NOISE})")
gpus = {b["gpu"] for b in all_.values() if b["status"] == "graded"}
print(f"GPUs that graded rows with --gpus all: {sorted(gpus)}")
if len(gpus) < 2:
    bad.append("--gpus all graded on fewer than two GPUs")
if left:
    bad.append(f"{left} grading processes outlived the kill")
speedup = one_s / all_s
print(f"wall time: --gpus 0 {one_s:.1f} s, --gpus all {all_s:.1f} s including the kill and the resume "
      f"-> speed-up {speedup:.2f}x (goal >= 1.8x)")
if speedup < 1.8:
    bad.append(f"speed-up {speedup:.2f}x < 1.8x")
print("\n".join("multi-batch: FAIL: " + b for b in bad) or "multi-batch: ok")
sys.exit(1 if bad else 0)
PY
