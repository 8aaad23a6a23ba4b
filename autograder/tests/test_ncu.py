"""The Nsight Compute reader: per-line excess wavefronts, n-way degree, n/a, permission errors."""

import unittest
from pathlib import Path

from gpulab import ncu
from tests.helpers import FIXTURES


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def real_or_synthetic(kind: str) -> list[Path]:
    real = sorted(FIXTURES.glob(f"{kind}-real*"))
    return real or sorted(FIXTURES.glob(f"{kind}-synthetic*"))


class NcuParseTest(unittest.TestCase):
    def test_lines_with_excess_and_nway(self):
        rep = ncu.build_report("shared", fixture("ncu-source-conflicts-synthetic.csv"),
                               fixture("ncu-details-synthetic.csv"))
        self.assertTrue(rep.measured)
        self.assertEqual(rep.total_excessive, 3072)
        self.assertEqual(len(rep.lines), 1)                       # line 42 summed over both kernels
        ln = rep.lines[0]
        self.assertEqual((ln.file, ln.line, ln.excessive), ("/ws/course/labs/scan/scan.cu", 42, 3072))
        self.assertAlmostEqual(ln.nway, 2.0)                      # 6144 wavefronts / 3072 ideal
        self.assertEqual(rep.kernels, ["scan_shared(const int *, int *, unsigned long)",
                                       "add_offsets(int *, const int *, unsigned long)"])
        text = ncu.format_report(rep)
        self.assertIn("scan.cu:42: 3072 excess wavefronts", text)
        self.assertIn("2.0-way", text)

    def test_clean(self):
        rep = ncu.build_report("padded", fixture("ncu-source-clean-synthetic.csv"), "")
        self.assertTrue(rep.measured and rep.conflict_free)
        self.assertEqual(rep.lines, [])

    def test_na_is_not_run_never_zero(self):
        rep = ncu.build_report("padded", fixture("ncu-source-na-synthetic.csv"), "")
        self.assertFalse(rep.measured)
        self.assertIsNone(rep.total_excessive)
        self.assertIn("n/a", rep.reason)

    def test_empty_output_is_not_run(self):
        rep = ncu.build_report("padded", "", "")
        self.assertFalse(rep.measured)

    def test_permission_error(self):
        diag = ncu.diagnose_failure(fixture("ncu-permission-synthetic.log"))
        self.assertIsNotNone(diag)
        self.assertIn("ERR_NVGPUCTRPERM", diag[0])
        self.assertIn("NVreg_RestrictProfilingToAdminUsers", diag[1])

    def test_numbers(self):
        self.assertEqual(ncu._number("1,234"), 1234)
        self.assertIsNone(ncu._number("n/a"))
        self.assertIsNone(ncu._number(""))
        self.assertEqual(ncu._number("12.0"), 12)

    def test_real_captures(self):
        """Every real capture committed parses: a conflicted one names lines, a clean one has none."""
        for path in sorted(FIXTURES.glob("ncu-*-real*.csv")):
            if "details" in path.name:
                continue
            with self.subTest(path=path.name):
                details = path.with_name(path.name.replace("source", "details"))
                rep = ncu.build_report("x", path.read_text(), details.read_text() if details.exists() else "")
                self.assertTrue(rep.measured, rep.reason)
                if "conflict" in path.name and "free" not in path.name:
                    self.assertGreater(rep.total_excessive, 0)
                    self.assertTrue(rep.lines)
                    self.assertTrue(all(l.nway and l.nway > 1 for l in rep.lines))
                if "clean" in path.name:
                    self.assertEqual(rep.total_excessive, 0)


if __name__ == "__main__":
    unittest.main()
