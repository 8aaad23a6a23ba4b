#!/usr/bin/env bash
# On the GPU machine, after the build (scripts/gpu-check.sh): grade one batch three ways and check
# they agree (issue 14). Submissions: the reference of every lab (expect full marks), the starter
# (0), a compile error (compile-error) and an empty one (error). Ways: a plain batch, --gpus 0,
# and --gpus all (when the host has more than one GPU). Then --plan from the measured grades, and
# the rerun grades nothing. Logs and gradebooks go to $OUT (or build/<preset>/batch-check).
# Usage: scripts/gpu-batch-check.sh [preset]   (default gpu). Exit 1 on any mismatch.
# BATCH_LABS="transpose ...": only these labs (default every lab); BATCH_GPU=I: the one-GPU way
# is --gpus I (default 0); BATCH_ALL=0: no --gpus all way (another job holds the other GPUs).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
preset=${1:-gpu}
G=$root/build/$preset/gpulab
out=${OUT:-$root/build/$preset/batch-check}
[ -x "$G" ] || { echo "gpu-batch-check: $G missing: build the $preset preset first"; exit 1; }
rm -rf "$out/subs" "$out"/grades-*; mkdir -p "$out/subs"
subs=$out/subs
mkdir -p "$subs"/{reference,starter}/labs "$subs/broken/labs" "$subs/empty"
labs=()
for d in solutions/*/; do
  lab=$(basename "$d")
  [ -f "labs/$lab/rubric.toml" ] || continue
  [ -z "${BATCH_LABS:-}" ] || [[ " $BATCH_LABS " == *" $lab "* ]] || continue
  labs+=("$lab")
  cp -r "solutions/$lab" "$subs/reference/labs/$lab"
  cp -r "labs/$lab" "$subs/starter/labs/$lab"
done
cp -r "labs/${labs[0]}" "$subs/broken/labs/${labs[0]}"
labargs=(); [ -z "${BATCH_LABS:-}" ] || for l in "${labs[@]}"; do labargs+=(--lab "$l"); done
for f in "$subs/broken/labs/${labs[0]}"/*.cu; do echo 'this line is not C++' >>"$f"; done
echo "nothing submitted" >"$subs/empty/README.md"
echo "gpu-batch-check: labs ${labs[*]}; $(nvidia-smi -L | wc -l) GPU(s)"

status=0
run() {  # name, args...
  local name=$1; shift
  local t0=$SECONDS
  "$G" grade --batch "$subs" --out "$out/grades-$name" --jobs 2 "${labargs[@]}" "$@" >"$out/$name.log" 2>&1
  echo "gpu-batch-check: $name: exit $? in $((SECONDS - t0)) s (expected 1: the empty submission is an error row)"
}
run plain
run gpus0 --gpus "${BATCH_GPU:-0}"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
[ "${BATCH_ALL:-1}" = 0 ] && ngpu=1
[ "$ngpu" -gt 1 ] && run gpusall --gpus all

python3 - "$out" "$ngpu" <<'PY' || status=1
import csv, sys
from pathlib import Path
out, ngpu = Path(sys.argv[1]), int(sys.argv[2])
ways = ["plain", "gpus0"] + (["gpusall"] if ngpu > 1 else [])
books = {}
for w in ways:
    with open(out / f"grades-{w}" / "gradebook.csv") as f:
        t = list(csv.reader(f))
    books[w] = {r[0]: dict(zip(t[0], r)) for r in t[1:]}
    print(f"== {w}"); [print("  ", r) for r in t]
bad = []
for w, rows in books.items():
    want = {"reference": "graded", "starter": "graded", "broken": "compile-error", "empty": "error"}
    for n, s in want.items():
        r = rows.get(n)
        if r is None or r["status"] != s:
            bad.append(f"{w}: {n}: status {r and r['status']!r}, expected {s!r}")
    ref, st = rows.get("reference"), rows.get("starter")
    if ref and float(ref["total"]) < float(ref["max"]):   # extra credit may take it past max
        bad.append(f"{w}: reference {ref['total']} of {ref['max']}")
    if st and float(st["total"]) != 0:
        bad.append(f"{w}: starter {st['total']} (expected 0)")
    if len({r["max"] for r in rows.values()}) != 1:
        bad.append(f"{w}: max differs between rows")
    for n in ("reference", "starter"):
        if rows.get(n) and rows[n]["gpu"] in ("", "none"):
            bad.append(f"{w}: {n}: no GPU recorded")
for n in ("reference", "starter", "broken"):
    cols = [{k: v for k, v in books[w][n].items() if k not in ("gpu", "detail")} for w in ways if n in books[w]]
    if any(c != cols[0] for c in cols):
        bad.append(f"{n}: the ways disagree: {cols}")
print("\n".join("gpu-batch-check: FAIL: " + b for b in bad) or "gpu-batch-check: the ways agree")
sys.exit(1 if bad else 0)
PY

# Resume: the same command again grades nothing; --plan uses the measured times.
"$G" grade --batch "$subs" --out "$out/grades-gpus0" --gpus "${BATCH_GPU:-0}" "${labargs[@]}" >"$out/rerun.log" 2>&1
grep -q "0 to grade" "$out/rerun.log" || { echo "gpu-batch-check: FAIL: the rerun graded again:"; cat "$out/rerun.log"; status=1; }
"$G" grade --batch "$subs" --out "$out/grades-gpus0" --plan --force --array-limit 8 "${labargs[@]}" | tee "$out/plan.log"
grep -q "measured" "$out/plan.log" || { echo "gpu-batch-check: FAIL: --plan did not use the measured grades"; status=1; }
"$G" gradebook "$out/grades-gpus0" >"$out/gradebook.log" 2>&1 || status=1
echo "gpu-batch-check: exit $status (logs in $out)"
exit $status
