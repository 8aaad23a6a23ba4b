"""A submission that cannot be graded at all still gets a valid results.json (score 0, the
reason) for Gradescope, and a link is called a link (issue 10, item 4)."""

import contextlib
import io
import json
import os
import tarfile
import unittest
import zipfile
from pathlib import Path
from unittest import mock

from gpulab import cli, submission
from tests.helpers import TempDir, env, make_course, submission_dir


class NotGradedTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.course = make_course(self.tmp)
        self.env = env(GPULAB_BUILD_DIR=str(self.course.build), GPULAB_SOURCE_DIR=str(self.course.source),
                       GPULAB_NO_GPU="1", GPULAB_FAKE_GPU=None)
        self.env.__enter__()
        self.out = self.tmp / "results"

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def grade(self, target: Path, *extra: str) -> tuple[int, str, dict]:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = cli.main(["grade", str(target), "--out", str(self.out), "--no-sandbox", "--quiet", *extra])
        results = self.out / "results.json"
        self.assertTrue(results.is_file(), f"no results.json (exit {code}: {err.getvalue()})")
        return code, err.getvalue(), json.loads(results.read_text())

    def assert_not_graded(self, doc: dict, *phrases: str) -> None:
        self.assertEqual(doc["score"], 0)
        self.assertIsInstance(doc["tests"], list)
        self.assertIn("could not be graded", doc["output"])
        for p in phrases:
            self.assertIn(p, doc["output"])
        grade = json.loads((self.out / "grade.json").read_text())
        self.assertTrue(grade["error"])

    def test_empty_upload(self):
        empty = self.tmp / "empty"
        empty.mkdir()
        code, err, doc = self.grade(empty)
        self.assertEqual(code, 2)
        self.assert_not_graded(doc, "no lab's student files found; looked for labs/scan/scan.cu",
                               "the submission is empty")
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_only_other_files(self):
        d = self.tmp / "other"
        (d / "src").mkdir(parents=True)
        (d / "src" / "main.cpp").write_text("int main() {}\n")
        _, _, doc = self.grade(d)
        self.assert_not_graded(doc, "looked for labs/scan/scan.cu", "it holds src/main.cpp")

    def test_missing_path(self):
        code, _, doc = self.grade(self.tmp / "nothing-here.zip")
        self.assertEqual(code, 2)
        self.assert_not_graded(doc, "no such file or directory")

    def test_link_only_archive(self):
        for kind in ("zip", "tar.gz"):
            with self.subTest(kind):
                path = self.tmp / f"links.{kind}"
                if kind == "zip":
                    with zipfile.ZipFile(path, "w") as zf:
                        info = zipfile.ZipInfo("labs/scan/scan.cu")
                        info.external_attr = (0o120777 << 16)
                        zf.writestr(info, "/etc/passwd")
                else:
                    with tarfile.open(path, "w:gz") as tf:
                        info = tarfile.TarInfo("labs/scan/scan.cu")
                        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                        tf.addfile(info)
                code, _, doc = self.grade(path)
                self.assertEqual(code, 2)
                self.assert_not_graded(doc, "labs/scan/scan.cu is a link: links are not accepted")
                self.assertNotIn("the submission is empty", doc["output"])

    def test_symlinked_student_file_in_a_folder(self):
        d = submission_dir(self.tmp, {}, "linker")
        real = d / "labs" / "scan" / "scan.cu"
        os.replace(real, d / "mine.txt")
        real.symlink_to(d / "mine.txt")
        code, _, doc = self.grade(d, "--lab", "scan")   # with --lab: the lab is graded, as missing
        self.assertEqual(code, 4)
        self.assertEqual(doc["score"], 0)
        self.assertIn("labs/scan/scan.cu is a link: links are not accepted", json.dumps(doc))
        self.assertNotIn("not found", json.dumps(doc))

    def test_archive_over_the_unpacked_limit(self):
        path = self.tmp / "big.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("labs/scan/scan.cu", "x" * 4096)
        with mock.patch.object(submission, "MAX_TOTAL_BYTES", 1024):
            code, _, doc = self.grade(path)
        self.assertEqual(code, 2)
        self.assert_not_graded(doc, "unpacked")

    def test_a_grader_set_up_error_is_not_blamed_on_the_student(self):
        code, _, doc = self.grade(submission_dir(self.tmp, {}, "carol"), "--lab", "nosuch")
        self.assertEqual(code, 2)
        self.assertEqual(doc["score"], 0)
        self.assertIn("not a problem with your submission", doc["output"])
        self.assertIn("no rubric for lab 'nosuch'", doc["output"])

    def test_a_batch_error_row_gets_results_too(self):
        subs = self.tmp / "subs"
        (subs / "dave").mkdir(parents=True)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["grade", "--batch", str(subs), "--out", str(self.out), "--no-sandbox", "--quiet"])
        self.assertEqual(code, 1)
        doc = json.loads((self.out / "dave" / "results.json").read_text())
        self.assertEqual(doc["score"], 0)
        self.assertIn("no lab's student files found; looked for labs/scan/scan.cu", doc["output"])
        self.assertIn("the submission is empty", doc["output"])

    def test_results_are_replaced_not_left_from_an_earlier_grade(self):
        self.out.mkdir()
        (self.out / "results.json").write_text('{"score": 34, "output": "an earlier grade"}')
        empty = self.tmp / "empty"
        empty.mkdir()
        _, _, doc = self.grade(empty)
        self.assert_not_graded(doc, "the submission is empty")


if __name__ == "__main__":
    unittest.main()
