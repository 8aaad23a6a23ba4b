"""The visible cases reach every kernel and branch the hidden cases reach, and the sanitizer shapes
reach every one any case reaches (gpulab/case_paths.py; the paths come from each lab's launch
model, `gpulab-<lab>-student paths`). First on made-up paths (each promise broken once), then on
every lab of the course."""

import json
import os
import subprocess
import unittest
from pathlib import Path

from gpulab.case_paths import gaps, runner_paths
from gpulab.rubric import load_rubric, parse_rubric

REPO = Path(__file__).resolve().parents[2]

RUBRIC = """
lab = "toy"
student_files = ["toy.cu"]
[sanitizers]
n = 100
[[case]]
n = 100
[[case]]
n = 5000
stages = ["one-pass"]
[[stage]]
id = "one-pass"
correctness = 4
sanitizer = 1
[[stage]]
id = "tree"
correctness = 4
"""
HIDDEN = """
[[case]]
n = 5000000
"""


def toy_paths(case, stages):
    """A made-up launch model: two rounds above n = 1000, several levels above 10^6."""
    n = case.size.n
    out = {}
    for s in stages:
        if s == "tree" and case.params == (("op", 2),):
            out[s] = {"refused": "tree relies on a commutative operator"}
        elif s == "one-pass":
            out[s] = {"paths": ["two rounds" if n > 1000 else "one block"], "modelled": True}
        else:
            out[s] = {"paths": ["several levels" if n > 10**6 else "one level"], "modelled": True}
    return out


class GapsTest(unittest.TestCase):
    def test_every_broken_promise_is_named(self):
        rb = parse_rubric(RUBRIC, "toy.toml", HIDDEN)
        found = gaps(rb, {"one-pass", "tree"}, toy_paths)
        self.assertEqual(len(found), 2, found)
        self.assertIn('toy: stage one-pass: no sanitizer shape reaches "two rounds" (the case n=5000', found[0])
        self.assertIn('toy: stage tree: no visible case reaches "several levels" (the hidden case n=5000000', found[1])

    def test_mended_rubric_has_no_gaps(self):
        mended = RUBRIC.replace("[sanitizers]\nn = 100", "[sanitizers]\n[[sanitizers.shape]]\nn = 100\n"
                                "[[sanitizers.shape]]\nn = 5000") + "[[case]]\nn = 2000000\n"
        self.assertEqual(gaps(parse_rubric(mended, "toy.toml", HIDDEN), {"one-pass", "tree"}, toy_paths), [])

    def test_a_case_a_stage_refuses_and_an_unmodelled_stage(self):
        rb = parse_rubric(RUBRIC + "[[case]]\nn = 7\nparams = { op = 2 }\nstages = [\"tree\"]\n", "toy.toml")
        found = gaps(rb, {"one-pass", "tree"}, toy_paths)
        self.assertTrue(any("applies to stage tree, which refuses it" in f for f in found), found)
        unmodelled = gaps(rb, {"tree"}, lambda c, st: {s: {"paths": [], "modelled": False} for s in st})
        self.assertIn("toy: stage tree has no path model (Stage::reaches)", unmodelled[0])


class CourseCasePathsTest(unittest.TestCase):
    """Every lab of the course keeps both promises (instructor tree: the hidden cases are here)."""

    def test_every_lab(self):
        build = os.environ.get("GPULAB_BUILD_DIR")
        if not build:
            self.skipTest("GPULAB_BUILD_DIR is not set (ctest sets it: the runners are in the build tree)")
        labs = sorted(p.parent.name for p in (REPO / "labs").glob("*/rubric.toml"))
        self.assertTrue(labs)
        for lab in labs:
            with self.subTest(lab=lab):
                runner = Path(build) / "labs" / lab / f"gpulab-{lab}-student"
                self.assertTrue(runner.is_file(), f"{runner} is not built")
                listing = json.loads(subprocess.run([runner, "list", "--format", "json"], capture_output=True,
                                                    text=True, timeout=60, check=True).stdout)
                gpu = {s["id"] for s in listing["stages"] if s["where"] == "gpu" and s["role"] == "student"}
                hidden = REPO / "autograder" / "hidden" / f"{lab}.toml"
                rb = load_rubric(REPO / "labs" / lab / "rubric.toml", hidden)
                found = gaps(rb, gpu, runner_paths(runner))
                self.assertEqual(found, [], "\n" + "\n".join(found))


if __name__ == "__main__":
    unittest.main()
