"""`gpulab submit LAB`: exactly the graded files, checked, in an archive the grader takes."""

import json
import unittest
import zipfile
from pathlib import Path

from gpulab import submit
from gpulab.paths import Course
from tests.helpers import (REFERENCE, RUBRIC, TempDir, env, fake_grader, fake_tools_env, make_course,
                           run_cli)

MANUAL = RUBRIC + """
[[manual]]
id = "write-up"
file = "answers.md"
points = 6
"""

ANSWERS = """# Scan lab: write-up

Name: Ada
GPU: H100

## 1. A question (2 points)

My answer, with numbers I measured: 1.2 ms against 3.4 ms on my GPU, because the writes coalesce
and the reads do too, which the model of the lecture predicts within a tenth; see my table below.

## 2. Another (4 points)

Another answer.
"""


class SubmitTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.course = make_course(self.tmp, rubric=MANUAL)
        self.lab = self.course.source / "labs" / "scan"
        (self.lab / "scan.cu").write_text("// mine\n" + json.dumps(REFERENCE))
        (self.lab / "answers.md").write_text(ANSWERS)
        (self.lab / "lab.cu").write_text("// the harness: not graded, not packaged\n")

    def cli(self, *argv: str):
        with env(GPULAB_SOURCE_DIR=str(self.course.source), GPULAB_BUILD_DIR=str(self.course.build)):
            return run_cli("submit", *argv)

    def test_packages_exactly_the_graded_files(self):
        out = self.tmp / "alice.zip"
        code, stdout, stderr = self.cli("scan", "--out", str(out))
        self.assertEqual(code, 0, stderr)
        self.assertIn("wrote", stdout)
        with zipfile.ZipFile(out) as z:
            self.assertEqual(sorted(z.namelist()), ["labs/scan/answers.md", "labs/scan/scan.cu"])
            self.assertEqual(z.read("labs/scan/answers.md").decode(), ANSWERS)

    def test_the_grader_takes_the_archive(self):
        # The course keeps the handout's template; the student's work is a checkout of their own.
        mine = self.tmp / "alice" / "labs" / "scan"
        mine.mkdir(parents=True)
        for f in ("scan.cu", "answers.md"):
            (mine / f).write_bytes((self.lab / f).read_bytes())
        (self.lab / "answers.md").write_text("Name:\n\n## 1. A question (2 points)\n\n## 2. Another (4 points)\n")
        out = self.tmp / "alice.zip"
        self.assertEqual(self.cli("scan", "--from", str(mine), "--out", str(out))[0], 0)
        with env(**fake_tools_env(self.tmp)):
            sub = fake_grader(self.course, self.tmp).grade(out, self.tmp / "grade")
        lab = sub.labs[0]
        self.assertEqual(sub.points, sub.max_points)
        self.assertEqual(lab.missing, [])
        self.assertEqual(sub.ignored, [])
        self.assertEqual([m.status for m in lab.manual], ["answered"])

    def test_missing_file_or_link_writes_nothing(self):
        (self.lab / "answers.md").unlink()
        out = self.tmp / "x.zip"
        code, _, stderr = self.cli("scan", "--out", str(out))
        self.assertEqual(code, 2)
        self.assertIn("answers.md: missing", stderr)
        self.assertFalse(out.exists())
        (self.lab / "answers.md").symlink_to(self.tmp / "elsewhere.md")
        code, _, stderr = self.cli("scan", "--out", str(out))
        self.assertEqual(code, 2)
        self.assertIn("links are not accepted", stderr)

    def test_include_lint_refuses_before_packaging(self):
        (self.lab / "scan.cu").write_text('#include "../../solutions/scan/scan.cu"\n')
        code, _, stderr = self.cli("scan", "--out", str(self.tmp / "x.zip"))
        self.assertEqual(code, 2)
        self.assertIn("labs/scan/scan.cu:1: #include", stderr)

    def test_warns_of_todo_stages_and_empty_answers(self):
        (self.lab / "scan.cu").write_text('void f() { gpulab::not_implemented("shared"); }\n')
        (self.lab / "answers.md").write_text("Name:\n\n## 1. A question (2 points)\n\n## 2. Another (4 points)\nyes\n")
        code, stdout, _ = self.cli("scan", "--out", str(self.tmp / "x.zip"))
        self.assertEqual(code, 0)
        self.assertIn("still TODO (gpulab::not_implemented): shared", stdout)
        self.assertIn("the Name: line is empty", stdout)
        self.assertIn("question(s) 1 unanswered", stdout)

    def test_unknown_lab(self):
        code, _, stderr = self.cli("nosuch")
        self.assertEqual(code, 2)
        self.assertIn("no lab 'nosuch' (labs: scan)", stderr)

    def test_from_another_folder(self):
        other = self.tmp / "mywork"
        other.mkdir()
        (other / "scan.cu").write_text("// elsewhere\n{}\n")
        (other / "answers.md").write_text(ANSWERS)
        b = submit.collect(self.course, "scan", other)
        self.assertEqual(b.errors, [])
        self.assertEqual(b.files["scan.cu"], other / "scan.cu")

    def test_verify_finds_an_archive_the_grader_would_misread(self):
        b = submit.collect(self.course, "scan")
        out = self.tmp / "bad.zip"
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("labs/scan/scan.cu", "other bytes")
            z.writestr("labs/scan/answers.md", ANSWERS)
            z.writestr("notes.txt", "x")
        self.assertEqual(submit.verify(b, out), ["scan.cu: differs in the archive", "notes.txt: not a graded file"])


class RealLabsTest(unittest.TestCase):
    """Every lab of the course packages from its untouched handout files (warnings only)."""

    def test_each_lab_collects(self):
        repo = Path(__file__).resolve().parents[2]
        course = Course(repo, None)
        for lab in sorted(p.parent.name for p in repo.glob("labs/*/rubric.toml")):
            with self.subTest(lab=lab):
                b = submit.collect(course, lab)
                self.assertEqual(b.errors, [])
                self.assertIn("answers.md", b.files)
                self.assertTrue(any("still TODO" in w for w in b.warnings))
                self.assertTrue(any("Name: line is empty" in w for w in b.warnings))


if __name__ == "__main__":
    unittest.main()
