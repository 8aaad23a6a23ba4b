"""`gpulab info [...]`: the C++ `gpulab-info` (device, copy roof, machine model); every option
after `info` goes to it unchanged (RAW)."""

from __future__ import annotations

import argparse

from gpulab import proc
from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "info"
RAW = True   # argparse does not see its options: gpulab-info has its own --help


def add_parser(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("info", help="the GPU, its measured copy bandwidth, the machine-model parameters "
                   "(options go to gpulab-info)", allow_abbrev=False, add_help=False)


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    """The C++ gpulab-info tool, output passed through."""
    tool = course.info_tool()
    if not tool.is_file():
        raise GpulabError(f"gpulab: {tool} is not built; run `cmake --build {course.require_build()} "
                          "--target gpulab-info`")
    return proc.run_streaming([tool] + extra)
