"""The bitonic deck's diagrams: the network on 16 keys with phase 4's launches (seed 002 Fig. 1,
Algorithm 1, §III-E), the banks one warp's request hits in the textbook shared step (seed 000 §3,
§5), and the conflict-free stage's warp layout (an answer slide only)."""
from __future__ import annotations

from pathlib import Path

from _draw import BLUE, DPI, GREEN, GREY, ORANGE, RED, SIZE, arrow, canvas, cell, plt  # noqa: F401

from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402


def _lower(p: int, e: int) -> int:
    """Pair p's lower key at stride 2^e: p with a 0 bit inserted at position e."""
    return ((p >> e) << (e + 1)) | (p & ((1 << e) - 1))


def bitonic_network(out: Path) -> None:
    """Algorithm 1 on n = 16 keys (L = 4) as a sorting network: wires are keys 0..15 (top to bottom),
    each comparator an arrow towards the slot that receives the larger key (ascending iff bit s of
    the lower index is 0). Coloured by the launch that runs it in phase 4 with 4-key tiles (t = 2):
    the tile sort (levels 1-2), one global launch per stride >= T, one tile merge per level."""
    n, L, t = 16, 4, 2
    fig = plt.figure(figsize=SIZE)
    ax = fig.add_axes([0.0, 0.0, 1.0, 1.0])
    ax.set_axis_off()
    wire_gap, sub, step_gap, x0 = 0.36, 0.2, 0.32, 1.0
    y_of = lambda i: 6.0 - i * wire_gap  # noqa: E731
    colors = {"tile sort": BLUE, "global": RED, "tile merge": GREEN}
    x = x0
    spans = []  # (level, x_start, x_end)
    for s in range(1, L + 1):
        start = x
        for e in range(s - 1, -1, -1):
            j = 1 << e
            kind = "tile sort" if s <= t else ("global" if e >= t else "tile merge")
            step_start = x
            for p in range(n // 2):
                lo = _lower(p, e)
                hi = lo + j
                col = x + (p % j) * sub
                up = ((lo >> s) & 1) == 0
                a, b = (y_of(lo), y_of(hi)) if up else (y_of(hi), y_of(lo))
                arrow(ax, (col, a), (col, b), color=colors[kind], width=2.6)
            x += j * sub
            ax.text((step_start + x - sub) / 2, 6.38, f"{j}", ha="center", va="bottom", fontsize=18, color="#333333")
            x += step_gap
        spans.append((s, start, x - step_gap - sub))
        x += 0.35
    for i in range(n):
        ax.plot([x0 - 0.25, x - 0.3], [y_of(i), y_of(i)], color="#9aa0a6", linewidth=1.0, zorder=0)
        ax.text(x0 - 0.32, y_of(i), str(i), ha="right", va="center", fontsize=18)
    for s, a, b in spans:
        ax.plot([a - 0.05, b + 0.05], [6.8, 6.8], color="#333333", linewidth=1.5)
        ax.text((a + b) / 2, 6.86, f"s = {s}", ha="center", va="bottom", fontsize=20, weight="bold")
    ax.text(x0 - 0.32, 6.38, "j:", ha="right", va="bottom", fontsize=18, color="#333333")
    ax.text(x0 - 0.32, 6.86, "level", ha="right", va="bottom", fontsize=18, color="#333333")
    width = x - x0
    for k, (label, text) in enumerate((("tile sort", "tile sort: 1 launch, shared memory"),
                                       ("global", "1 global launch per stride >= T"),
                                       ("tile merge", "tile merge: 1 launch per level"))):
        lx = x0 - 0.5 + (0.0, 0.385, 0.71)[k] * width
        ax.add_patch(Rectangle((lx, 0.17), 0.3, 0.16, color=colors[label]))
        ax.text(lx + 0.38, 0.25, text, va="center", fontsize=18)
    ax.text(x0 - 0.5, -0.15, "phase 4 on 16 keys with 4-key tiles (t = 2): 6 launches, phase 0: 10; "
            "an arrow points to the larger key", ha="left", va="center", fontsize=18)
    ax.set_xlim(0.0, x + 0.1)
    ax.set_ylim(-0.4, 7.3)
    fig.savefig(out, dpi=DPI)


def bitonic_bank_step(out: Path) -> None:
    """The textbook step's load of the lower keys, one warp (threads 0..31), against the 32 banks:
    lo = tau with a 0 inserted at bit log2 j, word lo in bank lo mod 32. Stride 1 and 16: 64 words
    spanned, 16 banks hit twice (2-way); stride 32: 32 consecutive words, one per bank."""
    banks = 32
    fig, ax = canvas("One warp loads its 32 lower keys: which banks the textbook step hits")
    cs = 0.9
    rows = [(1, "j = 1"), (4, "j = 4"), (16, "j = 16"), (32, "j = 32")]
    for r, (j, label) in enumerate(rows):
        e = j.bit_length() - 1
        words = [_lower(tau, e) for tau in range(32)]
        count = [0] * banks
        for w in words:
            count[w % banks] += 1
        y = 5.6 - r * 1.45
        ax.text(-0.2, y + cs / 2, label, ha="right", va="center", fontsize=20, weight="bold")
        for bnk in range(banks):
            c = count[bnk]
            color = RED if c > 1 else ("#dce8f5" if c == 1 else "white")
            cell(ax, bnk * cs, y, c if c else "", w=cs, h=cs, color=color, size=18,
                 textcolor="white" if c > 1 else "black")
        way = max(count)
        ax.text(banks * cs + 0.3, y + cs / 2, f"{way}-way" if way > 1 else "conflict-free", ha="left", va="center",
                fontsize=20, weight="bold", color=RED if way > 1 else GREEN)
        span = max(words) - min(words) + 1
        ax.text(banks * cs + 0.3, y - 0.28, f"words 0 .. {span - 1}", ha="left", va="center", fontsize=18,
                color="#555555")
    for bnk in range(0, banks, 4):
        ax.text(bnk * cs + cs / 2, 6.75, str(bnk), ha="center", fontsize=18, color="#555555")
    ax.text(0.0, 6.75, "", fontsize=18)
    ax.text(banks * cs + 0.3, 6.75, "bank", ha="left", fontsize=18, color="#555555")
    ax.text(-2.2, 0.55, "cell: the warp's words in that bank (thread tau's lower key: tau with a 0 inserted at "
            "bit log2 j)", ha="left", fontsize=18)
    ax.set_xlim(-2.3, banks * cs + 4.2)
    ax.set_ylim(0.2, 7.3)
    fig.savefig(out, dpi=DPI)


FIGURES = {
    "bitonic-network": bitonic_network,
    "bitonic-bank-step": bitonic_bank_step,
}


# The answer slide's figure: the conflict-free stage's construction, released with the solutions.
# BEGIN SOLUTION stub: # (the answer slide's figure is released with the solutions)
def bitonic_warp_registers(out: Path) -> None:
    """phase4-conflict-free's warp (an answer slide): 64 consecutive keys of a tile, lane l holding
    a = key 64w + l and b = key 64w + 32 + l. Stride 32 pairs a with b in the thread; strides 16..1
    pair lane l with lane l ^ j (a shuffle); strides >= 64 go through shared memory as rows of 32
    consecutive words."""
    fig, ax = canvas("phase4-conflict-free: a warp's 64 keys in registers (lane l holds keys l and 32 + l)")
    cs = 0.9
    for lane in range(32):
        cell(ax, lane * cs, 4.2, lane, w=cs, h=cs, color="#dce8f5", size=18)
        cell(ax, lane * cs, 2.4, 32 + lane, w=cs, h=cs, color="#fde7cf", size=18)
    ax.text(-0.2, 4.2 + cs / 2, "a", ha="right", va="center", fontsize=22, weight="bold")
    ax.text(-0.2, 2.4 + cs / 2, "b", ha="right", va="center", fontsize=22, weight="bold")
    for lane in range(0, 32, 4):
        ax.text(lane * cs + cs / 2, 5.35, str(lane), ha="center", fontsize=18, color="#555555")
    ax.text(32 * cs + 0.2, 5.35, "lane", ha="left", fontsize=18, color="#555555")
    # stride 32: a with b inside the thread (lane 3)
    arrow(ax, (3 * cs + cs / 2, 4.2), (3 * cs + cs / 2, 2.4 + cs), color=RED, width=3)
    ax.text(3 * cs + cs / 2 + 0.2, 3.7, "j = 32: in the thread", ha="left", fontsize=18, color=RED)
    # stride 16: lane 8 <-> lane 24 (a shuffle)
    arrow(ax, (8 * cs + cs / 2, 4.2 + cs), (24 * cs + cs / 2, 4.2 + cs), color=BLUE, width=3, style="<|-|>", rad=-0.25)
    ax.text(16 * cs, 6.05, "j = 16 .. 1: __shfl_xor_sync(lane ^ j)", ha="center", fontsize=18, color=BLUE)
    # stride 1: lanes 28, 29
    arrow(ax, (28 * cs + cs / 2, 2.4), (29 * cs + cs / 2, 2.4), color=BLUE, width=3, style="<|-|>", rad=0.6)
    ax.text(27 * cs, 1.95, "j = 1", ha="right", va="center", fontsize=18, color=BLUE)
    ax.text(0.0, 1.35, "strides >= 64 through shared memory: the warp stores a and b as two rows of 32 consecutive "
            "words (one per bank),", ha="left", fontsize=18)
    ax.text(0.0, 0.8, "runs the textbook step there (its lower keys: 32 consecutive words) and loads them back: "
            "0 excess wavefronts", ha="left", fontsize=18)
    ax.set_xlim(-1.0, 32 * cs + 2.0)
    ax.set_ylim(0.4, 6.6)
    fig.savefig(out, dpi=DPI)


FIGURES["bitonic-warp-registers"] = bitonic_warp_registers
# END SOLUTION
