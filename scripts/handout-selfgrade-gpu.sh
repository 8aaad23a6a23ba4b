#!/usr/bin/env bash
# On the GPU machine, from the course root: export the handout (with its compiled reference
# runners), build it as a student would, and self-grade inside it: the untouched starter must
# score 0, and the reference's files submitted as a student's must score the full core and extra
# credit, with performance timed against the shipped runner (issue 12, "Done when").
# Usage: scripts/handout-selfgrade-gpu.sh [BUILD_DIR]   (default build/gpu; results in $OUT or build/handout-selfgrade)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/gpu}
out=${OUT:-$root/build/handout-selfgrade}
rm -rf "$out/handout" "$out/grades"
mkdir -p "$out"
[ -x "$build/gpulab" ] || { echo "handout-selfgrade: $build/gpulab missing: cmake --workflow --preset gpu first" >&2; exit 2; }

"$build/gpulab" handout --out "$out/handout" 2>&1 | tee "$out/handout.log"
labs=$(PYTHONPATH=$root/autograder python3 -m gpulab.manifest labs "$root")   # every lab (labs/<lab>/lab.toml)
for lab in $labs; do
  f="$out/handout/reference/gpulab-$lab-reference"
  [ -x "$f" ] || { echo "FAIL: $f not shipped" >&2; exit 1; }
  if cuobjdump -lelf "$f" >/dev/null 2>&1; then cuobjdump -lelf "$f" | tee -a "$out/archs.txt"; fi
done
[ ! -e "$out/handout/solutions" ] || { echo "FAIL: solutions/ in the export" >&2; exit 1; }

cd "$out/handout"
cmake --preset default -DCMAKE_PREFIX_PATH="$(grep -m1 '^CMAKE_PREFIX_PATH' "$build/CMakeCache.txt" | cut -d= -f2-)" >"$out/configure.log" 2>&1
cmake --build --preset default >"$out/build.log" 2>&1
fail=0
for lab in $labs; do
  # The untouched starter: 0 points.
  status=0
  build/default/gpulab grade "labs/$lab" --lab "$lab" --out "$out/grades/$lab-starter" --format json >"$out/grades-$lab-starter.json" || status=$?
  echo "== $lab starter (exit $status)"; sed -n '1,40p' "$out/grades/$lab-starter/report.md"
  python3 - "$out/grades/$lab-starter/grade.json" <<'PY' || fail=1
import json, sys
g = json.load(open(sys.argv[1]))
lab = g["labs"][0]
assert lab["points"] == 0, f"starter scored {lab['points']}"
print("ok: starter 0")
PY
  # The reference's files as a student's submission, graded against the shipped runner.
  sub="$out/sub-$lab/labs/$lab"
  mkdir -p "$sub"
  cp "$root/solutions/$lab/"*.c* "$sub/"
  cp "$root/labs/$lab/answers.md" "$sub/" 2>/dev/null || true
  status=0
  build/default/gpulab grade "$out/sub-$lab" --lab "$lab" --out "$out/grades/$lab-reference" >"$out/grades-$lab-reference.txt" 2>&1 || status=$?
  echo "== $lab reference as a student (exit $status)"; cat "$out/grades-$lab-reference.txt"
  python3 - "$out/grades/$lab-reference/grade.json" <<'PY' || fail=1
import json, sys
g = json.load(open(sys.argv[1]))
lab = g["labs"][0]
perf = [c for s in lab["stages"] for n, c in s["checks"].items() if n == "performance"]
assert perf and all(c["status"] != "not-run" for c in perf), "performance not scored against the shipped reference"
assert any("compiled reference shipped" in n for n in lab["notes"]), "no self-grade note about the shipped reference"
assert any("hidden cases" in n for n in lab["notes"]), "no self-grade note about the hidden cases"
short = lab["max_points"] - lab["core_points"], lab["extra_max"] - lab["extra_points"]
print(f"core {lab['core_points']}/{lab['max_points']}, extra {lab['extra_points']}/{lab['extra_max']}")
assert max(short) < 1e-6, f"the reference lost points in its own handout: {short}"
PY
done
[ "$fail" = 0 ] && echo "handout-selfgrade: ok" || { echo "handout-selfgrade: FAILED" >&2; exit 1; }
