"""The model deck's figures: a warp's coalesced against strided access (seed 000 §2.1, seed 004 §3.1)
and the bandwidth setups of seed 000 §6.1 measured on an H200 (labs/transpose/results). The
vector-width, latency and block-size plots come from `gpulab measure transpose` (its plot spec)."""
from __future__ import annotations

import math
from pathlib import Path

from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: F401

from _draw import (BANKS, BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, finish, plt,  # noqa: F401
                   resident_warps, rows)


def coalescing(out: Path) -> None:
    """A warp's 32 loads of 4 bytes: consecutive words (one 128-byte block) vs a column (32 blocks)."""
    fig, ax = canvas("A warp's 32 loads of 4 bytes: coalesced vs strided")
    lanes = 32
    lw = 0.5

    def warp(y):
        for k in range(lanes):
            cell(ax, 1 + k * lw, y, "", color=BLUE, w=lw, h=0.5, edge="white")
        ax.text(0.9, y + 0.25, "warp", ha="right", va="center", fontsize=18, weight="bold")

    # coalesced: lane k -> word k, one 128-byte segment
    warp(8.4)
    seg_w = lanes * lw
    cell(ax, 1, 6.2, "", color="#d5ecd9", w=seg_w, h=0.7, edge=GREEN)
    for k in range(lanes):
        arrow(ax, (1 + k * lw + lw / 2, 8.38), (1 + k * lw + lw / 2, 6.92), color=BLUE, width=0.8, style="-")
    ax.text(1 + seg_w / 2, 6.55, "one 128-byte segment: 1 transaction, 128 of 128 bytes used", ha="center",
            va="center", fontsize=18)
    ax.text(1 + seg_w + 0.5, 7.5, "in[row][lane]\n(a row)", fontsize=18, va="center")

    # strided: lane k -> word 32k (a column of a row-major matrix with 32 floats a row)
    warp(4.3)
    segs = 32
    gap = 0.02
    sw = (seg_w + 7.0) / segs
    for s in range(segs):
        x = 1 + s * sw
        cell(ax, x, 1.6, "", color="#f6d5cf", w=sw - gap, h=0.7, edge=RED)
        cell(ax, x, 1.6, "", color=RED, w=(sw - gap) / 32 * 4, h=0.7, edge=RED)
        arrow(ax, (1 + s * lw + lw / 2, 4.28), (x + 0.03, 2.32), color=BLUE, width=0.8, style="-")
    ax.text(1 + (seg_w + 7.0) / 2, 1.1, "32 segments: 32 transactions, 4 of 128 bytes used in each (3%)", ha="center",
            va="center", fontsize=18)
    ax.text(1 + seg_w + 0.5, 3.6, "in[lane][col]\n(a column)", fontsize=18, va="center")
    ax.set_xlim(-1.2, 1 + seg_w + 7.6)
    ax.set_ylim(0.6, 9.4)
    fig.savefig(out, dpi=DPI)




def setups(out: Path) -> None:
    data = [r for r in rows("bandwidth-setups.csv") if r["vector_bits"] == "128"]
    fig, axes = plt.subplots(1, 2, figsize=SIZE, sharey=True)
    titles = {"1": "setup 1: a tile per CTA", "2": "setup 2: every warp a virtual CTA"}
    for ax, setup in zip(axes, ("1", "2")):
        for k, ctas in enumerate(sorted({int(r["ctas_per_sm"]) for r in data})):
            pts = sorted((int(r["warps_per_cta"]), float(r["gbps"])) for r in data
                         if r["setup"] == setup and int(r["ctas_per_sm"]) == ctas)
            xs = [resident_warps(ctas, w) for w, _ in pts]
            ys = [g for _, g in pts]
            over = [ctas * w > 64 for w, _ in pts]
            ax.plot(xs, ys, "-", color=f"C{k}", linewidth=2, label=f"{ctas} CTAs/SM launched")
            ax.scatter([x for x, o in zip(xs, over) if not o], [y for y, o in zip(ys, over) if not o], color=f"C{k}", s=60, zorder=3)
            ax.scatter([x for x, o in zip(xs, over) if o], [y for y, o in zip(ys, over) if o], facecolors="white",
                       edgecolors=f"C{k}", s=90, linewidths=2, zorder=3)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16, 32, 64])
        ax.set_xticklabels(["1", "2", "4", "8", "16", "32", "64"])
        ax.set_xlabel("resident warps per SM (at most 64)")
        ax.set_title(titles[setup])
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("GB/s, global \u2192 shared, 128-bit loads")
    axes[0].legend(loc="lower right", fontsize=18)
    fig.suptitle("Bandwidth against resident warps per SM (H200; seed 000 \u00a76.1, Fig. 3/4)\n"
                 "hollow: more warps launched than fit (> 64 per SM): they run in waves", fontsize=22)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "access-coalesced-strided": coalescing,
    "model-setups": setups,
}
