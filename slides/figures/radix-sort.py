"""The radix-sort deck's diagrams: seed 003's 1-bit split on 16 keys, the LSD passes that need it
stable, a digit pass as seed 000 §4's colored prefix sums (count, scan, scatter), digit4's two
counter layouts on the banks, and onesweep's look-back over one word per (tile, digit)."""
from __future__ import annotations

from pathlib import Path

from _draw import BLUE, DPI, GREEN, GREY, ORANGE, RED, arrow, canvas, cell, plt  # noqa: F401

# 16 distinct 4-bit keys: the split and the LSD passes are drawn on them.
KEYS16 = [13, 6, 9, 2, 14, 3, 8, 5, 0, 11, 7, 12, 4, 15, 1, 10]
FALSE_COLOR, TRUE_COLOR = "#4a7fb5", "#e0913a"        # bit 0 / bit 1
DIGIT_COLORS = ["#4a7fb5", "#e0913a", "#4f9d5d", "#8e44ad"]


def split_pass(keys: list[int], bit: int) -> dict[str, list[int]]:
    """Seed 003's split of one bit: b, e = 1 - b, f = exclusive scan of e, t, destination, output."""
    n = len(keys)
    b = [(k >> bit) & 1 for k in keys]
    e = [1 - x for x in b]
    f, run = [], 0
    for x in e:
        f.append(run)
        run += x
    total = f[-1] + e[-1]
    t = [i - f[i] + total for i in range(n)]
    dest = [t[i] if b[i] else f[i] for i in range(n)]
    out = [0] * n
    for i in range(n):
        out[dest[i]] = keys[i]
    return {"b": b, "e": e, "f": f, "t": t, "dest": dest, "out": out, "total": [total]}


def radix_sort_split(out: Path) -> None:
    """Bit 0 of the 16 keys: the rows seed 003's kernels compute, and where each key goes."""
    s = split_pass(KEYS16, 0)
    total = s["total"][0]
    fig, ax = canvas(f"The split of bit 0 on 16 keys: falses first, then trues (totalFalses = {total})")
    x0, w, h = 3.9, 0.9, 0.78
    rows = [("key", KEYS16, True),
            ("e = 1 \u2212 bit (false)", s["e"], False),
            ("f = exclusive scan(e)", s["f"], False),
            (f"t = i \u2212 f + {total}", s["t"], False),
            ("dest = bit ? t : f", s["dest"], False)]
    ys = [8.2, 7.2, 6.2, 5.2, 4.2]
    for i in range(16):
        ax.text(x0 + i * w + w / 2, 9.2, str(i), ha="center", va="center", fontsize=18, color="#666666")
    ax.text(x0 - 0.2, 9.2, "i", ha="right", va="center", fontsize=18, color="#666666")
    for (label, values, colored), y in zip(rows, ys):
        ax.text(x0 - 0.2, y + h / 2, label, ha="right", va="center", fontsize=18)
        for i, v in enumerate(values):
            one = s["b"][i] == 1
            if colored:
                cell(ax, x0 + i * w, y, v, w=w, h=h, color=TRUE_COLOR if one else FALSE_COLOR, size=20,
                     textcolor="white", weight="bold")
            else:
                used = (label.startswith("f") and not one) or (label.startswith("t") and one) or label[0] in "de"
                cell(ax, x0 + i * w, y, v, w=w, h=h, color="#eef2f7" if used else "white", size=20,
                     textcolor="black" if used else "#999999")
    y_out = 0.9
    ax.text(x0 - 0.2, y_out + h / 2, "out[dest] = key", ha="right", va="center", fontsize=18)
    for j, v in enumerate(s["out"]):
        one = (v & 1) == 1
        cell(ax, x0 + j * w, y_out, v, w=w, h=h, color=TRUE_COLOR if one else FALSE_COLOR, size=20,
             textcolor="white", weight="bold")
    for i, d in enumerate(s["dest"]):
        one = s["b"][i] == 1
        arrow(ax, (x0 + i * w + w / 2, 4.15), (x0 + d * w + w / 2, y_out + h + 0.05),
              color=TRUE_COLOR if one else FALSE_COLOR, width=1.4)
    ax.text(x0 + 16 * w + 0.25, 5.7, "grey:\ncomputed,\nnot used", ha="left", va="center", fontsize=18,
            color="#777777")
    ax.text(x0 + 16 * w + 0.25, 3.9, "bit 0 of key:\nblue 0,\norange 1\n\nboth sides\nkeep their\ninput order", ha="left",
            va="top", fontsize=18)
    ax.set_xlim(0.1, x0 + 16 * w + 2.2)
    ax.set_ylim(0.5, 9.7)
    fig.savefig(out, dpi=DPI)


def radix_sort_lsd(out: Path) -> None:
    """The four passes of a 4-bit LSD sort of the 16 keys, in binary: after pass b the keys are sorted
    by their bits 0..b, because every pass keeps the order the passes before it made among equal bits."""
    fig, ax = canvas("LSD: four stable splits sort the 16 keys by bits 0, then 0\u20131, then 0\u20132, then all")
    x0, w, h = 2.35, 1.02, 0.95
    rows, keys = [("input", KEYS16, -1)], KEYS16
    for bit in range(4):
        keys = split_pass(keys, bit)["out"]
        rows.append((f"after bit {bit}", keys, bit))
    for r, (label, values, bit) in enumerate(rows):
        y = 8.0 - r * 1.6
        ax.text(x0 - 0.2, y + h / 2, label, ha="right", va="center", fontsize=20)
        for i, v in enumerate(values):
            cell(ax, x0 + i * w, y, "", w=w, h=h, color="white")
            for k in range(4):        # bit 3 first (left) ... bit 0 last (right)
                b = 3 - k
                sorted_bit = b <= bit
                color = RED if b == bit else ("black" if sorted_bit else "#aaaaaa")
                ax.text(x0 + i * w + 0.21 + k * 0.2, y + h / 2, str((v >> b) & 1), ha="center", va="center",
                        fontsize=18, color=color, weight="bold" if b == bit else "normal", family="DejaVu Sans Mono")
    ax.text(x0, 0.45, "red: the bit this pass sorted by;  black: bits already in order;  grey: not yet sorted",
            fontsize=18, ha="left", va="center")
    ax.set_xlim(0, x0 + 16 * w + 0.1)
    ax.set_ylim(0.0, 9.3)
    fig.savefig(out, dpi=DPI)


def radix_sort_digit_pass(out: Path) -> None:
    """One digit pass as colored prefix sums (seed 000 §4), with r = 2 (4 colors; digit4 has 16): each
    tile counts its digits, one block scans the 4 x G count matrix digit-major, each tile scatters its
    keys to offset(d, g) + rank."""
    digits = [2, 0, 3, 1, 0, 2, 1, 0, 0, 3, 2, 1, 3, 3, 0, 1, 2, 0]
    tiles, per = 3, 6
    fig, ax = canvas("A digit pass = colored prefix sums + scatter (2-bit digits here; digit4: 4-bit)")
    w, h, x0 = 0.82, 0.75, 3.0
    gap = 0.5

    def tile_x(g: int, j: int) -> float:
        return x0 + g * (per * w + gap) + j * w

    ax.text(x0 - 0.2, 8.7 + h / 2, "digits", ha="right", va="center", fontsize=18)
    counts = [[0] * 4 for _ in range(tiles)]
    rank_in_tile = []
    for g in range(tiles):
        ax.text(tile_x(g, per / 2), 9.75, f"tile g = {g}", ha="center", fontsize=18, weight="bold")
        for j in range(per):
            d = digits[g * per + j]
            rank_in_tile.append(counts[g][d])
            counts[g][d] += 1
            cell(ax, tile_x(g, j), 8.7, d, w=w, h=h, color=DIGIT_COLORS[d], size=20, textcolor="white", weight="bold")
    # 1. upsweep: per-tile counts
    ax.text(x0 - 0.2, 7.2 + h / 2, "1. count", ha="right", va="center", fontsize=18)
    for g in range(tiles):
        for d in range(4):
            cell(ax, tile_x(g, d) + w, 7.2, counts[g][d], w=w, h=h, color=DIGIT_COLORS[d], size=20, textcolor="white")
        arrow(ax, (tile_x(g, per / 2), 8.65), (tile_x(g, per / 2), 8.0))
    # 2. spine: the 4 x G matrix read digit-major, exclusive scan
    mx, mw = x0, w * 1.05
    ax.text(x0 - 0.2, 5.2 + h / 2, "2. scan", ha="right", va="center", fontsize=18)
    ax.text(x0 - 0.2, 4.2 + h / 2, "offset", ha="right", va="center", fontsize=18)
    ax.text(x0 - 0.2, 6.1, "(d, g)", ha="right", va="center", fontsize=18, color="#555555")
    run, offsets = 0, {}
    for d in range(4):
        for g in range(tiles):
            k = d * tiles + g
            hl = g == 1
            cell(ax, mx + k * mw, 5.2, counts[g][d], w=w, h=h, color=DIGIT_COLORS[d], size=20, textcolor="white")
            cell(ax, mx + k * mw, 4.2, run, w=w, h=h, color="#dde7f3" if hl else "white", size=20,
                 weight="bold" if hl else "normal")
            ax.text(mx + k * mw + w / 2, 6.1, f"{d},{g}", ha="center", va="center", fontsize=18, color="#555555")
            offsets[(d, g)] = run
            run += counts[g][d]
    ax.text(mx + 12 * mw + 0.25, 4.7, "offset(d, g) = keys of smaller digits\n+ keys of digit d in tiles before g",
            ha="left", va="center", fontsize=18)
    # 3. downsweep: scatter to offset(d, g) + rank of the key among its tile's keys of digit d
    ax.text(x0 - 0.2, 1.3 + h / 2, "3. scatter", ha="right", va="center", fontsize=18)
    ax.text(x0 - 0.2, 0.75, "from tile", ha="right", va="center", fontsize=18, color="#555555")
    source, out_digits, dest = [0] * len(digits), [0] * len(digits), []
    for i, d in enumerate(digits):
        g = i // per
        dest.append(offsets[(d, g)] + rank_in_tile[i])
        out_digits[dest[-1]], source[dest[-1]] = d, g
    for j, d in enumerate(out_digits):
        hl = source[j] == 1
        cell(ax, x0 + j * w, 1.3, d, w=w, h=h, color=DIGIT_COLORS[d], size=20, textcolor="white", weight="bold")
        ax.text(x0 + j * w + w / 2, 0.75, str(source[j]), ha="center", va="center", fontsize=18,
                color=BLUE if hl else "#888888", weight="bold" if hl else "normal")
    for d in range(4):                 # tile 1's offsets: where its keys of digit d start
        k = d * tiles + 1
        arrow(ax, (mx + k * mw + w / 2, 4.15), (x0 + offsets[(d, 1)] * w + w / 2, 1.3 + h + 0.05),
              color=DIGIT_COLORS[d], width=2.0)
    ax.text(16.4, 3.0, "tile 1's keys of digit d\nstart at offset(d, 1),\nin input order", ha="left",
            va="center", fontsize=18, color=BLUE)
    ax.set_xlim(0, 21.5)
    ax.set_ylim(0.3, 10.4)
    fig.savefig(out, dpi=DPI)


def radix_sort_counters(out: Path) -> None:
    """One counting step of digit4's upsweep with every lane on digit 5, on the bank matrix: per-lane
    counters counts[d * 32 + lane] (one word per bank) against per-thread counters counts[lane * 16 + d]
    (lanes 0, 2, 4, ... in bank 5, lanes 1, 3, ... in bank 21: 16-way)."""
    fig = plt.figure(figsize=(16, 7))
    ax = fig.add_axes([0.0, 0.0, 1.0, 0.88])
    ax.set_axis_off()
    fig.suptitle("Counting one digit per lane: which word of which bank each lane touches", fontsize=28, y=0.97)
    c = 0.21
    rows = 16

    def panel(x0: float, title: str, word_of, note: str) -> None:
        hit = {word_of(lane): lane for lane in range(32)}
        ax.text(x0, rows * c + 0.55, title, ha="left", va="bottom", fontsize=20, weight="bold")
        for row in range(rows):
            for bank in range(32):
                word = row * 32 + bank
                lit = word in hit
                ax.add_patch(plt.Rectangle((x0 + bank * c, (rows - 1 - row) * c + 0.2), c, c,
                                           facecolor=RED if lit else "white", edgecolor="#bbbbbb", linewidth=0.6))
        for bank in (0, 5, 16, 21, 31):
            ax.text(x0 + bank * c + c / 2, rows * c + 0.25, str(bank), ha="center", fontsize=18, color="#555555")
        ax.text(x0, -0.25, note, ha="left", va="top", fontsize=18)

    panel(1.5, "per lane: counts[d \u00b7 32 + lane]", lambda lane: 5 * 32 + lane,
          "lane l: word 5 \u00b7 32 + l, bank l\n1 wavefront: conflict-free for any digits")
    panel(8.8, "per thread: counts[lane \u00b7 16 + d]", lambda lane: lane * 16 + 5,
          "lane l: word 16 l + 5, banks 5 and 21 only\n16 words each: 16 wavefronts, 15 excess")
    ax.text(1.4, rows * c + 0.25, "bank", ha="right", fontsize=18, color="#555555")
    ax.text(1.4, 0.2 + rows * c / 2, "every\nlane on\ndigit 5", ha="right", va="center", fontsize=18)
    ax.set_xlim(0.0, 15.7)
    ax.set_ylim(-1.6, rows * c + 1.2)
    fig.savefig(out, dpi=DPI)


def radix_sort_lookback(out: Path) -> None:
    """Onesweep's look-back: one word per (tile, digit); thread d of tile 7 walks back over digit d's
    words, adding aggregates, until it finds an inclusive prefix. Four digits of 2^r drawn."""
    # (status, value) per digit row, tiles 0..6
    state = {
        0: [("P", 9), ("P", 17), ("P", 30), ("P", 38), ("P", 40), ("P", 47), ("A", 2)],
        1: [("P", 5), ("P", 12), ("P", 20), ("P", 26), ("A", 4), ("A", 0), ("A", 3)],
        2: [("P", 11), ("P", 19), ("P", 28), ("P", 33), ("A", 6), ("A", 5), ("X", None)],
        3: [("P", 7), ("P", 15), ("A", 8), ("A", 3), ("A", 5), ("A", 2), ("A", 4)],
    }
    colors = {"P": GREEN, "A": ORANGE, "X": GREY}
    fig, ax = canvas("Onesweep's look-back: one word per (tile, digit), one thread per digit")
    w, h, x0 = 1.55, 0.95, 2.2
    for t in range(8):
        ax.text(x0 + t * (w + 0.15) + w / 2, 9.3, f"tile {t}", ha="center", fontsize=19, weight="bold",
                color=BLUE if t == 7 else "black")
    for d, words in state.items():
        y = 8.0 - d * 1.5
        ax.text(x0 - 0.2, y + h / 2, f"digit {d}", ha="right", va="center", fontsize=19)
        for t, (s, v) in enumerate(words):
            label = "X" if s == "X" else f"{s} {v}"
            cell(ax, x0 + t * (w + 0.15), y, label, w=w, h=h, color=colors[s], size=20,
                 textcolor="black" if s == "X" else "white", weight="bold")
        # tile 7, thread d: walk back
        xs = x0 + 7 * (w + 0.15)
        total, t = 0, 6
        while t >= 0:
            s, v = words[t]
            if s == "X":
                result = "waits"
                break
            total += v
            if s == "P":
                result = f"= {total}"
                break
            t -= 1
        cell(ax, xs, y, result, w=w, h=h, color="#dde7f3", size=20, edge=BLUE, textcolor=BLUE, weight="bold")
        stop = t
        arrow(ax, (xs + w / 2, y - 0.22), (x0 + stop * (w + 0.15) + w / 2, y - 0.22),
              color=RED if result == "waits" else BLUE, width=2.2)
    ax.text(x0 - 1.9, 1.25, "P: digit d's inclusive prefix up to this tile: add it and stop;   A: this tile's own "
            "count: add it, go on;\nX: nothing published yet: poll again.   Each tile publishes its counts (A) "
            "before it looks back:\nthe tiles behind it wait for its counts, never for its walk.", fontsize=18,
            va="center", linespacing=1.4)
    ax.set_xlim(0, x0 + 8 * (w + 0.15) + 0.3)
    ax.set_ylim(0.0, 9.9)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "radix-sort-split": radix_sort_split,
    "radix-sort-lsd": radix_sort_lsd,
    "radix-sort-digit-pass": radix_sort_digit_pass,
    "radix-sort-counters": radix_sort_counters,
    "radix-sort-lookback": radix_sort_lookback,
}
