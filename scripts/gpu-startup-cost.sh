#!/usr/bin/env bash
# What a runner process costs before its kernels (issues 15 and 31), on the GPU machine after the
# build (scripts/gpu-verify.sh build). Inside a batch on two H200s (2026-11-29) a correctness case
# of n = 1 took 4-13 s of runner time and its verdict 2.7 s more (radix-sort): every case is a
# process, so a row of 24 cases pays that start-up 48 times. Per lab of LABS (default scan
# radix-sort), with its reference runner and its first GPU stage:
#   list      the runner's `list` (no CUDA): the process and the loader;
#   cuda      a program that only creates a CUDA context (cudaFree(0)), compiled here; the same
#             with a CUPTI subscriber first (what every runner's launch counter adds);
#   case      `run --stage S --n 1 --no-time --save-output`, alone, five times; and with every
#             stage, as a correctness case runs them;
#   eager     the same with CUDA_MODULE_LOADING=EAGER (every kernel loaded at the start);
#   verify    `verify` of that saved output, five times;
#   K at once K of the case side by side (K = 4 8 16 32): the wall time of all K.
# One line per measurement ("startup: ..."); timings in seconds (median of the five where five).
# Usage: scripts/gpu-startup-cost.sh [preset]   (default gpu; scratch in $OUT or build/<preset>/startup)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
preset=${1:-gpu}
out=${OUT:-$root/build/$preset/startup}
rm -rf "$out"; mkdir -p "$out"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
five() {  # LABEL CMD...: the median wall time of five runs of CMD (and the five)
  local label=$1 i t times=(); shift
  for i in 1 2 3 4 5; do
    t=$(now)
    "$@" >/dev/null 2>"$out/last.err" || { echo "startup: $label: failed: $(tail -n 1 "$out/last.err")"; return; }
    times+=("$(since "$t")")
  done
  echo "startup: $label: $(printf '%s\n' "${times[@]}" | median) s (median of 5: ${times[*]})"
}

printf '#include <cuda_runtime.h>\nint main() { return cudaFree(0) == cudaSuccess ? 0 : 1; }\n' >"$out/context.cu"
nvcc -o "$out/context" "$out/context.cu" && five "cuda context alone (cudaFree(0))" "$out/context"
# The same with a CUPTI subscriber first, as every runner has (common/src/launch_counter.cpp).
cat >"$out/cupti.cu" <<'EOF_CU'
#include <cuda_runtime.h>
#include <cupti.h>
static void CUPTIAPI on_call(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
int main() {
  CUpti_SubscriberHandle h;
  if (cuptiSubscribe(&h, reinterpret_cast<CUpti_CallbackFunc>(on_call), nullptr) != CUPTI_SUCCESS) return 2;
  return cudaFree(0) == cudaSuccess ? 0 : 1;
}
EOF_CU
nvcc -o "$out/cupti" "$out/cupti.cu" -lcupti && five "cuda context with a CUPTI subscriber" "$out/cupti"

for lab in ${LABS:-scan radix-sort}; do
  runner=$(find "build/$preset/labs/$lab" -maxdepth 1 -name "gpulab-$lab-reference" -type f | head -1)
  [ -x "$runner" ] || { echo "startup: $lab: no reference runner under build/$preset: build first"; continue; }
  stage=$("$runner" list 2>/dev/null | awk '$2 == "gpu" { print $1; exit }')
  case=(run --stage "$stage" --n 1 --no-time --format json)
  echo "startup: $lab ($runner, stage $stage)"
  five "$lab: list (no CUDA)" "$runner" list
  mkdir -p "$out/$lab-saved"
  five "$lab: case n=1" "$runner" "${case[@]}" --save-output "$out/$lab-saved"
  five "$lab: case n=1, every stage (one correctness process)" "$runner" run --n 1 --no-time --format json
  CUDA_MODULE_LOADING=EAGER five "$lab: case n=1, modules loaded eagerly" "$runner" "${case[@]}"
  five "$lab: verify n=1" "$runner" verify --stage "$stage" --n 1 --output-dir "$out/$lab-saved" --format json
  for k in 4 8 16 32; do
    t=$(now)
    for i in $(seq "$k"); do "$runner" "${case[@]}" >/dev/null 2>&1 & done
    wait
    echo "startup: $lab: $k cases of n=1 at once: $(since "$t") s in all"
  done
done
