#!/usr/bin/python3
"""slide_figures.py: draws the algorithm diagrams and the machine-model plots in slides/img (used by
the decks and the handouts) with Debian's python3-matplotlib. CPU only, deterministic.

Usage, from anywhere:
  scripts/slide_figures.py              # writes every figure into slides/img
  scripts/slide_figures.py --out DIR    # into DIR instead
  scripts/slide_figures.py --check DIR  # draws into DIR and fails unless each PNG is >= 1600 px wide
  scripts/slide_figures.py --only NAME  # one figure (repeatable), NAME without .png

The diagrams follow the seed documents (shared/seeds, README there): the Blelloch tree after seed
003 (its up-sweep/down-sweep scan, from GPU Gems 3 ch. 39); three-round prefix sums after seed
000 §4; the alpha x (b+1) matrix after seed 004 §6.1 (Algorithm 8, Fig. 11); the look-back
states after Merrill & Garland's decoupled look-back; the tile transpose and coalescing after
seed 000 §2.1/§3 and seed 004 §3.1; the in-place diagonal sweep after seed 000 Appendix B,
Algorithm 2; interleaved vs sequential addressing and the pipeline's 2b layout after seed 004 §5.1-5.2
(Algorithm 1, Fig. 8). The plots read labs/transpose/results/*.csv (the `experiment` CSVs, H200).
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import sys
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle
except ImportError:
    # --check is a CTest test: skip (77) where matplotlib is missing, as on the offline GPU
    # machine, but not on CI, where scripts/setup.sh installed it.
    print("slide_figures: needs Debian's python3-matplotlib (apt-get install python3-matplotlib; "
          "scripts/setup.sh installs it) and /usr/bin/python3")
    sys.exit(1 if os.environ.get("CI") or "--check" not in sys.argv else 77)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "labs" / "transpose" / "results"
# 16 x 9 inches at 100 dpi: 1600 x 900 px, the slide's 16:9 at a size that stays sharp when shown.
SIZE, DPI, MIN_WIDTH = (16, 9), 100, 1600
plt.rcParams.update({"font.size": 20, "axes.titlesize": 24, "axes.labelsize": 22, "legend.fontsize": 18,
                     "xtick.labelsize": 18, "ytick.labelsize": 18, "font.family": "DejaVu Sans"})
BLUE, ORANGE, GREEN, GREY, RED = "#4a7fb5", "#e0913a", "#4f9d5d", "#c8ccd2", "#c0392b"
BANKS = plt.get_cmap("tab10")


def canvas(title: str | None = None):
    fig = plt.figure(figsize=SIZE)
    ax = fig.add_axes([0.02, 0.02, 0.96, 0.88 if title else 0.96])
    ax.set_axis_off()
    if title:
        fig.suptitle(title, fontsize=28, y=0.97)
    return fig, ax


def cell(ax, x, y, text, color="white", w=1.0, h=1.0, size=20, weight="normal", edge="#333333", textcolor="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, linewidth=1.5))
    if text != "":
        ax.text(x + w / 2, y + h / 2, str(text), ha="center", va="center", fontsize=size, weight=weight, color=textcolor)


def arrow(ax, a, b, color="#333333", width=1.8, style="-|>", rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=18, color=color, linewidth=width,
                                 connectionstyle=f"arc3,rad={rad}"))


# ---- scan --------------------------------------------------------------------------------------


def blelloch(out: Path) -> None:
    """Up-sweep and down-sweep on 8 elements, every step simulated (seed 003's work-efficient scan)."""
    data = [3, 1, 7, 0, 4, 1, 6, 3]
    n = len(data)
    fig, ax = canvas("Blelloch scan of 8 elements: 2 log\u2082 n rounds, O(n) additions")
    rows, ops = [list(data)], []
    a = list(data)
    d = 1
    while d < n:  # up-sweep: a[k + 2d - 1] += a[k + d - 1]
        step = []
        for k in range(0, n, 2 * d):
            a[k + 2 * d - 1] += a[k + d - 1]
            step.append((k + d - 1, k + 2 * d - 1))
        rows.append(list(a))
        ops.append(("up", step, f"up-sweep, stride {d}"))
        d *= 2
    a[n - 1] = 0
    rows.append(list(a))
    ops.append(("clear", [(n - 1, n - 1)], "clear the root"))
    d = n // 2
    while d >= 1:  # down-sweep: left <- parent, right <- parent + old left
        step = []
        for k in range(0, n, 2 * d):
            left, right = k + d - 1, k + 2 * d - 1
            a[left], a[right] = a[right], a[right] + a[left]
            step.append((left, right))
        rows.append(list(a))
        ops.append(("down", step, f"down-sweep, stride {d}"))
        d //= 2
    expected = [sum(data[:i]) for i in range(n)]
    assert rows[-1] == expected, (rows[-1], expected)

    gap, x0 = 1.55, 5.2
    top = len(rows) * gap
    for r, values in enumerate(rows):
        y = top - r * gap
        changed = set()
        if r > 0:
            kind, step, label = ops[r - 1]
            changed = {j for pair in step for j in pair} if kind == "down" else {pair[1] for pair in step}
            color = {"up": BLUE, "clear": GREY, "down": ORANGE}[kind]
            ax.text(x0 - 0.3, y + 0.5, label, ha="right", va="center", fontsize=20, color=color, weight="bold")
            for left, right in step:  # arrows from the previous row
                py = y + gap - 0.02
                if kind == "up":
                    arrow(ax, (x0 + left + 0.5, py), (x0 + right + 0.5, y + 1.0), color=BLUE)
                    arrow(ax, (x0 + right + 0.5, py), (x0 + right + 0.5, y + 1.0), color=BLUE)
                elif kind == "down":
                    arrow(ax, (x0 + right + 0.5, py), (x0 + left + 0.5, y + 1.0), color=ORANGE)  # left <- parent
                    arrow(ax, (x0 + left + 0.5, py), (x0 + right + 0.5, y + 1.0), color=ORANGE)  # right <- sum
                    arrow(ax, (x0 + right + 0.5, py), (x0 + right + 0.5, y + 1.0), color=ORANGE)
        else:
            ax.text(x0 - 0.3, y + 0.5, "input", ha="right", va="center", fontsize=20, weight="bold")
        for i, v in enumerate(values):
            shade = {"up": "#d3e3f3", "clear": "#e4e6ea", "down": "#f8dfc2"}[ops[r - 1][0]] if i in changed else "white"
            cell(ax, x0 + i, y, v, color=shade if r < len(rows) - 1 else "#d5ecd9", size=22,
                 weight="bold" if i in changed else "normal")
    ax.text(x0 + n + 0.4, top - (len(rows) - 1) * gap + 0.5, "= exclusive scan", va="center", fontsize=20, color=GREEN,
            weight="bold")
    ax.text(x0 + n + 0.4, top - 3 * gap + 0.5, "sum of all 8\nat the root", va="center", fontsize=18, color=BLUE)
    ax.text(x0 + n + 0.4, top - 5.5 * gap + 0.5, "down: left \u2190 parent\nright \u2190 parent + left",
            va="center", fontsize=18, color=ORANGE)
    ax.set_xlim(0, x0 + n + 4.2)
    ax.set_ylim(top - (len(rows) - 1) * gap - 0.3, top + 1.3)
    ax.text(x0 + n / 2, top + 1.15, "index  0 \u2026 7", ha="center", fontsize=16, color="#555555")
    fig.savefig(out, dpi=DPI)


def three_round(out: Path) -> None:
    """Reduce / spine / scan on 4 tiles of 4 (seed 000 §4; seed 004 Algorithm 7)."""
    tiles = [[2, 1, 3, 0], [1, 1, 2, 4], [0, 3, 1, 1], [2, 2, 0, 1]]
    sums = [sum(t) for t in tiles]
    offsets = [sum(sums[:i]) for i in range(len(sums))]
    outs = []
    for t, off in zip(tiles, offsets):
        outs.append([off + sum(t[:i]) for i in range(len(t))])
    flat = [v for t in tiles for v in t]
    assert [v for t in outs for v in t] == [sum(flat[:i]) for i in range(len(flat))]

    fig, ax = canvas("Three rounds: R = 3 launches, 3n words of I/O for any n (seed 000 \u00a74)")
    tile_w, gap = 4, 0.9
    x_of = lambda t: 3.5 + t * (tile_w + gap)  # noqa: E731
    colors = [BLUE, ORANGE, GREEN, "#8e6bb5"]
    y_in, y_sum, y_off, y_out = 9.0, 6.6, 4.4, 1.0
    for t, tile in enumerate(tiles):
        for i, v in enumerate(tile):
            cell(ax, x_of(t) + i, y_in, v, color="white", edge=colors[t])
        ax.text(x_of(t) + 2, y_in + 1.35, f"tile {t} (block {t})", ha="center", fontsize=18, color=colors[t])
        cell(ax, x_of(t) + 1.5, y_sum, sums[t], color="#eef3f9", edge=colors[t], weight="bold")
        arrow(ax, (x_of(t) + 2, y_in - 0.05), (x_of(t) + 2, y_sum + 1.05), color=colors[t])
        cell(ax, x_of(t) + 1.5, y_off, offsets[t], color="#fdf0de", edge=colors[t], weight="bold")
        arrow(ax, (x_of(t) + 2, y_off - 0.05), (x_of(t) + 2, y_out + 1.05), color=colors[t])
        for i, v in enumerate(outs[t]):
            cell(ax, x_of(t) + i, y_out, v, color="#e3f1e6", edge=colors[t])
    # the spine: one block scans the sums
    ax.add_patch(Rectangle((x_of(0) + 1.2, y_off - 0.25), x_of(3) - x_of(0) + 1.6, 1.5,
                           facecolor="none", edgecolor="#777777", linestyle="--", linewidth=1.5))
    for t in range(len(tiles) - 1):
        arrow(ax, (x_of(t) + 2.5, y_sum + 0.3), (x_of(t + 1) + 1.5, y_off + 0.7), color="#777777", width=1.3)
    labels = [(y_in + 0.5, "input"), (y_sum + 0.5, "1  reduce"), (y_off + 0.5, "2  spine"), (y_out + 0.5, "3  scan")]
    for y, text in labels:
        ax.text(3.2, y, text, ha="right", va="center", fontsize=22, weight="bold")
    right = x_of(3) + tile_w + 0.6
    notes = [(y_sum + 0.5, "p blocks: read n, write p sums"), (y_off + 0.5, "1 block: scan the p sums"),
             (y_out + 0.5, "p blocks: read n again, write n,\neach from its tile's offset")]
    for y, text in notes:
        ax.text(right, y, text, va="center", fontsize=18, color="#333333")
    ax.set_xlim(0, right + 7.5)
    ax.set_ylim(0.3, y_in + 2.0)
    fig.savefig(out, dpi=DPI)


def alpha_matrix(out: Path) -> None:
    """Seed 004 §6.1, Algorithm 8 / Fig. 11: element e of an alpha x b sub-block goes to row e % alpha,
    column e / alpha of an alpha x (b+1) matrix; bank = (row * (b+1) + column) mod b."""
    alpha, b = 3, 8
    fig = plt.figure(figsize=SIZE)
    fig.suptitle(f"\u03b1-matrix (seed 004 \u00a76, Alg. 8): \u03b1 = {alpha} rows \u00d7 (b + 1) columns, b = {b} banks",
                 fontsize=26, y=0.97)
    ax = fig.add_axes([0.02, 0.06, 0.60, 0.80])
    ax.set_axis_off()
    load = 0  # the first warp load: elements 0..b-1
    hits: dict[int, list[int]] = {}
    for e in range(alpha * b):
        r, c = e % alpha, e // alpha
        bank = (r * (b + 1) + c) % b
        in_load = load * b <= e < (load + 1) * b
        if in_load:
            hits.setdefault(bank, []).append(e)
        cell(ax, c, alpha - 1 - r, e, color=BANKS(bank) if in_load else "white", size=22,
             textcolor="white" if in_load else "black", weight="bold" if in_load else "normal")
        ax.text(c + 0.93, alpha - 1 - r + 0.07, f"b{bank}", ha="right", va="bottom", fontsize=12,
                color="white" if in_load else "#666666")
    for r in range(alpha):
        cell(ax, b, alpha - 1 - r, "pad", color="#eeeeee", size=14, textcolor="#777777")
        ax.text(-0.2, alpha - 1 - r + 0.5, f"row {r}", ha="right", va="center", fontsize=18)
    for c in range(b + 1):
        ax.text(c + 0.5, alpha + 0.15, f"col {c}", ha="center", va="bottom", fontsize=14, color="#555555")
    degree = max(len(v) for v in hits.values())
    assert degree == min(math.ceil(b / alpha), alpha)
    worst = max(hits, key=lambda k: len(hits[k]))
    ax.text(b / 2, -0.5, f"One warp load (elements 0\u2026{b - 1}, coloured by bank):\n"
            f"bank {worst} gets elements {', '.join(map(str, hits[worst]))}  \u2192  {degree}-way conflict "
            f"= min(\u2308b/\u03b1\u2309, \u03b1)", ha="center", va="top", fontsize=20)
    ax.set_xlim(-1.6, b + 1.3)
    ax.set_ylim(-2.0, alpha + 0.8)
    ax.set_aspect("equal")

    ax2 = fig.add_axes([0.68, 0.16, 0.30, 0.62])
    bb = 32
    alphas = list(range(1, bb + 1))
    ax2.plot(alphas, [min(math.ceil(bb / a), a) for a in alphas], "o-", color=RED, markersize=5, label="conflict degree")
    ax2.plot(alphas, [math.log2(bb) / a for a in alphas], "s--", color=BLUE, markersize=4, label="(log b)/\u03b1")
    ax2.set_xlabel("\u03b1 (b = 32)")
    ax2.set_title("time \u221d min(\u2308b/\u03b1\u2309, \u03b1) + (log b)/\u03b1\nmultiplicity \u221d M/(\u03b1b)", fontsize=18)
    ax2.grid(True, alpha=0.3)
    ax2.legend(loc="upper right")
    fig.savefig(out, dpi=DPI)


def lookback(out: Path) -> None:
    """Decoupled look-back (Merrill & Garland): each tile publishes {status, value} in one word."""
    states = ["P", "P", "P", "A", "A", "X", "A", "?"]
    values = [11, 9, 14, 6, 8, None, 5, None]  # tile sums: P carries the inclusive prefix
    inclusive = [11, 20, 34]
    fig, ax = canvas("Single pass: decoupled look-back over tile descriptors {status, value}")
    colors = {"P": GREEN, "A": ORANGE, "X": GREY, "?": "white"}
    w, y = 1.9, 4.2
    x0 = 1.0
    for t, s in enumerate(states):
        x = x0 + t * (w + 0.25)
        if s == "?":
            cell(ax, x, y, "", color="#dde7f3", w=w, h=1.8, edge=BLUE)
            ax.text(x + w / 2, y + 1.2, "tile 7", ha="center", fontsize=20, weight="bold", color=BLUE)
            ax.text(x + w / 2, y + 0.55, "looking\nback", ha="center", va="center", fontsize=16, color=BLUE)
            continue
        cell(ax, x, y, "", color=colors[s], w=w, h=1.8)
        ax.text(x + w / 2, y + 1.3, f"tile {t}", ha="center", fontsize=18, color="white" if s != "X" else "black")
        label = {"P": f"P  {inclusive[t]}" if t < 3 else "P", "A": f"A  {values[t]}", "X": "X"}[s]
        ax.text(x + w / 2, y + 0.55, label, ha="center", fontsize=24, weight="bold", color="white" if s != "X" else "black")
    # the walk: 6 (A, add), 5 (X, wait), 4 (A, add), 3 (A, add), 2 (P, add and stop)
    walk = [(6, "+5"), (5, "wait"), (4, "+8"), (3, "+6"), (2, "+34, stop")]
    for i, (t, note) in enumerate(walk):
        xa = x0 + (t + 1) * (w + 0.25) + w / 2
        xb = x0 + t * (w + 0.25) + w / 2
        arrow(ax, (xa, y + 2.0), (xb, y + 2.0), color=RED if note == "wait" else BLUE, rad=-0.5, width=2.2)
        ax.text((xa + xb) / 2, y + 2.95, note, ha="center", fontsize=18, color=RED if note == "wait" else BLUE)
    ax.text(x0, 2.9, "tile 7's exclusive prefix = 34 + 6 + 8 + (tile 5, once published) + 5\n"
            "then tile 7 publishes P = prefix + its own sum, adds the prefix to its tile and stores it",
            fontsize=19, va="center")
    legend = [("X", "not ready: nothing published yet"), ("A", "aggregate: this tile's own sum"),
              ("P", "inclusive prefix: sum of all tiles up to and including this one")]
    for i, (s, text) in enumerate(legend):
        cell(ax, x0, 1.5 - i * 0.75, s, color=colors[s], w=0.6, h=0.55, size=16,
             textcolor="white" if s != "X" else "black", weight="bold")
        ax.text(x0 + 0.8, 1.5 - i * 0.75 + 0.27, text, va="center", fontsize=18)
    ax.text(x0 + 8.5, 1.5, "status and value share one 64-bit word:\na reader never sees a new status\nwith an old value",
            va="top", fontsize=18, color="#333333")
    ax.set_xlim(0, x0 + 8 * (w + 0.25) + 0.5)
    ax.set_ylim(-0.4, y + 3.6)
    fig.savefig(out, dpi=DPI)


# ---- transpose and coalescing ------------------------------------------------------------------


def transpose_tile(out: Path) -> None:
    """Tile (i, j) of `in` through shared memory to tile (j, i) of `out` (seed 000 \u00a73; seed 004 \u00a73.1)."""
    fig, ax = canvas("Tiled transpose: tile (i, j) \u2192 shared memory \u2192 tile (j, i)")
    tiles, ti, tj = 4, 1, 2
    s = 1.0

    def grid(x0, y0, hi_r, hi_c, name, color):
        for r in range(tiles):
            for c in range(tiles):
                hl = (r, c) == (hi_r, hi_c)
                cell(ax, x0 + c * s, y0 + (tiles - 1 - r) * s, f"({r},{c})" if hl else "", color=color if hl else "#f4f5f7",
                     w=s, h=s, size=16, textcolor="white", weight="bold")
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
                ax.text(x0 + c * cs + cs / 2, y0 + (k - 1 - r) * cs + cs / 2, "pad" if pad else str(bank), ha="center",
                        va="center", fontsize=8 if pad else 11, color="white" if col_hl else "#777777")
        ax.text(x0 + width * cs / 2, y0 + k * cs + 0.3, title, ha="center", fontsize=17)

    shared(6.3, 4.0, 8, "tile[8][8]\ncolumn 0 = bank 0: 8-way")
    shared(12.6, 4.0, 9, "tile[8][9] (padded)\ncolumn 0 spans banks 0\u20267")
    arrow(ax, (4.4, 6.5), (6.1, 6.5), color=BLUE, width=2.5)
    arrow(ax, (17.8, 6.5), (20.8, 6.5), color=GREEN, width=2.5)
    ax.text(2.4, 2.9, "\u2460 a warp reads a row\nof the tile (coalesced),\nstores it as a row", ha="center", va="top",
            fontsize=16, color=BLUE)
    ax.text(11.4, 2.9, "\u2461 __syncthreads()\nnumber = the bank of the word (8 drawn, 32 on the GPU)\n"
            "coloured = the column one warp reads in \u2462", ha="center", va="top", fontsize=16)
    ax.text(22.8, 2.9, "\u2462 a warp reads a column\nand writes it as a row\nof out (coalesced)", ha="center", va="top",
            fontsize=16, color=GREEN)
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
        ax.text(c + 0.5, b + 0.15, f"bank {c}", ha="center", va="bottom", fontsize=12, rotation=0, color="#555555")
        ax.text(-0.15, b - 1 - c + 0.5, f"row {c}", ha="right", va="center", fontsize=14, color="#555555")
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


# ---- machine-model plots (labs/transpose/results, measured on an H200) --------------------------


# ---- reduction ---------------------------------------------------------------------------------


def _range_label(members: list[int]) -> str:
    """'0\u20133' for a contiguous run, '0,4,8,12' for a scattered set (what one word holds)."""
    members = sorted(members)
    if members == list(range(members[0], members[-1] + 1)):
        return str(members[0]) if len(members) == 1 else f"{members[0]}\u2013{members[-1]}"
    step = members[1] - members[0]
    if len(members) > 2 and members == list(range(members[0], members[-1] + 1, step)):
        return f"{members[0]}+{step}k"
    return ",".join(map(str, members))


def reduction_addressing(out: Path) -> None:
    """16 shared words, 8 lanes, 8 banks drawn (32 on the GPU): interleaved addressing x[2st] += x[2st+s]
    (seed 004's ref. [14], the block form of Algorithm 6) against sequential addressing x[t] += x[t+s]
    (seed 004 Algorithm 1). Each word shows which inputs it holds; coloured words are the ones the
    active lanes write at that level, with their bank below."""
    n, banks = 16, 8
    fig, ax = canvas("Block tree in shared memory: interleaved vs sequential addressing")
    cs = 0.72

    def panel(x0, title, strides, pair):
        words = [[i] for i in range(n)]
        ax.text(x0 + n * cs / 2, 11.9, title, ha="center", fontsize=21, weight="bold")
        for level, s in enumerate([0] + strides):
            y = 10.3 - level * 2.2
            written = set()
            if s:
                for t in range(n):
                    a, b = pair(t, s)
                    if b < n and a < n:
                        words[a] = words[a] + words[b]
                        written.add(a)
            for w in range(n):
                hl = w in written
                cell(ax, x0 + w * cs, y, _range_label(words[w]) if (hl or not s) else "", w=cs, h=cs * 1.1,
                     color=BANKS(w % banks) if hl else ("#f4f5f7" if s else "white"), size=9 if hl else 11,
                     textcolor="white" if hl else "black", weight="bold" if hl else "normal")
            if s:
                used = [w % banks for w in sorted(written)]
                way = max(used.count(b) for b in set(used))
                ax.text(x0 - 0.2, y + cs * 0.55, f"s={s}", ha="right", va="center", fontsize=15)
                ax.text(x0 + n * cs + 0.2, y + cs * 0.55, f"{way}-way" if way > 1 else "no\nconflict",
                        ha="left", va="center", fontsize=14, color=RED if way > 1 else GREEN, weight="bold")
            else:
                ax.text(x0 - 0.2, y + cs * 0.55, "input", ha="right", va="center", fontsize=15)

    panel(1.2, "interleaved: x[2st] \u2295= x[2st + s]", [1, 2, 4, 8], lambda t, s: (2 * s * t, 2 * s * t + s))
    panel(16.6, "sequential (Algorithm 1): x[t] \u2295= x[t + s]", [8, 4, 2, 1],
          lambda t, s: (t, t + s) if t < s else (n, n))
    ax.text(14.5, 0.1, "Colour = the bank of the word a lane writes (8 banks drawn, 32 on the GPU). Interleaved keeps every "
            "word a contiguous range (in order)\nbut its lanes share banks; sequential is conflict-free, but word 0 meets "
            "word 8 first (0,8, then 0+4k = 0,4,8,12): commutative \u2295 only.", ha="center", fontsize=15)
    ax.set_xlim(-0.5, 31.0)
    ax.set_ylim(-0.5, 12.6)
    fig.savefig(out, dpi=DPI)


def reduction_pipeline_layout(out: Path) -> None:
    """The pipeline's 64-word tree of one warp on the 2 x 32 bank matrix (seed 004 \u00a75.2, Fig. 8): the
    heap layout (node L at word L) against the 2b layout (even L at word L/2, odd L at 32 + ((L-1)/2 + 16)
    mod 32); lane e's operand loads (nodes 2e, 2e+1) marked for lanes 0 and 1."""
    b = 32
    fig, ax = canvas("The pipeline's tree on the bank matrix: heap layout vs Fig. 8's 2b layout")
    cs = 0.78

    def word_2b(node):
        return node // 2 if node % 2 == 0 else b + ((node - 1) // 2 + b // 2) % b

    def draw(y0, title, word_of, note):
        where = {word_of(L): L for L in range(2 * b)}
        ax.text(0.0, y0 + 2 * cs + 0.2, title, ha="left", fontsize=20, weight="bold")
        for row in range(2):
            for bank in range(b):
                L = where[row * b + bank]
                if L in (0, 1):
                    color, tc = RED, "white"            # lane 0's two operands
                elif L in (2, 3):
                    color, tc = ORANGE, "white"         # lane 1's two operands
                elif L in (32, 33):
                    color, tc = "#8e44ad", "white"      # lane 16's: the heap puts them on lane 0's banks
                elif L == 2 * b - 1:
                    color, tc = GREEN, "white"          # the running value
                elif L < b:
                    color, tc = "#dce8f5", "black"      # leaves: the newest row
                else:
                    color, tc = "white", "black"        # inner nodes
                cell(ax, 0.9 + bank * cs, y0 + (1 - row) * cs, L, w=cs, h=cs, color=color, size=11, textcolor=tc)
            ax.text(0.8, y0 + (1 - row) * cs + cs / 2, f"row {row}", ha="right", va="center", fontsize=13)
        ax.text(0.9 + b * cs / 2, y0 - 0.45, note, ha="center", va="top", fontsize=15)

    for bank in range(0, b, 4):
        ax.text(0.9 + bank * cs + cs / 2, 10.25, str(bank), ha="center", fontsize=12, color="#555555")
    ax.text(0.9 + b * cs / 2, 10.75, "bank", ha="center", fontsize=13, color="#555555")
    draw(7.6, "heap: node L at word L", lambda L: L,
         "lane e loads node 2e from bank 2e mod 32: lanes 0 and 16 both hit banks 0 and 1 \u2014 2-way, on both operand loads")
    draw(3.2, "2b layout (Fig. 8): even nodes in row 0, odd nodes in row 1 rotated by 16", word_2b,
         "operand 1 (node 2e) in bank e, operand 2 (node 2e+1) in bank (e+16) mod 32, leaf and result stores also bijections: 0 conflicts")
    ax.text(0.9 + b * cs / 2, 0.3, "operands of lane 0 (red: nodes 0, 1), lane 1 (orange: 2, 3), lane 16 (purple: 32, 33)   "
            "blue: leaves, the newest row   green: node 63, the running value", ha="center", fontsize=14)
    ax.set_xlim(-0.6, 0.9 + b * cs + 0.4)
    ax.set_ylim(-0.2, 11.2)
    fig.savefig(out, dpi=DPI)


def finish(fig, ax, out: Path, xlabel: str, ylabel: str, title: str, grid: str = "both") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis=grid, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


def rows(name: str) -> list[dict[str, str]]:
    with (RESULTS / name).open(newline="") as f:
        return list(csv.DictReader(f))


def resident_warps(ctas: int, warps: int) -> int:
    # H100/H200: at most 64 warps and 32 CTAs resident per SM. The setups' shared memory
    # (2 KiB a warp) never binds first, so whole CTAs fit up to those two limits.
    return min(ctas, 32, 64 // warps) * warps


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
    axes[0].legend(loc="lower right", fontsize=16)
    fig.suptitle("Bandwidth against resident warps per SM (H200; seed 000 \u00a76.1, Fig. 3/4)\n"
                 "hollow: more warps launched than fit (> 64 per SM): they run in waves", fontsize=22)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)


def vector_width(out: Path) -> None:
    data = rows("vector-width.csv")
    configs = []
    for r in data:
        key = (r["setup"], int(r["ctas_per_sm"]), int(r["warps_per_cta"]))
        if key not in configs:
            configs.append(key)
    fig, ax = plt.subplots(figsize=SIZE)
    width = 0.26
    for k, bits in enumerate((32, 64, 128)):
        ys = [next(float(r["gbps"]) for r in data if (r["setup"], int(r["ctas_per_sm"]), int(r["warps_per_cta"])) == c
                   and int(r["vector_bits"]) == bits) for c in configs]
        ax.bar([i + (k - 1) * width for i in range(len(configs))], ys, width, label=f"{bits}-bit loads", color=f"C{k}")
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"S{s}\n{c}\u00d7{w}\n{resident_warps(c, w)} w" for s, c, w in configs], fontsize=15)
    ax.set_ylim(0, 4900)  # room for the legend above the bars
    ax.legend(loc="upper center", ncol=3)
    finish(fig, ax, out, "setup, CTAs per SM \u00d7 warps per CTA, resident warps per SM", "GB/s, global \u2192 shared",
           "Vector width against warps per SM (H200; seed 000 App. A)", grid="y")


def latency(out: Path) -> None:
    data = rows("latency.csv")
    fig, ax = plt.subplots(figsize=SIZE)
    xs = [float(r["footprint_mib"]) for r in data]
    ax.plot(xs, [float(r["ns_per_hop"]) for r in data], "o-", color=BLUE, linewidth=2.5, markersize=9)
    for r in data:
        ax.annotate(r["level"], (float(r["footprint_mib"]), float(r["ns_per_hop"])), textcoords="offset points",
                    xytext=(0, 12), ha="center", fontsize=14, color="#555555")
    ax.axvline(50, color="grey", linestyle=":", linewidth=2)
    ax.text(50, 30, "  L2 \u2248 50 MB", fontsize=16, color="grey")
    ax.set_xscale("log", base=2)
    finish(fig, ax, out, "footprint of the pointer chase (MiB)", "ns per dependent load",
           "\u03bb by pointer chase (one thread, random cycle; H200)")


def block_size(out: Path) -> None:
    data = rows("block-size.csv")
    fig, ax = plt.subplots(figsize=SIZE)
    xs = [int(r["access_bytes"]) for r in data]
    ax.plot(xs, [100 * float(r["fraction_of_best"]) for r in data], "o-", color=BLUE, linewidth=2.5, markersize=9)
    ax.axhline(90, color="grey", linestyle=":", linewidth=2)
    ax.axvline(128, color=RED, linestyle="--", linewidth=1.5)
    ax.text(128, 15, "  B = 128 bytes", color=RED, fontsize=18)
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    finish(fig, ax, out, "bytes per random contiguous chunk", "% of the best read throughput",
           "B: the smallest random access that reaches 90% of the bandwidth (H200)")


FIGURES = {
    "scan-blelloch-tree": blelloch,
    "scan-three-round": three_round,
    "scan-alpha-matrix": alpha_matrix,
    "scan-lookback-states": lookback,
    "transpose-tile": transpose_tile,
    "transpose-diagonal-sweep": diagonal_sweep,
    "access-coalesced-strided": coalescing,
    "reduction-addressing": reduction_addressing,
    "reduction-pipeline-layout": reduction_pipeline_layout,
    "model-setups": setups,
    "model-vector-width": vector_width,
    "model-latency": latency,
    "model-block-size": block_size,
}


def png_width(path: Path) -> int:
    with path.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"slide_figures: {path} is not a PNG")
    return int.from_bytes(head[16:20], "big")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=ROOT / "slides" / "img", help="folder for the PNGs (default slides/img)")
    p.add_argument("--check", type=Path, metavar="DIR", help="draw into DIR and check every PNG's width")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help=f"one of: {', '.join(FIGURES)}")
    args = p.parse_args(argv)
    unknown = [n for n in args.only if n not in FIGURES]
    if unknown:
        p.error(f"unknown figure {', '.join(unknown)}; figures: {', '.join(FIGURES)}")
    out = args.check or args.out
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in args.only or FIGURES:
        path = out / f"{name}.png"
        FIGURES[name](path)
        plt.close("all")
        width = png_width(path)
        if width < MIN_WIDTH:
            print(f"slide_figures: {path} is {width} px wide, fewer than {MIN_WIDTH}")
            bad += 1
        else:
            print(f"wrote {path} ({width} px wide)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
