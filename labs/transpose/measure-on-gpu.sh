#!/usr/bin/env bash
# Reproduces every number of labs/transpose/README.md on a GPU machine: builds the transpose lab
# only (in a private copy of the tree, so other labs' work in progress cannot break it), then runs
# the [gpu] tests, the stage table at 8192 x 8192, compute-sanitizer, Nsight Compute's bank-conflict
# counters and every experiment. Logs and CSV files go to $OUT (default build/transpose-gpu).
# Usage (repository root): labs/transpose/measure-on-gpu.sh [--quick]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/build/transpose-gpu}
quick=""
[ "${1:-}" = "--quick" ] && quick="--quick"
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc)

# A private source tree: common/, this lab and its reference; the other labs, the autograder and
# the slides are not needed to build gpulab-transpose-*.
src=$(mktemp -d)
tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
find "$src/labs" -mindepth 1 -maxdepth 1 -type d ! -name transpose -exec rm -rf {} +
find "$src/solutions" -mindepth 1 -maxdepth 1 -type d ! -name transpose -exec rm -rf {} +
mkdir -p "$src/autograder" "$src/slides"
: >"$src/autograder/CMakeLists.txt"
: >"$src/slides/CMakeLists.txt"
prefix=()
[ -d "$root/.deps/usr" ] && prefix=(-DCMAKE_PREFIX_PATH="$root/.deps/usr")

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader
  nvcc --version | tail -1
} | tee "$out/device.txt"

bin=$src/build/labs/transpose
cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >"$out/configure.log" 2>&1 ||
  { echo "configure failed"; tail -30 "$out/configure.log"; exit 1; }
cmake --build "$src/build" -j "$jobs" --target test-transpose-reference gpulab-transpose-reference \
  gpulab-transpose-student >"$out/build.log" 2>&1 || { echo "build failed"; grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "build ok"

step() {  # step NAME COMMAND...: run, log to $out/NAME.log, print the exit code
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: rc=$rc ($((SECONDS - t0)) s)"
  return 0
}

step tests-gpu "$bin/test-transpose-reference" "[gpu]" --gpulab-gpu
tail -3 "$out/tests-gpu.log"
step tests-cpu "$bin/test-transpose-reference" "[cpu]"
tail -2 "$out/tests-cpu.log"
step starter "$bin/gpulab-transpose-student" run --where gpu --check-starter --require-gpu
step run-8192 "$bin/gpulab-transpose-reference" run --n 8192x8192
cat "$out/run-8192.log"
"$bin/gpulab-transpose-reference" run --n 8192x8192 --format json >"$out/run-8192.json" 2>/dev/null

step memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpulab-transpose-reference" run --n 100x67 --no-time --where gpu
tail -3 "$out/memcheck.log"
step racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpulab-transpose-reference" run --n 100x67 --no-time --where gpu
tail -3 "$out/racecheck.log"

for stage in copy-shared tiled padded swizzled in-place-sweep in-place-sweep-rect; do
  ncu --section SourceCounters --csv "$bin/gpulab-transpose-reference" run --stage "$stage" --n 256x256 --no-time \
    >"$out/ncu-$stage.csv" 2>"$out/ncu-$stage.err"
  echo "ncu $stage: rc=$? $(grep -o 'total of [0-9]* excessive wavefronts' "$out/ncu-$stage.csv" | head -1)"
done

for e in bank-model bandwidth-setups vector-width latency block-size barrier model; do
  step "experiment-$e" "$bin/gpulab-transpose-reference" experiment "$e" $quick --csv "$out/$e.csv"
done
cat "$out"/experiment-{latency,block-size,barrier,model}.log
rm -rf "$src"
# One archive as well, for machines that hand back only a few files.
tar -C "$out" -czf "$out/../transpose-gpu-logs.tar.gz" . && mv "$out/../transpose-gpu-logs.tar.gz" "$out/"
