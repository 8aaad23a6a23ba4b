#!/usr/bin/env bash
# On the GPU machine: capture the real Nsight Compute and compute-sanitizer outputs the parsers
# are tested against (tests/fixtures/*-real*), then grade the transpose starter and reference
# end to end and the known-bad suite. Everything goes to $OUT (default /tmp/gpulab-capture).
# Usage: autograder/tests/capture_gpu.sh [e2e labs...]   (from the repository root, .deps carried)
set -u
out=${OUT:-/tmp/gpulab-capture}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
root=$PWD
build=$root/build/gpu
pack() { (cd "$out" && tar --exclude='*.ncu-rep' --exclude=pack.tgz -czf pack.tgz . 2>/dev/null); }
step() { pack; echo "== $(date -u +%T) $*" | tee -a "$out/steps.log"; }
{
  date -u +%FT%TZ; git rev-parse --short HEAD
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  ncu --version | tail -1; compute-sanitizer --version | tail -1; python3 --version; id
} >"$out/env.txt" 2>&1
step configure
cmake --preset gpu -DCMAKE_PREFIX_PATH="$root/.deps/usr" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
step build
# Each lab builds on its own: a lab that does not build is reported and left out, not fatal.
built=""
cmake --build --preset gpu -j16 --target gpulab-info >"$out/build.log" 2>&1 || { grep -m20 -i error "$out/build.log"; exit 1; }
for l in ${LABS:-transpose}; do
  if cmake --build --preset gpu -j16 --target "gpulab-$l-student" "gpulab-$l-reference" >>"$out/build.log" 2>&1; then
    built="$built $l"
  else
    echo "build of lab $l FAILED: left out" | tee -a "$out/steps.log"; grep -m5 -i error "$out/build.log"
  fi
done
labs=${built# }
[ -n "$labs" ] || exit 1
ref=$build/labs/transpose/gpulab-transpose-reference

step "sandbox preflight (unshare -n, setpriv nobody, prlimit)"
if unshare -n -- setpriv --reuid=65534 --regid=65534 --clear-groups -- prlimit --cpu=100 --fsize=536870912 --core=0 -- \
     "$ref" run --stage copy --n 1000x999 --no-time --format json >"$out/sandbox-preflight.log" 2>&1; then
  echo "sandbox ok" | tee -a "$out/steps.log"
else
  echo "sandbox preflight FAILED: grading with GPULAB_SANDBOX=0" | tee -a "$out/steps.log"; export GPULAB_SANDBOX=0
fi

step "ncu source counters: tiled (32-way expected) and padded (conflict-free)"
for st in tiled padded; do
  timeout 120 ncu --section SourceCounters --nvtx --nvtx-include "gpulab:$st/" --export "$out/ncu-$st" --force-overwrite \
    "$ref" run --stage "$st" --n 256x256 --no-time --format json >"$out/ncu-$st-profile.log" 2>&1
  ncu --import "$out/ncu-$st.ncu-rep" --page raw --csv >"$out/ncu-$st-raw.csv" 2>"$out/ncu-$st-import.err"
  ncu --import "$out/ncu-$st.ncu-rep" --page source --csv --print-source cuda >"$out/ncu-$st-source-cuda.csv" 2>>"$out/ncu-$st-import.err"
  ncu --import "$out/ncu-$st.ncu-rep" --page source --csv --print-source cuda,sass 2>>"$out/ncu-$st-import.err" | head -c 400000 >"$out/ncu-$st-source-cuda-sass.csv"
  ncu --import "$out/ncu-$st.ncu-rep" --page source --csv --print-source sass 2>>"$out/ncu-$st-import.err" | head -c 400000 >"$out/ncu-$st-source-sass.csv"
  ncu --import "$out/ncu-$st.ncu-rep" --page raw --csv --print-metric-instances details \
    --metrics derived__memory_l1_wavefronts_shared_excessive,memory_l1_wavefronts_shared,memory_l1_wavefronts_shared_ideal \
    2>>"$out/ncu-$st-import.err" | head -c 400000 >"$out/ncu-$st-raw-instances.csv"
  ncu --import "$out/ncu-$st.ncu-rep" --page details --csv >"$out/ncu-$st-details.csv" 2>>"$out/ncu-$st-import.err"
done
step "ncu nvtx filter that matches nothing (expect 'No kernels were profiled')"
timeout 60 ncu --section SourceCounters --nvtx --nvtx-include "gpulab:nope/" "$ref" run --stage copy --n 64x64 --no-time \
  >"$out/ncu-nomatch.log" 2>&1
step "compute-sanitizer clean runs"
timeout 120 compute-sanitizer --tool memcheck --nvtx yes --error-exitcode 9 --print-limit 50 --log-file "$out/memcheck-clean.log" \
  "$ref" run --stage padded --stage naive --n 100x67 --no-time --format json >/dev/null 2>&1; echo "memcheck exit $?" >>"$out/steps.log"
timeout 120 compute-sanitizer --tool racecheck --nvtx yes --error-exitcode 9 --print-limit 50 --racecheck-report all \
  --log-file "$out/racecheck-clean.log" "$ref" run --stage padded --n 100x67 --no-time --format json >/dev/null 2>&1
echo "racecheck exit $?" >>"$out/steps.log"

export GPULAB_BUILD_DIR=$build GPULAB_SOURCE_DIR=$root PYTHONPATH=$root/autograder
for lab in ${E2E_LABS:-$labs}; do
  case " $labs " in *" $lab "*) ;; *) echo "e2e $lab: not built, skipped" >>"$out/steps.log"; continue;; esac
  step "grade: starter and reference of $lab (e2e)"
  timeout ${E2E_TIMEOUT:-200} python3 autograder/tests/e2e_gpu.py "$lab" >"$out/e2e-$lab.log" 2>&1
  echo "e2e $lab exit $?" >>"$out/steps.log"
  grep -E "^e2e_gpu|^total|not run" "$out/e2e-$lab.log" | tail -8
  cp -r /tmp/gpulab-e2e-* "$out/" 2>/dev/null; rm -rf /tmp/gpulab-e2e-*
done
for spec in ${SUITE:-}; do   # lab/name ...
  lab=${spec%%/*}; name=${spec#*/}
  case " $labs " in *" $lab "*) ;; *) echo "testdata $spec: lab not built, skipped" >>"$out/steps.log"; continue;; esac
  step "known-bad: $spec"
  timeout ${SUITE_TIMEOUT:-120} python3 autograder/tests/testdata_suite.py --out "$out/testdata" --only "$name" "$lab" \
    >"$out/testdata-$lab-$name.log" 2>&1
  echo "testdata $spec exit $?" >>"$out/steps.log"
  grep -E "^testdata:" "$out/testdata-$lab-$name.log" | tail -2
done
rm -rf "$out/testdata/submissions"
step done
pack
