#!/usr/bin/env python3
"""Sums Nsight Compute's per-instruction "L1 Wavefronts Shared Excessive" (and the wavefront
columns) from `ncu --import R --page source --csv --print-source sass`, per kernel and in total.
Usage: ncu_excess.py SASS.csv [label]"""
import csv
import io
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def main():
    path, label = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    text = open(path, encoding="utf-8", errors="replace").read()
    totals, kernel = {}, "?"
    columns = None
    for line in text.splitlines():
        if line.startswith("==") or not line.strip():
            continue
        row = next(csv.reader(io.StringIO(line)))
        if row and row[0] == "Kernel Name" and len(row) > 1:
            kernel = row[1]
            continue
        if "L1 Wavefronts Shared Excessive" in row:
            columns = row
            continue
        if columns and len(row) == len(columns):
            rec = dict(zip(columns, row))
            t = totals.setdefault(kernel, [0.0, 0.0, 0.0])
            for k, key in enumerate(("L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal")):
                v = number(rec.get(key))
                if v is not None:
                    t[k] += v
    if not totals:
        print(f"{label}: no 'L1 Wavefronts Shared Excessive' column found in {path}")
        return 1
    all_excess = sum(t[0] for t in totals.values())
    for k, t in totals.items():
        print(f"{label}: kernel {k[:80]}: excessive {t[0]:.0f}, wavefronts {t[1]:.0f}, ideal {t[2]:.0f}")
    print(f"{label}: TOTAL excessive shared wavefronts = {all_excess:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
