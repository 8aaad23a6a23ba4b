#!/usr/bin/env bash
# Installs the Debian packages gpulab builds with, when they are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# The CUDA Toolkit (nvcc 12.4+ with CUB/Thrust and CUPTI) is not a Debian package here: see README.
# The decks (slides/) need Chromium, the fonts their theme names, matplotlib for their figures and
# the Marp CLI pinned in slides/package.json (npm ci, from the npm registry).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# bubblewrap + libseccomp2: the grader's jail for student code (autograder/README.md, "Isolation").
packages=(cmake ninja-build g++ python3 python3-rich catch2 nlohmann-json3-dev libcli11-dev
          bubblewrap libseccomp2 chromium fonts-liberation2 fonts-dejavu-core python3-matplotlib)
# Node.js and npm: the machine's own when it has them (a NodeSource nodejs carries its npm, and
# Debian's npm package would conflict with it), Debian's otherwise.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# A GPU machine without network access carries the headers in .deps/ (scripts/gpu-check.sh).
if [ ${#missing[@]} -eq 0 ] || [ -n "${GPULAB_DEPS_PREFIX:-}" ]; then
  echo "setup: all build dependencies are installed"
else
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# The pinned Marp CLI, unless it is installed from this very lock file already. A GPU machine
# without network (GPULAB_DEPS_PREFIX) renders no slides: the slides test skips there.
lock=$root/slides/package-lock.json
installed=$root/slides/node_modules/.package-lock.json
if [ -n "${GPULAB_DEPS_PREFIX:-}" ]; then
  echo "setup: offline machine, slides tooling not installed (the slides test skips)"
elif [ ! -x "$root/slides/node_modules/.bin/marp" ] || [ "$lock" -nt "$installed" ]; then
  echo "setup: installing the Marp CLI pinned in slides/package-lock.json (npm ci)"
  (cd "$root/slides" && npm ci --no-audit --no-fund --loglevel=error)
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found. Install the CUDA Toolkit (12.4 or newer) and put its bin/ on PATH." >&2
  exit 1
fi
command -v nvcc >/dev/null 2>&1 || echo "setup: note: add /usr/local/cuda/bin to PATH (export PATH=/usr/local/cuda/bin:\$PATH)"
