"""Where things are: the course source tree, the build tree, the runner binaries, the labs."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from gpulab.errors import GpulabError

IMPLS = ("student", "reference")


def _default_source_dir() -> Path:
    """autograder/gpulab/paths.py -> the repository root (two levels above the package)."""
    return Path(__file__).resolve().parent.parent.parent


def _guess_build_dir(source: Path) -> Path | None:
    """Without the launcher's GPULAB_BUILD_DIR, pick the most recently configured build/<preset>."""
    candidates = [p.parent for p in (source / "build").glob("*/CMakeCache.txt")]
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p / "CMakeCache.txt").stat().st_mtime)


def read_cmake_cache(build: Path) -> dict[str, str]:
    """NAME -> value of every entry in build/CMakeCache.txt (types dropped)."""
    out: dict[str, str] = {}
    cache = build / "CMakeCache.txt"
    if not cache.is_file():
        return out
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"^([A-Za-z0-9_.+-]+):([A-Z]+)=(.*)$", line)
        if m:
            out[m.group(1)] = m.group(3)
    return out


def reconfigure_hint(source: Path, build: Path) -> str:
    """The commands that make a build tree where it is now (presets build in <source>/build/<name>)."""
    if build.parent == source / "build":
        return f"cd {source} && cmake --preset {build.name} --fresh && cmake --build --preset {build.name}"
    return f"cmake -S {source} -B {build} --fresh && cmake --build {build}"


@functools.lru_cache(maxsize=None)
def _configured_elsewhere(source: Path, build: Path) -> str:
    """'' when the build tree's CMake cache was made for this build tree and this source tree, else
    the one-line refusal. A copied or moved course keeps absolute paths in its cache, its
    build files, its CTest files and its `gpulab` launcher: used as it is, it would build, test
    and grade the tree it was copied from."""
    cache = read_cmake_cache(build)
    for key, here in (("CMAKE_CACHEFILE_DIR", build), ("CMAKE_HOME_DIRECTORY", source)):
        there = cache.get(key)
        if there and os.path.realpath(there) != os.path.realpath(here):
            return (f"gpulab: the build tree {build} was configured for {there} (the course was copied or moved), "
                    f"so it would use that tree; re-configure it here: {reconfigure_hint(source, build)}")
    return ""


@dataclass(frozen=True)
class Course:
    """One course checkout and (optionally) one of its build trees."""

    source: Path
    build: Path | None

    @staticmethod
    def from_environment() -> "Course":
        """The launcher (build/<preset>/gpulab) sets GPULAB_SOURCE_DIR and GPULAB_BUILD_DIR."""
        env_src = os.environ.get("GPULAB_SOURCE_DIR")
        source = Path(env_src).resolve() if env_src else _default_source_dir()
        env_build = os.environ.get("GPULAB_BUILD_DIR")
        build = Path(env_build).resolve() if env_build else _guess_build_dir(source)
        return Course(source=source, build=build)

    def require_build(self) -> Path:
        """The build tree, or a clear error that says how to make one."""
        if self.build is None or not (self.build / "CMakeCache.txt").is_file():
            raise GpulabError(
                "gpulab: no configured build tree found; run `cmake --preset default && "
                "cmake --build --preset default` and use ./build/default/gpulab")
        moved = _configured_elsewhere(self.source, self.build)
        if moved:
            raise GpulabError(moved)
        return self.build

    def runner(self, lab: str, impl: str) -> Path:
        """Path of gpulab-<lab>-<impl> in the build tree (it may not exist)."""
        return self.require_build() / "labs" / lab / f"gpulab-{lab}-{impl}"

    def require_runner(self, lab: str, impl: str) -> Path:
        """The runner binary, or the one-line reason it is not there and what to do."""
        path = self.runner(lab, impl)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        if lab not in self.labs():
            known = ", ".join(self.labs()) or "none"
            raise GpulabError(f"gpulab: unknown lab '{lab}' (labs: {known})")
        if impl == "reference" and not (self.source / "solutions" / lab).is_dir():
            # The handout: the compiled reference shipped in reference/ (workspace/shipped_reference.py).
            shipped = self.source / "reference" / f"gpulab-{lab}-reference"
            if shipped.is_file() and os.access(shipped, os.X_OK):
                return shipped
            raise GpulabError(
                f"gpulab: no reference implementation of '{lab}': neither solutions/{lab}/ nor a shipped "
                f"reference/gpulab-{lab}-reference is in this checkout; use --impl student")
        raise GpulabError(
            f"gpulab: {path} is not built; run `cmake --build {self.require_build()} "
            f"--target gpulab-{lab}-{impl}`")

    def info_tool(self) -> Path:
        """The C++ device-information tool (common/tools/info.cpp)."""
        return self.require_build() / "common" / "gpulab-info"

    def rubric_path(self, lab: str) -> Path:
        return self.source / "labs" / lab / "rubric.toml"

    def hidden_path(self, lab: str) -> Path:
        return self.source / "autograder" / "hidden" / f"{lab}.toml"

    def labs(self) -> list[str]:
        """Labs with a runner in the build tree or a rubric in the source tree, sorted."""
        found: set[str] = set()
        if self.build is not None and (self.build / "labs").is_dir():
            for lab_dir in (self.build / "labs").iterdir():
                if any((lab_dir / f"gpulab-{lab_dir.name}-{impl}").is_file() for impl in IMPLS):
                    found.add(lab_dir.name)
        labs_src = self.source / "labs"
        if labs_src.is_dir():
            for rubric in labs_src.glob("*/rubric.toml"):
                found.add(rubric.parent.name)
        return sorted(found)
