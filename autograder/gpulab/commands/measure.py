"""`gpulab measure LAB [--quick] [--impl I] [--out DIR] [--only STEP,...]`: reproduce a lab's
handout numbers on a GPU machine (the steps: gpulab/measure.py); `--plots-only` redraws the
handout's plots from labs/<lab>/results."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "measure"
# The steps after the build, in the order they run (gpulab/measure.py): --only takes some of them.
STEPS = ("tests", "run", "sanitizers", "conflicts", "experiments", "bench", "ncu-sweeps", "plots")


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("measure", help="reproduce a lab's handout numbers on a GPU machine (labs/<lab>/measure.toml)",
                        allow_abbrev=False)
    sp.add_argument("lab")
    sp.add_argument("--quick", action="store_true", help="small sizes and quick experiments (a check, not the handout)")
    sp.add_argument("--impl", choices=["student", "reference"],
                    help="default: the reference where solutions/<lab>/ exists, else the student's code")
    sp.add_argument("--out", metavar="DIR", help="where logs, CSVs, plots and the archive go (default $OUT, "
                    "else build/measure-<lab>)")
    sp.add_argument("--only", metavar="STEP,...", type=_steps, default=STEPS,
                    help="only these steps (after the build): " + ", ".join(STEPS))
    sp.add_argument("--sweep-values", metavar="V,...", type=_values,
                    help="the ncu sweeps' knob values instead of measure.toml's (e.g. the points a lease had no "
                         "time for: --only ncu-sweeps --sweep-values 256,1024)")
    sp.add_argument("--plots-only", action="store_true",
                    help="only redraw the plot spec from labs/<lab>/results into slides/img (CPU only)")
    sp.add_argument("--gpu", help="--plots-only: the GPU name in titles (default: results/run.json's device)")
    sp.add_argument("--copy", help="--plots-only: the copy roof in GB/s (default: results/run.json's copy_gbps)")
    sp.add_argument("--img", metavar="DIR", help="--plots-only: draw here instead of slides/img")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    from gpulab import measure  # noqa: PLC0415
    lab = args.lab
    if lab not in course.labs():
        raise GpulabError(f"gpulab: unknown lab '{lab}' (labs: {', '.join(course.labs()) or 'none'})")
    if args.plots_only:
        spec = measure.load_spec(course.source / "labs" / lab / "measure.toml", lab)
        results = course.source / "labs" / lab / "results"
        facts = measure.device_facts(results / "run.json")
        facts.update({k: v for k, v in (("gpu", args.gpu), ("copy", args.copy)) if v})
        img = Path(args.img) if args.img else course.source / "slides" / "img"
        problems = measure.draw_plots(spec, results, img, facts, course.source)
        for p in problems:
            print(f"gpulab measure --plots-only: {p}", file=sys.stderr)
        return 1 if problems else 0
    out = Path(args.out or os.environ.get("OUT") or course.source / "build" / f"measure-{lab}").resolve()
    impl = args.impl or ("reference" if (course.source / "solutions" / lab).is_dir() else "student")
    return measure.measure(course, lab, args.quick, out, impl, args.only, args.sweep_values)


def _values(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x]
    except ValueError:
        values = []
    if not values:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of whole numbers (e.g. 256,1024)")
    return values


def _steps(text: str) -> tuple[str, ...]:
    steps = tuple(x for x in text.split(",") if x)
    unknown = [x for x in steps if x not in STEPS]
    if unknown or not steps:
        raise argparse.ArgumentTypeError(f"unknown step {', '.join(unknown) or '(none)'}; steps: {', '.join(STEPS)}")
    return steps
