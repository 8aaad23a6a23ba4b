"""The grading workspace (workspace/slots.py, workspace/stamp.py) over a fake course and a fake cmake
(tests/fakes/fake_cmake.py): one owner per slot, concurrent `gpulab grade` processes both scored
right (issue 10, item 1), and a copied or foreign slot rebuilt, never used as it is (item 2)."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import unittest
from unittest import mock
from pathlib import Path

from gpulab.workspace import stamp as slot_stamp
from gpulab.checks.options import Options
from gpulab.grading.pipeline import Grader
from gpulab import proc
from gpulab.workspace.slots import COMPILED, Slot, Workspace
from tests.helpers import REFERENCE, TempDir, env, fake_cmake_on_path, fake_tools_env, make_course, submission_dir

AUTOGRADER = Path(__file__).resolve().parents[1]
FULL = 34   # the fake rubric's maximum (tests/helpers.RUBRIC)


class WorkspaceCase(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.course = make_course(self.tmp)
        self.env_values = dict(fake_tools_env(self.tmp), PATH=fake_cmake_on_path(self.tmp),
                               FAKE_CMAKE_BUILD_SECONDS=None, FAKE_CMAKE_TREE=None)
        self.env = env(**self.env_values)
        self.env.__enter__()

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def grade_in_process(self, behaviour, work: Path, name="alice"):
        grader = Grader(self.course, work, Options(sandbox=False))
        return grader.grade(submission_dir(self.tmp, behaviour, name), self.tmp / "out" / name)

    def cli(self, *args: str, extra_env: dict | None = None) -> subprocess.Popen:
        """`gpulab grade ...` as its own process, as the launcher runs it."""
        e = {k: v for k, v in os.environ.items()}
        e.update(GPULAB_BUILD_DIR=str(self.course.build), GPULAB_SOURCE_DIR=str(self.course.source),
                 PYTHONPATH=str(AUTOGRADER), **(extra_env or {}))
        return subprocess.Popen([sys.executable, "-m", "gpulab", "grade", *args, "--no-sandbox", "--format", "json"],
                                env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class SlotOwnershipTest(WorkspaceCase):
    def test_a_held_slot_is_not_lent_again(self):
        """Threads of one grader (batch --jobs) and separate processes: a slot has one owner."""
        ws = Workspace(self.course.source, self.tmp / "work", self.course.build, 1)
        with ws.slot() as first:
            roots: list[Path] = []

            def second():   # another thread of the same process: another open of the lock, another slot
                with ws.slot() as s:
                    roots.append(s.root)

            t = threading.Thread(target=second, daemon=True)
            t.start()
            t.join(60)
            self.assertEqual(len(roots), 1, "a second build waited for a slot although it could take another")
            self.assertNotEqual(roots[0], first.root)
            other = subprocess.run(
                [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR);"
                 "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", str(first.root / "lock")],
                capture_output=True, text=True)
            self.assertNotEqual(other.returncode, 0, "another process could lock a slot in use")
        self.assertEqual(first.root.name, "slot-0")

    def test_a_fixed_workspace_waits_for_its_slot(self):
        said: list[str] = []
        ws = Workspace(self.course.source, self.tmp / "work", self.course.build, 1, grow=False, log=said.append)
        order: list[str] = []
        holding = threading.Event()

        def first():
            with ws.slot():
                holding.set()
                time.sleep(1.5)
                order.append("first done")

        t = threading.Thread(target=first)
        t.start()
        holding.wait()
        with ws.slot() as s:
            order.append("second in")
            self.assertEqual(s.root.name, "slot-0")
        t.join()
        self.assertEqual(order, ["first done", "second in"])
        self.assertTrue(any("waiting for a free grading workspace slot" in m for m in said), said)

    def test_two_grades_at_once_both_score_right(self):
        """The issue's repro: `gpulab grade A & sleep; gpulab grade B`, the second starting while
        the first compiles in slot-0. Each must be graded from its own files."""
        warm = self.cli(str(submission_dir(self.tmp, {}, "warm")), "--out", str(self.tmp / "o0"))
        warm.communicate(timeout=120)                           # slot-0 ready: both go straight to building
        slow = {"FAKE_CMAKE_BUILD_SECONDS": "3"}
        a = self.cli(str(submission_dir(self.tmp, REFERENCE, "ref")), "--lab", "scan",
                     "--out", str(self.tmp / "o1"), extra_env=slow)
        time.sleep(1.0)
        b = self.cli(str(submission_dir(self.tmp, {}, "starter")), "--out", str(self.tmp / "o2"), extra_env=slow)
        out_a, err_a = a.communicate(timeout=180)
        out_b, err_b = b.communicate(timeout=180)
        self.assertEqual(json.loads(out_a)["points"], FULL, err_a)
        self.assertEqual(json.loads(out_b)["points"], 0, err_b)
        for out in ("o1", "o2"):
            self.assertEqual(json.loads((self.tmp / out / "results.json").read_text())["score"],
                             FULL if out == "o1" else 0)

    def test_two_grades_in_one_named_workspace_take_turns(self):
        work = self.tmp / "named"
        slow = {"FAKE_CMAKE_BUILD_SECONDS": "2"}
        a = self.cli(str(submission_dir(self.tmp, REFERENCE, "ref")), "--work", str(work),
                     "--out", str(self.tmp / "o1"), extra_env=slow)
        time.sleep(1.0)
        b = self.cli(str(submission_dir(self.tmp, {}, "starter")), "--work", str(work),
                     "--out", str(self.tmp / "o2"), extra_env=slow)
        out_a, err_a = a.communicate(timeout=180)
        out_b, err_b = b.communicate(timeout=180)
        self.assertEqual(json.loads(out_a)["points"], FULL, err_a)
        self.assertEqual(json.loads(out_b)["points"], 0, err_b)
        self.assertEqual(sorted(p.name for p in work.iterdir() if p.name.startswith("slot-")), ["slot-0"])
        self.assertIn("waiting for a free grading workspace slot", err_a + err_b)


class PrebuiltCommonTest(WorkspaceCase):
    """A slot links the calling build's libgpulab_common.a instead of compiling common/ when that
    library is this course's, compiled plainly; otherwise it compiles common/ itself."""

    def setUp(self):
        super().setUp()
        (self.course.source / "common" / "src").mkdir(parents=True)
        (self.course.source / "common" / "src" / "timing.cu").write_text("// the timer\n")
        self.lib = self.course.build / "common" / "libgpulab_common.a"
        self.lib.parent.mkdir(parents=True)
        self.lib.write_bytes(b"!<arch>\nfake archive\n")
        self.log = self.tmp / "common-builds.log"
        self.set_cache()

    def set_cache(self, **extra: str) -> None:
        entries = {"CMAKE_GENERATOR:INTERNAL": "Ninja", "CMAKE_HOME_DIRECTORY:INTERNAL": str(self.course.source),
                   "CMAKE_CXX_FLAGS:STRING": "", "GPULAB_DEVICE_DEBUG:BOOL": "OFF",
                   "CMAKE_BUILD_TYPE:STRING": "Release", **extra}
        (self.course.build / "CMakeCache.txt").write_text("".join(f"{k}={v}\n" for k, v in entries.items()))

    def prebuilt_of_a_new_slot(self, **env_values: str) -> tuple[str, Path]:
        """(the slot's GPULAB_PREBUILT_COMMON, the archive its symbol check reads)."""
        ws = Workspace(self.course.source, self.tmp / "work", self.course.build, 1)
        with env(FAKE_CMAKE_COMMON_LOG=str(self.log), **env_values), ws.slot() as slot:
            cache = (slot.build / "CMakeCache.txt").read_text()
            value = next(l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("GPULAB_PREBUILT_COMMON:"))
            return value, slot.common_archive()

    def test_a_slot_links_the_calling_builds_library(self):
        value, archive = self.prebuilt_of_a_new_slot()
        self.assertEqual(value, str(self.tmp / "work" / "slot-0" / "prebuilt" / "libgpulab_common.a"))
        self.assertEqual(Path(value).read_bytes(), self.lib.read_bytes())
        self.assertEqual(archive, Path(value))
        self.assertEqual(self.log.read_text().split(), [str(self.course.build)], "brought up to date first")
        # The next grade finds the slot as it left it: no new configure, no new copy.
        self.assertEqual(self.prebuilt_of_a_new_slot()[0], value)
        self.assertEqual(len(self.log.read_text().split()), 1)

    def test_not_a_library_built_with_other_flags_or_device_debug(self):
        for extra in ({"CMAKE_CXX_FLAGS:STRING": "-fsanitize=address"}, {"GPULAB_DEVICE_DEBUG:BOOL": "ON"},
                      {"CMAKE_HOME_DIRECTORY:INTERNAL": "/another/course"}):
            with self.subTest(extra=extra):
                shutil.rmtree(self.tmp / "work", ignore_errors=True)
                self.set_cache(**extra)
                self.assertEqual(self.prebuilt_of_a_new_slot()[0], "")

    def test_not_when_the_handouts_common_differs(self):
        (self.course.source / "common" / "src" / "timing.cu").write_text(
            "// BEGIN SOLUTION\nint secret;\n// END SOLUTION\n")
        self.assertEqual(self.prebuilt_of_a_new_slot()[0], "")

    def test_not_when_the_calling_build_cannot_build_it(self):
        self.assertEqual(self.prebuilt_of_a_new_slot(FAKE_CMAKE_COMMON_FAILS="1")[0], "")


class PrebuiltHarnessTest(PrebuiltCommonTest):
    """With the common library, a slot takes each lab's harness objects from the calling build
    (prebuilt/<lab>/objects.txt, which GpulabLab.cmake links instead of compiling the harness)
    when the lab's files other than its student files are the course's."""

    def setUp(self):
        super().setUp()
        (self.course.source / "labs" / "scan" / "lab.cu").write_text("// the stage table\n")
        objects = self.course.build / "labs" / "scan" / "CMakeFiles" / "scan-harness.dir"
        objects.mkdir(parents=True)
        for name in ("lab.cu.o", "scan_model.cpp.o"):
            (objects / name).write_bytes(b"object " + name.encode())
        (self.course.build / "labs" / "scan" / "harness-objects.txt").write_text(
            f"{objects}/./lab.cu.o\n{objects}/./scan_model.cpp.o\n")
        self.harness_log = self.tmp / "harness-builds.log"

    def harness_of_a_new_slot(self, **env_values: str) -> tuple[str, list[str]]:
        """(the slot's GPULAB_PREBUILT_HARNESS, the objects its scan/objects.txt lists, read)."""
        shutil.rmtree(self.tmp / "work", ignore_errors=True)
        ws = Workspace(self.course.source, self.tmp / "work", self.course.build, 1)
        with env(FAKE_CMAKE_HARNESS_LOG=str(self.harness_log), **env_values), ws.slot() as slot:
            cache = (slot.build / "CMakeCache.txt").read_text()
            value = next(l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("GPULAB_PREBUILT_HARNESS:"))
            listing = slot.prebuilt / "scan" / "objects.txt"
            objects = [Path(p).read_text() for p in listing.read_text().split()] if listing.is_file() else []
            return value, objects

    def test_a_slot_links_the_calling_builds_harness_objects(self):
        value, objects = self.harness_of_a_new_slot()
        self.assertEqual(value, str(self.tmp / "work" / "slot-0" / "prebuilt"))
        self.assertEqual(objects, ["object lab.cu.o", "object scan_model.cpp.o"])
        self.assertEqual(self.harness_log.read_text().split(), ["scan-harness"], "brought up to date first")

    def test_not_when_a_harness_file_differs_in_the_handout(self):
        (self.course.source / "labs" / "scan" / "lab.cu").write_text(
            "// BEGIN SOLUTION\nint secret;\n// END SOLUTION\n")
        self.assertEqual(self.harness_of_a_new_slot()[1], [])

    def test_a_student_file_may_differ(self):
        # The starter's scan.cu is the student's in every grade: it never stops the harness's reuse.
        (self.course.source / "labs" / "scan" / "scan.cu").write_text(
            "// BEGIN SOLUTION\nint mine;\n// END SOLUTION\n{}\n")
        self.assertEqual(len(self.harness_of_a_new_slot()[1]), 2)

    def test_not_when_the_calling_build_cannot_build_it(self):
        self.assertEqual(self.harness_of_a_new_slot(FAKE_CMAKE_HARNESS_FAILS="1")[1], [])


class SlotIdentityTest(WorkspaceCase):
    def test_a_copied_workspace_is_rebuilt_not_used(self):
        """`cp -a` of a grading workspace: its build files still name the original's course
        (here the starter, untouched); used as it is, the copy would grade that instead."""
        original = self.tmp / "work"
        self.grade_in_process({}, original, "starter")
        copy = self.tmp / "copied-work"
        shutil.copytree(original, copy, symlinks=True)
        sub = self.grade_in_process(REFERENCE, copy, "ref")
        self.assertEqual(sub.points, FULL)
        self.assertTrue(any("copied or moved here" in n for n in sub.labs[0].notes), sub.labs[0].notes)
        cache = (copy / "slot-0" / "build" / "CMakeCache.txt").read_text()
        self.assertIn(f"CMAKE_CACHEFILE_DIR:INTERNAL={(copy / 'slot-0' / 'build').resolve()}", cache)
        again = self.grade_in_process(REFERENCE, copy, "ref2")   # now its own: used, no note
        self.assertEqual(again.points, FULL)
        self.assertFalse(any("copied" in n for n in again.labs[0].notes))

    def test_a_slot_of_another_course_tree_is_rebuilt(self):
        work = self.tmp / "work"
        self.grade_in_process({}, work)
        stamp = json.loads((work / "slot-0" / slot_stamp.STAMP).read_text())
        stamp["source"] = "/somewhere/else/course"
        (work / "slot-0" / slot_stamp.STAMP).write_text(json.dumps(stamp))
        sub = self.grade_in_process(REFERENCE, work, "ref")
        self.assertEqual(sub.points, FULL)
        self.assertTrue(any("another course tree (/somewhere/else/course)" in n for n in sub.labs[0].notes))

    def test_a_changed_course_is_re_exported(self):
        work = self.tmp / "work"
        self.grade_in_process({}, work)
        before = json.loads((work / "slot-0" / slot_stamp.STAMP).read_text())["fingerprint"]
        (self.course.source / "labs" / "scan" / "notes.md").write_text("new handout text\n")
        sub = self.grade_in_process(REFERENCE, work, "ref")
        self.assertEqual(sub.points, FULL)
        self.assertTrue((work / "slot-0" / "course" / "labs" / "scan" / "notes.md").is_file())
        self.assertNotEqual(json.loads((work / "slot-0" / slot_stamp.STAMP).read_text())["fingerprint"], before)
        self.assertFalse(any("rebuilt" in n for n in sub.labs[0].notes))

    def test_fingerprint_is_content_not_time(self):
        fp = slot_stamp.fingerprint(self.course.source)
        f = self.course.source / "labs" / "scan" / "scan.cu"
        os.utime(f, (1, 1))
        self.assertEqual(slot_stamp.fingerprint(self.course.source), fp)
        f.write_text(f.read_text() + "// edit\n")
        self.assertNotEqual(slot_stamp.fingerprint(self.course.source), fp)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(shutil.which("cmake") and shutil.which("c++"), "needs cmake and a C++ compiler")
class SeedPlatformTest(TempDir, unittest.TestCase):
    """A slot's first configure reuses the calling build's compiler detection (calling_build.
    seed_platform): real cmake on a one-file C++ project."""

    def configure(self, build: Path, *extra: str) -> str:
        res = subprocess.run(["cmake", "-S", str(self.src), "-B", str(build), *extra],
                             capture_output=True, text=True, check=True)
        return res.stdout

    def setUp(self):
        super().setUp()
        self.src = self.tmp / "src"
        self.src.mkdir()
        (self.src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\n"
                                                 "add_executable(p main.cpp)\n")
        (self.src / "main.cpp").write_text("int main() { return 0; }\n")
        self.calling = self.tmp / "calling"
        self.assertIn("The CXX compiler identification", self.configure(self.calling))

    def test_a_fresh_tree_skips_detection_and_builds(self):
        from gpulab.paths import read_cmake_cache
        from gpulab.workspace.calling_build import seed_platform
        fresh = self.tmp / "fresh"
        seed = seed_platform(self.calling, read_cmake_cache(self.calling), fresh)
        self.assertEqual(seed, ["-DCMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1"])
        out = self.configure(fresh, *seed)
        self.assertNotIn("compiler identification", out)
        self.assertNotIn("Detecting CXX compiler ABI", out)
        subprocess.run(["cmake", "--build", str(fresh)], capture_output=True, check=True)
        # A tree configured already, another cmake, or no calling build: no seed.
        self.assertEqual(seed_platform(self.calling, read_cmake_cache(self.calling), fresh), [])
        self.assertEqual(seed_platform(None, {}, self.tmp / "other"), [])
        cache = dict(read_cmake_cache(self.calling), CMAKE_COMMAND="/opt/another/cmake")
        self.assertEqual(seed_platform(self.calling, cache, self.tmp / "other"), [])
        cache = dict(read_cmake_cache(self.calling), CMAKE_CACHE_PATCH_VERSION="")
        self.assertEqual(seed_platform(self.calling, cache, self.tmp / "other"), [])
        self.assertFalse((self.tmp / "other").exists())

    def test_a_seed_that_breaks_the_configure_falls_back_to_detection(self):
        from gpulab.paths import read_cmake_cache
        from gpulab.workspace.calling_build import configure
        cache = read_cmake_cache(self.calling)
        version = ".".join(cache[f"CMAKE_CACHE_{p}_VERSION"] for p in ("MAJOR", "MINOR", "PATCH"))
        broken = self.calling / "CMakeFiles" / version / "CMakeCXXCompiler.cmake"
        broken.write_text('message(FATAL_ERROR "a platform file from elsewhere")\n')
        res = configure(self.src, self.tmp / "fresh", [], self.calling, cache, 300)
        self.assertTrue(res.ok, res.stdout + res.stderr)
        self.assertIn("The CXX compiler identification", res.stdout)


@unittest.skipUnless(shutil.which("ninja"), "needs ninja")
class PlaceTest(TempDir, unittest.TestCase):
    """A slot writes only the student files whose bytes differ from what it compiled (Slot.place),
    so ninja recompiles only those; a file it cannot vouch for is written again and its object
    removed, and no other lab's files are a previous student's while a build runs."""

    def setUp(self):
        super().setUp()
        self.course_src = self.tmp / "course"
        for lab, files in {"lab1": {"a.cu": "int a() {\n  // BEGIN SOLUTION stub: return 0;\n  return 42;\n  // END SOLUTION\n}\n",
                                    "b.cu": "int b() { return 1; }\n"},
                           "lab2": {"c.cu": "int c() { return 2; }\n"}}.items():
            folder = self.course_src / "labs" / lab
            folder.mkdir(parents=True)
            for name, text in files.items():
                (folder / name).write_text(text)
            (folder / "rubric.toml").write_text(f'lab = "{lab}"\nstudent_files = {json.dumps(sorted(files))}\n'
                                                '[[stage]]\nid = "cpu"\ncorrectness = 1\n')
        self.slot = Slot(self.course_src, self.tmp / "slot-0", {})
        self.files = ["a.cu", "b.cu"]

    def held(self, f: str, lab: str = "lab1") -> Path:
        return self.slot.src / "labs" / lab / f

    def obj(self, f: str, lab: str = "lab1") -> Path:
        return self.slot.build / "labs" / lab / "CMakeFiles" / f"{lab}-student.dir" / f"{f}.o"

    def build(self, contents: dict, ok: bool = True):
        """build_student with ninja itself standing in for the compiler (an object is a copy of its
        source, the runner their concatenation): times decide what it rebuilds, as in a real slot.
        A failed build leaves garbage objects newer than their sources, as a killed compiler may."""
        objects = " ".join(str(self.obj(f).relative_to(self.slot.build)) for f in self.files)
        self.slot.build.mkdir(parents=True, exist_ok=True)
        (self.slot.build / "build.ninja").write_text(
            "rule cc\n  command = cp $in $out\nrule link\n  command = cat $in > $out\n"
            + "".join(f"build {self.obj(f).relative_to(self.slot.build)}: cc {self.held(f)}\n" for f in self.files)
            + f"build labs/lab1/gpulab-lab1-student: link {objects}\n")

        def run(cmd, timeout=None):
            if not ok:
                for f in self.files:
                    self.obj(f).parent.mkdir(parents=True, exist_ok=True)
                    self.obj(f).write_bytes(b"half an object")
                return proc.Result(cmd, 1, "", "error: killed", 0.1)
            res = subprocess.run(["ninja", "-C", str(self.slot.build), "labs/lab1/gpulab-lab1-student"],
                                 capture_output=True, text=True)
            return proc.Result(cmd, res.returncode, res.stdout, res.stderr, 0.1)
        return self.slot.build_student("lab1", self.files, contents, self.tmp / "bin", run=run)

    def test_only_files_whose_bytes_differ_are_written(self):
        self.assertTrue(self.build({"a.cu": b"int a() { return 7; }\n"}).ok)
        old = {f: self.held(f).stat().st_mtime_ns for f in self.files}
        time.sleep(0.01)
        self.assertEqual(self.slot.place("lab1", self.files, {"a.cu": b"int a() { return 7; }\n"}), [])
        self.assertEqual({f: self.held(f).stat().st_mtime_ns for f in self.files}, old)
        self.assertEqual(self.slot.place("lab1", self.files, {"a.cu": b"int a() { return 8; }\n"}), ["a.cu"])
        self.assertFalse(self.obj("a.cu").exists())
        self.assertTrue(self.obj("b.cu").exists())

    def test_a_file_the_submission_lacks_is_the_handouts_with_its_own_object(self):
        # A second student who leaves b.cu out links the starter's b.cu, never the first's.
        self.assertTrue(self.build({"a.cu": b"int a() { return 7; }\n", "b.cu": b"int b() { return 9; }\n"}).ok)
        self.assertTrue(self.build({"a.cu": b"int a() { return 8; }\n"}).ok)
        self.assertEqual(self.held("b.cu").read_text(), "int b() { return 1; }\n")
        self.assertEqual(self.obj("b.cu").read_text(), "int b() { return 1; }\n")
        self.assertTrue(self.build({}).ok)
        self.assertEqual(self.held("a.cu").read_text(), "int a() {\n  return 0;\n}\n")
        self.assertEqual(self.obj("a.cu").read_text(), "int a() {\n  return 0;\n}\n")

    def test_an_object_the_slot_did_not_record_is_compiled_again(self):
        # The same bytes with an object newer than them (a copy keeps its original's time): not proof.
        self.slot.place("lab1", self.files, {})
        self.obj("b.cu").parent.mkdir(parents=True)
        self.obj("b.cu").write_bytes(b"another student's b")
        self.assertEqual(self.slot.place("lab1", self.files, {}), ["b.cu"])
        self.assertFalse(self.obj("b.cu").exists())

    def test_after_a_failed_build_the_next_compiles_the_labs_files_again(self):
        self.assertTrue(self.build({"a.cu": b"int a() { return 7; }\n"}).ok)
        self.assertFalse(self.build({"a.cu": b"int a() { return 7; }\n"}, ok=False).ok)
        self.assertTrue(self.build({"a.cu": b"int a() { return 7; }\n"}).ok)
        self.assertEqual(self.obj("a.cu").read_text(), "int a() { return 7; }\n")
        self.assertEqual(self.obj("b.cu").read_text(), "int b() { return 1; }\n")

    def test_a_file_made_a_link_is_replaced(self):
        self.assertTrue(self.build({}).ok)
        target = self.tmp / "elsewhere.cu"
        target.write_text("int b() { return 1; }\n")
        self.held("b.cu").unlink()
        self.held("b.cu").symlink_to(target)
        self.assertEqual(self.slot.place("lab1", self.files, {}), ["b.cu"])
        self.assertFalse(self.held("b.cu").is_symlink())

    def test_no_other_labs_student_code_is_in_the_slot_while_a_build_runs(self):
        self.slot.place("lab2", ["c.cu"], {"c.cu": b"int c() { return 99; }  // another student's\n"})
        self.assertTrue(self.build({"a.cu": b"int a() { return 7; }\n"}).ok)
        self.assertEqual(self.held("c.cu", "lab2").read_text(), "int c() { return 2; }\n")

    def test_a_new_course_takes_no_student_object_as_it_is(self):
        self.assertTrue(self.build({}).ok)
        self.assertTrue((self.slot.root / COMPILED).is_file())
        with mock.patch.object(slot_stamp, "check", return_value=slot_stamp.Verdict(False, "")), \
             mock.patch("gpulab.workspace.slots.configure", return_value=proc.Result([], 0, "", "", 0.0)):
            self.slot.prepare("another fingerprint")
        self.assertEqual(self.slot.place("lab1", self.files, {}), self.files)
