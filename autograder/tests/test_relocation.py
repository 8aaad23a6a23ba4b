"""A copied or moved course never uses the tree it was copied from (issue 10, item 2): the
`gpulab` launcher and ctest refuse to run outside the build tree they were configured for, and
so does the front end when its build tree's CMake cache names another place. (A copied grading
workspace: tests/test_workspace.py.)"""

import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.paths import Course
from tests.helpers import TempDir, make_course

REPO = Path(__file__).resolve().parents[2]


def configure_file(template: Path, dest: Path, values: dict[str, str]) -> Path:
    """CMake's configure_file(... @ONLY) for the @NAME@ references in scripts/*.in."""
    text = re.sub(r"@([A-Za-z0-9_]+)@", lambda m: values[m.group(1)], template.read_text())
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    dest.chmod(0o755)
    return dest


class LauncherTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.build = self.tmp / "course" / "build" / "ci"
        self.launcher = configure_file(REPO / "scripts" / "gpulab.in", self.build / "gpulab", {
            "CMAKE_BINARY_DIR": str(self.build), "PROJECT_SOURCE_DIR": str(REPO),
            "Python3_EXECUTABLE": sys.executable, "GPULAB_PRESET": "ci", "GPULAB_PYTHONPATH_COLON": ""})

    def run_launcher(self, path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(path), "grade", "--help"], capture_output=True, text=True, timeout=60)

    def test_runs_where_it_was_configured_and_through_a_link(self):
        self.assertEqual(self.run_launcher(self.launcher).returncode, 0)
        link = self.tmp / "bin" / "gpulab"
        link.parent.mkdir()
        link.symlink_to(self.launcher)
        res = self.run_launcher(link)
        self.assertEqual(res.returncode, 0, res.stderr)

    def test_a_copied_course_refuses_and_says_how_to_reconfigure(self):
        copy = self.tmp / "copy"
        shutil.copytree(self.tmp / "course", copy, symlinks=True)
        res = self.run_launcher(copy / "build" / "ci" / "gpulab")
        self.assertEqual(res.returncode, 2)
        self.assertEqual(res.stdout, "")
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        self.assertIn(f"configured at {self.build}", res.stderr)
        self.assertIn("copied or moved", res.stderr)
        self.assertIn(f"cd {copy.resolve()} && cmake --preset ci --fresh && cmake --build --preset ci", res.stderr)

    def test_a_moved_course_refuses(self):
        moved = self.tmp / "moved"
        os.rename(self.tmp / "course", moved)
        res = self.run_launcher(moved / "build" / "ci" / "gpulab")
        self.assertEqual(res.returncode, 2)
        self.assertIn("copied or moved", res.stderr)


@unittest.skipUnless(shutil.which("ctest"), "ctest not installed")
class CTestGuardTest(TempDir, unittest.TestCase):
    def test_ctest_in_a_copied_build_tree_runs_nothing(self):
        build = self.tmp / "course" / "build" / "ci"
        guard = configure_file(REPO / "scripts" / "ctest-location.cmake.in", build / "gpulab-ctest-location.cmake",
                               {"CMAKE_BINARY_DIR": str(build), "GPULAB_PRESET": "ci"})
        marker = self.tmp / "ran"
        # What CMake writes for the top directory (TEST_INCLUDE_FILES, then the tests).
        (build / "CTestTestfile.cmake").write_text(
            f'include("{guard}")\nadd_test([=[probe]=] "{shutil.which("touch")}" "{marker}")\n')
        ok = subprocess.run(["ctest"], cwd=build, capture_output=True, text=True, timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertTrue(marker.exists())
        marker.unlink()
        copy = self.tmp / "copy"
        shutil.copytree(self.tmp / "course", copy, symlinks=True)
        res = subprocess.run(["ctest"], cwd=copy / "build" / "ci", capture_output=True, text=True, timeout=60)
        self.assertNotEqual(res.returncode, 0)
        self.assertFalse(marker.exists(), "a test of the copied build tree ran")
        text = " ".join((res.stdout + res.stderr).split())
        self.assertIn("copied or moved", text)
        self.assertIn(f"cd {copy.resolve()} && cmake --preset ci --fresh", text)


class FrontEndTest(TempDir, unittest.TestCase):
    def test_a_build_tree_configured_elsewhere_is_refused(self):
        course = make_course(self.tmp)
        cache = course.build / "CMakeCache.txt"
        cache.write_text(cache.read_text() + "CMAKE_CACHEFILE_DIR:INTERNAL=/old/place/build/ci\n"
                         f"CMAKE_HOME_DIRECTORY:INTERNAL={course.source}\n")
        with self.assertRaises(GpulabError) as ctx:
            Course(course.source, course.build).require_build()
        self.assertIn("configured for /old/place/build/ci", str(ctx.exception))
        self.assertIn("re-configure it here", str(ctx.exception))

    def test_its_own_build_tree_is_accepted(self):
        course = make_course(self.tmp)
        cache = course.build / "CMakeCache.txt"
        cache.write_text(cache.read_text() + f"CMAKE_CACHEFILE_DIR:INTERNAL={course.build}\n"
                         f"CMAKE_HOME_DIRECTORY:INTERNAL={course.source}\n")
        self.assertEqual(Course(course.source, course.build).require_build(), course.build)


if __name__ == "__main__":
    unittest.main()
