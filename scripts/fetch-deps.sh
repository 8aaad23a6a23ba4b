#!/usr/bin/env bash
# For a GPU machine with no network: download the header-only Debian packages here and unpack
# them into .deps/ (ignored by git), which travels to that machine with the working tree; and
# python3-rich with its dependencies, for a machine whose python3 lacks it (CMake finds it there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download catch2 nlohmann-json3-dev libcli11-dev \
  python3-rich python3-pygments python3-markdown-it python3-mdurl)
mkdir -p "$root/.deps"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$root/.deps"; done
grep -qx '/.deps/' "$root/.git/info/exclude" 2>/dev/null || echo '/.deps/' >>"$root/.git/info/exclude"
echo "fetch-deps: unpacked into $root/.deps (pass it to the device tool with carry: [\".deps\"])"
