#!/usr/bin/env bash
# On the GPU machine (the device tool's run, carry [".deps", ".drafts"]): the course as committed,
# from `git archive HEAD -o .drafts/head.tar` made on the developer's machine, unpacked into a
# fresh folder (default /tmp/t) with .deps/ beside it and committed there into a new repository
# (the handout export takes git-tracked files; the working tree the device tool sends has no
# .git), then scripts/gpu-verify.sh with the arguments given, from that folder. Later calls of the
# same lease: `cd /tmp/t && scripts/gpu-verify.sh collect 540`, with the same carry (a call without
# it removes .drafts/ from the copy there: a chain step that runs a script from .drafts/ then finds
# nothing, as on 2026-11-29; copy such scripts into /tmp/t before the chains reach them).
# Usage: bash scripts/gpu-from-archive.sh ARCHIVE start|fanout [SECONDS] [ARGS...]
#   e.g. bash scripts/gpu-from-archive.sh .drafts/head.tar fanout 240 "0:STEPS=ctest-gpu e2e" "1:STEPS=classes-all"
set -euo pipefail
archive=$1; shift
dest=${GPULAB_ARCHIVE_DIR:-/tmp/t}
[ -f "$archive" ] || { echo "gpu-from-archive: $archive missing (make it with git archive HEAD -o $archive)"; exit 1; }
rm -rf "$dest" && mkdir -p "$dest"
tar xf "$archive" -C "$dest"
[ -d .deps ] && cp -r .deps "$dest/"
cd "$dest"
git init -q
printf '/.deps/\n' >> .git/info/exclude
git add -A >/dev/null
git -c user.name=gpu-verify -c user.email=gpu-verify@localhost commit -qm "the archive as sent"
exec scripts/gpu-verify.sh "$@"
