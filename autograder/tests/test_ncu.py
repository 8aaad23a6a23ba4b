"""The Nsight Compute reader: per-line excess wavefronts, n-way degree, n/a, permission errors."""

import re
import stat
import tempfile
import time
import unittest
from pathlib import Path

from gpulab.tools.ncu import parse, report, run
from tests.helpers import FIXTURES, env


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def real_or_synthetic(kind: str) -> list[Path]:
    real = sorted(FIXTURES.glob(f"{kind}-real*"))
    return real or sorted(FIXTURES.glob(f"{kind}-synthetic*"))


class NcuParseTest(unittest.TestCase):
    def test_lines_with_excess_and_nway(self):
        rep = report.build_report("shared", fixture("ncu-source-conflicts-synthetic.csv"),
                               fixture("ncu-details-synthetic.csv"))
        self.assertTrue(rep.measured)
        self.assertEqual(rep.total_excessive, 3072)
        self.assertEqual(len(rep.lines), 1)                       # line 42 summed over both kernels
        ln = rep.lines[0]
        self.assertEqual((ln.file, ln.line, ln.excessive), ("/ws/course/labs/scan/scan.cu", 42, 3072))
        self.assertAlmostEqual(ln.nway, 2.0)                      # 6144 wavefronts / 3072 ideal
        self.assertEqual(rep.kernels, ["scan_shared(const int *, int *, unsigned long)",
                                       "add_offsets(int *, const int *, unsigned long)"])
        text = report.format_report(rep)
        self.assertIn("scan.cu:42: 3072 excess wavefronts", text)
        self.assertIn("2.0-way", text)

    def test_raw_page_totals_are_the_verdict(self):
        raw = fixture("ncu-raw-conflicts-synthetic.csv")
        t = parse.totals_from_raw(raw)
        self.assertEqual((t.excessive, t.wavefronts, t.ideal), (3072, 8192, 5120))
        self.assertEqual(len(t.kernels), 2)
        # The CSV source page of CUDA 13's ncu can lack metric columns: the total still holds.
        rep = report.build_report("shared", '"File Path","/x.cu"\n"Line No","Source"\n"42","s[i] = x;"\n', "", raw_csv=raw)
        self.assertTrue(rep.measured)
        self.assertEqual(rep.total_excessive, 3072)
        self.assertEqual(rep.lines, [])
        self.assertIn("could not be attributed", rep.notes[-1])
        rep = report.build_report("shared", fixture("ncu-source-conflicts-synthetic.csv"), "", raw_csv=raw)
        self.assertEqual(rep.lines[0].line, 42)
        self.assertEqual(rep.notes, [])
        clean = report.build_report("p", "", "", raw_csv=fixture("ncu-raw-clean-synthetic.csv"))
        self.assertTrue(clean.conflict_free)
        na = report.build_report("p", "", "", raw_csv=fixture("ncu-raw-na-synthetic.csv"))
        self.assertFalse(na.measured)
        self.assertIn("n/a", na.reason)

    def test_real_details_page(self):
        text = fixture("ncu-details-real-h200-padded.csv")
        kernels = parse.kernels_from_details(text)
        self.assertEqual(len(kernels), 1)
        self.assertIn("PaddedLayout", kernels[0])
        self.assertIsNone(parse.total_from_details(text))   # conflict-free: no rule message

    def test_nvtx_no_match_real(self):
        self.assertIn("No kernels were profiled", fixture("ncu-nomatch-real-h200.log"))

    def test_clean(self):
        rep = report.build_report("padded", fixture("ncu-source-clean-synthetic.csv"), "")
        self.assertTrue(rep.measured and rep.conflict_free)
        self.assertEqual(rep.lines, [])

    def test_na_is_not_run_never_zero(self):
        rep = report.build_report("padded", fixture("ncu-source-na-synthetic.csv"), "")
        self.assertFalse(rep.measured)
        self.assertIsNone(rep.total_excessive)
        self.assertIn("n/a", rep.reason)

    def test_empty_output_is_not_run(self):
        rep = report.build_report("padded", "", "")
        self.assertFalse(rep.measured)

    def test_permission_error(self):
        diag = parse.diagnose_failure(fixture("ncu-permission-synthetic.log"))
        self.assertIsNotNone(diag)
        self.assertIn("ERR_NVGPUCTRPERM", diag[0])
        self.assertIn("NVreg_RestrictProfilingToAdminUsers", diag[1])

    def test_numbers(self):
        self.assertEqual(parse._number("1,234"), 1234)
        self.assertIsNone(parse._number("n/a"))
        self.assertIsNone(parse._number(""))
        self.assertEqual(parse._number("12.0"), 12)

    def test_real_captures(self):
        """Every real capture committed parses: a conflicted one names lines, a clean one has none."""
        for path in sorted(FIXTURES.glob("ncu-raw-*real*.csv")):
            with self.subTest(path=path.name):
                source = path.with_name(path.name.replace("raw", "source"))
                rep = report.build_report("x", source.read_text() if source.exists() else "", "",
                                       raw_csv=path.read_text())
                self.assertTrue(rep.measured, rep.reason)
                if "conflict" in path.name and "free" not in path.name:
                    self.assertGreater(rep.total_excessive, 0)
                    for l in rep.lines:
                        self.assertGreater(l.nway, 1)
                if "clean" in path.name:
                    self.assertEqual(rep.total_excessive, 0)

    def test_real_tiled_transpose_is_32_way(self):
        """H200 capture, transpose `tiled` at 256x256: 2048 column loads, 31 excess wavefronts each."""
        raw = FIXTURES / "ncu-raw-real-h200-tiled-conflicts.csv"
        source = FIXTURES / "ncu-source-real-h200-tiled-conflicts.csv"
        rep = report.build_report("tiled", source.read_text(), "", raw_csv=raw.read_text())
        self.assertEqual(rep.total_excessive, 63488)
        self.assertTrue(rep.lines, "the conflicting source line is named")
        self.assertTrue(any(round(l.nway) == 32 for l in rep.lines), [(l.line, l.nway) for l in rep.lines])

    def test_real_padded_transpose_is_clean(self):
        raw = FIXTURES / "ncu-raw-real-h200-padded-clean.csv"
        rep = report.build_report("padded", "", "", raw_csv=raw.read_text())
        self.assertTrue(rep.measured, rep.reason)
        self.assertEqual(rep.total_excessive, 0)


class RunnerArgsTest(unittest.TestCase):
    def test_stage_knobs_reach_the_profiled_runner(self):
        """`gpulab conflicts ... --param colors=16` must profile the runner with that knob."""
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "argv"
            fake = Path(tmp) / "ncu"
            fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                run.profile_conflicts(Path("/bin/true"), "colored-direct", "65536", Path(tmp) / "work", 30,
                                      runner_args=["--param", "colors=16"])
            first = log.read_text().splitlines()[0]
            self.assertIn("run --stage colored-direct --n 65536 --no-time --format json --param colors=16", first)

    def test_report_read_back_from_the_import_folder(self):
        """The jailed reader cannot enter the grade's logs folder (under /root on the GPU machine,
        every import failed "Permission denied"): it reads a copy in its own folder."""
        fake = Path(__file__).resolve().parent / "fakes" / "fake_ncu.py"
        with tempfile.TemporaryDirectory() as tmp:
            log, scratch, reader = Path(tmp) / "imports", Path(tmp) / "scratch", Path(tmp) / "reader"
            scratch.mkdir()
            reader.mkdir()
            with env(GPULAB_NCU=str(fake), FAKE_NCU_IMPORT_LOG=str(log)):
                rep = run.profile_conflicts(Path("/bin/true"), "padded", "1024", Path(tmp) / "work", 30,
                                            scratch=scratch, import_dir=reader)
            self.assertTrue(rep.measured, rep.reason)
            imported = set(log.read_text().split())
            self.assertEqual(imported, {str(reader / "ncu-padded.ncu-rep")})
            self.assertTrue((Path(tmp) / "work" / "ncu-padded.ncu-rep").is_file())   # kept for the TA


    def test_pages_are_imported_at_once_and_logged_in_order(self):
        """The three imports of a report run side by side (CPU only, one ncu start each); the
        stage's log still lists them raw, source, details."""
        fake = Path(__file__).resolve().parent / "fakes" / "fake_ncu.py"
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "work"
            with env(GPULAB_NCU=str(fake), FAKE_NCU_IMPORT_SECONDS="1.0"):
                profiled = run.profile_stage_conflicts(Path("/bin/true"), "padded", "1024", work, 30)
                self.assertIsInstance(profiled, run.ProfiledStage)
                t0 = time.monotonic()
                rep = run.read_conflicts(profiled)
                took = time.monotonic() - t0
            self.assertTrue(rep.measured, rep.reason)
            self.assertLess(took, 2.5, "three 1 s imports one after another would take 3 s")
            tags = re.findall(r"^# .* \((\w+) page\)$", (work / "ncu-padded.log").read_text(), re.MULTILINE)
            self.assertEqual(tags, ["raw", "source", "details"])

KERNEL_TIME_CSV = (
    '==PROF== Connected to process 4242\n'
    '{"lab": "scan", "results": []}\n'
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
    '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
    '"0","4242","gpulab-scan-student","h","block_scan","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0",'
    '"Command line profiler metrics","gpu__time_duration.sum","usecond","12.50"\n'
    '"1","4242","gpulab-scan-student","h","add_back","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0",'
    '"Command line profiler metrics","gpu__time_duration.sum","nsecond","2,500"\n'
)


# Several stages in one profiled run with --nvtx: the stack column as an H200 report prints it.
STAGES_CSV = (
    '"ID","Kernel Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",'
    '"Metric Name","Metric Unit","Metric Value"\n'
    '"0","fill","","gpu__time_duration.sum","usecond","40.0"\n'
    '"1","block_scan","2040  ""<default domain>:gpulab:shared:none:none:none:none:none:none"" ",'
    '"gpu__time_duration.sum","usecond","12.50"\n'
    '"2","add_back","2040  ""<default domain>:gpulab:shared:none:none:none:none:none:none"" ",'
    '"gpu__time_duration.sum","nsecond","2,500"\n'
    '"3","void cub::X::DeviceScanKernel<int>(int)","2040  ""<default domain>:gpulab:single-pass:none:none:none:none:none:none"" ",'
    '"gpu__time_duration.sum","msecond","n/a"\n'
)


class StageKernelsTest(unittest.TestCase):
    def test_kernels_go_to_the_stage_on_their_nvtx_stack(self):
        found, has_stack = parse.parse_stage_kernels(STAGES_CSV)
        self.assertTrue(has_stack)
        self.assertEqual(set(found), {"shared", "single-pass"})   # the input kernel is nobody's
        self.assertAlmostEqual(found["shared"][0], 0.015)
        self.assertEqual(found["shared"][1], ["block_scan", "add_back"])
        self.assertIsNone(found["single-pass"][0])                  # n/a: not a measurement
        self.assertEqual(found["single-pass"][1], ["void cub::X::DeviceScanKernel<int>(int)"])

    def test_no_stack_column_attributes_nothing(self):
        self.assertEqual(parse.parse_stage_kernels(KERNEL_TIME_CSV), ({}, False))


class KernelTimeTest(unittest.TestCase):
    def test_sums_every_kernel_in_milliseconds(self):
        self.assertAlmostEqual(parse.parse_kernel_time_ms(KERNEL_TIME_CSV), 0.015)

    def test_no_kernels_or_unreadable_values_are_not_a_measurement(self):
        self.assertIsNone(parse.parse_kernel_time_ms("==PROF== No kernels were profiled.\n"))
        self.assertIsNone(parse.parse_kernel_time_ms(KERNEL_TIME_CSV.replace('"12.50"', '"n/a"')))
        self.assertIsNone(parse.parse_kernel_time_ms(KERNEL_TIME_CSV.replace('"usecond"', '"cycle"')))

    def test_profile_runs_the_stage_outside_the_timer(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "argv"
            fake = Path(tmp) / "ncu"
            (Path(tmp) / "out.csv").write_text(KERNEL_TIME_CSV)
            fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\ncat {tmp}/out.csv\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                prof = run.profile_kernel_time(Path("/bin/true"), "shared", "16777216", Path(tmp) / "w", 30)
            self.assertEqual((round(prof.ms, 6), prof.why), (0.015, ""))
            self.assertEqual(prof.kernels, ["block_scan", "add_back"])
            argv = log.read_text()
            # Warm caches, like the timed runs it stands against (run.KERNEL_TIME).
            self.assertIn("--metrics gpu__time_duration.sum --clock-control none --cache-control none", argv)
            self.assertIn("--nvtx-include gpulab:shared/", argv)
            self.assertIn("run --stage shared --n 16777216 --no-time", argv)


if __name__ == "__main__":
    unittest.main()
