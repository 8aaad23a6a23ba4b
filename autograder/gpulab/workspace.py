"""The grading workspace: a pristine student copy of the course, configured once, where each
submission's allowed files are overlaid and only `gpulab-<lab>-student` is rebuilt.

The copy is the student handout (no solutions/, no hidden tests, solution blocks stubbed): the
student code is built exactly against what students were given and cannot reach the reference.
Several slots (one per parallel build) live side by side under the work directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from gpulab import handout, proc, symbols
from gpulab.errors import EXIT_INTERNAL, GpulabError

CONFIGURE_TIMEOUT = 600
BUILD_TIMEOUT = 900
# Cache entries copied from the build the grader was started from (the GPU machine needs the
# prefix of the carried headers; the architecture must match the GPU).
INHERITED = ("CMAKE_PREFIX_PATH", "CMAKE_CUDA_ARCHITECTURES", "CMAKE_BUILD_TYPE", "CMAKE_CUDA_COMPILER",
             "CMAKE_CXX_COMPILER", "CMAKE_MAKE_PROGRAM", "CMAKE_CUDA_HOST_COMPILER", "Catch2_DIR",
             "nlohmann_json_DIR", "CLI11_DIR")


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


def configure_args(cache: dict[str, str]) -> list[str]:
    """-D options that make the workspace build like the calling build (minus warnings-as-errors:
    a student's warning is not a compile error)."""
    args = ["-G", cache.get("CMAKE_GENERATOR", "Ninja")]
    for key in INHERITED:
        if cache.get(key):
            args.append(f"-D{key}={cache[key]}")
    if "CMAKE_BUILD_TYPE" not in cache or not cache["CMAKE_BUILD_TYPE"]:
        args.append("-DCMAKE_BUILD_TYPE=Release")
    args += ["-DGPULAB_WARNINGS_AS_ERRORS=OFF", "-DGPULAB_DEVICE_DEBUG=OFF"]
    return args


@dataclass
class BuildResult:
    ok: bool
    runner: Path | None
    log: str
    seconds: float
    symbol_problems: list[str] = field(default_factory=list)
    symbol_note: str = ""


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


class Slot:
    """One workspace copy: <work>/slot-<i>/{course,build}."""

    def __init__(self, course_src: Path, root: Path, cache: dict[str, str]) -> None:
        self.course_src = course_src
        self.root = root
        self.src = root / "course"
        self.build = root / "build"
        self.cache = cache
        self._protected: set[str] | None = None

    def _stamp(self) -> str:
        """Identifies the pristine content: a hash of every exported file's path, size and mtime."""
        h = hashlib.sha256()
        for rel in handout.exported_files(self.course_src):
            st = (self.course_src / rel).stat()
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        h.update(json.dumps(configure_args(self.cache)).encode())
        return h.hexdigest()

    def prepare(self) -> None:
        """Exports the handout and configures it, unless this slot already has this exact course."""
        stamp = self._stamp()
        stamp_file = self.root / "stamp"
        if stamp_file.is_file() and stamp_file.read_text() == stamp and (self.build / "CMakeCache.txt").is_file():
            return
        if self.src.exists():
            shutil.rmtree(self.src)
        self.root.mkdir(parents=True, exist_ok=True)
        handout.export(self.course_src, self.src)
        res = proc.run(["cmake", "-S", str(self.src), "-B", str(self.build)] + configure_args(self.cache),
                       timeout=CONFIGURE_TIMEOUT)
        if not res.ok:
            raise GpulabError("gpulab grade: the pristine course does not configure in the grading workspace "
                              f"{self.root}:\n{trim_compiler_output(res.stdout + res.stderr)}", EXIT_INTERNAL)
        stamp_file.write_text(stamp)

    def restore(self, lab: str, files: list[str]) -> None:
        """Puts the handout's version of a lab's student files back."""
        for f in files:
            dst = self.src / "labs" / lab / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            handout.export_file(self.course_src / "labs" / lab / f, dst)

    def overlay(self, lab: str, contents: dict[str, bytes]) -> None:
        """Writes the submission's files (only allowed ones: the caller checked the names)."""
        for f, data in contents.items():
            dst = self.src / "labs" / lab / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(dst.name + ".gpulab-tmp")
            tmp.write_bytes(data)
            os.replace(tmp, dst)

    def build_target(self, target: str, timeout: float = BUILD_TIMEOUT,
                     run: Callable[..., proc.Result] = proc.run) -> proc.Result:
        return run(["cmake", "--build", str(self.build), "--target", target], timeout=timeout)

    def build_student(self, lab: str, student_files: list[str], contents: dict[str, bytes], dest: Path,
                      run: Callable[..., proc.Result] = proc.run) -> BuildResult:
        """Restore, overlay, rebuild gpulab-<lab>-student, copy the runner to dest (the slot moves on).
        `run` starts the build (the grader's: in the sandbox, where the course cannot be reached)."""
        start = time.monotonic()
        self.restore(lab, student_files)
        self.overlay(lab, contents)
        target = f"gpulab-{lab}-student"
        res = self.build_target(target, run=run)
        log = res.stdout + res.stderr
        runner = self.build / "labs" / lab / target
        if not res.ok or not runner.is_file():
            why = "build timed out" if res.timed_out else "compile error"
            return BuildResult(False, None, f"{why}:\n{trim_compiler_output(log, self.src)}", time.monotonic() - start)
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / target
        shutil.copy2(runner, out)
        problems, note = self.check_symbols(lab, list(contents))
        self.restore(lab, student_files)
        return BuildResult(True, out, log, time.monotonic() - start, problems, note)

    def check_symbols(self, lab: str, files: list[str]) -> tuple[list[str], str]:
        """nm over the student's objects (see symbols.py); a missing object only skips the check."""
        obj_dir = self.build / "labs" / lab / "CMakeFiles" / f"{lab}-student.dir"
        objects = [obj_dir / f"{f}.o" for f in files if f.endswith((".cu", ".cpp", ".cc", ".cxx"))]
        objects = [o for o in objects if o.is_file()]
        if not objects:
            return [], "symbol check not run (student objects not found)"
        if self._protected is None:
            archive = self.build / "common" / "libgpulab_common.a"
            self._protected = symbols.strong_definitions(archive) if archive.is_file() else set()
        return symbols.check_objects(objects, self._protected)


class Workspace:
    """A pool of slots; `slot()` lends one to a build (parallel builds use different slots)."""

    def __init__(self, course_src: Path, work: Path, calling_build: Path | None, slots: int = 1) -> None:
        cache = read_cmake_cache(calling_build) if calling_build else {}
        self.work = work
        self.slots = [Slot(course_src, work / f"slot-{i}", cache) for i in range(max(1, slots))]
        self._free: queue.Queue[Slot] = queue.Queue()
        self._prepared: set[int] = set()
        self._lock = threading.Lock()
        for s in self.slots:
            self._free.put(s)

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        s = self._free.get()
        try:
            with self._lock:
                need = id(s) not in self._prepared
            if need:
                s.prepare()
                with self._lock:
                    self._prepared.add(id(s))
            yield s
        finally:
            self._free.put(s)
