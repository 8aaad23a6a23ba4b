"""The transpose deck's diagrams: the tile transpose after seed 000 §3 and seed 004 §3.1, the in-place
diagonal sweep after seed 000 Appendix B, Algorithm 2."""
from __future__ import annotations

import math
from pathlib import Path

from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: F401

from _draw import (BANKS, BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, finish, plt,  # noqa: F401
                   resident_warps, rows)


def transpose_tile(out: Path) -> None:
    """Tile (i, j) of `in` through shared memory to tile (j, i) of `out` (seed 000 \u00a73; seed 004 \u00a73.1)."""
    fig, ax = canvas("Tiled transpose: tile (i, j) \u2192 shared memory \u2192 tile (j, i)")
    tiles, ti, tj = 4, 1, 2
    s = 1.0

    def grid(x0, y0, hi_r, hi_c, name, color):
        for r in range(tiles):
            for c in range(tiles):
                hl = (r, c) == (hi_r, hi_c)
                cell(ax, x0 + c * s, y0 + (tiles - 1 - r) * s, f"{r},{c}" if hl else "", color=color if hl else "#f4f5f7",
                     w=s, h=s, size=18, textcolor="white")
        ax.text(x0 + tiles * s / 2, y0 + tiles * s + 0.3, name, ha="center", fontsize=22, weight="bold")

    grid(0.2, 4.0, ti, tj, "in", BLUE)
    grid(21.0, 4.0, tj, ti, "out", GREEN)
    k, cs = 8, 0.55

    def shared(x0, y0, width, title):
        for r in range(k):
            for c in range(width):
                pad = c >= k
                bank = (r * width + c) % k
                col_hl = c == 0
                cell(ax, x0 + c * cs, y0 + (k - 1 - r) * cs, "", color="#e4e6ea" if pad else BANKS(bank) if col_hl else "white",
                     w=cs, h=cs, edge="#888888")
                ax.text(x0 + c * cs + cs / 2, y0 + (k - 1 - r) * cs + cs / 2, "" if pad else str(bank), ha="center",
                        va="center", fontsize=18, color="white" if col_hl else "#777777")
        ax.text(x0 + width * cs / 2, y0 + k * cs + 0.3, title, ha="center", fontsize=18)

    shared(6.3, 4.0, 8, "tile[8][8]\ncolumn 0 = bank 0: 8-way")
    shared(12.6, 4.0, 9, "tile[8][9] (grey: the pad word)\ncolumn 0 spans banks 0\u20267")
    arrow(ax, (4.4, 6.5), (6.1, 6.5), color=BLUE, width=2.5)
    arrow(ax, (17.8, 6.5), (20.8, 6.5), color=GREEN, width=2.5)
    ax.text(2.4, 2.9, "\u2460 a warp reads a row\nof the tile (coalesced),\nstores it as a row", ha="center", va="top",
            fontsize=18, color=BLUE)
    ax.text(11.4, 2.9, "\u2461 __syncthreads()\nnumber = the bank of the word (8 drawn, 32 on the GPU)\n"
            "coloured = the column one warp reads in \u2462", ha="center", va="top", fontsize=18)
    ax.text(22.8, 2.9, "\u2462 a warp reads a column\nand writes it as a row\nof out (coalesced)", ha="center", va="top",
            fontsize=18, color=GREEN)
    ax.text(12.5, 0.5, "One pad word per row shifts each row by one bank: the column becomes conflict-free.",
            ha="center", fontsize=19, weight="bold")
    ax.set_xlim(-0.2, 25.4)
    ax.set_ylim(0.0, 9.6)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


def diagonal_sweep(out: Path) -> None:
    """Seed 000 Appendix B, Algorithm 2 on an 8 x 8 tile with 8 banks: step i, lane c swaps
    (c, c + i) with (c + i, c). Word (r, k) is at r * 8 + k, bank k."""
    b = 8
    fig = plt.figure(figsize=SIZE)
    fig.suptitle("In-place transpose (seed 000 App. B, Alg. 2): step i swaps the words i off the diagonal",
                 fontsize=26, y=0.97)
    ax = fig.add_axes([0.03, 0.05, 0.50, 0.84])
    ax.set_axis_off()
    cmap = plt.get_cmap("viridis")
    for r in range(b):
        for c in range(b):
            i = abs(r - c)
            color = "white" if i == 0 else cmap((i - 1) / (b - 1))
            cell(ax, c, b - 1 - r, "" if i == 0 else i, color=color, size=18, textcolor="white" if 0 < i < 6 else "black")
    for c in range(b):
        ax.text(c + 0.5, b + 0.15, str(c), ha="center", va="bottom", fontsize=18, color="#555555")
        ax.text(-0.15, b - 1 - c + 0.5, f"row {c}", ha="right", va="center", fontsize=18, color="#555555")
    ax.text(-0.15, b + 0.15, "bank", ha="right", va="bottom", fontsize=18, color="#555555")
    ax.text(b / 2, -0.45, "number = the step that swaps the word; the diagonal stays", ha="center", va="top", fontsize=18)
    ax.set_xlim(-1.4, b + 0.2)
    ax.set_ylim(-1.3, b + 0.8)
    ax.set_aspect("equal")

    ax2 = fig.add_axes([0.56, 0.10, 0.42, 0.74])
    ax2.set_axis_off()
    step = 2
    ax2.text(0, 7.6, f"step i = {step}: lanes c = 0 \u2026 {b - 1 - step}", fontsize=22, weight="bold")
    for c in range(b - step):
        upper, lower = (c, c + step), (c + step, c)
        y = 6.6 - c * 0.9
        ax2.text(0, y, f"lane {c}:  ({upper[0]},{upper[1]}) bank {upper[1]}   \u2194   ({lower[0]},{lower[1]}) bank {lower[1]}",
                 fontsize=18, family="DejaVu Sans Mono")
    ax2.text(0, 6.6 - (b - step) * 0.9 - 0.2,
             "upper words: banks c + i, all different\nlower words: banks c, all different\n\u2192 conflict-free, no padding, no second tile",
             fontsize=19, color=GREEN, va="top")
    ax2.set_xlim(0, 10)
    ax2.set_ylim(-2.5, 8.2)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "transpose-tile": transpose_tile,
    "transpose-diagonal-sweep": diagonal_sweep,
}
