"""Batch grading: gradebook rows, resume, --force, one crash never loses the others."""

import csv
import json
import unittest

from gpulab.batch import gradebook, local, queue
from gpulab.errors import GpulabError
from gpulab.scoring import Check, LabGrade, StageGrade, SubmissionGrade
from tests.helpers import TempDir


def fake_grade(path, out):
    name = path.name.split(".")[0]
    if name == "crash":
        raise RuntimeError("grader bug")
    pts = {"alice": 10, "bob": 5}.get(name, 0)
    s = StageGrade("naive", checks={"correctness": Check("correctness", "pass", pts, 10)})
    return SubmissionGrade(name, [LabGrade("scan", stages=[s], max_points_rubric=10)], gpu=True)


class CourseMaximaTest(unittest.TestCase):
    def test_max_is_the_core_extra_credit_on_top(self):
        # The H200 batch wrote "scan: graded out of 100, not 125" on every scan row: the column's
        # max had counted the extra credit, which a grade puts on top of its 100.
        from pathlib import Path
        from gpulab.paths import Course
        course = Course(source=Path(__file__).resolve().parents[2], build=None)
        self.assertEqual(gradebook.course_maxima(course, ["scan", "reduction", "transpose"], None),
                         {"scan": 100, "reduction": 100, "transpose": 100})


class SharedQueueTest(TempDir, unittest.TestCase):
    def test_two_graders_with_many_jobs_both_get_work(self):
        # On the two-GPU H200 one --gpus worker with --jobs 12 claimed all 12 submissions before the
        # other started: each grader now holds at most its share of what is left.
        import threading
        import time
        subs = self.tmp / "subs"
        for i in range(12):
            (subs / f"s{i:02d}").mkdir(parents=True)
            (subs / f"s{i:02d}" / "scan.cu").write_text("x")
        out, by = self.tmp / "out", {}

        def grader(label, delay):
            def grade(p, o):
                by.setdefault(label, []).append(p.name)
                time.sleep(0.05)
                return fake_grade(p, o)
            time.sleep(delay)   # the second worker process starts a little later
            queue.work(queue.find_submissions(subs), out, grade, {"scan": 10}, lambda ev: None, label, jobs=12,
                       workers=2)
        threads = [threading.Thread(target=grader, args=(g, d)) for g, d in (("gpu0", 0.0), ("gpu1", 0.02))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(by["gpu0"] + by["gpu1"]), [f"s{i:02d}" for i in range(12)])
        self.assertLessEqual(len(by["gpu0"]), 6 + 2, by)   # its share, and a little of the tail
        self.assertGreaterEqual(len(by["gpu1"]), 4, by)


    def test_rows_are_claimed_as_earlier_ones_finish_so_the_gpus_stay_balanced(self):
        """Two GPU graders with --jobs 12, the six long rows first in the queue, each grader's GPU
        work serial: holding only IN_FLIGHT_PER_GPU rows at once, the long rows spread over both
        GPUs, where a grader claiming its whole share of six at the start keeps all of them."""
        import threading
        import time
        subs = self.tmp / "subs"
        for i in range(12):
            (subs / f"s{i:02d}").mkdir(parents=True)
            (subs / f"s{i:02d}" / "scan.cu").write_text("x")
        out, by, busy, peak = self.tmp / "out", {}, {}, {}
        lock = threading.Lock()
        gpu = {"gpu0": threading.Lock(), "gpu1": threading.Lock()}   # a GPU's phases are serial

        def grader(label, delay):
            def grade(p, o):
                with lock:
                    by.setdefault(label, []).append(p.name)
                    busy[label] = busy.get(label, 0) + 1
                    peak[label] = max(peak.get(label, 0), busy[label])
                with gpu[label]:
                    time.sleep(0.2 if int(p.name[1:]) < 6 else 0.02)
                with lock:
                    busy[label] -= 1
                return fake_grade(p, o)
            time.sleep(delay)
            queue.work(queue.find_submissions(subs), out, grade, {"scan": 10}, lambda ev: None, label, jobs=12,
                       workers=2)
        threads = [threading.Thread(target=grader, args=(g, d)) for g, d in (("gpu0", 0.0), ("gpu1", 0.02))]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.monotonic() - t0
        self.assertEqual(sorted(by["gpu0"] + by["gpu1"]), [f"s{i:02d}" for i in range(12)])
        self.assertLessEqual(max(peak.values()), queue.IN_FLIGHT_PER_GPU, peak)
        # The long rows on both GPUs: ~0.7 s; all six on one (its whole share claimed at once): 1.2 s.
        self.assertLess(took, 1.0, (took, by))

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
        return local.run_batch(self.subs, self.out, grade, {"scan": 10}, jobs=2, force=force, log=lambda m: None)

    def rows(self):
        with open(self.out / "gradebook.csv") as f:
            return list(csv.reader(f))

    def test_gradebook_resume_and_force(self):
        self.assertEqual(self.run_batch(), 1)
        rows = self.rows()
        self.assertEqual(rows[0], ["student", "scan", "total", "max", "status", "gpu", "detail"])
        by = {r[0]: r for r in rows[1:]}
        self.assertEqual(by["alice"][1:5], ["10", "10", "10", "graded"])
        self.assertEqual(by["bob"][1], "5")
        self.assertEqual(by["crash"][1:5], ["0", "0", "10", "error"])
        self.assertTrue(by["crash"][6].startswith("internal error: RuntimeError"))
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
            queue.find_submissions(self.subs)

    def test_incomplete_rows_say_what_was_not_run(self):
        d = self.out / "x"
        d.mkdir(parents=True)
        (d / "grade.json").write_text(json.dumps({"name": "x", "points": 1, "max_points": 2,
                                                  "labs": [{"lab": "scan", "points": 1, "not_run": ["performance (no GPU)"]}]}))
        rows = gradebook.rows(self.out, {"scan": 2})
        self.assertEqual(rows[0].status, "incomplete: no GPU")
        self.assertIn("not run scan: performance (no GPU)", rows[0].detail)


def lab(name, status="graded", pts=0.0, max_pts=100.0, not_run=None):
    checks = {"correctness": Check("correctness", "pass", pts, max_pts)}
    for check in not_run or []:
        checks[check] = Check(check, "not-run", 0, 0, "no GPU")
    return LabGrade(name, status=status, message="compile error:\nlabs/x.cu:2: error: boom" if status != "graded" else "",
                    stages=[StageGrade("s", checks=checks)], max_points_rubric=max_pts)


class GradebookTest(TempDir, unittest.TestCase):
    """Issue 10 item 8: statuses say what happened, reruns complete incomplete rows, every row has
    the same columns and max, a lab not submitted is 0."""

    def setUp(self):
        super().setUp()
        self.subs, self.out = self.tmp / "subs", self.tmp / "out"
        self.grades = {}
        self.calls = []

    def add(self, name, grade):
        (self.subs / name).mkdir(parents=True, exist_ok=True)
        (self.subs / name / "scan.cu").write_text(name)
        self.grades[name] = grade

    def grade(self, path, out):
        self.calls.append(path.name)
        g = self.grades[path.name]
        if isinstance(g, Exception):
            raise g
        return g

    def run_batch(self, gpu=True, maxima=None):
        self.calls.clear()
        local.run_batch(self.subs, self.out, self.grade, maxima or {"scan": 100, "transpose": 100},
                        gpu=gpu, log=lambda m: None)
        with open(self.out / "gradebook.csv") as f:
            table = list(csv.reader(f))
        return table[0], {r[0]: dict(zip(table[0], r)) for r in table[1:]}

    def test_compile_error_is_not_ok(self):
        self.add("carol", SubmissionGrade("carol", [lab("scan", status="compile-error")], gpu=True))
        _, rows = self.run_batch()
        self.assertEqual(rows["carol"]["status"], "compile-error")
        self.assertIn("scan: compile-error (labs/x.cu:2: error: boom)", rows["carol"]["detail"])
        self.assertEqual(rows["carol"]["scan"], "0")

    def test_same_columns_and_max_and_zero_for_a_lab_not_submitted(self):
        self.add("alice", SubmissionGrade("alice", [lab("scan", pts=90)], gpu=True))
        self.add("bob", SubmissionGrade("bob", [lab("scan", pts=50), lab("transpose", pts=70)], gpu=True))
        self.add("dan", ValueError("grader bug"))
        head, rows = self.run_batch()
        self.assertEqual(head, ["student", "scan", "transpose", "total", "max", "status", "gpu", "detail"])
        self.assertEqual({r["max"] for r in rows.values()}, {"200"})
        self.assertEqual((rows["alice"]["transpose"], rows["alice"]["total"]), ("0", "90"))
        self.assertIn("transpose: not submitted", rows["alice"]["detail"])
        self.assertEqual((rows["bob"]["total"], rows["bob"]["status"]), ("120", "graded"))
        self.assertEqual((rows["dan"]["scan"], rows["dan"]["status"]), ("0", "error"))
        self.assertTrue(all(len(r) == len(head) for r in rows.values()))

    def test_rows_graded_without_gpu_are_regraded_on_a_gpu(self):
        self.add("alice", SubmissionGrade("alice", [lab("scan", pts=10, not_run=["performance"])], gpu=False))
        self.add("bob", SubmissionGrade("bob", [lab("scan", status="compile-error")], gpu=False))
        _, rows = self.run_batch(gpu=False)
        self.assertEqual(rows["alice"]["status"], "incomplete: no GPU")
        self.assertEqual(rows["alice"]["gpu"], "none")
        self.assertEqual(rows["bob"]["status"], "compile-error")
        self.run_batch(gpu=False)            # still no GPU: nothing to gain, nothing regraded
        self.assertEqual(self.calls, [])
        self.grades["alice"] = SubmissionGrade("alice", [lab("scan", pts=100)], gpu=True, device="NVIDIA H100")
        _, rows = self.run_batch(gpu=True)   # the GPU machine completes the incomplete row only
        self.assertEqual(self.calls, ["alice"])
        self.assertEqual((rows["alice"]["status"], rows["alice"]["scan"], rows["alice"]["gpu"]),
                         ("graded", "100", "NVIDIA H100"))

    def test_bad_input_is_not_retried_but_a_grader_error_is(self):
        self.add("empty", GpulabError("no lab's student files found"))
        self.add("crash", RuntimeError("grader bug"))
        _, rows = self.run_batch()
        self.assertEqual(rows["empty"]["status"], "error")
        self.assertIn("no lab's student files found", rows["empty"]["detail"])
        self.run_batch()
        self.assertEqual(self.calls, ["crash"])


if __name__ == "__main__":
    unittest.main()
