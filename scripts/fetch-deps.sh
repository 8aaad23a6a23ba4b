#!/usr/bin/env bash
# For a GPU machine with no network: download the header-only Debian packages here and unpack
# them into .deps/ (ignored by git), which travels to that machine with the working tree; and
# python3-rich with its dependencies, for a machine whose python3 lacks it (CMake finds it there).
# Also the grader's jail: bubblewrap (.deps/usr/bin/bwrap, found by the grader when none is installed) and
# libseccomp2 (its system-call filter; most systems have it already, apt depends on it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download catch2 nlohmann-json3-dev libcli11-dev bubblewrap libseccomp2 \
  python3-rich python3-pygments python3-markdown-it python3-mdurl)
mkdir -p "$root/.deps"
for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$root/.deps"; done
# A worktree's .git is a file: ask git where its exclude file is.
exclude=$(git -C "$root" rev-parse --git-path info/exclude 2>/dev/null || echo "$root/.git/info/exclude")
case $exclude in /*) ;; *) exclude=$root/$exclude ;; esac
mkdir -p "$(dirname "$exclude")"
grep -qx '/.deps/' "$exclude" 2>/dev/null || echo '/.deps/' >>"$exclude"
echo "fetch-deps: unpacked into $root/.deps (pass it to the device tool with carry: [\".deps\"])"
