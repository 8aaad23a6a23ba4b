#!/usr/bin/env bash
# The measured half of the colors sweep (seed 000 §4, Fig. 2): Nsight Compute's excess shared
# wavefronts of both colored versions for d = 1..16, next to the bank model's prediction in
# colors-sweep.csv. Needs a built GPU tree (scripts/gpu-check.sh or cmake --workflow --preset gpu).
# Usage, from the repository root on the GPU machine:
#   labs/scan/results/colors_ncu.sh [BUILD_DIR] > colors-ncu.csv
set -euo pipefail
build=${1:-build/gpu}
n=${COLORS_NCU_N:-65536}
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "colors_ncu.sh: no GPU here; run it on the GPU machine" >&2
  exit 77
fi
echo "stage,colors,n,excess_wavefronts,wavefronts"
for d in $(seq 1 16); do
  for stage in colored-direct colored-conflict-free; do
    json=$("$build/gpulab" conflicts scan --impl reference --stage "$stage" --n "$n" --param "colors=$d" \
           --format json || true)
    python3 -c '
import json, sys
try:
    r = json.loads(sys.argv[1])["stages"][0]
except (ValueError, KeyError, IndexError):
    sys.exit("colors_ncu.sh: gpulab conflicts gave no result for d = " + sys.argv[2])
def cell(v): return "" if v is None else str(v)
print(",".join([r["stage"], sys.argv[2], sys.argv[3], cell(r["total_excessive"]), cell(r["total_wavefronts"])]))
' "$json" "$d" "$n"
  done
done
