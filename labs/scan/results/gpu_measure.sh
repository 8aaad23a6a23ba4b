#!/usr/bin/env bash
# How the numbers in labs/scan/README.md were measured (on the course's GPU machine, no network).
# Builds only common/ and the scan lab in a scratch tree, then writes every log and CSV to $OUT:
#   tests-gpu.log         the [gpu] Catch2 cases against the reference
#   run-2^28.{log,json}   every stage at n = 2^28 next to CUB
#   memcheck.log, racecheck.log    compute-sanitizer on every GPU stage, n = 5000
#   conflicts.{log,json}  Nsight Compute's excess shared wavefronts (gpulab conflicts)
#   *.csv                 the experiments (mode "final" only)
# Usage: labs/scan/results/gpu_measure.sh check|final      (from the repository root)
set -uo pipefail
mode=${1:-check}
root=$(pwd)
out=${OUT:-$root/build/scan-results}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
step() { echo "== $(date -u +%T) $*" | tee -a "$out/steps.log"; }

# A tree with common/ and this lab only: another lab's work in progress cannot break the build.
src=/tmp/gpulab-scan-src
rm -rf "$src" && mkdir -p "$src/labs" "$src/solutions"
cp -r CMakeLists.txt CMakePresets.json common scripts autograder slides "$src/"
[ -d .deps ] && cp -r .deps "$src/"
cp labs/CMakeLists.txt "$src/labs/"
cp -r labs/scan "$src/labs/" && cp -r solutions/scan "$src/solutions/"
cd "$src"
prefix=()
[ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$src/.deps/usr")

step "configure + build ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader))"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt" 2>&1
cmake --preset gpu "${prefix[@]}" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" --target gpulab-scan-reference test-scan-reference gpulab-scan-student \
  > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -40; exit 1; }
bin=$src/build/gpu/labs/scan
run=$bin/gpulab-scan-reference

if [ "$mode" = check ]; then
  step "[gpu] tests"
  ( time timeout 200 "$bin/test-scan-reference" "[gpu]" ) > "$out/tests-gpu.log" 2>&1
  tail -4 "$out/tests-gpu.log"
fi

step "all stages at n = 2^28"
if [ "$mode" = check ]; then
  timeout 120 "$run" run --n 268435456 --where gpu > "$out/run-2^28.log" 2>&1
else
  timeout 150 "$run" run --n 268435456 > "$out/run-2^28.log" 2>&1
  timeout 150 "$run" run --n 268435456 --where gpu --format json > "$out/run-2^28.json" 2>>"$out/run-2^28.log"
fi
cat "$out/run-2^28.log"

step "Nsight Compute: excess shared wavefronts"
timeout 150 ./build/gpu/gpulab conflicts scan --impl reference --n 65536 --stage shared --stage shared-conflict-free \
  --stage colored-direct --stage colored-conflict-free --keep "$out/ncu" > "$out/conflicts.log" 2>&1
echo "conflicts exit $?" >> "$out/conflicts.log"
head -60 "$out/conflicts.log"

step "compute-sanitizer"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 "$run" run --n 5000 --no-time --where gpu \
  > "$out/memcheck.log" 2>&1; echo "memcheck exit $?" | tee -a "$out/memcheck.log"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 "$run" run --n 5000 --no-time --where gpu \
  > "$out/racecheck.log" 2>&1; echo "racecheck exit $?" | tee -a "$out/racecheck.log"
tail -3 "$out/memcheck.log" "$out/racecheck.log"

if [ "$mode" = check ]; then
  step "block sizes of the fast stages at 2^28"
  for b in 128 256 512; do
    timeout 40 "$run" run --n 268435456 --stage three-round --stage single-pass --param block=$b --format csv
  done > "$out/tune-block.csv" 2>&1
  cat "$out/tune-block.csv"
fi

if [ "$mode" = final ]; then
  for e in size-sweep block-sweep alpha-sweep colors-sweep bank-model; do
    step "experiment $e"
    n=16777216
    [ "$e" = alpha-sweep ] && n=134217728
    timeout 300 "$run" experiment "$e" --n $n --csv "$out/$e.csv" > "$out/$e.log" 2>&1
  done
fi
step "done"
