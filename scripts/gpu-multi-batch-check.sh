#!/usr/bin/env bash
# Batch grading across the GPUs of one host (issue 15), on a machine with two or more GPUs, after
# the build (scripts/gpu-verify.sh build). Six submissions per lab of LABS (default scan and
# transpose: twelve; per lab the reference, the starter and four known-bad classes of
# autograder/testdata/<lab>.toml) are graded
#   1. with --gpus all, timed (the speed-up's numerator);
#   2. with --gpus 0 (one GPU), timed;
#   3. with --gpus all again into a fresh OUT, killed half-way (SIGKILL to its whole process
#      group: a crash, not a polite stop), then the same command again, which grades only what
#      is missing;
# and the gradebooks are compared: the same status and points for every submission in all three
# (performance points within the noise autograder/README.md states), every row's GPU recorded,
# no partial row after the kill, no grading process left behind, and the wall-time speed-up.
# Usage: scripts/gpu-multi-batch-check.sh [preset]   (default gpu; logs in $OUT or build/<preset>/multi-batch)
#   GRADE_ARGS: more `gpulab grade` options for all three runs, e.g. "--timer events"
#   LABS: the labs whose six submissions make the batch (default: every lab of the course; e.g. "scan transpose": 12; with
#   reduction 18, to see how the speed-up grows with the batch)
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
rm -rf "$out/subs" "$out/one" "$out/all" "$out/clean"; mkdir -p "$out/subs"

# The submissions: one folder per student, each holding one lab.
GPULAB_SOURCE_DIR=$root PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} "$py" - "$root" "$out/subs" ${LABS:-$(PYTHONPATH=$root/autograder "$py" -m gpulab.manifest labs "$root")} <<'PY' || exit 1
import shutil, sys, tempfile
from pathlib import Path
from gpulab.paths import Course
from gpulab.rubric import load_rubric
from tests.testdata_suite import load_specs, materialize
root, subs, labs = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
course = Course.from_environment()
# Classes whose grade does not depend on luck (a race may pass a case or not: not these): the
# known-bad specs mark them `batch = true` (autograder/testdata/<lab>.toml).
for lab in labs:
    names = [s["name"] for s in load_specs(lab) if s.get("batch")]
    if not names:
        sys.exit(f"multi-batch: autograder/testdata/{lab}.toml marks no class batch = true")
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
read -r -a extra <<< "${GRADE_ARGS:-}"
grade() { "$G" grade --batch "$out/subs" --jobs "$jobs" "${extra[@]}" "$@"; }
# Each timed run grades in its own, fresh grading workspace (--work): a run after another one
# finds its slots configured and built (the first --gpus all run of 2026-11-23 paid the cold
# configure of both GPUs' slots, the --gpus 0 run after it none: 228 s against 316 s compared
# a cold batch with a warm one). Cold is what an instructor's first batch on a machine meets.
rm -rf "$out/work-clean" "$out/work-one" "$out/work-all"

# Seconds since $1 (date +%s.%N); awk, not bc: the H200 machine had no bc (2026-11-23).
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(date +%s.%N)
grade --out "$out/clean" --work "$out/work-clean" --gpus all >"$out/clean.log" 2>&1
echo "multi-batch: --gpus all: exit $? in $(secs "$t0") s"
all_s=$(secs "$t0")
t0=$(date +%s.%N)
grade --out "$out/one" --work "$out/work-one" --gpus 0 >"$out/one.log" 2>&1
echo "multi-batch: --gpus 0: exit $? in $(secs "$t0") s"
one_s=$(secs "$t0")

# --gpus all, killed once half-way through: SIGKILL to its process group when half the rows exist.
t0=$(date +%s.%N)
setsid "$G" grade --batch "$out/subs" --jobs "$jobs" "${extra[@]}" --out "$out/all" --work "$out/work-all" --gpus all >"$out/all-1.log" 2>&1 &
pid=$!
total=$(ls "$out/subs" | wc -l)
while kill -0 "$pid" 2>/dev/null; do
  done_rows=$(ls "$out"/all/*/grade.json 2>/dev/null | wc -l)
  [ "$done_rows" -ge $((total / 2)) ] && break
  sleep 0.5
done
killed_at=$(ls "$out"/all/*/grade.json 2>/dev/null | wc -l)
kill -KILL -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
first_s=$(secs "$t0")
sleep 1
# What could outlive it: the workers (their argv names the OUT folder), builds and jailed runners.
left=$(pgrep -f -- "$out/all|$out/work-all|/grading/slot-|gpulab-[a-z]+-student" | wc -l)
echo "multi-batch: --gpus all killed after ${first_s} s with $killed_at of $total rows; grading processes left: $left"
partial=$(for d in "$out"/all/*/; do [ -e "$d/grade.json" ] || echo "$(basename "$d")"; done | tr '\n' ' ')
echo "multi-batch: folders without grade.json after the kill (no row: graded again): ${partial:-none}"
t1=$(date +%s.%N)
grade --out "$out/all" --work "$out/work-all" --gpus all >"$out/all-2.log" 2>&1
echo "multi-batch: --gpus all resumed: exit $? in $(secs "$t1") s"
killed_s=$(secs "$t0")
grep -m1 "already graded" "$out/all-2.log"

PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} "$py" - "$out" "$one_s" "$all_s" "$killed_s" "$left" <<'PY'
import csv, json, sys
from pathlib import Path
from gpulab.scoring import TIMING_NOISE
out, one_s, all_s, killed_s, left = Path(sys.argv[1]), *map(float, sys.argv[2:5]), int(sys.argv[5])
def book(name):
    with open(out / name / "gradebook.csv") as f:
        t = list(csv.reader(f))
    return {r[0]: dict(zip(t[0], r)) for r in t[1:]}
def perf(name, who):
    g = out / name / who / "grade.json"
    doc = json.loads(g.read_text()) if g.exists() else {}
    return {(lab["lab"], s["id"]): c for lab in doc.get("labs", []) for s in lab["stages"]
            for n, c in s["checks"].items() if n == "performance" and c.get("data", {}).get("ratio")}
ways = {"one": "--gpus 0", "clean": "--gpus all", "all": "--gpus all, killed + resumed"}
books = {w: book(w) for w in ways}
bad, worst = [], 0.0
subs = sorted(p.name for p in (out / "subs").iterdir())
print(f"{'submission':40} " + " ".join(f"{w:>8}" for w in ways) + "  status / GPU (killed + resumed run)")
for who in subs:
    rows = {w: books[w].get(who) for w in ways}
    if any(r is None for r in rows.values()):
        bad.append(f"{who}: missing row in " + ", ".join(ways[w] for w, r in rows.items() if r is None))
        continue
    last = rows["all"]
    print(f"{who:40} " + " ".join(f"{rows[w]['total']:>8}" for w in ways) + f"  {last['status']} / {last['gpu']}")
    for w in ("clean", "all"):
        a, b = rows["one"], rows[w]
        if a["status"] != b["status"]:
            bad.append(f"{who}: status {a['status']} ({ways['one']}) vs {b['status']} ({ways[w]})")
        if b["status"] == "graded" and "GPU" not in b["gpu"]:
            bad.append(f"{who}: no GPU recorded ({ways[w]}: {b['gpu']!r})")
        pa, pb = perf("one", who), perf(w, who)
        for k in pa.keys() & pb.keys():
            worst = max(worst, abs(pa[k]["data"]["ratio"] / pb[k]["data"]["ratio"] - 1))
        diff = abs(float(a["total"]) - float(b["total"]))
        if diff > 0.011:   # the gradebook rounds totals to 2 decimals
            # Only performance points may differ, and only where the ratios differ within the noise
            # (the CS149 rule scales points past the full-credit line).
            explained = sum(abs(pa[k]["points"] - pb[k]["points"]) for k in pa.keys() & pb.keys())
            near = all(abs(pa[k]["data"]["ratio"] / pb[k]["data"]["ratio"] - 1) <= TIMING_NOISE
                       for k in pa.keys() & pb.keys())
            if abs(explained - diff) > 0.011 or not near:
                bad.append(f"{who}: total {a['total']} ({ways['one']}) vs {b['total']} ({ways[w]}): "
                           "not explained by timing noise")
print(f"performance ratios (student / reference): largest relative difference between runs {worst:.3f} "
      f"(the README's bound {TIMING_NOISE})")
if worst > TIMING_NOISE:
    bad.append(f"a performance ratio moved {worst:.3f} between runs, more than the stated {TIMING_NOISE}")
for w in ("clean", "all"):
    gpus = sorted({r["gpu"] for r in books[w].values() if r["status"] == "graded"})
    print(f"GPUs that graded rows ({ways[w]}): {gpus}")
    if len(gpus) < 2:
        bad.append(f"{ways[w]} graded on fewer than two GPUs")
if left:
    bad.append(f"{left} grading processes outlived the kill")
# Where the wall time went: per GPU, the rows' time outside build and workspace (GPU-locked checks
# and their waits), against the run's wall time (Amdahl: the first builds and the last row's tail).
for w, wall in (("one", one_s), ("clean", all_s)):
    busy = {}
    for g in (out / w).glob("*/grade.json"):
        doc = json.loads(g.read_text())
        for lab in doc.get("labs", []):
            ph = lab.get("phases") or {}
            busy[doc.get("device") or "?"] = busy.get(doc.get("device") or "?", 0.0) + sum(
                v for k, v in ph.items() if k not in ("lint", "workspace", "build"))
    print(f"{ways[w]}: wall {wall:.1f} s; checks after the build, per GPU: "
          + "; ".join(f"{k}: {v:.0f} s" for k, v in sorted(busy.items())))
print(f"wall time: --gpus 0 {one_s:.1f} s; --gpus all {all_s:.1f} s -> speed-up {one_s / all_s:.2f}x (goal >= 1.8x); "
      f"killed + resumed {killed_s:.1f} s in all ({one_s / killed_s:.2f}x)")
if one_s / all_s < 1.8:
    bad.append(f"speed-up {one_s / all_s:.2f}x < 1.8x")
print("\n".join("multi-batch: FAIL: " + b for b in bad) or "multi-batch: ok")
sys.exit(1 if bad else 0)
PY
