#!/usr/bin/env python3
"""Puts Nsight Compute's excess shared wavefronts of both colored versions (colors-ncu.csv, from
colors_ncu.sh) beside the bank model's prediction for the same n (colors-sweep.csv's
model_128bit_excess, per page of 1024, times n / 1024 pages) in one long table for
scripts/plot_csv.py --group series. Exits non-zero if a measured count differs from the model.

Usage: colors_excess.py colors-ncu.csv colors-sweep.csv > colors-excess.csv"""
import csv
import sys

PAGE = 1024  # kColoredPage (scan.cuh): the model counts one page of one warp


def main(ncu_csv: str, sweep_csv: str) -> int:
    with open(ncu_csv, newline="", encoding="utf-8") as f:
        measured = list(csv.DictReader(f))
    with open(sweep_csv, newline="", encoding="utf-8") as f:
        model = {(r["stage"], int(r["colors"])): int(r["model_128bit_excess"]) for r in csv.DictReader(f)}
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["series", "colors", "excess_wavefronts"])
    mismatches = []
    predicted = []
    for r in measured:
        stage, d, n = r["stage"], int(r["colors"]), int(r["n"])
        if n % PAGE:
            sys.exit(f"colors_excess.py: n = {n} is not a whole number of pages of {PAGE}")
        want = model[(stage, d)] * (n // PAGE)
        got = int(r["excess_wavefronts"])
        out.writerow([f"{stage} (ncu)", d, got])
        predicted.append([f"{stage} (model)", d, want])
        if got != want:
            mismatches.append(f"{stage} d={d}: ncu {got}, model {want}")
    out.writerows(predicted)
    for m in mismatches:
        print("colors_excess.py: model differs:", m, file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
