"""The compiled reference runner shipped in the student handout, so that a self-grade scores
performance against the reference on the student's own GPU (as CS149 ships reference binaries).

The instructor's `gpulab handout` builds `gpulab-<lab>-reference` in its own build tree
(<build>/handout-reference) from the course with solutions/: SASS for the common architectures the
installed nvcc supports (COMMON_ARCHS) and PTX for the newest of them (the driver compiles it for
a newer GPU), without -lineinfo (GPULAB_LINEINFO=OFF: no source line tables in the reference's
device code; see _linked_from_calling_build for the harness objects it may link),
and copies each runner, stripped of host symbols, to `reference/` in the export. No source
travels: the export's leak check (handout_check.solution_leaks) searches these binaries too.

In the handout the grader takes `reference/gpulab-<lab>-reference` wherever solutions/<lab>/ is
absent (grading/references.py), for the timing, the stage table and the verdict on saved
outputs; `gpulab run/experiment/conflicts --impl reference` run it too (paths.Course.require_runner).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from gpulab import proc
from gpulab.errors import EXIT_FAILED, GpulabError
from gpulab.paths import read_cmake_cache
from gpulab.workspace.calling_build import build_calling_target, configure_args, trim_compiler_output
from gpulab.workspace.slots import HARNESS_KEY, HARNESS_LIST, PREBUILT_KEY, prebuilt_candidate

FOLDER = "reference"
# Volta to Hopper: the GPUs students have (sm_70 was dropped by CUDA 13; only those nvcc lists are
# built). Newer GPUs run the PTX of the newest.
COMMON_ARCHS = (70, 75, 80, 86, 89, 90)
BUILD_TIMEOUT = 3600


def shipped_path(source: Path, lab: str) -> Path:
    """Where the handout carries the lab's compiled reference runner (paths.Course.require_runner
    finds it there too, for `gpulab run --impl reference`)."""
    return source / FOLDER / f"gpulab-{lab}-reference"


def archs_for(nvcc_list: str, wanted: tuple[int, ...] = COMMON_ARCHS) -> str:
    """CMAKE_CUDA_ARCHITECTURES for the wanted architectures nvcc supports (from the output of
    `nvcc --list-gpu-arch`): SASS for each, PTX for the newest. '' when none is supported."""
    have = {int(m) for m in re.findall(r"compute_(\d+)", nvcc_list)}
    chosen = [a for a in wanted if a in have]
    if not chosen:
        return ""
    return ";".join([f"{a}-real" for a in chosen[:-1]] + [str(chosen[-1])])


def default_archs(cache: dict[str, str]) -> str:
    nvcc = cache.get("CMAKE_CUDA_COMPILER") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    res = proc.run([nvcc, "--list-gpu-arch"], timeout=60)
    archs = archs_for(res.stdout) if res.ok else ""
    if not archs:
        raise GpulabError(f"gpulab handout: `{nvcc} --list-gpu-arch` names none of sm_"
                          f"{', sm_'.join(map(str, COMMON_ARCHS))}; pass --reference-archs (e.g. 90) or none")
    return archs


def build(course_src: Path, calling_build: Path, labs: list[str], archs: str) -> dict[str, Path]:
    """Builds gpulab-<lab>-reference for each lab in <calling build>/handout-reference; returns
    {lab: runner}. Raises with the compiler's diagnostics when it does not build."""
    cache = read_cmake_cache(calling_build)
    tree = calling_build / "handout-reference"
    args = [a for a in configure_args(cache) if not a.startswith(("-DCMAKE_CUDA_ARCHITECTURES=", "-DCMAKE_BUILD_TYPE="))]
    args += _linked_from_calling_build(course_src, calling_build, cache, tree, labs, archs)
    steps = [["cmake", "-S", str(course_src), "-B", str(tree), *args, f"-DCMAKE_CUDA_ARCHITECTURES={archs}",
              "-DCMAKE_BUILD_TYPE=Release", "-DGPULAB_LINEINFO=OFF"],
             ["cmake", "--build", str(tree), "--target", *[f"gpulab-{lab}-reference" for lab in labs]]]
    for cmd in steps:
        res = proc.run(cmd, timeout=BUILD_TIMEOUT)
        if not res.ok:
            raise GpulabError("gpulab handout: the shipped reference runners did not build "
                              f"({res.describe_exit()}):\n{trim_compiler_output(res.stdout + res.stderr)}", EXIT_FAILED)
    return {lab: tree / "labs" / lab / f"gpulab-{lab}-reference" for lab in labs}


def _linked_from_calling_build(course_src: Path, calling_build: Path, cache: dict[str, str], tree: Path,
                               labs: list[str], archs: str) -> list[str]:
    """The -D options that make the reference tree link the calling build's common library and
    the labs' harness objects instead of compiling them (as a grading slot does, slots.py), when
    that build compiled them for exactly these architectures in a Release build with no other
    flags (slots.prebuilt_candidate): then only solutions/ is compiled here, without line info.
    Those objects keep their line tables, which name only common/ and the harness, the files every
    student has. Otherwise (the usual `--reference-archs`, several architectures) the options
    that say 'compile them here', so that a previous run's choice does not outlive it."""
    here = [f"-D{PREBUILT_KEY}=", f"-D{HARNESS_KEY}="]
    if archs != cache.get("CMAKE_CUDA_ARCHITECTURES") or cache.get("CMAKE_BUILD_TYPE") != "Release":
        return here
    lib = prebuilt_candidate(calling_build, cache, course_src)
    lists = {lab: calling_build / "labs" / lab / HARNESS_LIST for lab in labs}
    if lib is None or not all(p.is_file() for p in lists.values()):
        return here
    if not build_calling_target(calling_build, ["gpulab_common", *[f"{lab}-harness" for lab in labs]]).ok:
        return here
    folder = tree / "prebuilt"
    for lab, listing in lists.items():
        (folder / lab).mkdir(parents=True, exist_ok=True)
        (folder / lab / "objects.txt").write_text(listing.read_text())
    return [f"-D{PREBUILT_KEY}={lib}", f"-D{HARNESS_KEY}={folder}"]


def ship(runners: dict[str, Path], out: Path, archs: str) -> list[Path]:
    """Copies each runner into out/reference/, stripped of host symbols, mode 755, with a README
    that says what it is."""
    dest = out / FOLDER
    dest.mkdir(parents=True, exist_ok=True)
    shipped = []
    for lab, runner in sorted(runners.items()):
        if not runner.is_file():
            raise GpulabError(f"gpulab handout: {runner} was not built", EXIT_FAILED)
        target = dest / f"gpulab-{lab}-reference"
        shutil.copy2(runner, target)
        res = proc.run(["strip", "--strip-all", str(target)], timeout=120)
        if not res.ok:
            raise GpulabError(f"gpulab handout: strip {target} failed: {res.stderr.strip()[:300]}", EXIT_FAILED)
        os.chmod(target, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        shipped.append(target)
    (dest / "README.md").write_text(
        "# Compiled reference runners\n\n"
        "`gpulab-<lab>-reference`: the course's reference solution, compiled (no source), for CUDA "
        f"architectures `{archs}` (PTX for the newest, compiled by the driver on newer GPUs), stripped, "
        "without line information. `gpulab grade` uses it to score the performance points against the "
        "reference on your GPU, and to check your saved outputs. You can run it like your own runner "
        "(`reference/gpulab-scan-reference run --stage naive`). Reverse-engineering it is not allowed "
        "(the lab's Policies).\n", encoding="utf-8")
    return shipped
