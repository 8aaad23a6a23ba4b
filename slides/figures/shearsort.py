"""The ShearSort deck's diagrams: the tile on seed 000's bank matrix (§3, Fig. 1) and which walks
conflict, ShearSort's phases on an 8 x 8 tile of 0s and 1s (§5 plus the final column phase), a
column phase by in-place transposition (Appendix B, Algorithm 2), the 32 x 33 layout, merge-path
diagonals (000 §5's pointer to Green et al.) and seed 004's d-way heap (§7.3.2), drawn with 8 banks
and 8-key columns (the GPU has 32 of each); and, from the CPU tables in labs/shearsort/results/, the
round count, every tile stage's shared wavefronts and the d-way merge's passes against its warps per
SM, drawn large enough for a slide (RESULTS.md shows the same tables as `gpulab measure` plots)."""
from __future__ import annotations

import csv
from pathlib import Path

from _draw import BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, plt  # noqa: F401

W = 8  # banks drawn (32 on the GPU)


# ---- ShearSort on a w x w tile of the bank matrix (key a = w c + i: column c, bank i) --------------------------

def _phases(tile: list[int], w: int, rounds: int) -> list[tuple[str, list[int], str]]:
    """(title, tile after it, what the column arrows say) for the input, every phase and the final phase."""
    t = list(tile)
    out = [("input", list(t), "")]
    for r in range(1, rounds + 1):
        for c in range(w):
            t[w * c:w * c + w] = sorted(t[w * c:w * c + w], reverse=c % 2 == 1)
        out.append((f"round {r}: columns", list(t), "alternate"))
        for i in range(w):
            t[i::w] = sorted(t[i::w])
        out.append((f"round {r}: rows", list(t), ""))
    for c in range(w):
        t[w * c:w * c + w] = sorted(t[w * c:w * c + w])
    out.append(("final: columns", list(t), "ascending"))
    return out


# A tile of 44 ones the seeds' three rounds leave unsorted: columns holding both keys go 8 -> 3 -> 2 -> 1
# after the row phases, and the last one (column 3) is still out of order when the seeds stop.
PHASE_TILE_ROWS = [  # bank i (row) by column c, as the bank matrix shows it
    "00101011",
    "11100011",
    "11011111",
    "10101010",
    "11111100",
    "11101010",
    "11011110",
    "01000001",
]


def _tile_from_rows(rows: list[str]) -> list[int]:
    w = len(rows)
    return [int(rows[a % w][a // w]) for a in range(w * w)]


def shearsort_phases(out: Path) -> None:
    """ShearSort's phases on an 8 x 8 tile of 0s and 1s on the bank matrix: log2 8 = 3 rounds of
    (columns alternating, rows ascending), then the final ascending column phase the seeds leave out."""
    w = W
    fig, ax = canvas("ShearSort on an 8 x 8 tile of 0s and 1s: rows are banks, a column is 8 keys")
    panels = _phases(_tile_from_rows(PHASE_TILE_ROWS), w, 3)
    titles = ["input", "1: columns", "1: rows", "2: columns", "2: rows", "3: columns", "3: rows", "final: columns"]
    gap, row_h = 2.0, w + 2.6
    last = len(panels) - 1
    for k, (_, t, arrows) in enumerate(panels):
        x0 = (k % 4) * (w + gap)
        y0 = (1 - k // 4) * row_h + 1.2
        for c in range(w):
            column = t[w * c:w * c + w]
            for i in range(w):
                cell(ax, x0 + c, y0 + (w - 1 - i), "", color=BLUE if column[i] else "white")
            if len(set(column)) > 1:
                ax.add_patch(plt.Rectangle((x0 + c, y0), 1, w, fill=False, edgecolor=GREEN if k == last else RED,
                                           linewidth=3.5))
            if arrows:
                down = arrows == "ascending" or c % 2 == 0
                ax.text(x0 + c + 0.5, y0 - 0.6, "\u25bc" if down else "\u25b2", ha="center", va="center",
                        fontsize=18, color="#333333")
        color = GREEN if k == last else "black"
        ax.text(x0 + w / 2, y0 + w + 0.25, titles[k], ha="center", va="bottom", fontsize=20, color=color,
                weight="bold" if k == last else "normal")
        if k == last - 1:
            ax.text(x0 + w / 2, y0 - 0.6, "the seeds stop here", ha="center", va="center", fontsize=18, color=RED,
                    weight="bold")
    tx = 4 * (w + gap) + 0.2
    notes = ["blue: 1, white: 0", "", "red frame: a column", "holding 0s and 1s", "",
             "\u25bc column sorted down", "the banks (ascending),", "\u25b2 up (descending)", "",
             "3 rounds = log2 8,", "then one more column", "phase, all ascending"]
    for k, line in enumerate(notes):
        ax.text(tx, 2 * row_h + 0.6 - 1.15 * k, line, ha="left", va="top", fontsize=18)
    ax.set_xlim(-0.3, tx + 12.5)
    ax.set_ylim(0.0, 2 * row_h + 1.3)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


# ---- the bank matrix: which walks conflict -------------------------------------------------------------------

def shearsort_bank_matrix(out: Path) -> None:
    """Seed 000 §3 on an 8-bank tile: key a = 8c + i sits in bank i of column c. Sorting column c in
    place puts every lane in the same bank at each step; sorting row r (bank r) puts the lanes in
    distinct banks; after a transpose, column c is row c and is walked like one."""
    w = W
    fig, ax = canvas("The tile on the bank matrix: a column walk conflicts, a row walk does not")
    gap = 3.2

    def panel(x0, title, pick, color, note, note_color):
        for c in range(w):
            for i in range(w):
                key = w * c + i
                hit = pick(c, i)
                cell(ax, x0 + c, w - 1 - i, key, color=color if hit else "white", size=18,
                     textcolor="white" if hit else "black")
        ax.text(x0 + w / 2, w + 0.3, title, ha="center", va="bottom", fontsize=20, weight="bold")
        ax.text(x0 + w / 2, -0.5, note, ha="center", va="top", fontsize=18, color=note_color, weight="bold")

    for i in range(w):
        ax.text(-0.2, w - 1 - i + 0.5, f"bank {i}", ha="right", va="center", fontsize=18, color="#555555")
    panel(0, "key a in bank a mod 8", lambda c, i: False, None, "column c: keys 8c ... 8c + 7\nrow r: bank r", "black")
    panel(w + gap, "column phase in place, step 2", lambda c, i: i == 2, RED,
          "lane c reads key 8c + 2:\none bank, 8-way conflict", RED)
    panel(2 * (w + gap), "row phase, step 2", lambda c, i: c == 2, GREEN,
          "lane r reads key r + 16:\n8 banks, conflict-free", GREEN)
    ax.text(-2.6, -2.6, "32 banks on the GPU: the in-place column walk is 32-way. Transposed, column c is "
            "row c and is walked like a row.", ha="left", va="top", fontsize=18)
    ax.set_xlim(-3.0, 3 * w + 2 * gap + 0.3)
    ax.set_ylim(-3.6, w + 1.4)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


def shearsort_transpose(out: Path) -> None:
    """A column phase by transposition (seed 000 §5, Appendix B Algorithm 2) on the 8-bank tile. Left:
    step i = 2 of the in-place sweep, lane c swapping word 9c + 2 (column c, bank c + 2) with word
    9c + 16 (column c + 2, bank c): both sets of words lie in distinct banks. Right: after the sweep,
    the keys of column 2 sit in bank 2 (row 2), where lane 2 walks them like any row."""
    w = W
    i = 2
    fig, ax = canvas("A column phase by transposing in place (seed 000 App. B, Algorithm 2)")
    gap = 4.0
    for b in range(w):
        ax.text(-0.2, w - 1 - b + 0.5, f"bank {b}", ha="right", va="center", fontsize=18, color="#555555")

    # left: step i of the sweep; word (column c, bank c + i) <-> word (column c + i, bank c)
    upper = {(c, c + i): c for c in range(w - i)}
    lower = {(c + i, c): c for c in range(w - i)}
    for c in range(w):
        for b in range(w):
            if (c, b) in upper:
                cell(ax, c, w - 1 - b, f"L{upper[(c, b)]}", color=ORANGE, size=18, textcolor="white")
            elif (c, b) in lower:
                cell(ax, c, w - 1 - b, f"L{lower[(c, b)]}", color=BLUE, size=18, textcolor="white")
            else:
                cell(ax, c, w - 1 - b, "", color=GREY if c == b else "white")
    ax.text(w / 2, w + 0.3, f"Algorithm 2, step i = {i}: lanes 0 \u2026 {w - i - 1}", ha="center", va="bottom",
            fontsize=20, weight="bold")
    ax.text(w / 2, -0.5, "orange: banks c + 2, blue: banks c\nboth sets distinct: conflict-free", ha="center",
            va="top", fontsize=18, color=GREEN, weight="bold")

    # right: the tile after the whole sweep; key 8c + b now at column b, bank c
    x0 = w + gap
    for c in range(w):
        for b in range(w):
            key = w * b + c          # the key that now sits at (column c, bank b)
            hit = b == 2
            cell(ax, x0 + c, w - 1 - b, key, color=GREEN if hit else "white", size=18,
                 textcolor="white" if hit else "black")
    ax.text(x0 + w / 2, w + 0.3, "after the sweep", ha="center", va="bottom", fontsize=20, weight="bold")
    ax.text(x0 + w / 2, -0.5, "column 2's keys (16 \u2026 23) are row 2:\nlane 2 sorts them like a row",
            ha="center", va="top", fontsize=18, color=GREEN, weight="bold")

    tx = 2 * w + gap + 1.0
    notes = ["A column phase:", "1. transpose in place", "2. sort every row", "3. transpose back", "",
             "a sweep: w \u2212 1 steps", "(31 on the GPU)", "", "no extra words:", "the tile stays w\u00b2"]
    for k, line in enumerate(notes):
        ax.text(tx, w - 0.1 - 0.85 * k, line, ha="left", va="top", fontsize=18)
    ax.set_xlim(-2.6, tx + 7.0)
    ax.set_ylim(-1.9, w + 1.5)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


def shearsort_padded(out: Path) -> None:
    """The tile stored 8 x 9 (key 8c + i at word 9c + i; 32 x 33 on the GPU): the words of a column
    walk and of a row walk, each on the bank matrix of the 72 words."""
    w = W
    fig, ax = canvas("The tile stored 8 x 9: key 8c + i at word 9c + i, both walks conflict-free")
    gap = 3.0

    def panel(x0, title, pick, note):
        where = {}
        for c in range(w):
            for i in range(w):
                where[(w + 1) * c + i] = w * c + i
        for word in range(w * (w + 1)):
            bank, col = word % w, word // w
            key = where.get(word)
            hit = key is not None and pick(key)
            cell(ax, x0 + col, w - 1 - bank, "" if key is None else key,
                 color=GREEN if hit else (GREY if key is None else "white"), size=18,
                 textcolor="white" if hit else "black")
        ax.text(x0 + (w + 1) / 2, w + 0.3, title, ha="center", va="bottom", fontsize=20, weight="bold")
        ax.text(x0 + (w + 1) / 2, -0.5, note, ha="center", va="top", fontsize=18, color=GREEN, weight="bold")

    for i in range(w):
        ax.text(-0.2, w - 1 - i + 0.5, f"bank {i}", ha="right", va="center", fontsize=18, color="#555555")
    panel(0, "column phase, step 2", lambda a: a % w == 2, "keys 8c + 2: banks (c + 2) mod 8")
    panel(w + 1 + gap, "row phase, step 2", lambda a: a // w == 2, "keys r + 16: banks (r + 2) mod 8")
    ax.text(2 * (w + 1) + gap + 1.2, w - 0.5, "grey: the pad word\nof each column\n\n33/32 of the words\non the GPU,\n"
            "no transposes", ha="left", va="top", fontsize=18)
    ax.set_xlim(-2.6, 2 * (w + 1) + gap + 8.5)
    ax.set_ylim(-1.8, w + 1.5)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


# ---- merge path ---------------------------------------------------------------------------------------------

MERGE_A = [1, 2, 4, 4, 6, 8, 9, 9]
MERGE_B = [0, 3, 4, 4, 5, 7, 9, 10]


def _co_rank(a: list[int], b: list[int], k: int) -> int:
    """Keys of a among the first k outputs of the stable merge (ties: a first)."""
    lo, hi = max(0, k - len(b)), min(k, len(a))
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] <= b[k - 1 - mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def shearsort_merge_path(out: Path) -> None:
    """The merge path of two sorted runs (A down, B across): each step takes the smaller head (A on
    ties). Cross diagonal k meets the path at the co-rank (i, k - i): a binary search along the diagonal
    finds it, so each block of 4 outputs starts without merging the keys before it."""
    a, b = MERGE_A, MERGE_B
    fig, ax = canvas("Merge path: a binary search on each cross diagonal cuts the output")
    s = 1.0
    # the path: from (0, 0), down for a key of A, right for a key of B
    i = j = 0
    path = [(0, 0)]
    while i < len(a) or j < len(b):
        if j >= len(b) or (i < len(a) and a[i] <= b[j]):
            i += 1
        else:
            j += 1
        path.append((i, j))
    x0, y0 = 1.6, 9.2
    for jj, key in enumerate(b):
        ax.text(x0 + (jj + 0.5) * s, y0 + 0.45, str(key), ha="center", va="bottom", fontsize=20, color=ORANGE,
                weight="bold")
    for ii, key in enumerate(a):
        ax.text(x0 - 0.45, y0 - (ii + 0.5) * s, str(key), ha="right", va="center", fontsize=20, color=BLUE,
                weight="bold")
    ax.text(x0 + len(b) * s / 2, y0 + 1.3, "run B", ha="center", va="bottom", fontsize=20, color=ORANGE)
    ax.text(x0 - 1.4, y0 - len(a) * s / 2, "run A", ha="center", va="center", fontsize=20, color=BLUE,
            rotation=90)
    for ii in range(len(a)):
        for jj in range(len(b)):
            cell(ax, x0 + jj * s, y0 - (ii + 1) * s, "", w=s, h=s, color="#f4f5f7", edge="#bbbbbb")
    xs = [x0 + p[1] * s for p in path]
    ys = [y0 - p[0] * s for p in path]
    ax.plot(xs, ys, color="black", linewidth=4, zorder=3)
    for k in (4, 8, 12):
        lo, hi = max(0, k - len(b)), min(k, len(a))
        ax.plot([x0 + (k - lo) * s, x0 + (k - hi) * s], [y0 - lo * s, y0 - hi * s], color=RED, linestyle="--",
                linewidth=2.5, zorder=2)
        ci = _co_rank(a, b, k)
        ax.plot([x0 + (k - ci) * s], [y0 - ci * s], "o", color=RED, markersize=14, zorder=4)
        ax.text(x0 + (k - ci) * s + 0.25, y0 - ci * s + 0.15, f"k = {k}", ha="left", va="bottom", fontsize=18,
                color=RED, weight="bold", zorder=5,
                bbox=dict(facecolor="white", edgecolor="none", pad=1.0))
    # the merged output, in blocks of 4
    merged, i = [], 0
    prev = (0, 0)
    for p in path[1:]:
        merged.append(("A", a[prev[0]]) if p[0] > prev[0] else ("B", b[prev[1]]))
        prev = p
    ox, oy = 13.2, 6.4
    ax.text(ox, oy + 1.5, "output, 4 keys per block", ha="left", va="bottom", fontsize=20, weight="bold")
    for e, (src, key) in enumerate(merged):
        blk = e // 4
        cell(ax, ox + e * 1.0 + blk * 0.35, oy, key, color=BLUE if src == "A" else ORANGE, size=18,
             textcolor="white")
    for blk, k in enumerate((0, 4, 8, 12)):
        ci = _co_rank(a, b, k)
        ax.text(ox + k * 1.0 + blk * 0.35 + 2.0, oy - 0.3, f"k = {k}: A {ci}, B {k - ci}", ha="center", va="top",
                fontsize=18, color=RED if k else "black")
    ax.text(ox, 3.4, "The path goes down for a key of A, right for a key of B.", ha="left", va="top", fontsize=18)
    ax.text(ox, 2.5, "Diagonal k holds the points (i, k \u2212 i); the path crosses it once,", ha="left", va="top",
            fontsize=18)
    ax.text(ox, 1.7, "where A[i \u2212 1] \u2264 B[k \u2212 i] and A[i] > B[k \u2212 i \u2212 1]: a binary search.",
            ha="left", va="top", fontsize=18)
    ax.text(ox, 0.9, "Equal keys: A first, so the merge is stable.", ha="left", va="top", fontsize=18)
    ax.set_xlim(-0.2, 31.0)
    ax.set_ylim(0.0, 11.4)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


# ---- seed 004's d-way heap --------------------------------------------------------------------------------------

def shearsort_dway_heap(out: Path) -> None:
    """Seed 004 §7.3.2 with d = 8: one warp, d - 1 internal nodes with a 32-key buffer each in shared
    memory, d leaves reading sorted runs in global memory; Heapify(1) walks to the child with the smaller
    last key, takes its 32 keys, merges them into the node's buffer and passes the lower 32 up."""
    fig, ax = canvas("Seed 004's d-way merge (\u00a77.3.2), d = 8: one warp, a heap of d \u2212 1 buffers")
    path = {1, 3, 6, 13}
    bw, bh = 3.0, 1.5
    leaf_x = [4.2 + 2.7 * k for k in range(8)]
    pos = {8 + k: (leaf_x[k], 1.3) for k in range(8)}
    for node in range(7, 0, -1):
        pos[node] = ((pos[2 * node][0] + pos[2 * node + 1][0]) / 2, {1: 9.2, 2: 6.9, 3: 6.9}.get(node, 4.6))
    for node in range(1, 8):
        x, y = pos[node]
        on = node in path
        cell(ax, x - bw / 2, y - bh / 2, f"node {node}\n32 keys", w=bw, h=bh, color=ORANGE if on else "#dce8f5",
             size=18, textcolor="white" if on else "black")
    for leaf in range(8, 16):
        x, y = pos[leaf]
        on = leaf in path
        ax.add_patch(plt.Rectangle((x - 0.75, y - 1.2), 1.5, 2.2, facecolor=ORANGE if on else "white",
                                   edgecolor="#333333", linewidth=1.5))
        ax.text(x, y - 0.1, f"run {leaf - 8}", ha="center", va="center", fontsize=18, rotation=90,
                color="white" if on else "black")
    for child in range(2, 16):
        parent = child // 2
        (xc, yc), (xp, yp) = pos[child], pos[parent]
        on = child in path and parent in path
        top = yc + (1.0 if child >= 8 else bh / 2)
        ax.plot([xc, xp], [top, yp - bh / 2], color=ORANGE if on else "#888888", linewidth=4 if on else 1.8,
                zorder=0)
    xr, yr = pos[1]
    arrow(ax, (xr + bw / 2, yr), (xr + bw / 2 + 2.2, yr), width=3)
    ax.text(xr + bw / 2 + 2.4, yr, "32 smallest keys\nto the output run", ha="left", va="center", fontsize=18)
    ax.plot([2.0, 23.8], [3.0, 3.0], color="#555555", linestyle=":", linewidth=2)
    ax.text(1.2, 6.6, "shared memory", ha="center", va="center", fontsize=20, weight="bold", color=BLUE,
            rotation=90)
    ax.text(1.2, 1.3, "global", ha="center", va="center", fontsize=20, weight="bold", color="#555555", rotation=90)
    tx = 25.0
    lines = ["Heapify(1), in orange:", "go to the child whose last", "key passed up is smaller,",
             "take its 32 keys, merge", "them with the node's 32", "(a bitonic merge: shuffles),",
             "keep the larger 32, pass", "the smaller 32 up.", "",
             "More d: fewer passes, more", "shared memory per warp,", "fewer warps per SM."]
    for k, line in enumerate(lines):
        ax.text(tx, 10.0 - 0.82 * k, line, ha="left", va="top", fontsize=18)
    ax.set_xlim(0.0, 36.0)
    ax.set_ylim(0.0, 10.4)
    ax.set_aspect("equal")
    fig.savefig(out, dpi=DPI)


# ---- the model's tables (labs/shearsort/results/, computed on the CPU by the lab's experiments) ---------------

SHEAR_RESULTS = Path(__file__).resolve().parents[2] / "labs" / "shearsort" / "results"


def _results(name: str) -> list[dict[str, str]]:
    with (SHEAR_RESULTS / name).open(newline="") as f:
        return list(csv.DictReader(f))


def shearsort_unsorted(out: Path) -> None:
    """results/round-count.csv: the share of 0-1 tiles each round count leaves unsorted, per w (every
    0-1 tile at w = 4, seeded random ones at w = 8, 16, 32). Only the lab's count sorts them all."""
    rows = _results("round-count.csv")
    plans = list(dict.fromkeys(r["plan"] for r in rows))
    ws = sorted({int(r["w"]) for r in rows})
    share = {(int(r["w"]), r["plan"]): 100.0 * int(r["unsorted"]) / int(r["tiles"]) for r in rows}
    labels = {plans[0]: "log2 w rounds + final phase (the lab)", plans[1]: "log2 w rounds (seeds 000, 001)",
              plans[2]: "log2 w + 1 rounds, no final phase", plans[3]: "log2 w \u2212 1 rounds + final phase"}
    colors = [GREEN, RED, ORANGE, BLUE]
    fig = plt.figure(figsize=SIZE)
    ax = fig.add_axes([0.08, 0.13, 0.50, 0.74])
    width = 0.2
    for k, plan in enumerate(plans):
        xs = [i + (k - 1.5) * width for i in range(len(ws))]
        ys = [share[(w, plan)] for w in ws]
        ax.bar(xs, ys, width=width, color=colors[k], label=labels[plan])
        for x, y in zip(xs, ys):
            if y == 0:
                ax.text(x, 1.0, "0", ha="center", va="bottom", fontsize=18, color=GREEN, weight="bold")
    ax.set_xticks(range(len(ws)), [f"w = {w}" for w in ws])
    ax.set_ylabel("0-1 tiles left unsorted (%)")
    ax.set_ylim(0, 60)
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("0-1 tiles each round count leaves unsorted (CPU, round-count)", fontsize=28, y=0.97)
    fig.legend(loc="upper left", bbox_to_anchor=(0.595, 0.88), fontsize=18, frameon=False)
    tiles = {int(r["w"]): int(r["tiles"]) for r in rows}
    fig.text(0.605, 0.40, f"w = 4: all {tiles[4]:,} 0-1 tiles\nw = 8, 16: {tiles[8]:,} random ones\n"
             f"w = 32: {tiles[32]:,} random ones", ha="left", va="top", fontsize=18)
    fig.savefig(out, dpi=DPI)


def shearsort_wavefronts(out: Path) -> None:
    """results/bank-model.csv (input 0, int32 keys): one tile's shared wavefronts per stage on a log
    axis, with the excess written beside each bar: the work the model charges a tile stage."""
    stages = ["tile-bitonic", "tile-shear-naive", "tile-shear-transpose", "tile-shear-registers", "tile-shear-padded"]
    rows = {r["stage"]: r for r in _results("bank-model.csv") if r["input"] == "0" and r["key_bytes"] == "4"}
    fig = plt.figure(figsize=SIZE)
    ax = fig.add_axes([0.25, 0.15, 0.50, 0.72])
    ys = list(range(len(stages)))[::-1]
    for y, st in zip(ys, stages):
        r = rows[st]
        total, excess, way = int(r["wavefronts"]), int(r["excess"]), int(r["max_way"])
        ax.barh(y, total, color=RED if excess else GREEN, height=0.6)
        note = f"{total:,}: {excess:,} excess ({way}-way)" if excess else f"{total:,}: 0 excess"
        ax.text(total * 1.15, y, note, ha="left", va="center", fontsize=18)
    ax.set_yticks(ys, stages)
    ax.set_xscale("log")
    ax.set_xlim(300, 3e5)
    ax.set_xlabel("shared wavefronts per 1024-key tile (log)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle("One warp's shared-memory work on one tile (CPU, bank-model)", fontsize=28, y=0.97)
    fig.savefig(out, dpi=DPI)


def shearsort_d_trade(out: Path) -> None:
    """results/heap-model.csv at n = 2^28: left, merge passes against d (from the lab's 1024-key tiles
    and from seed 004's 32-key blocks); right, heap warps resident per SM (the reference's heap on an
    H100, seed 004 §7.3.6's count on an H100 and on its K20c)."""
    rows = _results("heap-model.csv")
    ds = [int(r["d"]) for r in rows]
    fig = plt.figure(figsize=SIZE)
    left = fig.add_axes([0.07, 0.14, 0.38, 0.66])
    right = fig.add_axes([0.57, 0.14, 0.38, 0.66])
    left.plot(ds, [int(r["passes"]) for r in rows], "o-", color=BLUE, linewidth=3, markersize=9,
              label="from 1024-key tiles (the lab)")
    left.plot(ds, [int(r["agpu_passes"]) for r in rows], "s--", color=ORANGE, linewidth=3, markersize=9,
              label="from 32-key blocks (seed 004)")
    left.set_ylabel("merge passes")
    left.set_ylim(0, 25)
    right.plot(ds, [int(r["resident_warps"]) for r in rows], "o-", color=BLUE, linewidth=3, markersize=9,
               label="the reference, H100")
    right.plot(ds, [int(r["seed_warps_h100"]) for r in rows], "s--", color=ORANGE, linewidth=3, markersize=9,
               label="seed 004's count, H100")
    right.plot(ds, [int(r["seed_warps_k20c"]) for r in rows], "^:", color=RED, linewidth=3, markersize=9,
               label="seed 004's count, K20c")
    right.set_ylabel("heap warps per SM")
    right.set_ylim(0, 100)
    right.set_yticks(range(0, 70, 16))
    for ax, title in ((left, "passes over 2^28 keys"), (right, "warps per SM (shared memory)")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ds, [str(d) for d in ds])
        ax.set_xlabel("d (runs merged per pass)")
        ax.set_title(title, fontsize=22)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=18, frameon=False, loc="upper right")
    fig.suptitle("The d-way merge's trade: fewer passes, fewer warps (seed 004 §7.3.6)", fontsize=28, y=0.98)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "shearsort-bank-matrix": shearsort_bank_matrix,
    "shearsort-phases": shearsort_phases,
    "shearsort-transpose": shearsort_transpose,
    "shearsort-padded": shearsort_padded,
    "shearsort-merge-path": shearsort_merge_path,
    "shearsort-dway-heap": shearsort_dway_heap,
    "shearsort-unsorted": shearsort_unsorted,
    "shearsort-wavefronts": shearsort_wavefronts,
    "shearsort-d-trade": shearsort_d_trade,
}
