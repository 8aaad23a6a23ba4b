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
impl=reference   # the students' copy has no solutions/: measure their own implementation
[ -d "$root/solutions/transpose" ] || impl=student
cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >"$out/configure.log" 2>&1 ||
  { echo "configure failed"; tail -30 "$out/configure.log"; exit 1; }
cmake --build "$src/build" -j "$jobs" --target "test-transpose-$impl" "gpulab-transpose-$impl" \
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

step tests-gpu "$bin/test-transpose-$impl" "[gpu]" --gpulab-gpu
tail -3 "$out/tests-gpu.log"
step tests-cpu "$bin/test-transpose-$impl" "[cpu]"
tail -2 "$out/tests-cpu.log"
step starter "$bin/gpulab-transpose-student" run --where gpu --check-starter --require-gpu
step run-8192 "$bin/gpulab-transpose-$impl" run --n 8192x8192
cat "$out/run-8192.log"
"$bin/gpulab-transpose-$impl" run --n 8192x8192 --format json >"$out/run-8192.json" 2>/dev/null
"$bin/gpulab-transpose-$impl" run --n 8192x8192 --format csv >"$out/run-8192.csv" 2>/dev/null

step memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpulab-transpose-$impl" run --n 100x67 --no-time --where gpu
tail -3 "$out/memcheck.log"
step racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpulab-transpose-$impl" run --n 100x67 --no-time --where gpu
tail -3 "$out/racecheck.log"

# Bank conflicts: Source Counters of the stage's NVTX range, then the kernel's totals of
# L1 Wavefronts Shared / Ideal / Excessive from the report's raw page.
# (With ncu of CUDA 13.0 the CSV source page, --page source --print-source cuda, printed the source
# lines without metric columns; the raw page carries the same totals.)
for stage in copy-shared tiled padded swizzled in-place-sweep in-place-sweep-rect; do
  rep="$out/ncu-$stage"
  ncu --section SourceCounters --nvtx --nvtx-include "gpulab:$stage/" --export "$rep" --force-overwrite \
    "$bin/gpulab-transpose-$impl" run --stage "$stage" --n 256x256 --no-time >"$rep.log" 2>&1
  ncu --import "$rep.ncu-rep" --page raw --csv >"$rep-raw.csv" 2>>"$rep.log"
  python3 - "$stage" "$rep-raw.csv" <<'PY'
import csv, sys
stage, path = sys.argv[1], sys.argv[2]
rows = list(csv.reader(l for l in open(path, encoding="utf-8", errors="replace") if l.startswith('"')))
if not rows:
    print(f"ncu {stage}: no raw metrics (see {path})")
    sys.exit(0)
header, values = rows[0], [r for r in rows[1:] if r and r[0].strip().isdigit()]
def total(name):
    if name not in header:
        return None
    j = header.index(name)
    return sum(float(r[j].replace(",", "") or 0) for r in values)
w, i, e = (total(m) for m in ("memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal",
                               "derived__memory_l1_wavefronts_shared_excessive"))
print(f"ncu {stage}: L1 Wavefronts Shared {w}, ideal {i}, excessive {e} ({len(values)} kernel(s))")
PY
done

for e in bank-model bandwidth-setups vector-width latency block-size barrier model; do
  step "experiment-$e" "$bin/gpulab-transpose-$impl" experiment "$e" $quick --csv "$out/$e.csv"
done
step experiment-model-quick "$bin/gpulab-transpose-$impl" experiment model --quick
cat "$out"/experiment-{latency,block-size,barrier,model,model-quick}.log
rm -rf "$src"
# One archive as well, for machines that hand back only a few files.
tar -C "$out" -czf "$out/../transpose-gpu-logs.tar.gz" . && mv "$out/../transpose-gpu-logs.tar.gz" "$out/"
