"""The handout: solution blocks stubbed, marker errors, solutions/ and hidden tests left out."""

import subprocess
import unittest
from pathlib import Path
from unittest import mock

from gpulab import handout, handout_check, proc
from gpulab.errors import EXIT_FAILED, GpulabError
from gpulab.paths import Course
from tests.helpers import TempDir

REPO = Path(__file__).resolve().parents[2]

B, E = "// BEGIN " + "SOLUTION", "// END " + "SOLUTION"   # built so this file has no marker lines


class HandoutTest(TempDir, unittest.TestCase):
    def test_block_replaced_by_stub(self):
        text = f"int f() {{\n  {B} stub: gpulab::not_implemented(\"f\");\n  return 42;\n  {E}\n}}\n"
        out, n = handout.strip_solutions(text)
        self.assertEqual(n, 1)
        self.assertEqual(out, 'int f() {\n  gpulab::not_implemented("f");\n}\n')

    def test_default_stub_and_hash_comments(self):
        out, n = handout.strip_solutions(f"a\n    {B}\n    secret\n    {E}\n# BEGIN SOLUTION\nx=1\n# END SOLUTION\nb\n")
        self.assertEqual(n, 2)
        self.assertEqual(out, "a\n    // TODO: your code here\n# TODO: your code here\nb\n")
        self.assertNotIn("secret", out)

    def test_marker_errors(self):
        with self.assertRaisesRegex(GpulabError, "never closed"):
            handout.strip_solutions(f"{B}\nx\n", "f.cu")
        with self.assertRaisesRegex(GpulabError, "nested"):
            handout.strip_solutions(f"{B}\n{B}\n{E}\n{E}\n", "f.cu")
        with self.assertRaisesRegex(GpulabError, "f.cu:2: END"):
            handout.strip_solutions(f"x\n{E}\n", "f.cu")

    def test_export_leaves_out_solutions_and_hidden(self):
        src = self.tmp / "course"
        for rel, text in {"labs/scan/scan.cu": "starter", "labs/scan/lab.cu": f"h\n{B}\nsecret\n{E}\n",
                          "solutions/scan/scan.cu": "answer", "autograder/hidden/scan.toml": "cases",
                          "autograder/testdata/x/scan.cu": "near", "autograder/gpulab/a.py": "code",
                          "build/ci/junk": "x", "CMakeLists.txt": "cmake"}.items():
            p = src / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        dest = self.tmp / "out"
        stripped = handout.export(src, dest)
        self.assertEqual(stripped, {"labs/scan/lab.cu": 1})
        got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        self.assertEqual(got, ["CMakeLists.txt", "autograder/gpulab/a.py", "labs/scan/lab.cu", "labs/scan/scan.cu"])
        self.assertNotIn("secret", (dest / "labs/scan/lab.cu").read_text())
        with self.assertRaisesRegex(GpulabError, "not empty"):
            handout.export(src, dest)

    def test_export_refuses_bad_markers_before_writing(self):
        src = self.tmp / "c"
        (src / "labs").mkdir(parents=True)
        (src / "labs" / "a.cu").write_text(f"{B}\n")
        dest = self.tmp / "o"
        with self.assertRaises(GpulabError):
            handout.export(src, dest)
        self.assertFalse(dest.exists() and any(dest.iterdir()))

    def write(self, root: Path, files: dict[str, str]) -> Path:
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        return root

    def test_export_takes_tracked_files_only(self):
        src = self.write(self.tmp / "course", {"CMakeLists.txt": "cmake", "labs/scan/scan.cu": "starter"})
        subprocess.run(["git", "init", "-q", str(src)], check=True)
        subprocess.run(["git", "-C", str(src), "add", "."], check=True)
        # Not tracked, not ignored: a self-grade folder and a scratch file must stay home.
        self.write(src, {"gpulab-grade/me/report.md": "grade", "labs/scan/notes.txt": "mine"})
        dest = self.tmp / "out"
        handout.export(src, dest)
        got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        self.assertEqual(got, ["CMakeLists.txt", "labs/scan/scan.cu"])

    def test_export_leaves_out_tool_logs_and_grader_tests_and_swaps_the_readme(self):
        src = self.write(self.tmp / "course", {
            "README.md": "instructor commands", "autograder/handout/README.md": "student commands",
            "autograder/tests/fixtures/ncu-source-real.csv": "quoted reference line",
            "autograder/tests/test_x.py": "test", "labs/scan/results/conflicts.log": "quoted",
            "labs/scan/results/size-sweep.csv": "n,ms", "labs/scan/README.md": "task sheet",
            "scripts/gpu-throughput-check.sh": "the course's GPU check", "scripts/setup.sh": "installs"})
        dest = self.tmp / "out"
        handout.export(src, dest)
        got = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
        self.assertEqual(got, ["README.md", "labs/scan/README.md", "labs/scan/results/size-sweep.csv",
                               "scripts/setup.sh"])
        self.assertEqual((dest / "README.md").read_text(), "student commands")


class LeakCheckTest(TempDir, unittest.TestCase):
    SOLUTION = ("#include <cuda_runtime.h>\n"
                "namespace scan {\n"
                "void exclusive_scan_naive(const int* d_in, int* d_out, std::size_t n) {\n"
                "  for (std::size_t i = 0; i < n; ++i)\n"
                "  tree[tree_slot<kPadded>(right)] += tree[tree_slot<kPadded>(left)];\n"
                "}  // namespace scan\n")

    def setUp(self):
        super().setUp()
        self.src, self.out = self.tmp / "course", self.tmp / "out"
        for root, files in ((self.src, {"solutions/scan/scan.cu": self.SOLUTION}),
                            (self.out, {"labs/scan/lab.cu": "  for (std::size_t i = 0; i < n; ++i) {\n",
                                        "labs/scan/scan.cu": "#include <cuda_runtime.h>\nnamespace scan {\n"
                                        "void exclusive_scan_naive(const int* d_in, int* d_out, std::size_t n) {\n"
                                        "  gpulab::not_implemented(\"naive\");\n}\n}  // namespace scan\n"})):
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)

    def leaks(self):
        return handout_check.solution_leaks(self.src, self.out, {"scan": ["scan.cu"]})

    def test_skeleton_and_harness_lines_are_not_leaks(self):
        self.assertEqual(self.leaks(), [])

    def test_a_quoted_reference_line_anywhere_is_a_leak(self):
        # What ncu's source view captured from the reference (issue 10, item 7).
        fx = self.out / "autograder/tests/fixtures/ncu-source.csv"
        fx.parent.mkdir(parents=True)
        fx.write_text('"42","  tree[tree_slot<kPadded>(right)] += tree[tree_slot<kPadded>(left)];","3"\n')
        self.assertEqual(len(self.leaks()), 1)
        self.assertIn("ncu-source.csv", self.leaks()[0])

    def test_a_solution_pasted_into_the_starter_is_a_leak(self):
        (self.out / "labs/scan/scan.cu").write_text(self.SOLUTION)
        self.assertEqual([f.split(":")[0] for f in self.leaks()], ["labs/scan/scan.cu"])

    def test_a_line_inside_a_binary_is_a_leak(self):
        runner = self.out / "reference/gpulab-scan-reference"
        runner.parent.mkdir(parents=True)
        runner.write_bytes(b"\x7fELF\x00\x01" + b"tree[tree_slot<kPadded>(right)] += tree[tree_slot<kPadded>(left)];" + b"\x00\xff")
        self.assertEqual([f.split(":")[0] for f in self.leaks()], ["reference/gpulab-scan-reference"])

    def test_without_grep_the_search_decides_the_same(self):
        (self.out / "labs/scan/scan.cu").write_text(self.SOLUTION)
        with_grep = self.leaks()
        with mock.patch("gpulab.leaks.subprocess.run", side_effect=OSError("no grep")):
            self.assertEqual(self.leaks(), with_grep)
        self.assertEqual(len(with_grep), 1)

    def test_a_line_with_a_break_is_searched_in_python(self):
        from gpulab import leaks
        (self.out / "notes.txt").write_text("x\n  first half of it;\n  second half of it;\n")
        self.assertEqual(leaks.find(["first half of it;\n  second half"], self.out),
                         ["notes.txt: 'first half of it;\\n  second half'"])

    def test_the_real_course_exports_no_solution_line(self):
        dest = self.tmp / "handout"
        handout.export(REPO, dest)
        course = Course(REPO, None)
        self.assertEqual(handout_check.solution_leaks(REPO, dest, handout_check._student_files(course)), [])


class HandoutCommandTest(TempDir, unittest.TestCase):
    def test_refuses_outside_a_git_checkout(self):
        src = self.tmp / "course"
        (src / "labs").mkdir(parents=True)
        with self.assertRaisesRegex(GpulabError, "not a git checkout"):
            handout_check.cmd_handout(Course(src, None), self.tmp / "out", check=False, reference_archs="none")

    def test_check_builds_outside_the_export(self):
        build = self.tmp / "build"
        build.mkdir()
        out = self.tmp / "out"
        out.mkdir()
        calls = []

        def fake_run(cmd, timeout=None, **kw):
            calls.append(cmd)
            return proc.Result(cmd, 1, "", "configure failed", 0.1)

        with mock.patch.object(handout_check.proc, "run", fake_run), \
                mock.patch.dict("os.environ", {"GPULAB_IN_HANDOUT_CHECK": ""}):
            self.assertEqual(handout_check.check_handout(Course(self.tmp, build), out), EXIT_FAILED)
        b = Path(calls[0][calls[0].index("-B") + 1])
        self.assertNotIn(out, b.parents)          # issue 10, item 10: build/check was left in the export
        self.assertEqual(list(out.iterdir()), [])


class ShippedReferenceTest(TempDir, unittest.TestCase):
    def test_architectures_the_installed_nvcc_supports(self):
        from gpulab.workspace.shipped_reference import archs_for
        nvcc13 = "compute_75\ncompute_80\ncompute_86\ncompute_87\ncompute_89\ncompute_90\ncompute_100\ncompute_120\n"
        self.assertEqual(archs_for(nvcc13), "75-real;80-real;86-real;89-real;90")   # PTX for the newest
        self.assertEqual(archs_for("compute_70\ncompute_75\n"), "70-real;75")
        self.assertEqual(archs_for("compute_50\n"), "")

    @unittest.skipUnless(Path("/bin/true").is_file(), "needs an ELF binary to strip")
    def test_ship_copies_stripped_runners_without_source(self):
        from gpulab.workspace import shipped_reference
        runner = self.tmp / "build" / "gpulab-scan-reference"
        runner.parent.mkdir()
        runner.write_bytes(Path("/bin/true").read_bytes())
        out = self.tmp / "out"
        shipped = shipped_reference.ship({"scan": runner}, out, "90")
        self.assertEqual(shipped, [shipped_reference.shipped_path(out, "scan")])
        self.assertTrue(shipped[0].stat().st_mode & 0o111)
        got = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
        self.assertEqual(got, ["reference/README.md", "reference/gpulab-scan-reference"])
        nm = subprocess.run(["nm", str(shipped[0])], capture_output=True, text=True)
        self.assertIn("no symbols", nm.stderr)

    def test_missing_runner_is_an_error(self):
        from gpulab.workspace import shipped_reference
        with self.assertRaisesRegex(GpulabError, "was not built"):
            shipped_reference.ship({"scan": self.tmp / "nope"}, self.tmp / "out", "90")


class ReferenceTreeLinksTest(TempDir, unittest.TestCase):
    """The reference tree links the calling build's common library and harness objects only when
    that build compiled them for the same architectures in a plain Release build."""

    def setUp(self):
        super().setUp()
        self.calling, self.src = self.tmp / "build", self.tmp / "course"
        (self.calling / "common").mkdir(parents=True)
        (self.calling / "common" / "libgpulab_common.a").write_bytes(b"!<arch>\n")
        for lab in ("scan", "reduction"):
            (self.calling / "labs" / lab).mkdir(parents=True)
            (self.calling / "labs" / lab / "harness-objects.txt").write_text(f"/objs/{lab}-lab.cu.o\n")
        self.src.mkdir()
        self.cache = {"CMAKE_CUDA_ARCHITECTURES": "90", "CMAKE_BUILD_TYPE": "Release",
                      "CMAKE_HOME_DIRECTORY": str(self.src)}
        self.tree = self.calling / "handout-reference"

    def args(self, archs="90", built=True, **cache):
        from gpulab.workspace import shipped_reference
        with mock.patch.object(shipped_reference, "build_calling_target",
                               return_value=proc.Result([], 0 if built else 1, "", "", 0.0)) as target:
            args = shipped_reference._linked_from_calling_build(self.src, self.calling, dict(self.cache, **cache),
                                                                 self.tree, ["scan", "reduction"], archs)
        self.targets = target.call_args.args[1] if target.called else None
        return args

    def test_the_same_architectures_link_what_the_calling_build_compiled(self):
        args = self.args()
        self.assertEqual(args, [f"-DGPULAB_PREBUILT_COMMON={self.calling}/common/libgpulab_common.a",
                                f"-DGPULAB_PREBUILT_HARNESS={self.tree}/prebuilt"])
        self.assertEqual(self.targets, ["gpulab_common", "scan-harness", "reduction-harness"])
        self.assertEqual((self.tree / "prebuilt" / "scan" / "objects.txt").read_text(), "/objs/scan-lab.cu.o\n")

    def test_otherwise_everything_is_compiled_in_the_tree(self):
        here = ["-DGPULAB_PREBUILT_COMMON=", "-DGPULAB_PREBUILT_HARNESS="]
        self.assertEqual(self.args(archs="75-real;80-real;86-real;89-real;90"), here)
        self.assertEqual(self.args(CMAKE_BUILD_TYPE="Debug"), here)
        self.assertEqual(self.args(CMAKE_CUDA_FLAGS="-G"), here)
        self.assertEqual(self.args(GPULAB_DEVICE_DEBUG="ON"), here)
        self.assertEqual(self.args(CMAKE_HOME_DIRECTORY=str(self.tmp / "another-course")), here)
        self.assertEqual(self.args(built=False), here)
        (self.calling / "labs" / "reduction" / "harness-objects.txt").unlink()
        self.assertEqual(self.args(), here)


class CtestVerdictTest(unittest.TestCase):
    def test_lab_tests_may_fail_on_the_starter_nothing_else(self):
        from gpulab.handout_check import ctest_verdict
        out = ("94% tests passed\nThe following tests FAILED:\n\t  4 - scan.tests.cpu (Failed)\n"
               "\t  7 - common.info (SEGFAULT)\n\t  9 - scan.tests.gpu (Timeout)\nErrors while running CTest\n")
        broken, expected = ctest_verdict(out)
        self.assertEqual(expected, ["scan.tests.cpu"])
        self.assertEqual(broken, ["common.info: SEGFAULT", "scan.tests.gpu: Timeout"])
        self.assertEqual(ctest_verdict("100% tests passed"), ([], []))


if __name__ == "__main__":
    unittest.main()
