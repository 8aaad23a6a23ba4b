"""`gpulab package`: the Gradescope bundle has setup.sh, run_autograder and the instructor course."""

import stat
import unittest
import zipfile

from gpulab import gradescope
from gpulab.errors import GpulabError
from tests.helpers import TempDir, make_course


class PackageTest(TempDir, unittest.TestCase):
    def test_bundle(self):
        course = make_course(self.tmp)
        (course.source / "autograder" / "testdata").mkdir(parents=True)
        (course.source / "autograder" / "testdata" / "near.cu").write_text("x")
        (course.source / "build" / "junk").mkdir(parents=True)
        out = self.tmp / "autograder.zip"
        self.assertEqual(gradescope.cmd_package(course, "scan", out), 0)
        with zipfile.ZipFile(out) as z:
            names = set(z.namelist())
            self.assertIn("setup.sh", names)
            self.assertIn("run_autograder", names)
            self.assertIn("solutions/scan/scan.cu", names)            # the reference is timed
            self.assertIn("autograder/hidden/scan.toml", names)       # hidden cases graded
            self.assertNotIn("autograder/testdata/near.cu", names)
            self.assertFalse(any(n.startswith("build/") for n in names))
            mode = z.getinfo("run_autograder").external_attr >> 16
            self.assertTrue(mode & stat.S_IXUSR)
            run = z.read("run_autograder").decode()
            self.assertIn("grade /autograder/submission --lab scan --out /autograder/results", run)

    def test_unknown_lab_lists_the_labs(self):
        course = make_course(self.tmp)
        with self.assertRaisesRegex(GpulabError, r"'nosuch'.*labs: scan$"):
            gradescope.cmd_package(course, "nosuch", self.tmp / "a.zip")

    def test_needs_solutions(self):
        course = make_course(self.tmp, reference=False)
        with self.assertRaisesRegex(GpulabError, "solutions/scan/"):
            gradescope.cmd_package(course, "scan", self.tmp / "a.zip")


if __name__ == "__main__":
    unittest.main()
