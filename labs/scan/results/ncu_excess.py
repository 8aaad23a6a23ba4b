#!/usr/bin/env python3
"""Sums Nsight Compute's per-instruction "L1 Wavefronts Shared Excessive" (and the wavefront
columns) from `ncu --import R --page source --csv --print-source sass`, per kernel launch and in
total. ncu prints each launch's table twice in that view; an exact repeat of the table just
before it is skipped. Usage: ncu_excess.py SASS.csv [label]"""
import csv
import sys

KEYS = ("L1 Wavefronts Shared Excessive", "L1 Wavefronts Shared", "L1 Wavefronts Shared Ideal")


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def launches(path):
    """[(kernel name, [row dicts])] in file order."""
    out, header = [], None
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        for row in csv.reader(f):
            if not row or row[0].startswith("=="):
                continue
            if row[0] == "Kernel Name" and len(row) > 1:
                out.append((row[1], []))
            elif row[0] == "Address":
                header = row
            elif out and header and len(row) == len(header):
                out[-1][1].append(dict(zip(header, row)))
    return out


def main():
    path, label = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    found, total, previous = False, 0.0, None
    for kernel, rows in launches(path):
        if (kernel, rows) == previous:
            continue
        previous = (kernel, rows)
        if not rows or KEYS[0] not in rows[0]:
            continue
        found = True
        sums = [sum(number(r.get(k)) for r in rows) for k in KEYS]
        total += sums[0]
        print(f"{label}: {kernel[:70]}: excessive {sums[0]:.0f}, wavefronts {sums[1]:.0f}, ideal {sums[2]:.0f}")
    if not found:
        print(f"{label}: no '{KEYS[0]}' column in {path}")
        return 1
    print(f"{label}: TOTAL excessive shared wavefronts = {total:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
