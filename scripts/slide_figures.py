#!/usr/bin/python3
"""slide_figures.py: draws the decks' diagrams into slides/img with Debian's python3-matplotlib.
CPU only, deterministic. The figures live beside the decks, one module per deck:
slides/figures/<deck>.py defines FIGURES = {name: draw(out_path)}; slides/figures/_draw.py holds
the shared helpers. A new lab adds slides/figures/<lab>.py and nothing else.

Usage, from anywhere:
  scripts/slide_figures.py              # writes every figure into slides/img
  scripts/slide_figures.py --out DIR    # into DIR instead
  scripts/slide_figures.py --check DIR  # draws into DIR; fails unless each PNG is >= 1600 px wide
                                        # and its smallest text is >= 18 px as the decks show it
  scripts/slide_figures.py --only NAME  # one figure (repeatable), NAME without .png

The measurement plots (slides/img/<lab>-*.png and the machine-model plots of the transpose lab)
come from `gpulab measure <lab> --plots-only` (each lab's measure.toml), not from here.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES_DIR = ROOT / "slides" / "figures"
MIN_WIDTH = 1600
MIN_TEXT_PX = 18          # on a 1280 x 720 slide
SLIDE_CONTENT_W, SLIDE_CONTENT_H = 1160, 560

try:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.text import Text
except ImportError:
    # --check is a CTest test: skip (77) where matplotlib is missing, as on the offline GPU
    # machine, but not on CI, where scripts/setup.sh installed it.
    print("slide_figures: needs Debian's python3-matplotlib (apt-get install python3-matplotlib; "
          "scripts/setup.sh installs it) and /usr/bin/python3")
    sys.exit(1 if os.environ.get("CI") or "--check" not in sys.argv else 77)


def load_figures() -> dict:
    """{name: draw function} of every slides/figures/<deck>.py (found, not listed)."""
    sys.path.insert(0, str(FIGURES_DIR))
    figures: dict = {}
    for path in sorted(FIGURES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"slide_figures_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, draw in module.FIGURES.items():
            if name in figures:
                raise SystemExit(f"slide_figures: figure {name} is drawn by two modules")
            figures[name] = draw
    return figures


def png_size(path: Path) -> tuple[int, int]:
    with path.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"slide_figures: {path} is not a PNG")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def shown_scale(name: str, width: int, height: int) -> float | None:
    """The smallest scale any deck shows img/<name>.png at (Marp's ![w:N] / ![h:N]; no size: fitted
    to the content box); None when no deck shows it."""
    scales = []
    for deck in sorted((ROOT / "slides").glob("*.md")):
        for alt in re.findall(r"!\[([^\]]*)\]\(img/" + re.escape(name) + r"\.png\)", deck.read_text(encoding="utf-8")):
            w = re.search(r"\bw(?:idth)?:(\d+)", alt)
            h = re.search(r"\bh(?:eight)?:(\d+)", alt)
            if w:
                scales.append(int(w.group(1)) / width)
            elif h:
                scales.append(int(h.group(1)) / height)
            else:
                scales.append(min(1.0, SLIDE_CONTENT_W / width, SLIDE_CONTENT_H / height))
    return min(scales) if scales else None


class TextSizes:
    """Records, per saved figure, its smallest visible text in pixels of the PNG."""

    def __init__(self) -> None:
        self.smallest: dict[str, tuple[float, str]] = {}
        original = Figure.savefig

        def savefig(fig, fname, *args, **kwargs):
            dpi = kwargs.get("dpi") or fig.dpi
            texts = [(t.get_fontsize() * dpi / 72, t.get_text()) for t in fig.findobj(Text)
                     if t.get_visible() and t.get_text().strip()]
            if texts:
                self.smallest[Path(str(fname)).stem] = min(texts)
            return original(fig, fname, *args, **kwargs)

        Figure.savefig = savefig


def main(argv: list[str]) -> int:
    figures = load_figures()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=ROOT / "slides" / "img", help="folder for the PNGs (default slides/img)")
    p.add_argument("--check", type=Path, metavar="DIR", help="draw into DIR and check every PNG's width and text size")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help=f"one of: {', '.join(figures)}")
    args = p.parse_args(argv)
    unknown = [n for n in args.only if n not in figures]
    if unknown:
        p.error(f"unknown figure {', '.join(unknown)}; figures: {', '.join(figures)}")
    out = args.check or args.out
    out.mkdir(parents=True, exist_ok=True)
    sizes = TextSizes()
    import matplotlib.pyplot as plt  # noqa: PLC0415
    bad = 0
    for name in args.only or figures:
        path = out / f"{name}.png"
        figures[name](path)
        plt.close("all")
        width, height = png_size(path)
        problems = []
        if width < MIN_WIDTH:
            problems.append(f"{width} px wide, fewer than {MIN_WIDTH}")
        scale = shown_scale(name, width, height)
        if scale is not None and name in sizes.smallest:
            px, text = sizes.smallest[name]
            if px * scale < MIN_TEXT_PX - 0.5:
                problems.append(f"text {text[:30]!r} is {px * scale:.1f} px on the slide (at least {MIN_TEXT_PX})")
        if problems and args.check:
            print(f"slide_figures: {path}: " + "; ".join(problems))
            bad += 1
        else:
            shown = f", smallest text {sizes.smallest[name][0] * scale:.1f} px on the slide" if scale and name in sizes.smallest else ""
            print(f"wrote {path} ({width} px wide{shown})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
