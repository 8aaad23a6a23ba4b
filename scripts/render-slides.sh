#!/usr/bin/env bash
# Renders the Marp decks in slides/ to HTML (and PDF, PNG) and checks that every slide fits.
# Needs the Marp CLI pinned in slides/package.json (scripts/setup.sh runs `npm ci` there) and,
# for PDF, PNG and --check, Debian's chromium. No CUDA, no configure of the course.
#
# Usage: scripts/render-slides.sh [--out DIR] [--pdf] [--png] [--check] [--student] [DECK.md ...]
#   --out DIR  where the files go (default build/slides); HTML always, img/ copied beside it
#   --pdf      also DIR/<deck>.pdf
#   --png      also DIR/png/<deck>.NNN.png, one image per slide (to look at every slide)
#   --check    render each deck once more, all slides laid out (Marp's bare template), and run
#              slides/check-slides.mjs on them: exit 1 if any slide loses content
#   --student  render the students' version: without the instructor-only slides of class
#              `answer` (what `gpulab handout` ships before the solutions are released)
#   --skip-missing  exit 77 (CTest's skip) instead of 1 when Marp or Chromium is missing,
#              unless CI is set (CI installed them with scripts/setup.sh: missing is a failure)
#   DECK.md    the decks to render (default: every slides/*.md but README.md)
# Environment: MARP (the marp executable), CHROME_PATH (the browser, default /usr/bin/chromium).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
slides=$root/slides
out=$root/build/slides
pdf=0 png=0 check=0 skip_missing=0 student=0
decks=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || { echo "render-slides: --out needs a folder" >&2; exit 2; }; out=$2; shift 2 ;;
    --pdf) pdf=1; shift ;;
    --png) png=1; shift ;;
    --check) check=1; shift ;;
    --student) student=1; shift ;;
    --skip-missing) skip_missing=1; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "render-slides: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -f "$1" ] || { echo "render-slides: no deck $1" >&2; exit 2; }; decks+=("$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"); shift ;;
  esac
done
if [ ${#decks[@]} -eq 0 ]; then
  for d in "$slides"/*.md; do [ "$(basename "$d")" = README.md ] || decks+=("$d"); done
fi

missing() {
  echo "render-slides: $1" >&2
  if [ $skip_missing -eq 1 ] && [ -z "${CI:-}" ]; then echo "render-slides: skipped" >&2; exit 77; fi
  exit 1
}
marp=${MARP:-$slides/node_modules/.bin/marp}
if [ ! -x "$marp" ]; then
  missing "the Marp CLI is not installed ($marp is missing). Install the pinned version with:  (cd slides && npm ci)   (scripts/setup.sh does it)"
fi
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
if [ $((pdf + png + check)) -gt 0 ] && [ ! -x "$CHROME_PATH" ]; then
  missing "PDF, PNG and --check need Chromium ($CHROME_PATH is missing). Install it with:  apt-get install chromium   (scripts/setup.sh does it), or set CHROME_PATH"
fi

mkdir -p "$out"
if [ $student -eq 1 ]; then
  # The students' decks: each deck without its answer slides (autograder/gpulab/decks.py, the
  # rule `gpulab handout` exports with), rendered from a copy beside a copy of img/.
  src=$out/student-src
  rm -rf "$src"; mkdir -p "$src"; cp -r "$slides/img" "$src/img"
  student_decks=()
  for deck in "${decks[@]}"; do
    python3 "$root/autograder/gpulab/decks.py" --student "$deck" > "$src/$(basename "$deck")" || exit 1
    student_decks+=("$src/$(basename "$deck")")
  done
  decks=("${student_decks[@]}")
fi
# Relative image links resolve against the HTML file: give each output folder its img/.
copy_img() { rm -rf "$1/img"; cp -r "$slides/img" "$1/img"; }
marp_run() {
  # Marp prints an INFO line per file and, for PDF and PNG, a two-line warning that local files
  # may be read (the decks' own img/ needs it); keep the other errors and warnings.
  "$marp" --no-stdin --config "$slides/marp.config.mjs" --allow-local-files "$@" 2>&1 \
    | awk '/^\[  INFO \]/ { next } /Insecure local file accessing/ { skip = 1; next } skip && /^ +/ { skip = 0; next } { skip = 0; print }' 
  return "${PIPESTATUS[0]}"
}
status=0
copy_img "$out"
for deck in "${decks[@]}"; do
  name=$(basename "$deck" .md)
  marp_run "$deck" -o "$out/$name.html" || status=1
  [ $pdf -eq 0 ] || marp_run --pdf "$deck" -o "$out/$name.pdf" || status=1
  if [ $png -eq 1 ]; then
    mkdir -p "$out/png"
    marp_run --images png "$deck" -o "$out/png/$name.png" || status=1
  fi
  echo "render-slides: $name -> $out/$name.html$([ $pdf -eq 0 ] || echo ", .pdf")$([ $png -eq 0 ] || echo ", png/$name.NNN.png")"
done
[ $status -eq 0 ] || { echo "render-slides: Marp failed (above)" >&2; exit 1; }

if [ $check -eq 1 ]; then
  mkdir -p "$out/check"
  copy_img "$out/check"
  htmls=()
  for deck in "${decks[@]}"; do
    name=$(basename "$deck" .md)
    marp_run --template bare "$deck" -o "$out/check/$name.html" || exit 1
    htmls+=("$out/check/$name.html")
  done
  node "$slides/check-slides.mjs" "${htmls[@]}"
fi
