"""common/cmake/GpulabLab.cmake: which tests a lab registers in the instructor tree and in the
handout. Configured for real (host C++ only, nothing built) in a tiny project around the function."""

import re
import shutil
import subprocess
import tomllib
import unittest
from pathlib import Path

from tests.helpers import TempDir

REPO = Path(__file__).resolve().parents[2]
FUNCTION = REPO / "common" / "cmake" / "GpulabLab.cmake"

TOP = f"""cmake_minimum_required(VERSION 3.25)
project(fake LANGUAGES CXX)
find_package(Python3 3.11 REQUIRED COMPONENTS Interpreter)
add_library(gpulab_common INTERFACE)
add_library(gpulab_testing INTERFACE)
enable_testing()
include({FUNCTION.as_posix()})
add_subdirectory(labs/demo)
"""


@unittest.skipUnless(shutil.which("cmake") and shutil.which("ctest"), "needs cmake")
class LabTestsTest(TempDir, unittest.TestCase):
    def registered(self, with_solutions: bool) -> set[str]:
        src = self.tmp / ("course" if with_solutions else "handout")
        files = {"CMakeLists.txt": TOP,
                 "labs/demo/CMakeLists.txt": "gpulab_add_lab()\n",
                 "labs/demo/lab.toml": DEMO_MANIFEST,
                 "labs/demo/demo.cpp": "", "labs/demo/lab.cpp": "", "labs/demo/tests/t.cpp": "",
                 "common/src/implementation_name.cpp": "", "common/src/runner_main.cpp": ""}
        if with_solutions:
            files["solutions/demo/demo.cpp"] = ""
        for rel, text in files.items():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_text(text)
        build = src / "build"
        cfg = subprocess.run(["cmake", "-S", str(src), "-B", str(build)], capture_output=True, text=True, timeout=300)
        self.assertEqual(cfg.returncode, 0, cfg.stdout + cfg.stderr)
        listed = subprocess.run(["ctest", "-N", "--test-dir", str(build)], capture_output=True, text=True, timeout=60)
        return {ln.split(":", 1)[1].strip() for ln in listed.stdout.splitlines() if ln.strip().startswith("Test")
                and ":" in ln}

    def test_starter_check_only_in_the_instructor_tree(self):
        # In the handout a finished stage must not fail a visible test (issue 10, item 5).
        self.assertIn("demo.starter.cpu", self.registered(with_solutions=True))
        handout = self.registered(with_solutions=False)
        self.assertNotIn("demo.starter.cpu", handout)
        self.assertNotIn("demo.starter.gpu", handout)
        self.assertIn("demo.tests.cpu", handout)      # the student's own code is still tested


@unittest.skipUnless(shutil.which("ctest"), "needs ctest")
class NothingBuiltTest(TempDir, unittest.TestCase):
    def test_ctest_preset_without_a_build_says_why(self):
        # A fresh clone: `ctest --preset default` used to print only "No tests were found".
        for f in ("CMakePresets.json", "CTestTestfile.cmake"):
            shutil.copy(REPO / f, self.tmp / f)
        res = subprocess.run(["ctest", "--preset", "default"], cwd=self.tmp, capture_output=True, text=True,
                             timeout=60)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("cmake --workflow --preset default", " ".join((res.stdout + res.stderr).split()))


DEMO_MANIFEST = """id = "demo"
title = "demo"
student_files = ["demo.cpp"]
harness = ["lab.cpp"]
tests = ["tests/t.cpp"]
n = 1024
[[stage]]
id = "one"
title = "the one stage"
where = "cpu"
file = "demo.cpp"
"""

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def harness_problems(lab_dir: Path, common_include: Path = REPO / "common" / "include") -> list[str]:
    """What keeps a lab's harness from being compiled once for both implementations and taken
    prebuilt into a grading slot (workspace._take_harnesses): a harness file (lab.toml) that is a student
    file, or a quoted include, followed through everything the harness reaches and resolved as
    the compiler does (the including file's folder, the lab's folder, common/include; found
    nowhere: a system header), that is a student file or lies outside the lab and common/include."""
    lab_dir, common_include = lab_dir.resolve(), common_include.resolve()
    manifest = tomllib.loads((lab_dir / "lab.toml").read_text())
    student, harness = set(manifest["student_files"]), manifest.get("harness", [])
    problems = [f"harness lists the student file {f}" for f in harness if f in student]
    seen: set[Path] = set()
    todo = [lab_dir / f for f in harness]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for name in INCLUDE.findall(f.read_text()):
            found = next(((base / name).resolve() for base in (f.parent, lab_dir, common_include)
                          if (base / name).is_file()), None)
            if found is None:
                continue
            if lab_dir in found.parents and str(found.relative_to(lab_dir)) in student:
                problems.append(f"{f.name} includes the student file {name}")
            elif lab_dir not in found.parents and common_include not in found.parents:
                problems.append(f"{f.name} includes {found}, outside the lab and common/include")
            todo.append(found)
    return problems


class HarnessTest(TempDir, unittest.TestCase):
    def test_no_harness_reaches_a_student_file(self):
        labs = sorted(p.parent for p in (REPO / "labs").glob("*/lab.toml"))
        self.assertGreaterEqual(len(labs), 3)
        for lab_dir in labs:
            with self.subTest(lab=lab_dir.name):
                self.assertEqual(harness_problems(lab_dir), [])

    def test_a_harness_that_includes_a_student_file_is_found(self):
        lab = self.tmp / "labs" / "demo"
        (lab / "detail").mkdir(parents=True)
        files = {"CMakeLists.txt": "gpulab_add_lab()\n",
                 "lab.toml": 'student_files = ["demo.cu", "demo_device.cuh"]\nharness = ["lab.cu"]\n',
                 "lab.cu": '#include <vector>\n#include "demo.cuh"\n', "demo.cuh": '#include "detail/x.cuh"\n',
                 "detail/x.cuh": '  #  include "../demo_device.cuh"\n#include "../../../outside.h"\n',
                 "demo_device.cuh": "", "demo.cu": ""}
        for rel, text in files.items():
            (lab / rel).write_text(text)
        (self.tmp / "outside.h").write_text("")
        self.assertEqual(harness_problems(lab, self.tmp / "common" / "include"),
                         ["x.cuh includes the student file ../demo_device.cuh",
                          f"x.cuh includes {(self.tmp / 'outside.h').resolve()}, outside the lab and common/include"])


if __name__ == "__main__":
    unittest.main()
