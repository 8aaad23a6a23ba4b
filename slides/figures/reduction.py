"""The reduction deck's diagrams: interleaved against sequential addressing and the pipeline's 2b
layout after seed 004 §5.1-5.2 (Algorithm 1, Fig. 8)."""
from __future__ import annotations

import math
from pathlib import Path

from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: F401

from _draw import (BANKS, BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, finish, plt,  # noqa: F401
                   resident_warps, rows)


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
    """8 shared words, 4 lanes, 4 banks drawn (32 on the GPU): interleaved addressing x[2st] += x[2st+s]
    (seed 004's ref. [14], the block form of Algorithm 6) against sequential addressing x[t] += x[t+s]
    (seed 004 Algorithm 1). Each word shows which inputs it holds; coloured words are the ones the
    active lanes write at that level (colour = bank)."""
    n, banks = 8, 4
    fig, ax = canvas("Block tree in shared memory: interleaved vs sequential addressing")
    cs, gap = 1.25, 1.6

    def panel(x0, title, strides, pair):
        words = [[i] for i in range(n)]
        ax.text(x0 + n * cs / 2, 9.3, title, ha="center", fontsize=20, weight="bold")
        for level, s in enumerate([0] + strides):
            y = 7.6 - level * 2.0
            written = set()
            if s:
                for t in range(n):
                    a, b = pair(t, s)
                    if b < n and a < n:
                        words[a] = words[a] + words[b]
                        written.add(a)
            for w in range(n):
                hl = w in written
                cell(ax, x0 + w * cs, y, _range_label(words[w]) if (hl or not s) else "", w=cs, h=1.2,
                     color=BANKS(w % banks) if hl else ("#f4f5f7" if s else "white"), size=18,
                     textcolor="white" if hl else "black")
            label = f"s = {s}" if s else "input"
            ax.text(x0 - 0.15, y + 0.6, label, ha="right", va="center", fontsize=18)
            if s:
                used = [w % banks for w in sorted(written)]
                way = max(used.count(b) for b in set(used))
                ax.text(x0 + n * cs + 0.15, y + 0.6, f"{way}-way" if way > 1 else "free", ha="left", va="center",
                        fontsize=18, color=RED if way > 1 else GREEN, weight="bold")

    panel(gap, "interleaved: x[2st] \u2295= x[2st + s]", [1, 2, 4], lambda t, s: (2 * s * t, 2 * s * t + s))
    panel(gap + n * cs + 2 * gap + 0.4, "sequential: x[t] \u2295= x[t + s]", [4, 2, 1],
          lambda t, s: (t, t + s) if t < s else (n, n))
    ax.text(0.0, 0.1, "colour = the bank of a word a lane writes (4 drawn, 32 on the GPU); "
            "a word shows the inputs it holds", ha="left", fontsize=18)
    ax.set_xlim(0.0, 2 * n * cs + 4 * gap + 1.2)
    ax.set_ylim(-0.3, 10.0)
    fig.savefig(out, dpi=DPI)


def reduction_pipeline_layout(out: Path) -> None:
    """The pipeline's 64-word tree of one warp on the 2 x 32 bank matrix (seed 004 \u00a75.2, Fig. 8): the
    heap layout (node L at word L) against the 2b layout (even L at word L/2, odd L at 32 + ((L-1)/2 + 16)
    mod 32); lane e's operand loads (nodes 2e, 2e+1) marked for lanes 0, 1 and 16. Wide (16 x 7 in) and
    shown full width (w:1160): every label >= 18 px on the slide."""
    b = 32
    fig = plt.figure(figsize=(16, 7))
    ax = fig.add_axes([0.005, 0.0, 0.99, 1.0])
    ax.set_axis_off()
    cs = 1.0

    def word_2b(node):
        return node // 2 if node % 2 == 0 else b + ((node - 1) // 2 + b // 2) % b

    def draw(y0, title, word_of, note):
        where = {word_of(L): L for L in range(2 * b)}
        ax.text(0.0, y0 + 2 * cs + 0.25, title, ha="left", va="bottom", fontsize=21, weight="bold")
        for row in range(2):
            for bank in range(b):
                L = where[row * b + bank]
                if L in (0, 1):
                    color, tc = RED, "white"            # lane 0's two operands
                elif L in (2, 3):
                    color, tc = ORANGE, "white"         # lane 1's two operands
                elif L in (32, 33):
                    color, tc = "#8e44ad", "white"      # lane 16's
                elif L == 2 * b - 1:
                    color, tc = GREEN, "white"          # the running value
                elif L < b:
                    color, tc = "#dce8f5", "black"      # leaves: the newest row
                else:
                    color, tc = "white", "black"        # inner nodes
                cell(ax, bank * cs, y0 + (1 - row) * cs, L, w=cs, h=cs, color=color, size=18, textcolor=tc)
        ax.text(0.0, y0 - 0.2, note, ha="left", va="top", fontsize=18)

    for bank in range(0, b, 4):
        ax.text(bank * cs + cs / 2, 10.35, str(bank), ha="center", fontsize=18, color="#555555")
    ax.text(b * cs, 10.35, "bank", ha="right", fontsize=18, color="#555555")
    draw(7.2, "heap: node L at word L (top row: words 0-31, bottom: 32-63)", lambda L: L,
         "lane e loads nodes 2e and 2e + 1: lanes 0 and 16 both hit banks 0 and 1 (2-way)")
    draw(2.6, "2b layout (Fig. 8): even nodes in the top row, odd ones below, rotated by 16", word_2b,
         "lane e: node 2e in bank e, node 2e + 1 in bank (e + 16) mod 32")
    ax.text(0.0, 0.35, "operands of lane 0: red, lane 1: orange, lane 16: purple; blue: leaves; green: node 63",
            ha="left", fontsize=18)
    ax.set_xlim(-0.1, b * cs + 0.1)
    ax.set_ylim(0.0, 11.0)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "reduction-addressing": reduction_addressing,
    "reduction-pipeline-layout": reduction_pipeline_layout,
}
