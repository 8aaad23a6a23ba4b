"""The scoring arithmetic, rule by rule."""

import unittest

from gpulab.scoring import correctness_points, performance_points


class ScoringTest(unittest.TestCase):
    def test_correctness_scales_with_cases_passed(self):
        self.assertEqual(correctness_points(10, 3, 4), 7.5)
        self.assertEqual(correctness_points(10, 0, 4), 0)
        self.assertEqual(correctness_points(10, 4, 4), 10)
        self.assertEqual(correctness_points(10, 0, 0), 0)

    def test_performance_cs149_rule(self):
        self.assertEqual(performance_points(4, 1.0, 1.0, 1.2), 4)      # as fast
        self.assertEqual(performance_points(4, 1.2, 1.0, 1.2), 4)      # at the ratio: full
        self.assertAlmostEqual(performance_points(4, 2.0, 1.0, 1.2), 2.0)   # twice as slow: half
        self.assertAlmostEqual(performance_points(4, 1.25, 1.0, 1.2), 3.2)  # just past the ratio: Tref/T
        self.assertEqual(performance_points(4, 0.5, 1.0, 1.2), 4)      # faster than the reference: capped
        self.assertEqual(performance_points(4, 0, 1.0, 1.2), 0)        # no timing: nothing
        self.assertEqual(performance_points(0, 1.0, 1.0, 1.2), 0)


if __name__ == "__main__":
    unittest.main()
