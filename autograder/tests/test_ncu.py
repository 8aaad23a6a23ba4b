"""The Nsight Compute reader: per-line excess wavefronts, n-way degree, n/a, permission errors."""

import re
import stat
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

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

    def test_a_kernel_time_no_kernel_has_is_unreadable(self):
        # The profiled program's stdout shares the rows' stream: a row it printed with a negative
        # time would take time off its stage's sum.
        for value in ("-5.0", "nan", "inf"):
            row = {"Metric Name": "gpu__time_duration.sum", "Metric Unit": "msecond", "Metric Value": value}
            self.assertIsNone(parse._kernel_ms(row), value)
        self.assertEqual(parse._kernel_ms({"Metric Unit": "usecond", "Metric Value": "1,500"}), 1.5)

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

    def test_a_fault_of_ncu_itself_is_profiled_once_more(self):
        """ncu's "Failed to prepare kernel for profiling" / "Unknown Error on device 0" (two H200s,
        2026-11-29) is the profiler's fault: the profile runs again, and the second one counts."""
        for faults, measured in ((1, True), (2, False)):
            with self.subTest(faults=faults), tempfile.TemporaryDirectory() as tmp:
                count, fake = Path(tmp) / "count", Path(tmp) / "ncu"
                fake.write_text(f'#!/bin/sh\necho x >> {count}\n'
                                f'if [ $(wc -l < {count}) -le {faults} ]; then\n'
                                '  echo "==ERROR== Failed to prepare kernel for profiling"\n'
                                '  echo "==ERROR== Unknown Error on device 0."; exit 9; fi\n'
                                'for a in "$@"; do [ "$prev" = --export ] && : > "$a.ncu-rep"; prev=$a; done\n')
                fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
                with env(GPULAB_NCU=str(fake)), mock.patch.object(run, "PROFILER_FAULT_PAUSE_S", 0):
                    got = run.profile_stage_conflicts(Path("/bin/true"), "padded", "1024", Path(tmp) / "work", 30)
                self.assertEqual(len(count.read_text().split()), 2)   # never a third time
                self.assertEqual(isinstance(got, run.ProfiledStage), measured, got)
                if not measured:
                    self.assertIn("Nsight Compute failed on its own", got.reason)
                log = (Path(tmp) / "work" / "ncu-padded.log").read_text()
                self.assertIn("Nsight Compute's own fault: profiled again", log)

    def test_a_program_that_fails_is_not_profiled_again(self):
        with tempfile.TemporaryDirectory() as tmp:
            count, fake = Path(tmp) / "count", Path(tmp) / "ncu"
            fake.write_text(f'#!/bin/sh\necho x >> {count}\necho "==ERROR== The application returned an error code (9)."\nexit 9\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                got = run.profile_stage_conflicts(Path("/bin/true"), "padded", "1024", Path(tmp) / "work", 30)
            self.assertEqual(len(count.read_text().split()), 1)
            self.assertIn("ncu wrote no report", got.reason)

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
            # 3 s per import: one after another they take 9 s; side by side 3 s plus three Python
            # starts, which on a loaded 2-core CI machine took 2.4 s (1 s imports: 3.37 s, 2026-12-02).
            with env(GPULAB_NCU=str(fake), FAKE_NCU_IMPORT_SECONDS="3.0"):
                profiled = run.profile_stage_conflicts(Path("/bin/true"), "padded", "1024", work, 30)
                self.assertIsInstance(profiled, run.ProfiledStage)
                t0 = time.monotonic()
                rep = run.read_conflicts(profiled)
                took = time.monotonic() - t0
            self.assertTrue(rep.measured, rep.reason)
            self.assertLess(took, 7.0, "three 3 s imports one after another would take 9 s")
            tags = re.findall(r"^# .* \((\w+) page\)$", (work / "ncu-padded.log").read_text(), re.MULTILINE)
            self.assertEqual(tags, ["raw", "source", "details"])

    def test_a_page_cut_at_the_limit_is_not_counted(self):
        """A report of many kernels: a page past the output limit would drop the last kernels'
        rows and count their excess short; the verdict is "not run" (no conflict-free points)."""
        fake = Path(__file__).resolve().parent / "fakes" / "fake_ncu.py"
        with tempfile.TemporaryDirectory() as tmp:
            with env(GPULAB_NCU=str(fake)), mock.patch.object(run, "OUTPUT_LIMIT", 64):
                rep = run.profile_conflicts(Path("/bin/true"), "padded", "1024", Path(tmp) / "work", 30)
            self.assertFalse(rep.measured)
            self.assertIn("page ran past", rep.reason)

class SeveralStagesTest(unittest.TestCase):
    """One Source Counters profile of several stages (tools/ncu/run.py, issue 31): the raw page cut
    by each kernel's NVTX range gives each stage the total its own profile gives."""

    def test_real_page_cut_by_stage_matches_the_stage_alone(self):
        # H200, 2026-12-01: radix-sort's digit4 and digit4-count (which share digit4_upsweep) in one
        # profile at n = 65536, end_bit 8, against digit4 profiled alone.
        pages = parse.split_raw_by_stage(fixture("ncu-raw-real-h200-digit4-and-count.csv"))
        self.assertEqual(sorted(pages), ["digit4", "digit4-count"])
        d4 = report.build_report("digit4", "", "", raw_csv=pages["digit4"])
        alone = report.build_report("digit4", "", "", raw_csv=fixture("ncu-raw-real-h200-digit4-alone.csv"))
        self.assertEqual((d4.total_excessive, len(d4.kernels)), (alone.total_excessive, len(alone.kernels)))
        self.assertEqual(d4.total_excessive, 10011)
        count = report.build_report("digit4-count", "", "", raw_csv=pages["digit4-count"])
        self.assertEqual((count.measured, count.total_excessive, len(count.kernels)), (True, 0, 2))

    def page(self, *stacks: str) -> str:
        rows = [f'"ID","Kernel Name","{STACK}","{parse.RAW_EXCESS}","{parse.RAW_WAVEFRONTS}","{parse.RAW_IDEAL}"',
                '"","","","","",""']
        rows += [f'"{i}","k","{st}","0","64","64"' for i, st in enumerate(stacks)]
        return "\n".join(rows) + "\n"

    def test_a_row_in_no_stage_or_two_stages_leaves_the_page_whole(self):
        a = '1  ""<default domain>:gpulab:a:none:none"" '
        b = '1  ""<default domain>:gpulab:b:none:none"" '
        self.assertEqual(sorted(parse.split_raw_by_stage(self.page(a, b, a))), ["a", "b"])
        self.assertIsNone(parse.split_raw_by_stage(self.page(a, "")))
        # Stage a pushed b's range around its kernel: its excess must not become b's.
        self.assertIsNone(parse.split_raw_by_stage(self.page(a, a.rstrip() + ' ""<default domain>:gpulab:b:none"" ')))
        self.assertIsNone(parse.split_raw_by_stage(fixture("ncu-raw-clean-synthetic.csv").replace(STACK, "Stack")))
        self.assertIsNone(parse.split_raw_by_stage("==PROF== nothing\n"))
        # A record over two lines (a range name with a newline in it) is not cut line by line.
        self.assertIsNone(parse.split_raw_by_stage(self.page(a, '1  ""<default domain>:gpulab:b:x\n"",y"" ')))

    def profile(self, tmp: str, **fake: str | None):
        ncu = Path(__file__).resolve().parent / "fakes" / "fake_ncu.py"
        argv = Path(tmp) / "argv"
        with env(GPULAB_NCU=str(ncu), FAKE_NCU_ARGV_LOG=str(argv), FAKE_NCU_RUN_STATUS=None, **fake):
            got = run.profile_stages_conflicts(Path("/bin/true"), ["a", "b"], "1024", Path(tmp) / "work", 30,
                                               runner_args=["--param", "end_bit=8"])
            reports = run.read_stages_conflicts(got) if isinstance(got, run.ProfiledStages) else None
        return got, reports, argv.read_text().splitlines()

    def test_one_run_of_both_stages_filtered_to_their_ranges(self):
        with tempfile.TemporaryDirectory() as tmp:
            got, reports, argv = self.profile(tmp)
            self.assertIn("--nvtx --nvtx-include gpulab:a/ --nvtx-include gpulab:b/ /bin/true run --stage a --stage b "
                          "--n 1024 --no-time --format json --param end_bit=8", argv[0])
            self.assertEqual(got.runs, {"a": ("pass", ""), "b": ("pass", "")})
            self.assertEqual(sorted(reports), ["a", "b"])
            self.assertEqual(reports["a"].total_excessive, 0)
            self.assertIn("one Source Counters profile with b", reports["a"].notes[0])
            self.assertTrue((Path(tmp) / "work" / "ncu-stages-raw.csv").is_file())   # kept for the TA

    def test_a_stage_with_excess_is_left_to_its_own_profile(self):
        # Its lines come from a source page of its own kernels only.
        with tempfile.TemporaryDirectory() as tmp:
            _, reports, _ = self.profile(tmp, FAKE_NCU_STAGE_EXCESS="b=96")
            self.assertEqual(sorted(reports), ["a"])

    def test_a_report_the_program_left_as_a_link_is_no_report(self):
        # The reader would follow it to a file gone with the scratch folder (or anywhere else).
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "ncu"
            fake.write_text('#!/bin/sh\nfor a in "$@"; do [ "$prev" = --export ] && ln -s /etc/hostname "$a.ncu-rep"; '
                            'prev=$a; done\necho \'{"results": [{"stage": "a", "status": "pass"}, '
                            '{"stage": "b", "status": "pass"}]}\'\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            scratch = Path(tmp) / "scratch"
            scratch.mkdir()
            with env(GPULAB_NCU=str(fake)):
                got = run.profile_stages_conflicts(Path("/bin/true"), ["a", "b"], "1024", Path(tmp) / "work", 30,
                                                   scratch=scratch)
                alone = run.profile_stage_conflicts(Path("/bin/true"), "a", "1024", Path(tmp) / "work", 30,
                                                    scratch=scratch)
            self.assertIn("ncu wrote no report", got)
            self.assertIsInstance(alone, report.ConflictReport)
            self.assertIn("ncu wrote no report", alone.reason)

    def test_a_run_without_every_stages_document_is_not_used(self):
        with tempfile.TemporaryDirectory() as tmp:
            got, _, _ = self.profile(tmp, FAKE_NCU_TOGETHER_NODOC="1")
            self.assertIsInstance(got, str)
            self.assertIn("the runner did not report a, b", got)


STACK = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
BEGIN, END = "_ZN6gpulab6detail18stage_begin_markerEv", "_ZN6gpulab6detail16stage_end_markerEv"


def profiled(*kernels: tuple[str, str, str]) -> str:
    """ncu's --csv output of a kernel-time profile with --nvtx (as an H200 report prints it), one row
    per (kernel name, stage whose range is on its stack or "", time in microseconds), in launch
    order, after the program's own output."""
    rows = ['==PROF== Connected to process 4242', '{"lab": "scan", "results": []}',
            f'"ID","Process ID","Kernel Name","{STACK}","Block Size","Grid Size","Metric Name","Metric Unit","Metric Value"']
    for i, (name, stage, us) in enumerate(kernels):
        stack = f'2040  ""<default domain>:gpulab:{stage}:none:none:none:none:none:none"" ' if stage else ""
        rows.append(f'"{i}","4242","{name}","{stack}","(256, 1, 1)","(64, 1, 1)","gpu__time_duration.sum","usecond","{us}"')
    return "\n".join(rows) + "\n"


HONEST = profiled(("fill", "", "40.0"), (BEGIN, "", "1.0"), ("block_scan", "shared", "12.50"),
                  ("add_back", "shared", "2.50"), (END, "", "1.0"), ("check", "", "9.0"))
CUB = "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelIiEEvv"


class ProfiledRunTest(unittest.TestCase):
    """parse_profiled_run: kernels by the NVTX range on their stack, and between the runner's marker
    kernels (common/src/stage_marker.cu) the ones that escaped it."""

    def test_an_honest_stage_has_its_ranges_kernels_and_nothing_escaped(self):
        run = parse.parse_profiled_run(HONEST)
        self.assertEqual((run.has_stack, run.markers, run.anomaly, run.unattributed), (True, 1, "", []))
        self.assertEqual(set(run.stages), {"shared"})   # fill and check are the harness's: nobody's
        self.assertAlmostEqual(run.stages["shared"].ms, 0.015)
        self.assertEqual(run.stages["shared"].names, ["block_scan", "add_back"])
        self.assertEqual(run.stages["shared"].escaped, [])

    def test_a_kernel_launched_with_the_range_popped_escaped(self):
        run = parse.parse_profiled_run(profiled((BEGIN, "", "1"), ("block_scan", "single-pass", "12"),
                                                (CUB, "", "900"), (END, "", "1")))
        self.assertEqual(run.stages["single-pass"].escaped, [CUB])
        self.assertEqual(run.stages["single-pass"].names, ["block_scan"])
        self.assertAlmostEqual(run.stages["single-pass"].ms, 0.012)   # the range's time only
        self.assertEqual(run.anomaly, "")

    def test_a_stage_whose_every_kernel_escaped_is_unattributed(self):
        run = parse.parse_profiled_run(profiled((BEGIN, "", "1"), (CUB, "", "900"), (END, "", "1")))
        self.assertEqual((run.stages, run.unattributed, run.markers), ({}, [CUB], 1))

    def test_markers_the_stage_launched_itself(self):
        forged = profiled((BEGIN, "", "1"), ("k", "s", "5"), (END, "", "1"), (CUB, "", "900"),
                          (BEGIN, "", "1"), ("k", "s", "5"), (END, "", "1"))
        self.assertEqual(parse.parse_profiled_run(forged).markers, 2)   # one stage, one run: one pair expected
        self.assertIn("end marker without its begin",
                      parse.parse_profiled_run(profiled((BEGIN, "", "1"), (END, "", "1"), (END, "", "1"))).anomaly)
        self.assertIn("begin marker inside an open pair",
                      parse.parse_profiled_run(profiled((BEGIN, "", "1"), (BEGIN, "", "1"), (END, "", "1"))).anomaly)
        self.assertIn("outside the grader's markers",
                      parse.parse_profiled_run(profiled((BEGIN, "", "1"), (END, "", "1"), ("k", "s", "5"))).anomaly)
        self.assertIn("begin marker without its end", parse.parse_profiled_run(profiled((BEGIN, "", "1"))).anomaly)

    def test_two_stages_in_one_pair(self):
        run = parse.parse_profiled_run(profiled((BEGIN, "", "1"), ("a", "naive", "1"), ("b", "shared", "1"), (END, "", "1")))
        self.assertIn("stages naive, shared", run.anomaly)

    def test_several_stages_each_in_its_pair(self):
        run = parse.parse_profiled_run(profiled(
            ("fill", "", "40"), (BEGIN, "", "1"), ("block_scan", "shared", "12.5"), (END, "", "1"),
            (BEGIN, "", "1"), (CUB, "single-pass", "n/a"), (END, "", "1")))
        self.assertEqual((run.markers, run.anomaly), (2, ""))
        self.assertAlmostEqual(run.stages["shared"].ms, 0.0125)
        self.assertIsNone(run.stages["single-pass"].ms)   # n/a: not a measurement
        self.assertEqual(run.stages["single-pass"].names, [CUB])

    def test_one_stages_range_in_two_pairs(self):
        # scan class conflicted-scan-under-another-stages-range (H200, 2026-12-01): shared-conflict-free
        # pushed gpulab:colored-conflict-free around its kernels, which were counted as colored's
        # (profile_stages_kernel_time now sets such a run aside by its pairs' owners).
        run = parse.parse_profiled_run(profiled(
            (BEGIN, "", "1"), ("colored", "colored", "5"), (END, "", "1"),
            (BEGIN, "", "1"), ("tree", "colored", "5"), (END, "", "1")))
        self.assertEqual(run.pair_owners, ["colored", "colored"])
        self.assertEqual(run.stages["colored"].names, ["colored", "tree"])

    def test_each_pairs_owner_in_launch_order(self):
        run = parse.parse_profiled_run(profiled((BEGIN, "", "1"), (CUB, "", "9"), (END, "", "1"),
                                                (BEGIN, "", "1"), ("k", "b", "5"), (END, "", "1")))
        self.assertEqual((run.pair_owners, run.anomaly), ([None, "b"], ""))

    def test_without_markers_kernels_go_by_their_range_alone(self):
        run = parse.parse_profiled_run(profiled(("fill", "", "40"), ("block_scan", "shared", "12.5"), (CUB, "", "9")))
        self.assertEqual((run.markers, run.anomaly, run.stages["shared"].escaped), (0, "", []))
        self.assertEqual(run.stages["shared"].names, ["block_scan"])

    def test_no_stack_column_attributes_nothing(self):
        run = parse.parse_profiled_run('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                       '"0","block_scan","gpu__time_duration.sum","usecond","12.5"\n')
        self.assertEqual((run.stages, run.has_stack), ({}, False))


class KernelTimeTest(unittest.TestCase):
    def profile(self, csv_text: str, stage: str = "shared") -> tuple[report.KernelProfile, str]:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "argv"
            fake = Path(tmp) / "ncu"
            (Path(tmp) / "out.csv").write_text(csv_text)
            fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\ncat {tmp}/out.csv\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                prof = run.profile_kernel_time(Path("/bin/true"), stage, "16777216", Path(tmp) / "w", 30)
            return prof, log.read_text()

    def several(self, csv_text: str, stages: list[str]) -> dict[str, report.KernelProfile]:
        with tempfile.TemporaryDirectory() as tmp:
            fake = Path(tmp) / "ncu"
            (Path(tmp) / "out.csv").write_text(csv_text)
            fake.write_text(f'#!/bin/sh\ncat {tmp}/out.csv\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                return run.profile_stages_kernel_time(Path("/bin/true"), stages, "65536", Path(tmp) / "w", 30)

    def test_several_stages_each_in_its_own_pair_are_returned(self):
        got = self.several(profiled((BEGIN, "", "1"), ("k", "a", "5"), (END, "", "1"),
                                    (BEGIN, "", "1"), ("j", "b", "5"), (END, "", "1")), ["a", "b"])
        self.assertEqual({s: p.kernels for s, p in got.items()}, {"a": ["k"], "b": ["j"]})

    def test_a_stage_run_under_another_stages_name_leaves_both_to_be_profiled_alone(self):
        # Counted by range, b's kernels would be a's: a's share would hold kernels its own run never
        # launched (a's honest conflict points lost), and b's escape would be read as a's.
        wearing = profiled((BEGIN, "", "1"), ("k", "a", "5"), (END, "", "1"),
                           (BEGIN, "", "1"), ("conflicted", "a", "5"), (END, "", "1"))
        self.assertEqual(self.several(wearing, ["a", "b"]), {})
        swapped = profiled((BEGIN, "", "1"), ("k", "b", "5"), (END, "", "1"),
                           (BEGIN, "", "1"), ("j", "a", "5"), (END, "", "1"))
        self.assertEqual(self.several(swapped, ["a", "b"]), {})
        self.assertEqual(set(self.several(swapped, ["b", "a"])), {"a", "b"})   # the order the runner ran

    def test_profile_runs_the_stage_outside_the_timer(self):
        prof, argv = self.profile(HONEST)
        self.assertEqual((round(prof.ms, 6), prof.why, prof.escaped, prof.anomaly), (0.015, "", [], ""))
        self.assertEqual(prof.kernels, ["block_scan", "add_back"])
        # Warm caches, like the timed runs it stands against (run.KERNEL_TIME).
        self.assertIn("--metrics gpu__time_duration.sum --clock-control none --cache-control none", argv)
        # Every kernel, with its NVTX stack: an include filter would hide a kernel launched outside the range.
        self.assertIn("--nvtx ", argv)
        self.assertNotIn("--nvtx-include", argv)
        self.assertIn("run --stage shared --n 16777216 --no-time", argv)

    def test_the_escapes_of_a_stage_profiled_alone_are_its_own(self):
        prof, _ = self.profile(profiled((BEGIN, "", "1"), (CUB, "", "900"), (END, "", "1")))
        self.assertEqual((prof.ms, prof.kernels, prof.escaped), (0.0, [], [CUB]))
        self.assertEqual(prof.why, "no kernel ran inside the stage's NVTX range")

    def test_a_second_pair_of_markers_is_an_anomaly(self):
        prof, _ = self.profile(profiled((BEGIN, "", "1"), ("k", "shared", "5"), (END, "", "1"), (CUB, "", "900"),
                                        (BEGIN, "", "1"), ("k", "shared", "5"), (END, "", "1")))
        self.assertIn("2 pairs of the grader's marker kernels", prof.anomaly)

    def test_a_stage_never_seen_under_the_profiler_is_an_anomaly(self):
        # The program ended (or changed course) before the stage's markers: only the harness's
        # input kernel ran. Read as "no kernel in the range", a library call would have passed.
        prof, _ = self.profile(profiled(("fill", "", "40.0")))
        self.assertEqual(prof.kernels, [])
        self.assertIn("the stage's run was not seen", prof.anomaly)

    def test_a_run_with_no_kernel_at_all_is_not_seen_not_empty(self):
        # The program ended at start-up under ncu (a static initializer that looks for the profiler:
        # class cub-exits-under-the-profiler, H200 2026-11-29): ncu profiled nothing, so the output
        # had no stack column, and the range filter's run said "no kernel in the range" (library passed).
        prof, argv = self.profile("==PROF== Connected to process 1234\n==WARNING== No kernels were profiled.\n")
        self.assertEqual((prof.ms, prof.kernels, prof.anomaly), (0.0, [], run.NOT_SEEN))
        self.assertEqual(len(argv.splitlines()), 1)   # no second run with the include filter

    def test_output_cut_by_a_flood_is_never_read_as_complete(self):
        # The student's program prints past the limit before ncu's rows: what is left has no row of
        # the stage, and must not read as "no library kernel, not cross-checked".
        flood = "x" * 5000 + "\n"
        with mock.patch.object(run, "OUTPUT_LIMIT", 4096):
            prof, _ = self.profile(flood + HONEST)
        self.assertIsNone(prof.ms)
        self.assertEqual(prof.anomaly, run.OUTPUT_CUT)
        with mock.patch.object(run, "OUTPUT_LIMIT", 1 << 20):   # the same rows under the limit: measured
            prof, _ = self.profile(flood + HONEST)
        self.assertEqual((round(prof.ms, 6), prof.anomaly), (0.015, ""))

    def test_a_runner_without_markers_is_measured_and_said_so(self):
        prof, _ = self.profile(profiled(("block_scan", "shared", "12.5")))
        self.assertAlmostEqual(prof.ms, 0.0125)
        self.assertIn("marker kernels were not seen", prof.why)

    def test_without_a_stack_column_the_range_filter_measures_and_says_so(self):
        # An ncu that prints no stack column: profiled again with the include filter on the range.
        prof, argv = self.profile('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
                                  '"0","k","gpu__time_duration.sum","usecond","5"\n')
        self.assertEqual((round(prof.ms, 6), prof.kernels), (0.005, ["k"]))
        self.assertIn("an escape from the stage's NVTX range is not excluded", prof.why)
        self.assertIn("--nvtx-include gpulab:shared/", argv.splitlines()[1])
