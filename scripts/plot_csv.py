#!/usr/bin/python3
"""plot_csv.py: line plots from a CSV table (an experiment's --csv output), one line per group.

Uses Debian's python3-matplotlib (`apt-get install -y python3-matplotlib`; run with /usr/bin/python3).

Examples
  # GB/s against n, one line per stage, log2 x axis, PNG and SVG
  scripts/plot_csv.py labs/scan/results/size-sweep.csv --x n --y gbps --group stage --logx \\
      --title "scan on H100" --ylabel "GB/s (8n bytes)" --out slides/img/scan-size.png --out slides/img/scan-size.svg
  # two quantities side by side on twin y axes (alpha sweep: bandwidth and occupancy)
  scripts/plot_csv.py alpha-sweep.csv --x alpha --y gbps --y2 occupancy --out alpha.png
  # only some rows
  scripts/plot_csv.py size-sweep.csv --x n --y median_ms --group stage --where status=pass \\
      --only stage=naive,shared,cub --logx --logy --out t.png
  # horizontal bars, one per row in file order, labelled by --x, against a roof (% of it printed)
  scripts/plot_csv.py run-8192.csv --bars --x stage --y gbps --where status=pass --hline 4159:copy \\
      --muted copy --muted memcpy --out stages.png
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import OrderedDict
from pathlib import Path


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", type=Path, help="input CSV with a header row")
    p.add_argument("--x", required=True, help="column for the x axis (numeric)")
    p.add_argument("--y", required=True, action="append", help="column(s) for the y axis (repeatable)")
    p.add_argument("--y2", action="append", default=[], help="column(s) on a second y axis at the right")
    p.add_argument("--group", help="column whose values make one line each (e.g. stage)")
    p.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                   help="keep rows where COL equals VALUE (repeatable; all must hold)")
    p.add_argument("--only", action="append", default=[], metavar="COL=V1,V2",
                   help="keep rows whose COL is one of the listed values, in that order in the legend")
    p.add_argument("--dashed", action="append", default=[], metavar="GROUP",
                   help="draw this group dashed, without markers, on top (e.g. a model beside measurements)")
    p.add_argument("--logx", action="store_true", help="log2 x axis (labels 2^k)")
    p.add_argument("--logy", action="store_true", help="log10 y axis")
    p.add_argument("--title", default="")
    p.add_argument("--xlabel")
    p.add_argument("--ylabel")
    p.add_argument("--y2label")
    p.add_argument("--legend", action="append", default=[], metavar="SERIES=LABEL",
                   help="the legend's words for a series (a group value, a column, or 'group column')")
    p.add_argument("--legend-loc", default="best", help="where the legend goes (matplotlib's loc, e.g. 'upper right')")
    p.add_argument("--hline", action="append", default=[], metavar="VALUE[:LABEL]",
                   help="a horizontal reference line (e.g. the copy roof)")
    p.add_argument("--size", default="8x4.5", help="figure size in inches, WxH")
    p.add_argument("--bars", action="store_true",
                   help="horizontal bars of the first --y per row (file order), labelled by --x (text); "
                        "--hline draws vertical roofs, the first one also gives each bar's percent")
    p.add_argument("--no-percent", action="store_true",
                   help="--bars: no percent of the first --hline beside each bar (a goal line, not a roof)")
    p.add_argument("--muted", action="append", default=[], metavar="LABEL",
                   help="--bars: draw this bar grey (a roof or baseline, not a result)")
    p.add_argument("--highlight", action="append", default=[], metavar="TEXT",
                   help="--bars: draw bars whose label contains TEXT red (e.g. the conflicting ones)")
    p.add_argument("--out", action="append", required=True, type=Path,
                   help="output file(s); the extension picks the format (.png, .svg, .pdf)")
    return p.parse_args(argv)


def number(text: str) -> float | None:
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def shown(value: float) -> str:
    """A bar's or a line's value as printed beside it: whole numbers from 100 up (GB/s), three
    significant digits below (a 2.01x speed-up printed as "2" said the wrong thing)."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            raise SystemExit(f"plot_csv: {path} is empty")
        return list(reader.fieldnames), list(reader)


def filter_rows(rows: list[dict[str, str]], where: list[str], only: list[str]) -> tuple[list[dict[str, str]], dict[str, list[str]]]:
    order: dict[str, list[str]] = {}
    for cond in where:
        key, _, value = cond.partition("=")
        rows = [r for r in rows if r.get(key) == value]
    for cond in only:
        key, _, values = cond.partition("=")
        allowed = values.split(",")
        order[key] = allowed
        rows = [r for r in rows if r.get(key) in allowed]
    return rows, order


def save(fig, outs: list[Path], dpi: int) -> int:
    fig.tight_layout()
    for out in outs:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=dpi)
        print(f"wrote {out}")
    return 0


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    import matplotlib  # noqa: PLC0415 (imported late: --help works without it)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415

    columns, rows = read_rows(args.csv)
    for col in [args.x, *args.y, *args.y2] + ([args.group] if args.group else []):
        if col not in columns:
            raise SystemExit(f"plot_csv: {args.csv} has no column {col!r}; columns: {', '.join(columns)}")
    rows, order = filter_rows(rows, args.where, args.only)
    if not rows:
        raise SystemExit("plot_csv: no rows left after --where/--only")
    if args.bars:
        return draw_bars(args, rows, plt)

    groups: "OrderedDict[str, list[dict[str, str]]]" = OrderedDict()
    for r in rows:
        groups.setdefault(r[args.group] if args.group else "", []).append(r)
    if args.group and args.group in order:
        groups = OrderedDict((g, groups[g]) for g in order[args.group] if g in groups)

    w, _, h = args.size.partition("x")
    # Sizes for a projected slide: an 8-inch figure shown 530 px high keeps >= 18 px text.
    plt.rcParams.update({"font.size": 12, "axes.titlesize": 13, "legend.fontsize": 10})
    fig, ax = plt.subplots(figsize=(float(w), float(h)))
    ax2 = ax.twinx() if args.y2 else None
    markers = "osD^v<>pPX*h"
    legend = dict(spec.partition("=")[::2] for spec in args.legend)
    lines = []
    for gi, (name, members) in enumerate(groups.items()):
        for axis, ycols, style in ((ax, args.y, "-"), (ax2, args.y2, "--")):
            for yi, ycol in enumerate(ycols):
                pts = sorted((number(r[args.x]), number(r[ycol])) for r in members)
                pts = [(x, y) for x, y in pts if x is not None and y is not None]
                if not pts:
                    continue
                label = " ".join(s for s in (name, ycol if len(args.y) + len(args.y2) > 1 else "") if s)
                # one color per line across both axes (each axis would restart its own cycle)
                dashed = name in args.dashed
                (line,) = axis.plot([p[0] for p in pts], [p[1] for p in pts], "--" if dashed else style,
                                    color=f"C{len(lines) % 10}", marker=None if dashed else markers[(gi + yi) % len(markers)],
                                    markersize=4, linewidth=2 if dashed else 1.5,
                                    zorder=3 if dashed else 2, label=legend.get(label or ycol, label or ycol))
                lines.append(line)
    for spec in args.hline:
        value, _, label = spec.partition(":")
        lines.append(ax.axhline(float(value), color="grey", linestyle=":", label=label or None))

    if args.logx:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"$2^{{{int(round(math.log2(v)))}}}$" if v > 0 else ""))
    if args.logy:
        ax.set_yscale("log")
    ax.set_xlabel(args.xlabel or args.x)
    ax.set_ylabel(args.ylabel or ", ".join(args.y))
    if ax2 is not None:
        ax2.set_ylabel(args.y2label or ", ".join(args.y2))
    ax.set_title(args.title)
    ax.grid(True, alpha=0.3)
    labelled = [l for l in lines if l.get_label() and not l.get_label().startswith("_")]
    if labelled:
        ax.legend(labelled, [l.get_label() for l in labelled], ncol=2 if len(labelled) > 8 else 1, loc=args.legend_loc)
    # 200 dpi: the default 8 x 4.5 inches is 1600 x 900 px, sharp on a projected slide
    return save(fig, args.out, dpi=200)


def draw_bars(args: argparse.Namespace, rows: list[dict[str, str]], plt) -> int:
    labels = [r[args.x] for r in rows if number(r[args.y[0]]) is not None]
    values = [number(r[args.y[0]]) for r in rows if number(r[args.y[0]]) is not None]
    roofs = [(float(v), label) for v, _, label in (h.partition(":") for h in args.hline)]
    w, _, h = args.size.partition("x")
    fig, ax = plt.subplots(figsize=(float(w), float(h)))

    def color(label: str) -> str:
        if label in args.muted:
            return "tab:grey"
        return "tab:red" if any(t in label for t in args.highlight) else "tab:green"
    ax.barh(labels[::-1], values[::-1], color=[color(l) for l in labels[::-1]])
    # Sizes for a projected slide: a 9-inch figure shown 1280 px wide or less keeps >= 18 px text
    # (a chart of more bars than that fits gets smaller labels rather than overlapping ones).
    small = len(values) > 12
    ax.tick_params(labelsize=9 if small else 13)
    for value, label in roofs:
        ax.axvline(value, color="black", linestyle="--", linewidth=1)
        # The roof's label above the plot, on its line (it used to sit on the x axis, under the ticks).
        ax.text(value, 1.01, f"{label} {shown(value)}", transform=ax.get_xaxis_transform(), va="bottom", ha="center",
                fontsize=12)
    roof = roofs[0][0] if roofs and not args.no_percent else None
    for i, v in enumerate(values[::-1]):
        ax.text(v, i, f" {shown(v)}" + (f" ({100 * v / roof:.0f}%)" if roof else ""), va="center",
                fontsize=8 if small else 12)
    ax.set_xlabel(args.ylabel or args.y[0], fontsize=13)
    ax.set_title(args.title, fontsize=14, pad=26 if roofs else 6)
    ax.set_xlim(0, max(values + [r[0] for r in roofs]) * 1.25)
    return save(fig, args.out, dpi=200)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
