"""The calling build: the build tree `gpulab` was started from. Every tree the grader configures
(a grading workspace slot, the handout's check, the shipped reference's build) builds like it:
its cache's compilers, architectures, build type and package folders are passed on
(configure_args); its own targets (the reference runner, the common library, the harnesses) are
built in turns with any other grader (build_calling_target); a failed build is cut to its
diagnostics (trim_compiler_output).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from gpulab import locks, proc

BUILD_TIMEOUT = 900
# Cache entries copied from the build the grader was started from (the GPU machine needs the
# prefix of the carried headers; the architecture must match the GPU).
# Not the build type: a submission is always built Release (configure_args).
INHERITED = ("CMAKE_PREFIX_PATH", "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CUDA_COMPILER",
             "CMAKE_CXX_COMPILER", "CMAKE_MAKE_PROGRAM", "CMAKE_CUDA_HOST_COMPILER", "Catch2_DIR",
             "nlohmann_json_DIR", "CLI11_DIR")

TRUE_VALUES = ("ON", "1", "TRUE", "YES", "Y")


def not_release(cache: dict[str, str]) -> str:
    """What makes a build other than the Release build grades are made with ("" when nothing
    does): a Debug or other build type, device debug code (-G: kernels many times slower). No
    cache at all (a test's stand-in build) says nothing of the build: ""."""
    if not cache:
        return ""
    differs = []
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    if build_type != "Release":
        differs.append(f"CMAKE_BUILD_TYPE={build_type or '(empty)'}")
    if cache.get("GPULAB_DEVICE_DEBUG", "OFF").upper() in TRUE_VALUES:
        differs.append("GPULAB_DEVICE_DEBUG=ON (kernels built with -G)")
    return ", ".join(differs)


def build_calling_target(build: Path, target: str | list[str], timeout: float = BUILD_TIMEOUT) -> proc.Result:
    """Builds targets of the calling build (the reference runner, the common library, the labs'
    harnesses). Another `gpulab grade` may be building in that tree too: two ninjas in one build
    tree race on its outputs and logs, so they take turns (locks.py)."""
    targets = [target] if isinstance(target, str) else target
    with locks.held(build / "grading-build.lock"):
        return proc.run(proc.background(["cmake", "--build", str(build), "--target", *targets]), timeout=timeout)


def configure_args(cache: dict[str, str]) -> list[str]:
    """-D options that make the workspace build like the calling build (minus warnings-as-errors:
    a student's warning is not a compile error), always as Release without device debug: a grade
    from build/debug would otherwise build the submission otherwise than the instructor's (its
    asserts on, its host code at -O0) and time it against a reference built so."""
    args = ["-G", cache.get("CMAKE_GENERATOR", "Ninja")]
    for key in INHERITED:
        if cache.get(key):
            args.append(f"-D{key}={cache[key]}")
    args += ["-DCMAKE_BUILD_TYPE=Release", "-DGPULAB_WARNINGS_AS_ERRORS=OFF", "-DGPULAB_DEVICE_DEBUG=OFF"]
    return args


def seed_platform(calling_build: Path | None, cache: dict[str, str], build: Path) -> list[str]:
    """Lets a fresh build tree skip CMake's compiler detection: the calling build's platform files
    (CMakeFiles/<version>/CMakeSystem.cmake, CMake<LANG>Compiler.cmake, ...) copied into it, and the
    cache mark that says they are its own. Without it each slot's first configure compiles and runs
    CMake's CUDA compiler-id and ABI probes again: 5.9 s of a 10.1-10.5 s configure on the 2-core CI
    machine, 4.5 s with the seed (2026-11-30), the same build.ninja rules. Only for a tree with no
    cache yet, configured by the same cmake as the calling build (its version names the folder)
    with the same compilers (configure_args passes the calling build's); else [] and CMake detects
    as usual. The extra -D options for the configure."""
    parts = [cache.get(f"CMAKE_CACHE_{part}_VERSION", "") for part in ("MAJOR", "MINOR", "PATCH")]
    if calling_build is None or (build / "CMakeCache.txt").exists() or not all(parts):
        return []
    version = ".".join(parts)
    source = calling_build / "CMakeFiles" / version
    ours = shutil.which("cmake")
    if (not cache.get("CMAKE_COMMAND") or ours is None or not (source / "CMakeSystem.cmake").is_file()
            or os.path.realpath(cache["CMAKE_COMMAND"]) != os.path.realpath(ours)):
        return []
    dest = build / "CMakeFiles" / version
    dest.mkdir(parents=True, exist_ok=True)
    for f in source.iterdir():
        if f.is_file():
            shutil.copy2(f, dest / f.name)
    return ["-DCMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1"]


def configure(src: Path, build: Path, args: list[str], calling_build: Path | None, cache: dict[str, str],
              timeout: float) -> proc.Result:
    """cmake -S src -B build with args, seeded from the calling build (seed_platform) when it can
    be; a seeded configure that fails is run again with CMake's own detection, in a clean tree."""
    seed = seed_platform(calling_build, cache, build)
    res = proc.run(proc.background(["cmake", "-S", str(src), "-B", str(build)] + args + seed), timeout=timeout)
    if not res.ok and seed:
        shutil.rmtree(build, ignore_errors=True)
        res = proc.run(proc.background(["cmake", "-S", str(src), "-B", str(build)] + args), timeout=timeout)
    return res


def trim_compiler_output(text: str, root: Path | None = None, limit: int = 4000) -> str:
    """The useful part of a failed build: the diagnostics (not the compiler command lines), with
    the workspace path cut so that files read labs/<lab>/<file>, capped."""
    if root is not None:
        text = text.replace(str(root) + "/", "")
    lines = [ln for ln in text.splitlines()
             if not re.match(r"^\s*(/\S*/)?(nvcc|c\+\+|g\+\+|gcc|clang\+\+)\s", ln) and not ln.startswith("[")
             and not ln.startswith("FAILED: ") and "ninja: build stopped" not in ln]
    keep: list[int] = []
    for i, ln in enumerate(lines):
        if re.search(r"\berror\b|undefined reference|fatal", ln, re.IGNORECASE):
            keep.extend(range(max(0, i - 1), min(len(lines), i + 4)))
    chosen = [lines[i] for i in sorted(set(keep))] if keep else lines[-40:]
    out = "\n".join(chosen)
    return out if len(out) <= limit else out[:limit] + "\n[... trimmed]"
