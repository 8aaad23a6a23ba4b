"""The `gpulab` command line over a fake build tree: list, run (one lab, all, json), errors."""

import json
import unittest

from tests.helpers import TempDir, env, make_course, run_cli


class CliTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.course = make_course(self.tmp)
        self.env = env(GPULAB_BUILD_DIR=str(self.course.build), GPULAB_SOURCE_DIR=str(self.course.source))
        self.env.__enter__()

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def main(self, *argv):
        return run_cli(*argv)

    def test_list(self):
        code, out, _ = self.main("list")
        self.assertEqual(code, 0)
        self.assertIn("scan", out)
        self.assertIn("conflict-free", out)
        code, out, _ = self.main("list", "--format", "json")
        self.assertEqual(json.loads(out)["labs"][0]["lab"], "scan")

    def test_run_all_json_merged(self):
        code, out, _ = self.main("run", "all", "--impl", "reference", "--format", "json", "--n", "1024")
        doc = json.loads(out)
        self.assertEqual(code, 0)
        self.assertEqual(doc["labs"][0]["implementation"], "reference")
        self.assertEqual(doc["labs"][0]["problem"]["n"], 1024)

    def test_run_student_fails_exit_code(self):
        code, out, _ = self.main("run", "all", "--format", "json")   # starter: all todo -> 0
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out)["labs"][0]["results"][0]["status"], "todo")

    def test_reference_missing_is_one_line(self):
        course = make_course(self.tmp / "s", reference=False)
        with env(GPULAB_BUILD_DIR=str(course.build), GPULAB_SOURCE_DIR=str(course.source)):
            code, _, err = self.main("run", "scan", "--impl", "reference")
        self.assertEqual(code, 2)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("solutions/scan/", err)

    def test_handout_runs_the_shipped_reference(self):
        # The handout has no solutions/ but ships reference/gpulab-<lab>-reference (issue 12, item 4).
        from tests.helpers import REFERENCE, STAGES, write_runner
        course = make_course(self.tmp / "h", reference=False)
        write_runner(course.source / "reference" / "gpulab-scan-reference",
                     {"lab": "scan", "title": "Scan", "stages": STAGES, "implementation": "reference",
                      "behaviour": REFERENCE})
        with env(GPULAB_BUILD_DIR=str(course.build), GPULAB_SOURCE_DIR=str(course.source)):
            code, out, err = self.main("run", "all", "--impl", "reference", "--format", "json", "--n", "1024")
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["labs"][0]["implementation"], "reference")

    def test_unknown_lab_and_bad_size(self):
        code, _, err = self.main("run", "nope")
        self.assertEqual(code, 2)
        self.assertIn("unknown lab 'nope'", err)
        code, _, err = self.main("run", "scan", "--n", "12q")
        self.assertEqual(code, 2)
        self.assertIn("not a size", err)
        code, _, err = self.main("run", "scan", "--n", "2^41")
        self.assertEqual(code, 2)
        self.assertIn("not a size", err)

    def test_sizes_the_runner_accepts_are_accepted(self):
        from gpulab.commands import problem_size
        for text in ("1025", "2^24", "1000x999", "2^10x2^10"):
            self.assertEqual(problem_size(text), text)

    def test_grade_needs_one_target(self):
        code, _, err = self.main("grade")
        self.assertEqual(code, 2)
        self.assertIn("one SUBMISSION or --batch", err)

    def test_help_everywhere(self):
        for cmd in ("run", "list", "experiment", "conflicts", "grade", "package", "handout"):
            with self.subTest(cmd):
                code, out, _ = self.main(cmd, "--help")
                self.assertEqual(code, 0)
                self.assertIn("usage:", out)


if __name__ == "__main__":
    unittest.main()
