"""The known-bad suite: its scheduler (classes side by side, the disk-checking ones alone) and its
expectations against the rubrics they grade by."""

import threading
import time
import unittest

from gpulab.rubric import load_rubric
from tests.testdata_suite import TESTDATA, load_specs, run_classes

ROOT = TESTDATA.parents[1]


class RunClassesTest(unittest.TestCase):
    def test_rows_keep_the_order_and_exclusive_items_run_alone(self):
        lock = threading.Lock()
        running, seen_with = set(), {}

        def grade(item):
            with lock:
                running.add(item)
                seen_with[item] = set(running)
            time.sleep(0.05)
            with lock:
                for other in running:
                    seen_with[other] |= set(running)
                running.discard(item)
            return [item]

        items = ["a", "writes", "b", "c", "d"]
        rows = run_classes(items, 3, lambda i: i == "writes", grade)
        self.assertEqual(rows, [[i] for i in items])
        self.assertEqual(seen_with["writes"], {"writes"})          # nothing beside it
        self.assertTrue(any(len(v) > 1 for k, v in seen_with.items() if k != "writes"), seen_with)

    def test_one_job_is_one_at_a_time(self):
        busy, peak = [0], [0]
        lock = threading.Lock()

        def grade(item):
            with lock:
                busy[0] += 1
                peak[0] = max(peak[0], busy[0])
            time.sleep(0.01)
            with lock:
                busy[0] -= 1
            return [item]

        self.assertEqual(run_classes(list("abcd"), 1, lambda i: False, grade), [[i] for i in "abcd"])
        self.assertEqual(peak[0], 1)

    def test_graded_in_the_keys_order_rows_in_the_items(self):
        graded = []

        def grade(item):
            graded.append(item)
            return [item]

        rows = run_classes(["b2", "a1", "b1", "a2"], 1, lambda i: False, grade, order=lambda i: i[0])
        self.assertEqual(graded, ["a1", "a2", "b2", "b1"])
        self.assertEqual(rows, [["b2"], ["a1"], ["b1"], ["a2"]])


class ExpectationsTest(unittest.TestCase):
    """An expectation that no rubric can produce fails only on a GPU machine, and late: the scan
    rubric's naive stage went from 5 to 8 correctness points while memoized-replay still wanted 5
    (gpu-slow, H200, 2026-11-24). Checked here against every lab's rubric on any machine."""

    def test_expected_points_are_what_the_rubric_gives(self):
        labs = sorted(p.stem for p in TESTDATA.glob("*.toml"))
        self.assertIn("scan", labs)
        for lab in labs:
            stages = {sp.id: sp for sp in load_rubric(ROOT / "labs" / lab / "rubric.toml").stages}
            for spec in load_specs(lab):
                exp = spec.get("expect", {})
                checks = exp.get("checks", {})
                for key, pts in exp.get("points", {}).items():
                    with self.subTest(lab=lab, submission=spec["name"], check=key):
                        stage, _, check = key.partition(".")
                        self.assertIn(stage, stages, "no such stage in the rubric")
                        most = getattr(stages[stage], check)
                        self.assertLessEqual(pts, most, f"the rubric gives {key} at most {most:g}")
                        # A passed check of these kinds earns all its points (scoring.py).
                        if checks.get(key) == "pass" and check in ("correctness", "sanitizer", "conflict_free"):
                            self.assertEqual(pts, most, f"{key} passes, so it earns the rubric's {most:g}")
                for key in checks:
                    with self.subTest(lab=lab, submission=spec["name"], check=key):
                        self.assertIn(key.partition(".")[0], stages, "no such stage in the rubric")


if __name__ == "__main__":
    unittest.main()


class MakeBatchTest(unittest.TestCase):
    def test_every_lab_gives_its_reference_starter_and_batch_classes(self):
        import tempfile
        from pathlib import Path
        from gpulab.paths import Course
        from tests.testdata_suite import make_batch
        course = Course(ROOT, None)
        labs = sorted(p.stem for p in TESTDATA.glob("*.toml"))
        with tempfile.TemporaryDirectory() as tmp:
            made = make_batch(course, labs, Path(tmp))
            for lab in labs:
                batch = [s["name"] for s in load_specs(lab) if s.get("batch")]
                self.assertTrue(batch, f"{lab}: no class marked batch = true")
                want = {f"{lab}-reference", f"{lab}-starter"} | {f"{lab}-{n}" for n in batch}
                self.assertLessEqual(want, set(made))
                files = load_rubric(ROOT / "labs" / lab / "rubric.toml").student_files
                for sub in want:
                    for f in files:   # one lab per student folder, every student file there
                        self.assertTrue((Path(tmp) / sub / "labs" / lab / f).is_file(), (sub, f))


class MaterializeTest(unittest.TestCase):
    def test_every_class_still_applies_to_its_base(self):
        """A change to a reference or starter that removes a class's edited text breaks that class
        silently until a GPU run reaches it: every class of every lab is written out here."""
        import tempfile
        from pathlib import Path
        from gpulab.paths import Course
        from tests.testdata_suite import SpecError, materialize
        course = Course(ROOT, None)
        broken = []
        with tempfile.TemporaryDirectory() as tmp:
            for lab in sorted(p.stem for p in TESTDATA.glob("*.toml")):
                for spec in load_specs(lab):
                    try:
                        materialize(course, lab, spec, Path(tmp) / lab)
                    except SpecError as e:
                        broken.append(f"{lab}: {e}")
        self.assertEqual(broken, [], "\n".join(broken))
