"""compute-sanitizer log parsing and verdicts."""

import unittest

from gpulab import proc
from gpulab.tools import compute_sanitizer
from tests.helpers import FIXTURES


def res(code: int = 0, timed_out: bool = False) -> proc.Result:
    return proc.Result(["compute-sanitizer"], code, "", "", 1.0, timed_out)


class SanitizerTest(unittest.TestCase):
    def test_memcheck_out_of_bounds(self):
        text = (FIXTURES / "memcheck-oob-synthetic.log").read_text()
        findings, errors = compute_sanitizer.parse_log(text)
        self.assertEqual(errors, 2)
        first = findings[0]
        self.assertEqual(first.kind, "Invalid __global__ write")
        self.assertEqual((first.file, first.line), ("/ws/course/labs/scan/scan.cu", 27))
        self.assertIn("out of bounds", first.excerpt)
        self.assertNotIn("Host Frame", first.excerpt)
        self.assertTrue(findings[1].kind.startswith("CUDA API error"))
        rep = compute_sanitizer.verdict("memcheck", "naive", text, res(9))
        self.assertTrue(rep.ran)
        self.assertFalse(rep.clean)

    def test_racecheck(self):
        text = (FIXTURES / "racecheck-race-synthetic.log").read_text()
        findings, errors = compute_sanitizer.parse_log(text)
        self.assertEqual(errors, 1)
        self.assertEqual(findings[0].kind, "race: Write-Read")
        self.assertEqual(findings[0].line, 42)
        self.assertFalse(compute_sanitizer.verdict("racecheck", "shared", text, res(9)).clean)

    def test_clean(self):
        text = (FIXTURES / "memcheck-clean-synthetic.log").read_text()
        rep = compute_sanitizer.verdict("memcheck", "naive", text, res(0))
        self.assertTrue(rep.ran and rep.clean)
        # The program failing its own check (exit 1) is not a sanitizer finding.
        self.assertTrue(compute_sanitizer.verdict("memcheck", "naive", text, res(1)).clean)

    def test_no_summary_is_not_run(self):
        rep = compute_sanitizer.verdict("memcheck", "naive", "", res(1))
        self.assertFalse(rep.ran)
        self.assertIn("no summary", rep.reason)

    def test_timeout_is_a_finding(self):
        rep = compute_sanitizer.verdict("racecheck", "naive", "========= COMPUTE-SANITIZER\n", res(-9, True))
        self.assertFalse(rep.clean)
        self.assertEqual(rep.findings[-1].kind, "timeout")

    def test_real_captures(self):
        for path in sorted(FIXTURES.glob("*check-*-real*.log")):
            with self.subTest(path=path.name):
                findings, errors = compute_sanitizer.parse_log(path.read_text())
                self.assertIsNotNone(errors, "a real log has a summary line")
                if "clean" in path.name:
                    self.assertEqual(errors, 0)
                    self.assertEqual([f for f in findings if f.severity == "error"], [])
                elif "warp" in path.name:   # hazards reported as warnings only: 0 errors, still failed
                    self.assertEqual(errors, 0)
                    self.assertTrue(findings and all(f.severity == "warning" for f in findings))
                else:
                    self.assertGreater(errors, 0)
                    self.assertTrue(any(f.file and f.line for f in findings), "a finding names file:line")

    def assert_real_finding_at(self, fixture: str, file: str, line: int) -> None:
        findings, errors = compute_sanitizer.parse_log((FIXTURES / fixture).read_text())
        self.assertGreater(errors, 0)
        self.assertTrue(any(f.file == file and f.line == line for f in findings),
                        [(f.file, f.line, f.kind) for f in findings])

    def test_real_out_of_bounds_write_names_the_line(self):
        self.assert_real_finding_at("memcheck-oob-real-h200.log", "transpose.cu", 50)

    def test_real_race_names_the_line(self):
        self.assert_real_finding_at("racecheck-race-real-h200.log", "transpose.cu", 174)
    def test_real_warp_hazards_fail_the_run_and_say_so(self):
        """A race between the lanes of one warp (reduction's pipeline-lockstep-warp, H200): racecheck
        prints only warnings, 0 errors, and exits with --error-exitcode. The run is not clean, and
        the check's summary counts the warnings, not "0 finding(s)", and says how to fix them."""
        from gpulab.checks import sanitizers
        text = (FIXTURES / "racecheck-warp-real-h200.log").read_text()
        rep = compute_sanitizer.verdict("racecheck", "pipeline", text, res(9))
        self.assertTrue(rep.ran)
        self.assertFalse(rep.clean)
        self.assertEqual((rep.errors, rep.warnings), (0, 2668))
        self.assertEqual(rep.findings[0].line, 167)
        check = sanitizers.verdict(2.0, [rep], None)
        self.assertEqual((check.status, check.points), ("fail", 0))
        self.assertIn("2668 hazard warning(s)", check.summary)
        self.assertNotIn("0 finding(s)", check.summary)
        self.assertIn("__syncwarp()", check.fix)
        # The student reads the fix where the findings are: report.md's section and Gradescope's output.
        from gpulab import report
        from gpulab.scoring import StageGrade
        md = "\n".join(report._stage_details(StageGrade("pipeline", checks={"sanitizer": check})))
        self.assertIn("### pipeline: compute-sanitizer (racecheck: 2668 hazard warning(s)", md)
        self.assertIn("Fix: order the shared-memory accesses", md)
        self.assertIn("fix: order the shared-memory accesses", report._test_output(check))
        # A log with errors: its errors counted, as before.
        self.assertIn("1 finding(s)", sanitizers.verdict(2.0, [compute_sanitizer.verdict(
            "racecheck", "shared", (FIXTURES / "racecheck-race-synthetic.log").read_text(), res(9))], None).summary)

    def test_run_turns_the_nvtx_regions_on(self):
        """--nvtx yes: memcheck sees each scratch take as its own region (issue 24 item 4)."""
        import tempfile
        from pathlib import Path
        from unittest import mock
        seen: list[list[str]] = []

        def fake_run(cmd, **_):
            seen.append([str(c) for c in cmd])
            return proc.Result(cmd, 0, "", "", 1.0)

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(compute_sanitizer.locate, "find_tool", return_value=Path("/cs")), \
                mock.patch.object(compute_sanitizer.proc, "run", side_effect=fake_run):
            compute_sanitizer.run_sanitizer("memcheck", Path("/runner"), "naive", "4099", Path(tmp), 10.0)
        cmd = seen[0]
        self.assertEqual(cmd[cmd.index("--nvtx") + 1], "yes")
        self.assertLess(cmd.index("--nvtx"), cmd.index("/runner"), "a compute-sanitizer option, not the runner's")

if __name__ == "__main__":
    unittest.main()


class PlanTest(unittest.TestCase):
    """One run per (tool, shape), but racecheck of a large shape in parts (checks/sanitizers.py)."""

    def test_a_large_shape_splits_its_racecheck_in_stage_table_order(self):
        from types import SimpleNamespace

        from gpulab.checks import sanitizers
        from gpulab.rubric import Case, Size
        small, large = Case(Size(1000)), Case(Size(sanitizers.RACECHECK_SPLIT_MIN_N))
        stages = [SimpleNamespace(id=s) for s in ("cpu", "p0", "p1", "p2", "p3", "p4")]
        lr = SimpleNamespace(rubric=SimpleNamespace(sanitizer_shapes=[small, large], racecheck_parts=3),
                             on_gpu={"cpu": False, "p0": True, "p1": True, "p2": True, "p3": True, "p4": True})
        plan = sanitizers._plan(lr, stages)
        self.assertEqual(plan, [("memcheck", 0, ["cpu", "p0", "p1", "p2", "p3", "p4"]),
                                ("racecheck", 0, ["p0", "p1", "p2", "p3", "p4"]),
                                ("memcheck", 1, ["cpu", "p0", "p1", "p2", "p3", "p4"]),
                                ("racecheck", 1, ["p0", "p3"]), ("racecheck", 1, ["p1", "p4"]),
                                ("racecheck", 1, ["p2"])])
        lr.on_gpu = {s.id: s.id == "p0" for s in stages}
        self.assertEqual([p for p in sanitizers._plan(lr, stages) if p[0] == "racecheck"],
                         [("racecheck", 0, ["p0"]), ("racecheck", 1, ["p0"])])
        # No GPU stage on a large shape (a CPU-only stage, a starter whose stages are all TODO, no GPU).
        lr.on_gpu = {s.id: False for s in stages}
        self.assertEqual(sanitizers._plan(lr, stages), [("memcheck", 0, [s.id for s in stages]),
                                                        ("memcheck", 1, [s.id for s in stages])])
        self.assertEqual(sanitizers._plan(lr, []), [])
        # A rubric that asks for no parts (the default) keeps one racecheck run per shape.
        lr.rubric.racecheck_parts, lr.on_gpu = 1, {s.id: s.id != "cpu" for s in stages}
        self.assertEqual([p for p in sanitizers._plan(lr, stages) if p[0] == "racecheck"],
                         [("racecheck", 0, ["p0", "p1", "p2", "p3", "p4"]), ("racecheck", 1, ["p0", "p1", "p2", "p3", "p4"])])
