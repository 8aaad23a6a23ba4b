#!/usr/bin/env bash
# Redraws the scan lab's plots (slides/img/scan-*.png, used by the handout and the deck) from the
# CSVs in this folder, as measured by gpu_measure.sh and colors_ncu.sh. CPU only; needs Debian's
# python3-matplotlib. Usage, from the repository root:
#   labs/scan/results/plots.sh [GPU name] [copy roof GB/s, from `gpulab info`]
set -euo pipefail
gpu=${1:-H200}
copy=${2:-4221}
r=labs/scan/results
img=slides/img
plot() { /usr/bin/python3 scripts/plot_csv.py "$@"; }
# n of a CSV's first row (column COL), as 2^k when it is a power of two: n_of FILE COL
n_of() {
  /usr/bin/python3 -c 'import csv, sys; n = int(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]]); print(f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else n)' "$1" "$2"
}

scans=cub,single-pass,three-round,alpha-matrix,thrust,shared-conflict-free,shared,work-efficient-compact-threads,naive,work-efficient
plot $r/size-sweep.csv --x n --y gbps --only stage=$scans --where status=pass --group stage --logx --logy \
  --hline "$copy:copy roof ($copy GB/s)" \
  --title "Exclusive scan of int32 on an NVIDIA $gpu (8n bytes / time)" --xlabel "n (elements)" \
  --ylabel "GB/s (model bytes 8n)" --out $img/scan-size-gbps.png
plot $r/size-sweep.csv --x n --y median_ms --only stage=${scans/,thrust/} --where status=pass --group stage --logx --logy \
  --title "Time against n ($gpu, median of 10, L2 flushed)" --xlabel "n (elements)" --ylabel "median ms" \
  --out $img/scan-size-ms.png
plot $r/size-sweep.csv --x n --y vs_cub --group stage --only stage=single-pass,three-round,alpha-matrix,thrust,compact \
  --logx --hline 1:CUB --hline 0.95:0.95x --hline 0.80:0.80x \
  --title "Speed relative to CUB (CUB time / stage time)" --xlabel "n (elements)" --ylabel "x CUB" --out $img/scan-vs-cub.png
plot $r/block-sweep.csv --x block --y gbps --group stage --where status=pass --logx --logy \
  --title "Threads per block, n = $(n_of $r/block-sweep.csv n) ($gpu)" \
  --xlabel "threads per block" --ylabel "GB/s (8n bytes)" --out $img/scan-block.png
plot $r/alpha-sweep.csv --x alpha --y gbps --y2 occupancy \
  --title "alpha-matrix: bandwidth and occupancy against alpha (n = $(n_of $r/alpha-sweep.csv n), $gpu)" \
  --ylabel "GB/s (8n bytes)" --y2label "occupancy (resident threads / 2048)" --out $img/scan-alpha.png
plot $r/colors-sweep.csv --x colors --y median_ms --group stage \
  --title "Colored prefix sums against d (n = $(n_of $r/colors-sweep.csv n), $gpu)" \
  --xlabel "colors d" --ylabel "median ms" --out $img/scan-colors.png
/usr/bin/python3 $r/colors_excess.py $r/colors-ncu.csv $r/colors-sweep.csv > $r/colors-excess.csv
plot $r/colors-excess.csv --x colors --y excess_wavefronts --group series \
  --dashed "colored-direct (model)" --dashed "colored-conflict-free (model)" \
  --title "Excess shared wavefronts against d (ncu vs bank model, n = $(n_of $r/colors-ncu.csv n), $gpu)" \
  --xlabel "colors d" --ylabel "L1 Wavefronts Shared Excessive" --out $img/scan-colors-excess.png
