#!/usr/bin/env bash
# How the numbers in labs/scan/README.md were measured (on the course's GPU machine, no network).
# Builds only common/ and the scan lab in a scratch tree, then writes every log and CSV to $OUT:
#   tests-gpu.log         the [gpu] Catch2 cases against the reference
#   run-n268435456.{log,json}   every stage at n = 2^28 next to CUB
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

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.txt" 2>&1
date -u +%FT%TZ >> "$out/gpu.txt"

# The single-pass defaults: the bench (autograder/bench/scan_tune_single_pass.cu, instructors only)
# compares its variants with CUB; the fastest correct one with the default block (128) is what
# the reference is built with (and what its source says).
flags=""
if [ "$mode" = final ]; then
  step "single-pass tuning bench"
  cmake --preset gpu "${prefix[@]}" > "$out/tune-build.log" 2>&1 &&
    cmake --build --preset gpu -j "$(nproc)" --target scan-tune-single-pass >> "$out/tune-build.log" 2>&1 ||
    { tail -30 "$out/tune-build.log"; exit 1; }
  timeout 300 build/gpu/autograder/scan-tune-single-pass > "$out/tune-single-pass.log" 2>&1
  cat "$out/tune-single-pass.log"
  flags=$(python3 - "$out/tune-single-pass.log" <<'PY'
import re, sys
best = None
for line in open(sys.argv[1]):
    m = re.match(r"single-pass B=128 V=(\d+) backoff=(\d+) delay=(\d+) stream=(\w+)\s+([\d.]+) ms", line)
    if m and "WRONG" not in line and (best is None or float(m.group(5)) < best[0]):
        best = (float(m.group(5)), m.groups())
if best:
    v, k, d, s, _ = best[1]
    print(f"-DSCAN_SP_VECTORS={v} -DSCAN_SP_BACKOFF_NS={k} -DSCAN_SP_DELAY_NS={d} -DSCAN_SP_STREAMING={1 if s == 'true' else 0}")
PY
)
  echo "chosen: ${flags:-defaults}" | tee "$out/tune-choice.txt"
fi

step "configure + build ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)) ${flags}"
cmake --preset gpu "${prefix[@]}" -DCMAKE_CUDA_FLAGS="$flags" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" --target gpulab-scan-reference test-scan-reference gpulab-scan-student \
  > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -40; exit 1; }
bin=$src/build/gpu/labs/scan
run=$bin/gpulab-scan-reference

if true; then
  step "[gpu] tests"
  ( time timeout 200 "$bin/test-scan-reference" "[gpu]" ) > "$out/tests-gpu.log" 2>&1
  tail -4 "$out/tests-gpu.log"
fi

step "all stages at n = 2^28"
if [ "$mode" = check ]; then
  timeout 120 "$run" run --n 268435456 --where gpu > "$out/run-n268435456.log" 2>&1
else
  timeout 150 "$run" run --n 268435456 --format json > "$out/run-n268435456.json" 2>"$out/run-n268435456.log"
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['results']:
    print(f\"{r['stage']:32s} {r['status']:5s} {r['median_ms'] or 0:10.4f} ms {r['gbps'] or 0:8.1f} GB/s {r['percent_of_copy'] or 0:5.1f} %\")
" "$out/run-n268435456.json" >> "$out/run-n268435456.log"
fi
cat "$out/run-n268435456.log"

step "Nsight Compute: excess shared wavefronts"
timeout 150 ./build/gpu/gpulab conflicts scan --impl reference --n 65536 --stage shared --stage shared-conflict-free \
  --stage colored-direct --stage colored-conflict-free --keep "$out/ncu" > "$out/conflicts.log" 2>&1
echo "conflicts exit $?" >> "$out/conflicts.log"
head -60 "$out/conflicts.log"

step "Nsight Compute, raw: SourceCounters per SASS instruction"
mkdir -p "$out/ncu-raw"
for stage in shared shared-conflict-free colored-direct colored-conflict-free; do
  timeout 60 ncu --section SourceCounters --export "$out/ncu-raw/$stage" --force-overwrite \
    "$run" run --stage $stage --n 65536 --no-time > "$out/ncu-raw/$stage.log" 2>&1
  ncu --import "$out/ncu-raw/$stage.ncu-rep" --page source --csv --print-source sass > "$out/ncu-raw/$stage-sass.csv" 2>&1
  ncu --import "$out/ncu-raw/$stage.ncu-rep" --page details --csv > "$out/ncu-raw/$stage-details.csv" 2>&1
  python3 labs/scan/results/ncu_excess.py "$out/ncu-raw/$stage-sass.csv" "$stage" | tee -a "$out/ncu-excess.txt"
done

step "compute-sanitizer"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 "$run" run --n 5000 --no-time --where gpu \
  > "$out/memcheck.log" 2>&1; echo "memcheck exit $?" | tee -a "$out/memcheck.log"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 "$run" run --n 5000 --no-time --where gpu \
  > "$out/racecheck.log" 2>&1; echo "racecheck exit $?" | tee -a "$out/racecheck.log"
tail -n 3 "$out/memcheck.log" "$out/racecheck.log"

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
    [ "$e" = colors-sweep ] && n=67108864
    timeout 200 "$run" experiment "$e" --n $n --csv "$out/$e.csv" > "$out/$e.log" 2>&1
    tail -3 "$out/$e.log"
  done
fi
step "done"
# One archive (the device returns a few files only): labs/scan/results/ keeps what the README uses.
if [ "${SCAN_PACK:-1}" = 1 ]; then
  tar czf /tmp/scan-results.tgz --exclude '*.ncu-rep' -C "$out" . && rm -rf "${out:?}"/* && mv /tmp/scan-results.tgz "$out/"
fi
