"""The handout: solution blocks stubbed, marker errors, solutions/ and hidden tests left out."""

import unittest

from gpulab import handout
from gpulab.errors import GpulabError
from tests.helpers import TempDir

B, E = "// BEGIN " + "SOLUTION", "// END " + "SOLUTION"   # built so this file has no marker lines


class HandoutTest(TempDir, unittest.TestCase):
    def test_block_replaced_by_stub(self):
        text = f"int f() {{\n  {B} stub: gpulab::not_implemented(\"f\");\n  return 42;\n  {E}\n}}\n"
        out, n = handout.strip_solutions(text)
        self.assertEqual(n, 1)
        self.assertEqual(out, 'int f() {\n  gpulab::not_implemented("f");\n}\n')

    def test_default_stub_and_hash_comments(self):
        out, n = handout.strip_solutions(f"a\n    {B}\n    secret\n    {E}\n# BEGIN SOLUTION\nx=1\n# END SOLUTION\nb\n")
        self.assertEqual(n, 2)
        self.assertEqual(out, "a\n    // TODO: your code here\n# TODO: your code here\nb\n")
        self.assertNotIn("secret", out)

    def test_marker_errors(self):
        with self.assertRaisesRegex(GpulabError, "never closed"):
            handout.strip_solutions(f"{B}\nx\n", "f.cu")
        with self.assertRaisesRegex(GpulabError, "nested"):
            handout.strip_solutions(f"{B}\n{B}\n{E}\n{E}\n", "f.cu")
        with self.assertRaisesRegex(GpulabError, "f.cu:2: END"):
            handout.strip_solutions(f"x\n{E}\n", "f.cu")

    def test_export_leaves_out_solutions_and_hidden(self):
        src = self.tmp / "course"
        for rel, text in {"labs/scan/scan.cu": "starter", "labs/scan/lab.cu": f"h\n{B}\nsecret\n{E}\n",
                          "solutions/scan/scan.cu": "answer", "autograder/hidden/scan.toml": "cases",
                          "autograder/testdata/x/scan.cu": "near", "autograder/gpulab/a.py": "code",
                          "build/ci/junk": "x", "CMakeLists.txt": "cmake"}.items():
            p = src / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        dest = self.tmp / "out"
        stripped = handout.export(src, dest)
        self.assertEqual(stripped, {"labs/scan/lab.cu": 1})
        got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        self.assertEqual(got, ["CMakeLists.txt", "autograder/gpulab/a.py", "labs/scan/lab.cu", "labs/scan/scan.cu"])
        self.assertNotIn("secret", (dest / "labs/scan/lab.cu").read_text())
        with self.assertRaisesRegex(GpulabError, "not empty"):
            handout.export(src, dest)

    def test_export_refuses_bad_markers_before_writing(self):
        src = self.tmp / "c"
        (src / "labs").mkdir(parents=True)
        (src / "labs" / "a.cu").write_text(f"{B}\n")
        dest = self.tmp / "o"
        with self.assertRaises(GpulabError):
            handout.export(src, dest)
        self.assertFalse(dest.exists() and any(dest.iterdir()))



class CtestVerdictTest(unittest.TestCase):
    def test_lab_tests_may_fail_on_the_starter_nothing_else(self):
        from gpulab.handout_check import ctest_verdict
        out = ("94% tests passed\nThe following tests FAILED:\n\t  4 - scan.tests.cpu (Failed)\n"
               "\t  7 - common.info (SEGFAULT)\n\t  9 - scan.tests.gpu (Timeout)\nErrors while running CTest\n")
        broken, expected = ctest_verdict(out)
        self.assertEqual(expected, ["scan.tests.cpu"])
        self.assertEqual(broken, ["common.info: SEGFAULT", "scan.tests.gpu: Timeout"])
        self.assertEqual(ctest_verdict("100% tests passed"), ([], []))


if __name__ == "__main__":
    unittest.main()
