"""Rubric parsing: sizes, defaults, hidden cases, and a clear error for every kind of mistake."""

import unittest
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.manifest import load_manifest
from gpulab.rubric import load_rubric, parse_rubric
from tests.helpers import HIDDEN, RUBRIC

REPO = Path(__file__).resolve().parents[2]


class RubricTest(unittest.TestCase):
    def test_example_rubric(self):
        r = parse_rubric(RUBRIC, "rubric.toml", HIDDEN)
        self.assertEqual(r.lab, "scan")
        self.assertEqual(r.student_files, ("scan.cu",))
        self.assertEqual([s.id for s in r.stages], ["naive", "shared"])
        self.assertEqual(r.max_points, 15 + 19)
        self.assertEqual(r.performance.size.arg, "65536")
        self.assertEqual(r.performance.full_credit_ratio, 1.2)
        self.assertEqual(len(r.cases), 3)
        self.assertTrue(r.cases[2].hidden)
        self.assertEqual(r.cases[1].distribution, "sorted")
        self.assertEqual(r.case_timeout, 2)
        self.assertEqual(r.cases[0].runner_args(), ["--n", "1025", "--seed", "1", "--dist", "uniform"])

    def test_extra_credit_and_manual(self):
        text = RUBRIC.replace('id = "shared"', 'id = "shared"\nextra_credit = true') + (
            '\n[[manual]]\nid = "write-up"\nfile = "answers.md"\npoints = 8\ntitle = "questions"\n')
        r = parse_rubric(text)
        self.assertEqual((r.max_points, r.extra_credit_points, r.manual_points), (15, 19, 8))
        self.assertEqual(r.manual[0].file, "answers.md")
        with self.assertRaisesRegex(GpulabError, "true/false"):
            parse_rubric(RUBRIC.replace('id = "shared"', 'id = "shared"\nextra_credit = "yes"'))
        with self.assertRaisesRegex(GpulabError, "both a student file"):
            parse_rubric(RUBRIC + '\n[[manual]]\nid = "x"\nfile = "scan.cu"\npoints = 1\n')
        with self.assertRaisesRegex(GpulabError, "manual\\[0\\].points"):
            parse_rubric(RUBRIC + '\n[[manual]]\nid = "x"\nfile = "a.md"\npoints = 0\n')

    def test_2d_sizes_rows_cols_and_string(self):
        text = RUBRIC.replace("n = 65536\nfull", 'rows = 8192\ncols = 4096\nfull').replace(
            "[sanitizers]\nn = 4099", '[sanitizers]\nn = "100x67"')
        r = parse_rubric(text)
        self.assertEqual(r.performance.size.arg, "8192x4096")
        self.assertEqual(r.performance.size.n, 8192 * 4096)
        self.assertEqual(r.sanitizer_size.arg, "100x67")

    def test_sanitizer_shapes(self):
        one = parse_rubric(RUBRIC)
        self.assertEqual([c.name for c in one.sanitizer_shapes], ["n=4099 uniform seed=1"])
        text = RUBRIC.replace("[sanitizers]\nn = 4099", '[sanitizers]\n[[sanitizers.shape]]\nn = 300\n'
                              '[[sanitizers.shape]]\nn = 40009\nseed = 3\nparams = { block = 64 }\nstages = ["naive"]')
        r = parse_rubric(text)
        self.assertEqual([c.name for c in r.sanitizer_shapes], ["n=300 uniform seed=1", "n=40009 uniform seed=3 block=64"])
        self.assertEqual(r.sanitizer_size.arg, "300")
        self.assertFalse(r.sanitizer_shapes[1].applies_to("shared"))
        self.assertRubricError(text.replace('stages = ["naive"]', 'stages = ["nope"]'), "sanitizer shape", "nope")
        self.assertRubricError(text.replace("seed = 3", "sed = 3"), "sanitizers.shape[1].sed")
        self.assertRubricError(RUBRIC.replace("[sanitizers]\nn = 4099", "[sanitizers]\nshape = []"), "is empty")
        self.assertRubricError(RUBRIC.replace("[sanitizers]\nn = 4099", "[sanitizers]"), "[sanitizers] has no n")

    def test_distribution_underscore_accepted(self):
        r = parse_rubric(RUBRIC.replace('"sorted"', '"small_range"'))
        self.assertEqual(r.cases[1].distribution, "small-range")

    def test_racecheck_parts(self):
        self.assertEqual(parse_rubric(RUBRIC).racecheck_parts, 1)
        r = parse_rubric(RUBRIC.replace("[sanitizers]\n", "[sanitizers]\nracecheck_parts = 3\n"))
        self.assertEqual((r.racecheck_parts, [c.size.n for c in r.sanitizer_shapes]), (3, [4099]))
        with self.assertRaisesRegex(GpulabError, "racecheck_parts"):
            parse_rubric(RUBRIC.replace("[sanitizers]\n", "[sanitizers]\nracecheck_parts = 0\n"))
        self.assertEqual(load_rubric(REPO / "labs" / "bitonic" / "rubric.toml").racecheck_parts, 3)

    def test_case_params_and_stage_filter(self):
        r = parse_rubric(RUBRIC + '\n[[case]]\nn = 77\nstages = ["shared"]\nparams = { block = 128 }\n')
        extra = r.cases[-1]
        self.assertEqual(extra.runner_args()[-2:], ["--param", "block=128"])
        self.assertEqual(len(r.cases_for("naive")), 2)
        self.assertEqual(len(r.cases_for("shared")), 3)

    def assertRubricError(self, text, *words, hidden=None):
        with self.assertRaises(GpulabError) as cm:
            parse_rubric(text, "labs/scan/rubric.toml", hidden)
        msg = str(cm.exception)
        self.assertIn("labs/scan/rubric.toml", msg) if hidden is None else None
        for w in words:
            self.assertIn(w, msg)

    def test_library_policy_per_stage(self):
        r = parse_rubric(RUBRIC.replace('id = "naive"', 'id = "naive"\nlibrary = "block"'))
        self.assertEqual(r.stage("naive").library, "block")
        self.assertEqual(r.stage("shared").library, "none")   # the default: the student's own kernels
        with self.assertRaisesRegex(GpulabError, r"stage\[0\]\.library` must be one of none, block, any"):
            parse_rubric(RUBRIC.replace('id = "naive"', 'id = "naive"\nlibrary = "cub"'))

    def test_errors_are_clear(self):
        self.assertRubricError(RUBRIC.replace("correctness = 10\nsanitizer = 2\nperformance",
                                              "corectness = 10\nsanitizer = 2\nperformance", 1), "corectness")
        self.assertRubricError(RUBRIC.replace("seed = 1", 'seed = "one"'), "case[0].seed", "integer")
        self.assertRubricError(RUBRIC.replace('id = "shared"', 'id = "naive"'), "listed twice")
        self.assertRubricError(RUBRIC.replace("[conflicts]\nn = 65536", "[conflicts]"), "conflict_free", "[conflicts]")
        self.assertRubricError(RUBRIC.replace('"sorted"', '"sortd"'), "distribution")
        self.assertRubricError(RUBRIC + "\n[[case]]\nn = 0\n", "positive")
        self.assertRubricError(RUBRIC + "\n[[case]]\nn = 3\nstages = [\"nope\"]\n", "nope")
        self.assertRubricError("lab = ", "invalid TOML")
        self.assertRubricError(RUBRIC.replace('["scan.cu"]', '["../x.cu"]'), "student_files")
        self.assertRubricError(RUBRIC, "hidden", hidden='lab = "transpose"')

    def test_conflicts_params_reach_the_profile_and_must_be_run_by_every_conflict_stage(self):
        r = parse_rubric(RUBRIC.replace("[conflicts]\nn = 65536", "[conflicts]\nn = 65536\nparams = { block = 128 }"))
        self.assertEqual((r.conflicts_params, r.conflicts_args()), ((("block", 128),), ["--param", "block=128"]))
        self.assertEqual(parse_rubric(RUBRIC).conflicts_args(), [])
        self.assertRubricError(RUBRIC.replace("[conflicts]\nn = 65536", '[conflicts]\nn = 65536\nparams = { block = "big" }'),
                               "conflicts.params.block", "integer")
        radix = load_rubric(REPO / "labs" / "radix-sort" / "rubric.toml")
        self.assertEqual(radix.conflicts_args(), ["--param", "end_bit=8"])   # digit4: 2 passes, not 8
        # reduction's tree (conflict points) runs sum and max only: a profile of op = interval would
        # grade a usage error, so the rubric is refused when it loads.
        path = REPO / "labs" / "reduction" / "rubric.toml"
        text = path.read_text(encoding="utf-8").replace("\nn = 65536\n", '\nn = 65536\nparams = { op = "interval" }\n', 1)
        self.assertIn('must be 0\nn = 65536\nparams = { op = "interval" }', text)
        with self.assertRaisesRegex(GpulabError, r"\[conflicts\] params .* not run by stage 'tree'"):
            parse_rubric(text, str(path), manifest=load_manifest(path.parent / "lab.toml"))

    def test_repository_rubrics_parse(self):
        for path in sorted((REPO / "labs").glob("*/rubric.toml")):
            with self.subTest(lab=path.parent.name):
                hidden = REPO / "autograder" / "hidden" / f"{path.parent.name}.toml"
                r = load_rubric(path, hidden)
                self.assertEqual(r.lab, path.parent.name)
                self.assertGreater(r.max_points, 0)


if __name__ == "__main__":
    unittest.main()
