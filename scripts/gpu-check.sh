#!/usr/bin/env bash
# On the GPU machine (no network): configure with the headers carried in .deps/, build with every
# core, run every test (GPU tests must run, not skip), then the main job. Logs go to $OUT (or
# build/gpu/logs). Usage: scripts/gpu-check.sh [extra ctest args...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/build/gpu/logs}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
prefix=()
if [ -d "$root/.deps/usr" ]; then
  export GPULAB_DEPS_PREFIX=$root/.deps/usr
  prefix=(-DCMAKE_PREFIX_PATH="$GPULAB_DEPS_PREFIX")
fi
{
  echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
} 2>&1 | tee "$out/gpu-check.log"
status=0
cmake --preset gpu "${prefix[@]}" >>"$out/gpu-check.log" 2>&1 || { echo "configure failed"; tail -30 "$out/gpu-check.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { echo "build failed"; grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "build ok"
ctest --preset gpu "$@" 2>&1 | tee "$out/ctest.log" | tail -25 || status=1
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
./build/gpu/gpulab info 2>&1 | tee "$out/info.log"
./build/gpu/gpulab run all --impl reference 2>&1 | tee "$out/run-all.log" || status=1
exit $status
