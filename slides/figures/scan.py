"""The scan deck's diagrams: the Blelloch tree after seed 003 (GPU Gems 3 ch. 39), three-round prefix
sums after seed 000 §4, the alpha x (b+1) matrix after seed 004 §6.1 (Algorithm 8, Fig. 11), the
look-back states after Merrill & Garland."""
from __future__ import annotations

import math
from pathlib import Path

from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: F401

from _draw import (BANKS, BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, finish, plt,  # noqa: F401
                   resident_warps, rows)


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
    ax.text(x0 + n / 2, top + 1.15, "index  0 \u2026 7", ha="center", fontsize=18, color="#555555")
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
        ax.text(c + 0.93, alpha - 1 - r + 0.07, f"b{bank}", ha="right", va="bottom", fontsize=18,
                color="white" if in_load else "#666666")
    for r in range(alpha):
        cell(ax, b, alpha - 1 - r, "pad", color="#eeeeee", size=18, textcolor="#777777")
        ax.text(-0.2, alpha - 1 - r + 0.5, f"row {r}", ha="right", va="center", fontsize=18)
    for c in range(b + 1):
        ax.text(c + 0.5, alpha + 0.15, f"col {c}", ha="center", va="bottom", fontsize=18, color="#555555")
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
            ax.text(x + w / 2, y + 0.55, "looking\nback", ha="center", va="center", fontsize=18, color=BLUE)
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
        cell(ax, x0, 1.5 - i * 0.75, s, color=colors[s], w=0.6, h=0.55, size=18,
             textcolor="white" if s != "X" else "black", weight="bold")
        ax.text(x0 + 0.8, 1.5 - i * 0.75 + 0.27, text, va="center", fontsize=18)
    ax.text(x0 + 8.5, 1.5, "status and value share one 64-bit word:\na reader never sees a new status\nwith an old value",
            va="top", fontsize=18, color="#333333")
    ax.set_xlim(0, x0 + 8 * (w + 0.25) + 0.5)
    ax.set_ylim(-0.4, y + 3.6)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "scan-blelloch-tree": blelloch,
    "scan-three-round": three_round,
    "scan-alpha-matrix": alpha_matrix,
    "scan-lookback-states": lookback,
}
