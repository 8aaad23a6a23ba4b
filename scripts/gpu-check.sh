#!/usr/bin/env bash
# On the GPU machine (no network): configure with the headers carried in .deps/, build with every
# core, run the fast GPU tests (the gpu preset: they must run, not skip), then the main job. Logs go to $OUT (or
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
ctest --preset gpu "$@" >"$out/ctest.log" 2>&1 || status=1
grep -E "tests passed|\*\*\*|Failed" "$out/ctest.log" | tail -25
./build/gpu/gpulab info >"$out/info.log" 2>&1 || status=1
cat "$out/info.log"
./build/gpu/gpulab run all --impl reference >"$out/run-all.log" 2>&1 || status=1
cat "$out/run-all.log"
echo "gpu-check: exit $status (logs in $out)"
exit $status
