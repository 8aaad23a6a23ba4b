#!/usr/bin/env bash
# A change to a reference measured against the reference as it is, side by side on one GPU: the
# patch is applied to a copy of the tree, both trees' reference runners of the labs it touches are
# built, and each run spec is timed alternately A B A B (A: the tree as it is, B: patched), so drift
# on the machine shows as a spread within A or B rather than as a difference between them. Both
# trees check every stage's output first (the runner's own check), so a fast wrong candidate fails.
#
#   scripts/gpu-candidate.sh PATCH "LAB N STAGE[,STAGE...] [KNOB=VALUE...]" ...
#   e.g. scripts/gpu-candidate.sh .drafts/perf.patch "radix-sort 2^28 onesweep,digit4,cub-sort" \
#          "shearsort 2^28 merge-pairwise,sort-cub-merge" "shearsort 2^28 merge-dway d=16"
# PATCH: e.g. `git diff main...BRANCH > .drafts/perf.patch` (three dots: the branch's own change; carry it).
# Env: ROUNDS (default 2 alternations), REPS (default 10), OUT (results.csv and logs land there).
# The tree as it is runs from build/gpu (built here, the runners only, if they are missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
patch=$(realpath "${1:?usage: $0 PATCH \"LAB N STAGES\" ...}"); shift
[ $# -gt 0 ] || { echo "gpu-candidate: give at least one \"LAB N STAGE[,STAGE...]\" run spec" >&2; exit 2; }
out=${OUT:-/tmp/gpulab-candidate}; mkdir -p "$out"
a_build=$root/build/gpu
copy=$(mktemp -d /tmp/gpulab-candidate-src.XXXXXX)
# The copy: every file but the build trees and the fetched packages (the patch may touch any file).
tar -C "$root" --exclude=./build --exclude=./.deps --exclude=./.git -cf - . | tar -C "$copy" -xf -
(cd "$copy" && git apply --verbose "$patch") > "$out/apply.log" 2>&1 ||
  { echo "gpu-candidate: $patch does not apply to this tree (see $out/apply.log)" >&2; cat "$out/apply.log" >&2; exit 2; }

labs=$(for spec in "$@"; do set -- $spec; echo "$1"; done | sort -u)
targets=$(for lab in $labs; do echo "gpulab-$lab-reference"; done)
prefix=${GPULAB_DEPS_PREFIX:+-DCMAKE_PREFIX_PATH=$GPULAB_DEPS_PREFIX}
build() {  # build TREE: its reference runners only, in TREE/build/gpu (the gpu preset)
  (cd "$1" && cmake --preset gpu $prefix > "$out/configure-$2.log" 2>&1 &&
    cmake --build --preset gpu -j "$(nproc)" --target $targets > "$out/build-$2.log" 2>&1)
}
for lab in $labs; do
  [ -x "$a_build/labs/$lab/gpulab-$lab-reference" ] ||
    { build "$root" A || { echo "gpu-candidate: the tree as it is does not build: $out/build-A.log" >&2; exit 1; }; break; }
done
build "$copy" B || { echo "gpu-candidate: the patched tree does not build:" >&2; tail -n 30 "$out/build-B.log" >&2; exit 1; }

echo "tree,lab,n,round,stage,status,median_ms,gbps" > "$out/results.csv"
for spec in "$@"; do
  set -- $spec; lab=$1 n=$2 stages=$3; shift 3
  args=(run --n "$n" --reps "${REPS:-10}" --no-cpu-baseline --same-input --format json)  # one input: A vs B, not the guard
  for s in ${stages//,/ }; do args+=(--stage "$s"); done
  for p in "$@"; do args+=(--param "$p"); n="$n $p"; done   # knob values, shown with n in the table
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for tree in A B; do
      bin=$a_build/labs/$lab/gpulab-$lab-reference; [ $tree = B ] && bin=$copy/build/gpu/labs/$lab/gpulab-$lab-reference
      log=$out/$lab-$tree-$round.json
      "$bin" "${args[@]}" > "$log" 2> "$out/$lab-$tree-$round.err" || true
      python3 - "$log" "$tree" "$lab" "$n" "$round" >> "$out/results.csv" <<'EOF'
import json, sys
path, tree, lab, n, rnd = sys.argv[1:]
try:
    doc = json.load(open(path))
except ValueError:
    print(f"{tree},{lab},{n},{rnd},,no json (see {path[:-5]}.err),,"); sys.exit()
for r in doc.get("results", []):
    print(f"{tree},{lab},{n},{rnd},{r.get('stage')},{r.get('status')},{r.get('median_ms', '')},{r.get('gbps', '')}")
EOF
    done
  done
done
# One line per (lab, stage): A's and B's fastest medians and B / A (below 1: the candidate is faster).
python3 - "$out/results.csv" <<'EOF'
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "pass" and r["median_ms"]:
        k = (r["lab"], r["n"], r["stage"])
        best.setdefault(k, {}).setdefault(r["tree"], []).append(float(r["median_ms"]))
    elif r["stage"] or r["status"]:
        print(f"{r['tree']} {r['lab']} {r['stage']}: {r['status']}")
print(f"{'lab':<11} {'n':<12} {'stage':<22} {'A ms (spread)':>18} {'B ms (spread)':>18} {'B/A':>6}")
for (lab, n, stage), t in sorted(best.items()):
    a, b = t.get("A", []), t.get("B", [])
    fmt = lambda v: f"{min(v):.4g} ({max(v) / min(v) - 1:.1%})" if v else "-"
    ratio = f"{min(b) / min(a):.3f}" if a and b else "-"
    print(f"{lab:<11} {n:<12} {stage:<22} {fmt(a):>18} {fmt(b):>18} {ratio:>6}")
EOF
rm -rf "$copy"
