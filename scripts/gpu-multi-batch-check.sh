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

# The submissions: one folder per student, each holding one lab (the reference, the starter, the
# known-bad classes marked batch = true).
GPULAB_SOURCE_DIR=$root PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} \
  "$py" autograder/tests/testdata_suite.py --make-batch "$out/subs" ${LABS:-} || exit 1

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
# What held a way back: the batch prints how busy its processes kept the host's cores ("host
# CPUs:"), and nvidia-smi samples how much of the time each GPU ran kernels (every 2 s) while the way runs. On two
# H200s (2026-11-29) 18 rows took 400.7 s on both against 509.9 s on one: every check of a row
# took longer beside twice as many others, which a busy GPU does not explain.
sample_gpus() { nvidia-smi dmon -s u -d 2 >"$out/dmon-$1.log" 2>&1 & dmon=$!; }
said_load() {
  kill "$dmon" 2>/dev/null; wait "$dmon" 2>/dev/null
  grep -h "host CPUs:" "$out/$1.log" | sed "s/^/multi-batch: $1: /"
  awk -v way="$1" '!/^#/ && NF >= 2 && $2 ~ /^[0-9]+$/ { n[$1]++; s[$1] += $2 }
    END { for (g in n) printf "multi-batch: %s: GPU %s ran kernels %.0f%% of the time (nvidia-smi dmon sm, 2-s samples)\n", way, g, s[g] / n[g] }' \
    "$out/dmon-$1.log"
}
t0=$(date +%s.%N)
sample_gpus clean
grade --out "$out/clean" --work "$out/work-clean" --gpus all >"$out/clean.log" 2>&1
echo "multi-batch: --gpus all: exit $? in $(secs "$t0") s"
all_s=$(secs "$t0")
said_load clean
t0=$(date +%s.%N)
sample_gpus one
grade --out "$out/one" --work "$out/work-one" --gpus 0 >"$out/one.log" 2>&1
echo "multi-batch: --gpus 0: exit $? in $(secs "$t0") s"
one_s=$(secs "$t0")
said_load one

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

# Every row the same in the three runs (status, points within the timing noise), the rows' time.
status=0
PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} "$py" autograder/tests/batch_ways.py "$out" --gpus "$ngpu" \
  --way "one=--gpus 0=$one_s=1" --way "clean=--gpus all=$all_s" --way "all=--gpus all, killed + resumed=$killed_s" || status=1
# Both GPUs named in the rows of the two-GPU runs; nothing outlived the kill; the speed-up.
for w in clean all; do
  gpus=$("$py" -c 'import csv, sys; print(len({r["gpu"] for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "graded"}))' \
    "$out/$w/gradebook.csv")
  echo "multi-batch: GPUs that graded rows ($w): $gpus"
  [ "$gpus" -ge 2 ] || { echo "multi-batch: FAIL: $w graded on fewer than two GPUs"; status=1; }
done
[ "$left" -eq 0 ] || { echo "multi-batch: FAIL: $left grading processes outlived the kill"; status=1; }
awk -v one="$one_s" -v all="$all_s" -v k="$killed_s" 'BEGIN {
  printf "wall time: --gpus 0 %.1f s; --gpus all %.1f s -> speed-up %.2fx (goal >= 1.8x); killed + resumed %.1f s in all\n", one, all, one / all, k
  exit (one / all < 1.8) }' || { echo "multi-batch: FAIL: speed-up below 1.8x"; status=1; }
echo "multi-batch: exit $status"
exit $status
