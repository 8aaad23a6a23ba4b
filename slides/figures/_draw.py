"""Shared drawing helpers of the slide figures (slides/figures/<deck>.py; driver: scripts/slide_figures.py).

Every figure is 16 x 7 inches at 100 dpi (1600 x 700 px); text sizes are in points at that dpi
(1 pt = 1.39 px). The driver's --check holds each figure's smallest text to >= 18 px as the decks
show it on a 1280 px wide slide.
"""
from __future__ import annotations

import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "labs" / "transpose" / "results"
# 16 x 7 inches at 100 dpi: 1600 x 700 px, shown full width on a slide (![w:1160]) under its title:
# 0.725 px on the slide per px of the PNG, so 18-point text (25 px) is 18 px on the slide.
SIZE, DPI = (16, 7), 100
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
