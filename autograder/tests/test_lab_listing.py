"""Each lab's runner (`list --format json`) against its rubric: the student files, the stage ids
and the conflict-free stages are written in both, and must agree (labs/<lab>/rubric.toml is what
the grader scores; the runner's stage table is what it runs)."""

import json
import os
import subprocess
import unittest
from pathlib import Path

from gpulab.rubric import load_rubric

REPO = Path(__file__).resolve().parents[2]


def rubric_labs() -> list[str]:
    return sorted(p.parent.name for p in (REPO / "labs").glob("*/rubric.toml"))


class LabListingTest(unittest.TestCase):
    def setUp(self):
        build = os.environ.get("GPULAB_BUILD_DIR")
        if not build:
            self.skipTest("GPULAB_BUILD_DIR is not set (ctest sets it: the runners are in the build tree)")
        self.build = Path(build)

    def listing(self, lab: str) -> dict:
        runner = self.build / "labs" / lab / f"gpulab-{lab}-student"
        self.assertTrue(runner.is_file(), f"{runner} is not built")
        res = subprocess.run([runner, "list", "--format", "json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        return json.loads(res.stdout)

    def test_every_lab_has_a_rubric_and_a_runner(self):
        self.assertTrue(rubric_labs(), "no labs/*/rubric.toml")
        for lab in rubric_labs():
            with self.subTest(lab=lab):
                self.assertEqual(self.listing(lab)["lab"], lab)

    def test_runner_agrees_with_rubric(self):
        for lab in rubric_labs():
            with self.subTest(lab=lab):
                rb = load_rubric(REPO / "labs" / lab / "rubric.toml")
                doc = self.listing(lab)
                stages = {s["id"]: s for s in doc["stages"]}
                files = [f"labs/{lab}/{f}" for f in rb.student_files]
                self.assertEqual(sorted(doc["student_files"]), sorted(files), "student files")
                student = {i for i, s in stages.items() if s["role"] == "student"}
                self.assertEqual(student, {s.id for s in rb.stages}, "student stages: runner vs rubric [[stage]]s")
                for i in student:
                    self.assertIn(stages[i]["file"], files, f"stage {i}: its file is not a student file")
                self.assertEqual({i for i, s in stages.items() if s["must_be_conflict_free"]},
                                 {s.id for s in rb.stages if s.conflict_free > 0},
                                 "conflict-free stages: the runner's must_be_conflict_free vs the rubric's conflict_free points")


if __name__ == "__main__":
    unittest.main()
