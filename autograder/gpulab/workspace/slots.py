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
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Iterator

from gpulab import handout, locks, proc
from gpulab.errors import EXIT_INTERNAL, GpulabError
from gpulab.paths import read_cmake_cache
from gpulab.rubric import load_rubric
from gpulab.workspace import stamp as slot_stamp
from gpulab.workspace import symbols
from gpulab.workspace.calling_build import (BUILD_TIMEOUT, build_calling_target, configure, configure_args, not_release,
                                            trim_compiler_output)

CONFIGURE_TIMEOUT = 600
MAX_AUTO_SLOTS = 8     # concurrent builds in the default workspace before a grade waits
SLOT_POLL = 1.0        # seconds between looks for a free slot
LOCK_NAME = "lock"     # <slot>/lock: held (flock) by whoever uses the slot


PREBUILT_KEY = "GPULAB_PREBUILT_COMMON"   # common/CMakeLists.txt
COMMON_ARCHIVE = Path("common") / "libgpulab_common.a"
HARNESS_KEY = "GPULAB_PREBUILT_HARNESS"   # common/cmake/GpulabLab.cmake
HARNESS_LIST = "harness-objects.txt"      # <build>/labs/<lab>/: the lab's harness objects, a path a line
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")   # a student file with an object of its own
COMPILED = "compiled.json"                # <slot>/: what each student object was compiled from (Slot.place)


def prebuilt_candidate(calling_build: Path | None, cache: dict[str, str], course_src: Path) -> Path | None:
    """The calling build's libgpulab_common.a when a slot may link it instead of compiling common/
    (the same sources, the same compiler settings), else None: it must exist (the instructor built
    the course), come from this course tree, and be compiled without device debug or extra flags
    (the slot would otherwise link code built otherwise than its own)."""
    if calling_build is None or not (calling_build / COMMON_ARCHIVE).is_file():
        return None
    if not_release(cache):   # a slot builds Release (configure_args): not a Debug build's library
        return None
    if any(cache.get(k, "").strip() for k in ("CMAKE_CXX_FLAGS", "CMAKE_CUDA_FLAGS", PREBUILT_KEY)):
        return None
    home = cache.get("CMAKE_HOME_DIRECTORY")
    if not home or os.path.realpath(home) != os.path.realpath(course_src):
        return None
    return calling_build / COMMON_ARCHIVE


@dataclass
class BuildResult:
    ok: bool
    runner: Path | None
    log: str
    seconds: float
    symbol_problems: list[str] = field(default_factory=list)
    symbol_note: str = ""
    # {student file: the CUB/Thrust kernels its object instantiates} (symbols.library_kernels)
    library_kernels: dict[str, list[str]] = field(default_factory=dict)


class Slot:
    """One workspace copy: <work>/slot-<i>/{course,build}. Only the process (or batch thread) that
    holds the slot's lock (Workspace.slot) touches it."""

    def __init__(self, course_src: Path, root: Path, cache: dict[str, str], calling_build: Path | None = None) -> None:
        self.course_src = course_src
        self.root = root
        self.src = root / "course"
        self.build = root / "build"
        self.prebuilt = root / "prebuilt"   # the calling build's libgpulab_common.a, copied (read-only in the jail)
        self.cache = cache
        self.calling_build = calling_build
        self.note = ""   # why this slot had to be rebuilt from scratch (goes into the grade's notes)
        self._protected: set[str] | None = None
        self._labs: dict[str, list[str]] | None = None

    def prepare(self, fingerprint: str) -> None:
        """Exports the handout and configures it, unless this slot already holds this exact course
        (see stamp.py); a slot made elsewhere (copied, moved, another checkout) is rebuilt."""
        calling_lib = prebuilt_candidate(self.calling_build, self.cache, self.course_src)
        copied = self.prebuilt / COMMON_ARCHIVE.name
        args = self._configure_args(copied if calling_lib else None)
        stamp = slot_stamp.stamp(self.root, self.course_src, fingerprint, args)
        verdict = slot_stamp.check(self.root, self.build, stamp)
        if verdict.current and (calling_lib is None or copied.is_file()):
            return
        self.note = verdict.foreign
        if verdict.foreign:
            # Its CMake cache and build files name another tree's paths: nothing of it is reused.
            shutil.rmtree(self.build, ignore_errors=True)
        if self.src.exists():
            shutil.rmtree(self.src)
        self.root.mkdir(parents=True, exist_ok=True)
        slot_stamp.clear(self.root)   # a half-made slot must not pass for a finished one
        (self.root / COMPILED).unlink(missing_ok=True)   # a new course: no student object is taken as is
        handout.export(self.course_src, self.src)
        if calling_lib is not None and not self._take_prebuilt(calling_lib, copied):
            args = self._configure_args(None)
            stamp = slot_stamp.stamp(self.root, self.course_src, fingerprint, args)
        res = configure(self.src, self.build, args, self.calling_build, self.cache, CONFIGURE_TIMEOUT)
        if not res.ok:
            raise GpulabError("gpulab grade: the pristine course does not configure in the grading workspace "
                              f"{self.root}:\n{trim_compiler_output(res.stdout + res.stderr)}", EXIT_INTERNAL)
        slot_stamp.write(self.root, stamp)

    def _configure_args(self, prebuilt: Path | None) -> list[str]:
        """The calling build's settings, and the prebuilt common library and harness folder or
        explicitly none (a cache entry would otherwise outlive the slot's next configure)."""
        return configure_args(self.cache) + [f"-D{PREBUILT_KEY}={prebuilt or ''}",
                                             f"-D{HARNESS_KEY}={self.prebuilt if prebuilt else ''}"]

    def _same_as_course(self, files: list[PurePosixPath]) -> bool:
        """Each course file is byte for byte the same in the slot's exported copy."""
        for rel in files:
            mine = self.src / handout.destination(rel)
            try:
                if not mine.is_file() or mine.read_bytes() != (self.course_src / rel).read_bytes():
                    return False
            except OSError:
                return False
        return True

    def _take_prebuilt(self, calling_lib: Path, dest: Path) -> bool:
        """Brings the calling build's libgpulab_common.a up to date (in that build, taking turns
        with other graders building there) and copies it into the slot, if the slot's common/ is
        byte for byte the course's (the handout export strips solution blocks; common/ has none,
        and a library built from other sources is never linked); then the labs' harness objects
        the same way (_take_harnesses). False: compile common/ here."""
        exported = handout.exported_files(self.course_src)
        if not self._same_as_course([rel for rel in exported if rel.parts[:1] == ("common",)]):
            return False
        calling_build = calling_lib.parents[1]
        res = build_calling_target(calling_build, "gpulab_common")
        if not res.ok or not calling_lib.is_file():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.copy2(calling_lib, tmp)
        os.replace(tmp, dest)
        self._take_harnesses(calling_build, exported)
        return True

    def _take_harnesses(self, calling_build: Path, exported: list[PurePosixPath]) -> None:
        """Copies each lab's harness objects from the calling build into prebuilt/<lab>/ and lists
        them in prebuilt/<lab>/objects.txt (GpulabLab.cmake links them instead of compiling the
        harness), for every lab whose files other than its student files are byte for byte the
        course's: the harness includes only those and common/ (test_lab_cmake.py). A lab whose
        harness the calling build cannot bring up to date is compiled here."""
        labs = {}
        for lab, files in self._student_files_by_lab().items():
            student = set(files)
            mine = [rel for rel in exported if rel.parts[:2] == ("labs", lab)]
            if (calling_build / "labs" / lab / HARNESS_LIST).is_file() and self._same_as_course(
                    [rel for rel in mine if str(PurePosixPath(*rel.parts[2:])) not in student]):
                labs[lab] = calling_build / "labs" / lab / HARNESS_LIST
        if not labs or not build_calling_target(calling_build, [f"{lab}-harness" for lab in labs]).ok:
            return
        for lab, listing in labs.items():
            folder = self.prebuilt / lab
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            copies = []
            for i, line in enumerate(l.strip() for l in listing.read_text().splitlines() if l.strip()):
                copy = folder / f"{i}-{Path(line).name}"
                shutil.copy2(line, copy)
                copies.append(str(copy))
            (folder / "objects.txt").write_text("".join(c + "\n" for c in copies))

    def common_archive(self) -> Path:
        """The common library the slot's runners link: compiled here, or the prebuilt copy."""
        here = self.build / COMMON_ARCHIVE
        return here if here.is_file() else self.prebuilt / COMMON_ARCHIVE.name

    def _student_files_by_lab(self) -> dict[str, list[str]]:
        """{lab: its student files} for every lab of the course with a readable rubric."""
        if self._labs is None:
            self._labs = {}
            for rubric in sorted(self.course_src.glob("labs/*/rubric.toml")):
                try:
                    self._labs[rubric.parent.name] = list(load_rubric(rubric).student_files)
                except GpulabError:
                    continue
        return self._labs

    def _compiled(self) -> dict[str, str]:
        """{"<lab>/<file>": sha256 of the bytes its object was compiled from}, for the student
        objects of builds seen to succeed (COMPILED); {} when unreadable."""
        try:
            data = json.loads((self.root / COMPILED).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _record_compiled(self, compiled: dict[str, str]) -> None:
        tmp = self.root / (COMPILED + ".tmp")
        tmp.write_text(json.dumps(compiled, sort_keys=True))
        os.replace(tmp, self.root / COMPILED)

    def place(self, lab: str, student_files: list[str], contents: dict[str, bytes]) -> list[str]:
        """Makes the slot's student files of `lab` the submission's (the handout's where it has
        none). A file is left alone when it already holds those bytes and either COMPILED says
        its object was compiled from them or it has no object yet: then ninja recompiles only
        what changed. Every other file is written and its object removed, so it is compiled
        whatever the times say (an object newer than its source proves nothing: a copy keeps its
        original's time). Returns the files written."""
        compiled = self._compiled()
        written = []
        for f in student_files:
            dst = self.src / "labs" / lab / f
            want = contents[f] if f in contents else handout.exported_bytes(self.course_src / "labs" / lab / f)
            key = f"{lab}/{f}"
            try:
                same = dst.is_file() and not dst.is_symlink() and dst.read_bytes() == want
            except OSError:
                same = False
            objects = self.student_objects(lab, [f])
            unbuilt = f.endswith(SOURCE_SUFFIXES) and not objects
            if same and (unbuilt or compiled.get(key) == hashlib.sha256(want).hexdigest()):
                continue
            for obj in objects:
                obj.unlink()
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(dst.name + ".gpulab-tmp")
            tmp.write_bytes(want)
            os.replace(tmp, dst)
            compiled.pop(key, None)
            written.append(f)
        if written:
            self._record_compiled(compiled)
        return written

    def build_target(self, target: str, timeout: float = BUILD_TIMEOUT,
                     run: Callable[..., proc.Result] = proc.run) -> proc.Result:
        return run(["cmake", "--build", str(self.build), "--target", target], timeout=timeout)

    def build_student(self, lab: str, student_files: list[str], contents: dict[str, bytes], dest: Path,
                      run: Callable[..., proc.Result] = proc.run) -> BuildResult:
        """Place the submission's files (place), rebuild gpulab-<lab>-student, copy the runner to
        dest (the slot moves on). `run` starts the build (the grader's: in the sandbox, where the
        course cannot be reached). The slot keeps the submission's files afterwards: the next
        build rewrites every student file that differs, so nothing of this one reaches it."""
        start = time.monotonic()
        # The build may read the slot's sources: no other lab's files may be a previous student's
        # (a compiler error quotes what it includes); this lab's are all this submission's.
        for other, files in self._student_files_by_lab().items():
            if other != lab:
                self.place(other, [f for f in files if (self.course_src / "labs" / other / f).is_file()], {})
        self.place(lab, student_files, contents)
        # Until this build is seen to succeed, none of the lab's objects is taken as compiled from
        # its file (a failed, timed-out or killed build may leave partial objects).
        compiled = self._compiled()
        self._record_compiled({k: v for k, v in compiled.items() if k.split("/", 1)[0] != lab})
        target = f"gpulab-{lab}-student"
        res = self.build_target(target, run=run)
        log = res.stdout + res.stderr
        runner = self.build / "labs" / lab / target
        if not res.ok or not runner.is_file():
            why = "build timed out" if res.timed_out else "compile error"
            return BuildResult(False, None, f"{why}:\n{trim_compiler_output(log, self.src)}", time.monotonic() - start)
        compiled = self._compiled()
        for f in student_files:
            held = self.src / "labs" / lab / f
            if held.is_file() and not held.is_symlink():
                compiled[f"{lab}/{f}"] = hashlib.sha256(held.read_bytes()).hexdigest()
        self._record_compiled(compiled)
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / target
        shutil.copy2(runner, out)
        problems, note = self.check_symbols(lab, list(contents))
        library = symbols.library_kernels(self.student_objects(lab, list(contents)))
        return BuildResult(True, out, log, time.monotonic() - start, problems, note, library)

    def student_objects(self, lab: str, files: list[str]) -> list[Path]:
        """The objects the build compiled from the student's files (those that exist)."""
        obj_dir = self.build / "labs" / lab / "CMakeFiles" / f"{lab}-student.dir"
        objects = [obj_dir / f"{f}.o" for f in files if f.endswith(SOURCE_SUFFIXES)]
        return [o for o in objects if o.is_file()]

    def check_symbols(self, lab: str, files: list[str]) -> tuple[list[str], str]:
        """nm over the student's objects (see symbols.py); a missing object only skips the check."""
        objects = self.student_objects(lab, files)
        if not objects:
            return [], "symbol check not run (student objects not found)"
        if self._protected is None:
            archive = self.common_archive()
            self._protected = symbols.strong_definitions(archive) if archive.is_file() else set()
        return symbols.check_objects(objects, self._protected)


class Workspace:
    """The slots under the work directory; `slot()` lends one to a build, locked (locks.py) so that
    no other thread or `gpulab grade` process uses it until the build's runner has been copied out.

    The default workspace (<build>/grading) grows: a build takes the first free slot, adding one
    when all are busy, up to MAX_AUTO_SLOTS; then it waits. A workspace named with --work has
    exactly `slots` slots (the caller sized it) and a build waits for one of them."""

    def __init__(self, course_src: Path, work: Path, calling_build: Path | None, slots: int = 1,
                 grow: bool = True, log: Callable[[str], None] = lambda msg: None) -> None:
        self.cache = read_cmake_cache(calling_build) if calling_build else {}
        self.calling_build = calling_build
        self.course_src = course_src
        self.work = work
        self.fixed = max(1, slots)
        self.limit = max(self.fixed, MAX_AUTO_SLOTS) if grow else self.fixed
        self.log = log
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    def fingerprint(self) -> str:
        """The content of the course the slots are made from (computed once per grader)."""
        with self._lock:
            if self._fingerprint is None:
                self._fingerprint = slot_stamp.fingerprint(self.course_src)
            return self._fingerprint

    def _take(self) -> tuple[Slot, locks.FileLock]:
        waited = 0.0
        while True:
            for i in range(self.limit):
                root = self.work / f"slot-{i}"
                lock = locks.FileLock(root / LOCK_NAME)
                if lock.acquire(wait=False):
                    return Slot(self.course_src, root, self.cache, self.calling_build), lock
            if waited == 0.0:
                first = locks.FileLock(self.work / "slot-0" / LOCK_NAME).holder()
                self.log(f"waiting for a free grading workspace slot in {self.work} (all {self.limit} in use"
                         + (f"; slot-0 by {first}" if first else "") + ")")
            time.sleep(SLOT_POLL)
            waited += SLOT_POLL

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        s, lock = self._take()
        try:
            s.prepare(self.fingerprint())
            if s.note:
                self.log(s.note)
            yield s
        finally:
            lock.release()
