#!/usr/bin/env bash
# Instructors only: the reduction reference on the GPU machine (H100/H200, no network), run from
# the repository root. Everything goes to $OUT (default build/reduction-check):
#   tests.log         the lab's Catch2 tests on the reference: [cpu] (model, operators) and [gpu]
#                     (every stage on the edge sizes through the stage table)
#   check.log         bench-reduction check: every stage x operator x edge size x distribution, exact
#   bench.log         bench-reduction bench: n = 2^28, the issue's goals (GOAL ... met / MISSED)
#   memcheck.log      compute-sanitizer memcheck, every stage x operator (n = 70001: partial tiles)
#   racecheck.log     compute-sanitizer racecheck, the stages with shared memory (n = 70001)
#   ncu-excess.txt    Nsight Compute's excess shared wavefronts per stage (n = 2^18, sum) against
#                     the CPU bank model's prediction
# Exit status: non-zero when anything is wrong (a wrong result, a sanitizer error, a conflict count
# off the model); a missed performance goal is reported in bench.log, not an error.
# Usage: autograder/bench/reduction_gpu_check.sh [step...]   steps: tests check bench memcheck racecheck ncu
# (default: all; the build is incremental, so the steps can be run in separate calls, each well
# under 10 minutes: e.g. `tests check`, then `bench`, then `memcheck racecheck ncu`).
set -uo pipefail
steps=${*:-tests check bench memcheck racecheck ncu}
want() { [[ " $steps " == *" $1 "* ]]; }
root=$(pwd)
out=${OUT:-$root/build/reduction-check}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
status=0
step() { echo "== $(date -u +%T) $*" | tee -a "$out/steps.log"; }
fail() { echo "FAIL: $*" | tee -a "$out/steps.log"; status=1; }

prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$root/.deps/usr")
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; date -u +%FT%TZ
  git rev-parse --short HEAD 2>/dev/null; } > "$out/gpu.txt" 2>&1
step "configure + build ($(head -1 "$out/gpu.txt"))"
cmake --preset gpu "${prefix[@]}" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" --target bench-reduction test-reduction-reference > "$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -40; exit 1; }
bin=$root/build/gpu/labs/reduction
bench=$bin/bench-reduction

if want tests; then
  step "lab tests: [cpu] and [gpu]"
  { "$bin/test-reduction-reference" "[cpu]" && timeout 500 "$bin/test-reduction-reference" "[gpu]" --gpulab-gpu; } \
    > "$out/tests.log" 2>&1 || fail "lab tests (see tests.log)"
  grep -E "^(test cases|All tests)" "$out/tests.log"
fi

if want check; then
  step "check: every stage x operator x size x distribution"
  timeout 500 "$bench" check > "$out/check.log" 2>&1 || fail "check (see check.log)"
  grep -E "^(check|WRONG|LAUNCHES|ERROR)" "$out/check.log" | head -40
fi

if want bench; then
  step "bench: n = 2^28"
  timeout 500 "$bench" bench > "$out/bench.log" 2>&1 || fail "bench (a timed result was wrong, see bench.log)"
  cat "$out/bench.log"
fi

ordered="global-tree tree-interleaved pipeline-heap pipeline matrix ordered-registers cub-block-raking cub-scan-last"
commutative="tree cascading cub-sum"
want memcheck && step "compute-sanitizer memcheck" && : > "$out/memcheck.log"
want memcheck && for op in sum affine mat2; do
  stages=$ordered
  [ "$op" = sum ] && stages="$ordered $commutative"
  for s in $stages; do
    echo "### memcheck $s $op" >> "$out/memcheck.log"
    compute-sanitizer --tool memcheck --error-exitcode 99 --leak-check no \
      "$bench" one --stage "$s" --op "$op" --n 70001 >> "$out/memcheck.log" 2>&1 || fail "memcheck $s $op"
  done
done
want racecheck && step "compute-sanitizer racecheck" && : > "$out/racecheck.log"
want racecheck && for op in sum mat2; do
  stages="tree-interleaved pipeline-heap pipeline matrix ordered-registers"
  [ "$op" = sum ] && stages="$stages tree cascading"
  for s in $stages; do
    echo "### racecheck $s $op" >> "$out/racecheck.log"
    compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 99 \
      "$bench" one --stage "$s" --op "$op" --n 70001 >> "$out/racecheck.log" 2>&1 || fail "racecheck $s $op"
  done
done
# ordered-registers' double-buffered ring is reused only from a block's third epoch on (> 16 rounds
# per block): 2^26 int32 at block 1024 gives ~31 rounds per block on a 132-SM GPU.
want racecheck && { echo "### racecheck ordered-registers sum n=2^26 block 1024" >> "$out/racecheck.log"
  timeout 300 compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 99 \
    "$bench" one --stage ordered-registers --op sum --n 67108864 --block 1024 >> "$out/racecheck.log" 2>&1 ||
    fail "racecheck ordered-registers sum n=2^26 block 1024"; }
for log in memcheck racecheck; do
  want $log && grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$log.log" | sort | uniq -c
done

# Excess shared wavefronts: Nsight Compute's Source Counters, summed over every kernel of one run
# (the `one` run launches nothing but the stage's kernels), read the way the grader reads them
# (autograder/gpulab/tools/ncu/parse.py: totals_from_raw), against the model's prediction.
want ncu && step "ncu: excess shared wavefronts vs the bank model (n = 2^18, sum)" &&
  echo "stage model ncu verdict" > "$out/ncu-excess.txt"
n=262144
want ncu && for s in tree-interleaved tree pipeline-heap pipeline matrix cascading ordered-registers; do
  rep="$out/ncu-$s"
  model=$("$bench" one --stage "$s" --op sum --n $n | sed -n 's/^model-excess-wavefronts: //p')
  ncu --section SourceCounters --export "$rep" --force-overwrite "$bench" one --stage "$s" --op sum --n $n \
    > "$out/ncu-$s.log" 2>&1 || { fail "ncu $s (see ncu-$s.log)"; continue; }
  ncu --import "$rep.ncu-rep" --page raw --csv > "$out/ncu-$s-raw.csv" 2>>"$out/ncu-$s.log"
  measured=$(PYTHONPATH="$root/autograder" python3 -c "
import sys
from gpulab.tools.ncu.parse import totals_from_raw
t = totals_from_raw(open(sys.argv[1]).read())
print('n/a' if t is None or t.excessive is None else t.excessive)" "$out/ncu-$s-raw.csv")
  verdict=ok
  [ "$measured" = "$model" ] || { verdict=OFF; fail "ncu $s: $measured excess wavefronts, model $model"; }
  echo "$s $model $measured $verdict" >> "$out/ncu-excess.txt"
done
want ncu && { column -t "$out/ncu-excess.txt" 2>/dev/null || cat "$out/ncu-excess.txt"; }

echo "gpu_check: exit $status (logs in $out)"
exit $status
