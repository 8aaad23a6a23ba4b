#!/usr/bin/env bash
# A class on one GPU (issue 31), after the build (scripts/gpu-verify.sh build): the batch of LABS
# (per lab the reference, the starter and the known-bad classes marked batch = true, one student
# per folder: testdata_suite.py --make-batch) graded
#   default    with no flag (4 submissions in flight, untimed checks side by side), timed;
#   plan       then `--plan --force` on that OUT, which predicts ...
#   again      ... the same batch graded again with --force into it, timed (the plan's error);
#   serial     with --jobs 1 (one submission at a time), timed;
#   alone      each submission by itself, one after another, with a plain `gpulab grade SUBMISSION`
#              in one shared workspace (an instructor grading one student at a time), timed as the
#              whole loop; its gradebook from a batch way's batch.json (default or serial must run);
#   killed     (KILL=1) with no flag into a fresh OUT, SIGKILL to its process group when half the rows
#              exist, then the same command again: only the missing rows are graded;
# and the ways compared (autograder/tests/batch_ways.py): the same status and points for every
# submission (performance points within the README's noise), wall times, submissions per
# GPU-hour, where the rows' time went. Each timed way grades in a fresh workspace (--work).
# Usage: scripts/gpu-throughput-check.sh [preset]   (default gpu; logs in $OUT or build/<preset>/throughput)
#   LABS="scan transpose": the labs of the batch (default every lab); WAYS="default plan serial": the
#   ways to run (default "default plan serial alone killed"); GRADE_ARGS: more `gpulab grade` options
#   (the alone way gives them to single grades too: no batch-only ones such as --gpus).
# Exit 1 on a mismatch or a plan more than 15 % off.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
preset=${1:-gpu}
G=$root/build/$preset/gpulab
out=${OUT:-$root/build/$preset/throughput}
py=${PYTHON:-python3}
export PYTHONPATH=$root/autograder${PYTHONPATH:+:$PYTHONPATH} GPULAB_SOURCE_DIR=$root
[ -x "$G" ] || { echo "throughput: $G missing: build the $preset preset first"; exit 1; }
ways=" ${WAYS:-default plan serial alone killed} "
rm -rf "$out"; mkdir -p "$out"
"$py" autograder/tests/testdata_suite.py --make-batch "$out/subs" ${LABS:-} || exit 1
read -r -a extra <<< "${GRADE_ARGS:-}"
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
status=0; args=()
timed() {  # NAME LABEL ARGS...: one way into $out/NAME in a fresh workspace; its wall time in $out/NAME.s
  local name=$1 label=$2; shift 2
  local t0; t0=$(date +%s.%N)
  "$G" grade --batch "$out/subs" --out "$out/$name" --work "$out/work-$name" "${extra[@]}" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  secs "$t0" >"$out/$name.s"
  echo "throughput: $label: exit $rc in $(cat "$out/$name.s") s"
  grep -h "host CPUs:" "$out/$name.log" | sed "s/^/throughput: $label: /"   # how busy the batch kept the cores
  # How the bank-conflict profiles went (checks/conflicts.py): rows whose stages shared one profile,
  # and stages profiled alone in a row that had a shared profile (excess, or a share not confirmed).
  local times=("$out/$name"/*/logs/*/conflicts-times.txt) shared alone
  shared=$(grep -l "one profile of" "${times[@]}" 2>/dev/null | wc -l)
  alone=$(grep -l "one profile of" "${times[@]}" 2>/dev/null | xargs -r grep -hvE "one profile of|kernels outside|^ncu per stage|not counted" | grep -c .)
  echo "throughput: $label: conflicts: $shared row(s) with a shared profile, $alone stage profile(s) alone beside one"
  args+=(--way "$name=$label=$(cat "$out/$name.s")")
}
[[ $ways == *" default "* ]] && timed default "default (no flag)"
if [[ $ways == *" plan "* ]] && [ -d "$out/default" ]; then
  "$G" grade --batch "$out/subs" --out "$out/default" --plan --force --format json >"$out/plan.json" 2>"$out/plan.err"
  predicted=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["wall_seconds"]["1"])' "$out/plan.json")
  t0=$(date +%s.%N)
  "$G" grade --batch "$out/subs" --out "$out/default" --work "$out/work-default" --force "${extra[@]}" >"$out/again.log" 2>&1
  again=$(secs "$t0")
  echo "throughput: plan ${predicted:-?} s for the batch graded again, which took $again s"
  awk -v p="${predicted:-0}" -v a="$again" 'BEGIN { e = (p - a) / a; printf "throughput: plan error %+.1f %% (goal within 15 %%)\n", 100 * e; exit (e > 0.15 || e < -0.15) }' || status=1
fi
[[ $ways == *" serial "* ]] && timed serial "--jobs 1" --jobs 1
if [[ $ways == *" alone "* ]]; then
  # Single grades, not a batch of one: the single form is what an instructor without --batch runs
  # (labs detected from the files, the reference timed in each grade's own process while it builds).
  # A nonzero exit is a grade too (2: an upload it could not read, 4/5: checks not run): its
  # grade.json, or the lack of one, is what the comparison judges, so the loop goes on.
  mkdir -p "$out/alone"; : >"$out/alone.log"
  t0=$(date +%s.%N)
  for sub in "$out"/subs/*; do
    [ -d "$sub" ] || continue
    who=$(basename "$sub"); t1=$(date +%s.%N)
    "$G" grade "$sub" --out "$out/alone/$who" --work "$out/work-alone" "${extra[@]}" >"$out/alone-$who.log" 2>&1
    echo "$who: exit $? in $(secs "$t1") s" >>"$out/alone.log"
  done
  secs "$t0" >"$out/alone.s"
  echo "throughput: each alone: $(grep -c . "$out/alone.log") submissions in $(cat "$out/alone.s") s; exits:" \
    "$(sed 's/.*: \(exit [0-9]*\) in.*/\1/' "$out/alone.log" | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2 " " $3, $1; s = ", " }')"
  # The gradebook's columns are the course's labs and max points, which only a batch records
  # (batch.json): taken from a batch way of this run, so that the rows compare cell for cell.
  from=""
  for w in default serial; do [ -f "$out/$w/batch.json" ] && { from=$out/$w; break; }; done
  if [ -n "$from" ]; then
    cp "$from/batch.json" "$out/alone/"
    "$G" gradebook "$out/alone" --quiet >>"$out/alone.log" 2>&1 \
      || echo "throughput: each alone: gpulab gradebook $out/alone failed (see $out/alone.log)"
  else
    echo "throughput: each alone: no gradebook: no batch way (default or serial) ran before it to give its" \
      "columns (batch.json), so the comparison finds no row of it"
  fi
  args+=(--way "alone=each alone=$(cat "$out/alone.s")")
fi
if [[ $ways == *" killed "* ]]; then
  total=$(ls "$out/subs" | wc -l)
  setsid "$G" grade --batch "$out/subs" --out "$out/killed" --work "$out/work-killed" "${extra[@]}" >"$out/killed-1.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$(ls "$out"/killed/*/grade.json 2>/dev/null | wc -l)" -lt $((total / 2)) ]; do sleep 0.5; done
  kill -KILL -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  sleep 1
  left=$(pgrep -f -- "$out/killed|$out/work-killed|gpulab-[a-z-]+-student" | wc -l)
  echo "throughput: killed with $(ls "$out"/killed/*/grade.json 2>/dev/null | wc -l) of $total rows; grading processes left: $left"
  [ "$left" -eq 0 ] || status=1
  "$G" grade --batch "$out/subs" --out "$out/killed" --work "$out/work-killed" "${extra[@]}" >"$out/killed-2.log" 2>&1
  grep -m1 "already graded" "$out/killed-2.log"
  args+=(--way "killed=killed + resumed")
fi
"$py" autograder/tests/batch_ways.py "$out" "${args[@]}" | tee "$out/compare.txt" || status=1
echo "throughput: exit $status (logs in $out)"
exit $status
