"""common/cmake/GpulabLab.cmake: which tests a lab registers in the instructor tree and in the
handout. Configured for real (host C++ only, nothing built) in a tiny project around the function."""

import shutil
import subprocess
import unittest
from pathlib import Path

from tests.helpers import TempDir

REPO = Path(__file__).resolve().parents[2]
FUNCTION = REPO / "common" / "cmake" / "GpulabLab.cmake"

TOP = f"""cmake_minimum_required(VERSION 3.25)
project(fake LANGUAGES CXX)
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
                 "labs/demo/CMakeLists.txt": "gpulab_add_lab(demo HARNESS lab.cpp TESTS tests/t.cpp)\n",
                 "labs/demo/rubric.toml": 'lab = "demo"\nstudent_files = ["demo.cpp"]\n',
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


if __name__ == "__main__":
    unittest.main()
