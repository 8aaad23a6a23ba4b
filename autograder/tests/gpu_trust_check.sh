#!/usr/bin/env bash
# Issue 10 A-C on the GPU machine, as root: the jail works where it matters (Nsight Compute, the
# sanitizers, the timing runs, the student build) and changes no grade of honest code.
#
#   autograder/tests/gpu_trust_check.sh [classes|references|all]    (default: all)
#
# classes:    the known-bad classes of issue 10 (testdata_suite.py, GPU mode): writes-everywhere
#             (scan, transpose: every check passes, no file appears in /, HOME, /tmp, the course,
#             its parent, the grader's package, CUDA), writes-everywhere-cpu, library-single-pass
#             (scan: single-pass 0 with the message, three-round keeps its points),
#             includes-cub-header, include-reference-{digraph,continued,comment}.
# references: the starters grade 0 and the references 100 with every check run (e2e_gpu.py).
# Each part fits a 10-minute call after the build (run `classes` and `references` separately if
# needed). Prints the sandbox's notes and the driver's profiling setting; exits non-zero on any
# mismatch, a missing jail, or a check that was not run. Logs and reports go to $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
part=${1:-all}
out=${OUT:-$root/build/gpu/trust}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
fail() { echo "gpu-trust-check: FAIL: $*" | tee -a "$out/trust.log"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (the jail and the ncu sandbox need it)"
if ! command -v bwrap >/dev/null 2>&1 && [ -x "$root/.deps/usr/bin/bwrap" ]; then
  export GPULAB_BWRAP=$root/.deps/usr/bin/bwrap
fi
bwrap_bin=${GPULAB_BWRAP:-$(command -v bwrap || true)}
[ -n "$bwrap_bin" ] || fail "no bubblewrap: run scripts/fetch-deps.sh on a networked machine and carry .deps"
"$bwrap_bin" --version >/dev/null 2>&1 || { ldd "$bwrap_bin" | grep "not found"; fail "$bwrap_bin does not run here"; }
{
  echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "bubblewrap: $bwrap_bin ($("$bwrap_bin" --version))"
  grep -E "RmProfilingAdminOnly" /proc/driver/nvidia/params || echo "RmProfilingAdminOnly: (not readable)"
} 2>&1 | tee "$out/trust.log"

prefix=()
if [ -d "$root/.deps/usr" ]; then
  export GPULAB_DEPS_PREFIX=$root/.deps/usr
  prefix=(-DCMAKE_PREFIX_PATH="$GPULAB_DEPS_PREFIX")
fi
cmake --preset gpu "${prefix[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; fail "configure"; }
cmake --build --preset gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -20; fail "build"; }
export GPULAB_BUILD_DIR=$root/build/gpu GPULAB_SOURCE_DIR=$root GPULAB_REQUIRE_GPU=1
# rich from .deps/ on an offline machine whose Python lacks it (autograder/cmake/GpulabPython.cmake)
export PYTHONPATH=$root/autograder${GPULAB_DEPS_PREFIX:+:$GPULAB_DEPS_PREFIX/lib/python3/dist-packages}
py=$(grep -E '^Python3_EXECUTABLE' build/gpu/CMakeCache.txt | cut -d= -f2)
py=${py:-python3}

# The sandbox as the grader sees it (a missing jail is a failure here, not a note).
"$py" - <<'EOF' 2>&1 | tee -a "$out/trust.log"
import sys
from gpulab.sandbox.jail import Sandbox, profiling_restricted
sb = Sandbox.detect()
print("sandbox:", sb.describe())
print("profiling restricted to admin:", profiling_restricted(), "->",
      "ncu target as root with CAP_SYS_ADMIN in the jail" if profiling_restricted() else "ncu as the sandbox user")
for n in sb.notes:
    print("note:", n)
sys.exit(0 if sb.jailed else 1)
EOF
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the jail is not available (see the notes above)"

status=0
if [ "$part" = classes ] || [ "$part" = all ]; then
  only=()
  for c in writes-everywhere writes-everywhere-cpu library-single-pass includes-cub-header \
           include-reference-digraph include-reference-continued include-reference-comment; do
    only+=(--only "$c")
  done
  "$py" autograder/tests/testdata_suite.py "${only[@]}" --out "$out/classes" \
    $(PYTHONPATH=autograder "$py" -m gpulab.manifest labs .) \
    >"$out/classes.log" 2>&1 || status=1
  sed -n '/^| lab /,$p' "$out/classes.log"
  grep -E "MISMATCH|BROKEN|Traceback" "$out/classes.log" && status=1
fi
if [ "$part" = references ] || [ "$part" = all ]; then
  "$py" autograder/tests/e2e_gpu.py >"$out/references.log" 2>&1 || status=1
  tail -25 "$out/references.log"
fi
echo "gpu-trust-check: $part: exit $status (logs in $out)" | tee -a "$out/trust.log"
exit $status
