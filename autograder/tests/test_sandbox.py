"""The sandbox (gpulab/sandbox.py): how student processes are wrapped, which folders are hidden,
and — as root, for real — that student code cannot read the instructor's files while its runner
copy still runs."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import unittest
from pathlib import Path

from gpulab import proc, sanitizer
from gpulab.ncu import profile_conflicts
from gpulab.paths import Course
from gpulab.sandbox import HIDE_EXIT, Sandbox, copy_private_files, read_private_file

from tests.helpers import TempDir, env

IS_ROOT = os.geteuid() == 0


def _sandbox(**kw) -> Sandbox:
    base = dict(netns=True, mountns=True, user=(65534, 65534), prlimit="/usr/bin/prlimit", unshare="/usr/bin/unshare",
                setpriv="/usr/bin/setpriv", mount="/usr/bin/mount")
    base.update(kw)
    return Sandbox(**base)


class WrapTest(TempDir, unittest.TestCase):
    def test_order_namespaces_mounts_user_limits(self) -> None:
        sb = _sandbox(hidden=(Path("/srv/course"), Path("/srv/build")))
        argv = sb.wrap(["/tmp/x/runner", "run"], cpu_seconds=10)
        self.assertEqual(argv[:6], ["/usr/bin/unshare", "-n", "-m", "--propagation", "private", "--"])
        self.assertEqual(argv[6:8], ["/bin/sh", "-c"])
        self.assertEqual(argv[9:14], ["gpulab-hide", "/usr/bin/mount", "2", "/srv/course", "/srv/build"])
        self.assertEqual(argv[14], "--")
        self.assertEqual(argv[15], "/usr/bin/setpriv")
        self.assertIn("/usr/bin/prlimit", argv)
        self.assertLess(argv.index("/usr/bin/setpriv"), argv.index("/usr/bin/prlimit"))
        self.assertEqual(argv[-2:], ["/tmp/x/runner", "run"])

    def test_nothing_hidden_no_mount_namespace(self) -> None:
        argv = _sandbox().wrap(["r"], cpu_seconds=1)
        self.assertEqual(argv[:3], ["/usr/bin/unshare", "-n", "--"])
        self.assertNotIn("-m", argv)

    def test_hide_prefix_without_network(self) -> None:
        sb = _sandbox(hidden=(Path("/srv/course"),))
        pre = sb.hide_prefix()
        self.assertEqual(pre[:5], ["/usr/bin/unshare", "-m", "--propagation", "private", "--"])
        self.assertEqual(pre[-1], "--")
        self.assertEqual(_sandbox().hide_prefix(), [])

    def test_hide_skips_nested_missing_and_system_folders(self) -> None:
        course = self.tmp / "course"
        (course / "build" / "grading").mkdir(parents=True)
        sb = _sandbox()
        with env(TMPDIR=None):
            sb.hide([course, course / "build", course / "build" / "grading", self.tmp / "missing", "/usr", None])
        self.assertEqual(sb.hidden, (course.resolve(),))
        self.assertTrue(any("/usr not hidden" in n for n in sb.notes), sb.notes)

    def test_private_folders_move_out_of_hidden_ones(self) -> None:
        inside = self.tmp / "course" / "tmp"
        inside.mkdir(parents=True)
        sb = _sandbox()
        old = tempfile.tempdir
        try:
            tempfile.tempdir = str(inside)
            sb.hide([self.tmp / "course"])
            made = sb.mkdtemp("gpulab-t-")
        finally:
            tempfile.tempdir = old
        try:
            self.assertNotIn((self.tmp / "course").resolve(), made.resolve().parents)
            self.assertEqual(sb.hidden, ((self.tmp / "course").resolve(),))
        finally:
            shutil.rmtree(made)

    def test_no_mount_namespace_hides_nothing(self) -> None:
        sb = _sandbox(mountns=False)
        sb.hide([self.tmp])
        self.assertEqual(sb.hidden, ())


class PrivateFilesTest(TempDir, unittest.TestCase):
    def test_links_are_not_followed(self) -> None:
        secret = self.tmp / "secret.toml"
        secret.write_text("answer = 42\n")
        out = self.tmp / "out"
        out.mkdir()
        (out / "copy.bin").write_bytes(b"gpulab-output 1 ...")
        (out / "scan.bin").symlink_to(secret)
        (out / "dir.bin").mkdir()
        self.assertIsNone(read_private_file(out / "scan.bin"))
        self.assertIsNone(read_private_file(out / "dir.bin"))
        self.assertEqual(read_private_file(out / "copy.bin"), b"gpulab-output 1 ...")
        copied = copy_private_files(out, self.tmp / "checked", "*.bin")
        self.assertEqual([p.name for p in copied], ["copy.bin"])
        self.assertFalse((self.tmp / "checked" / "scan.bin").exists())

    def test_killed_sanitizer_is_never_clean(self) -> None:
        log = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
        killed = proc.Result(["compute-sanitizer"], -9, "", "", 1.0)
        rep = sanitizer.verdict("memcheck", "naive", log, killed)
        self.assertFalse(rep.clean)
        self.assertIn("killed", [f.kind for f in rep.findings])
        ok = sanitizer.verdict("memcheck", "naive", log, proc.Result(["compute-sanitizer"], 0, "", "", 1.0))
        self.assertTrue(ok.clean)


@unittest.skipUnless(IS_ROOT, "hiding folders needs root (a mount namespace and an unprivileged user)")
class RootSandboxTest(TempDir, unittest.TestCase):
    """The real thing: util-linux namespaces, tmpfs mounts, setpriv, on this machine's course."""

    def setUp(self) -> None:
        super().setUp()
        with env(GPULAB_SANDBOX=None):
            self.sb = Sandbox.detect()
        if not self.sb.mountns:
            self.skipTest("no mount namespace here: " + "; ".join(self.sb.notes))
        self.course = Course.from_environment()

    def test_instructor_files_unreadable_runner_copy_runs(self) -> None:
        src = self.course.source
        secrets = [src / "labs" / "scan" / "rubric.toml", src / "solutions" / "scan" / "scan_basic.cu",
                   src / "autograder" / "hidden" / "scan.toml"]
        secrets = [s for s in secrets if s.is_file()]
        self.assertTrue(secrets, f"no instructor files under {src}")
        self.sb.hide([src, self.course.build])
        self.assertIn(src.resolve(), self.sb.hidden)
        for s in secrets:
            self.assertTrue(os.access(s, os.R_OK), s)   # the grader itself still reads them
            res = self.sb.run(["cat", str(s)], timeout=30)
            self.assertNotEqual(res.returncode, 0, f"student code read {s}: {res.stdout[:200]}")
            self.assertEqual(res.stdout, "")
        # Even listing the course shows nothing.
        res = self.sb.run(["ls", "-A", str(src)], timeout=30)
        self.assertEqual(res.stdout, "")

        build = self.course.build
        ref = build / "labs" / "transpose" / "gpulab-transpose-reference" if build else None
        if ref is None or not ref.is_file():
            self.skipTest("the transpose reference runner is not built")
        bin_dir = self.sb.mkdtemp("gpulab-bin-")
        try:
            runner = bin_dir / ref.name
            shutil.copy2(ref, runner)
            self.sb.make_runnable(runner)
            res = self.sb.run([str(runner), "run", "--stage", "cpu", "--n", "31x33", "--no-time", "--format", "json"],
                              timeout=60)
            self.assertEqual(res.returncode, 0, res.stdout[-500:] + res.stderr[-500:])
            doc = json.loads(res.stdout)
            self.assertEqual([(r["stage"], r["status"]) for r in doc["results"]], [("cpu", "pass")])
            self.assertEqual(doc["problem"]["rows"], 31)
        finally:
            shutil.rmtree(bin_dir)

    def test_hiding_does_not_depend_on_the_user(self) -> None:
        """The mounts hide the folder even from root inside the namespace (the ncu case)."""
        course = self.tmp / "course"
        (course / "solutions").mkdir(parents=True)
        (course / "solutions" / "ref.cu").write_text("secret\n")
        self.sb.hide([course])
        res = proc.run(self.sb.hide_prefix() + ["cat", str(course / "solutions" / "ref.cu")], timeout=30, cwd="/")
        self.assertNotEqual(res.returncode, 0)
        self.assertNotIn("secret", res.stdout)
        self.assertEqual((course / "solutions" / "ref.cu").read_text(), "secret\n")   # untouched outside

    def test_a_folder_that_cannot_be_hidden_stops_the_run(self) -> None:
        gone = self.tmp / "gone"
        gone.mkdir()
        self.sb.hide([gone])
        gone.rmdir()
        res = self.sb.run(["true"], timeout=30)
        self.assertEqual(res.returncode, HIDE_EXIT)
        self.assertIn("could not hide", res.stderr)

    def test_saved_output_folder_and_workdir_are_usable(self) -> None:
        self.sb.hide([self.course.source, self.course.build])
        save = self.sb.mkdtemp("gpulab-out-")
        try:
            if self.sb.user:
                os.chown(save, *self.sb.user)
            res = self.sb.run(["sh", "-c", f'echo x > "{save}/copy.bin" && echo y > "$HOME/h" && cat "$HOME/h"'],
                              timeout=30)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual(res.stdout.strip(), "y")
            self.assertEqual((save / "copy.bin").read_text(), "x\n")
        finally:
            shutil.rmtree(save)

    def test_ncu_profiles_in_the_namespace_and_its_report_comes_back(self) -> None:
        course = self.tmp / "course"
        course.mkdir()
        (course / "rubric.toml").write_text("secret = 1\n")
        work = course / "logs"    # the grader's log folder may itself be hidden
        work.mkdir()
        self.sb.hide([course])
        tools_dir = self.sb.mkdtemp("gpulab-fake-ncu-")
        scratch = self.sb.mkdtemp("gpulab-ncu-")
        try:
            fake = tools_dir / "ncu"
            fake.write_text("#!/bin/sh\n"
                            'for a; do if [ "$prev" = --export ]; then exp=$a; fi; prev=$a; done\n'
                            f'if [ -n "$exp" ]; then cat "{course}/rubric.toml" > "$exp.ncu-rep" 2>/dev/null '
                            '|| echo hidden > "$exp.ncu-rep"; fi\n')
            fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
            with env(GPULAB_NCU=str(fake)):
                profile_conflicts(Path("/bin/true"), "shared", "1024", work, 30,
                                  wrapper=self.sb.hide_prefix(), scratch=scratch)
            self.assertEqual((work / "ncu-shared.ncu-rep").read_text(), "hidden\n")
        finally:
            shutil.rmtree(tools_dir)
            shutil.rmtree(scratch)


if __name__ == "__main__":
    unittest.main()
