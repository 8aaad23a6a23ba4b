#!/usr/bin/python3
"""Bar charts of the transpose lab's stage table and of the kernel variants (Debian's
python3-matplotlib; scripts/plot_csv.py draws only lines). Usage, from the repository root:

  /usr/bin/python3 labs/transpose/plot_results.py labs/transpose/results slides/img

reads results/run-8192.csv (`gpulab-transpose-reference run --n 8192x8192 --format csv`) and
results/variants.txt (kernel variants timed while the reference was written) and writes transpose-stages.png and
transpose-variants.png.
"""
import csv
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bars(labels, values, roof, title, out, color_of=None):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    colors = [color_of(l) if color_of else "tab:blue" for l in labels]
    ax.barh(labels[::-1], values[::-1], color=colors[::-1])
    ax.axvline(roof, color="black", linestyle="--", linewidth=1)
    ax.text(roof, -0.9, f"copy {roof:.0f} ", va="center", ha="right", fontsize=8)
    ax.axvline(0.9 * roof, color="grey", linestyle=":", linewidth=1)
    for i, v in enumerate(values[::-1]):
        ax.text(v, i, f" {v:.0f} ({100 * v / roof:.0f}%)", va="center", fontsize=8)
    ax.set_xlabel("GB/s (2 x rows x cols x 4 bytes / time)")
    ax.set_title(title)
    ax.set_xlim(0, roof * 1.25)
    fig.tight_layout()
    fig.savefig(out, dpi=180)  # 1620 px wide: sharp on a slide
    print(f"wrote {out}")


def main(results: Path, img: Path) -> None:
    rows = list(csv.DictReader((results / "run-8192.csv").open()))
    gpu = [r for r in rows if r["stage"] != "cpu" and r["gbps"]]
    copy = next(float(r["gbps"]) for r in gpu if r["stage"] == "copy")
    kind = {"copy": "tab:grey", "memcpy": "tab:grey", "copy-shared": "tab:grey", "naive": "tab:red", "tiled": "tab:orange"}
    bars([r["stage"] for r in gpu], [float(r["gbps"]) for r in gpu], copy,
         "Transpose stages, 8192 x 8192 float32, H200 (reference)", img / "transpose-stages.png",
         lambda s: kind.get(s, "tab:green"))

    labels, values = [], []
    for line in (results / "variants.txt").read_text().splitlines():
        m = re.match(r"(.+?)\s+([\d.]+) ms\s+([\d.]+) GB/s", line)
        if m and not m.group(1).startswith("memcpy"):
            labels.append(m.group(1).strip())
            values.append(float(m.group(3)))
    roof = values[labels.index("copy float4")]
    bars(labels, values, roof, "Tiled-kernel variants, 8192 x 8192, H200\n(v1: load-store interleaved; v2: loads staged; BR thread rows, S tiles per CTA)",
         img / "transpose-variants.png",
         lambda s: "tab:grey" if s.startswith("copy") else "tab:red" if "v1" in s else "tab:green")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
