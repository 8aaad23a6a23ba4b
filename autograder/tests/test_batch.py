"""Batch grading: gradebook rows, resume, --force, one crash never loses the others."""

import csv
import json
import unittest

from gpulab import batch
from gpulab.scoring import Check, LabGrade, StageGrade, SubmissionGrade
from tests.helpers import TempDir


def fake_grade(path, out):
    name = path.name.split(".")[0]
    if name == "crash":
        raise RuntimeError("grader bug")
    pts = {"alice": 10, "bob": 5}.get(name, 0)
    s = StageGrade("naive", checks={"correctness": Check("correctness", "pass", pts, 10)})
    return SubmissionGrade(name, [LabGrade("scan", stages=[s], max_points_rubric=10)], gpu=True)


class BatchTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.subs = self.tmp / "subs"
        for n in ("alice", "bob", "crash"):
            (self.subs / n).mkdir(parents=True)
            (self.subs / n / "scan.cu").write_text(n)
        (self.subs / ".hidden").mkdir()
        self.out = self.tmp / "out"
        self.calls = []

    def run_batch(self, force=False):
        def grade(p, o):
            self.calls.append(p.name)
            return fake_grade(p, o)
        return batch.run_batch(self.subs, self.out, grade, ["scan"], jobs=2, force=force, log=lambda m: None)

    def rows(self):
        with open(self.out / "gradebook.csv") as f:
            return list(csv.reader(f))

    def test_gradebook_resume_and_force(self):
        self.assertEqual(self.run_batch(), 1)
        rows = self.rows()
        self.assertEqual(rows[0], ["student", "scan", "total", "max", "status"])
        by = {r[0]: r for r in rows[1:]}
        self.assertEqual(by["alice"][1:4], ["10", "10", "10"])
        self.assertEqual(by["bob"][1], "5")
        self.assertTrue(by["crash"][4].startswith("error: internal error: RuntimeError"))
        self.assertTrue((self.out / "crash" / "traceback.txt").is_file())
        self.assertTrue((self.out / "alice" / "report.md").is_file())
        self.assertEqual(sorted(self.calls), ["alice", "bob", "crash"])
        # Resume: only the failed one is graded again.
        self.calls.clear()
        self.run_batch()
        self.assertEqual(self.calls, ["crash"])
        # A changed submission is regraded; --force regrades everything.
        self.calls.clear()
        import os, time
        later = time.time() + 5
        os.utime(self.subs / "bob" / "scan.cu", (later, later))
        self.run_batch()
        self.assertEqual(sorted(self.calls), ["bob", "crash"])
        self.calls.clear()
        self.run_batch(force=True)
        self.assertEqual(sorted(self.calls), ["alice", "bob", "crash"])

    def test_duplicate_names_refused(self):
        import zipfile
        with zipfile.ZipFile(self.subs / "alice.zip", "w") as z:
            z.writestr("scan.cu", "x")
        from gpulab.errors import GpulabError
        with self.assertRaisesRegex(GpulabError, "alice"):
            batch.find_submissions(self.subs)

    def test_incomplete_rows_say_what_was_not_run(self):
        d = self.out / "x"
        d.mkdir(parents=True)
        (d / "grade.json").write_text(json.dumps({"name": "x", "points": 1, "max_points": 2,
                                                  "labs": [{"lab": "scan", "points": 1, "not_run": ["performance (no GPU)"]}]}))
        header, rows = batch.gradebook_rows(self.out, ["scan"])
        self.assertIn("not run performance (no GPU)", rows[0][-1])


if __name__ == "__main__":
    unittest.main()
