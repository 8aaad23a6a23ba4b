"""The sandbox (gpulab/sandbox/jail.py): how student processes are wrapped, which folders are hidden,
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

from unittest import mock

from gpulab import proc
from gpulab.paths import Course
from gpulab.sandbox import seccomp
from gpulab.sandbox.jail import (HIDE_EXIT, MAX_SANDBOX_TASKS, SECCOMP_FD, Sandbox, SandboxError, profiling_restricted,
                                 PRIVATE_TMP, _under)
from gpulab.tools import compute_sanitizer
from gpulab.tools.ncu.run import profile_conflicts
from gpulab.untrusted_files import copy_private_files, read_private_file

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


def _jailed(**kw) -> Sandbox:
    return _sandbox(bwrap="/usr/bin/bwrap", seccomp_filter=Path("/run/f.bpf"), **kw)


class JailCommandTest(TempDir, unittest.TestCase):
    """How the jail's command line is built (no root, no bubblewrap needed)."""

    def test_privileged_profiling_run(self) -> None:
        sb = _jailed(hidden=(Path("/srv/course"),))
        argv = sb.wrap(["/opt/ncu", "--export", "r"], cpu_seconds=10, rw=[Path("/tmp/gpulab-ncu-1")],
                       ro=[Path("/tmp/gpulab-bin-1")], privileged=True, chdir=Path("/tmp/gpulab-ncu-1"))
        # The filter is opened on fd 9 by sh, which execs bubblewrap with --seccomp 9.
        self.assertEqual(argv[:6], ["/bin/sh", "-c", SECCOMP_FD, "gpulab-seccomp", "/run/f.bpf", "/usr/bin/bwrap"])
        self.assertIn("--seccomp", argv)
        self.assertEqual(argv[argv.index("--seccomp") + 1], "9")
        for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                     "--new-session"):
            self.assertIn(flag, argv)
        self.assertNotIn("--unshare-user", argv)   # CAP_SYS_ADMIN must be the real one for the driver
        joined = " ".join(argv)
        self.assertIn("--ro-bind / / --dev /dev", joined)
        self.assertIn("--proc /proc", joined)
        self.assertIn("--perms 1777 --tmpfs /tmp", joined)
        self.assertIn("--tmpfs /srv/course", joined)
        self.assertIn("--ro-bind /tmp/gpulab-bin-1 /tmp/gpulab-bin-1", joined)
        self.assertIn("--bind /tmp/gpulab-ncu-1 /tmp/gpulab-ncu-1", joined)
        self.assertIn("--remount-ro /srv/course", joined)
        self.assertIn("--cap-drop ALL --cap-add CAP_SYS_ADMIN", joined)
        self.assertIn("--chdir /tmp/gpulab-ncu-1", joined)
        # The mounts come before the binds, the binds before the hidden folders turn read-only.
        self.assertLess(argv.index("/srv/course"), argv.index("/tmp/gpulab-ncu-1"))
        self.assertNotIn("/usr/bin/setpriv", argv)   # stays root (with CAP_SYS_ADMIN only)
        self.assertEqual(argv[-3:], ["/opt/ncu", "--export", "r"])

    def test_student_run_drops_to_the_sandbox_user_inside_the_jail(self) -> None:
        argv = _jailed().wrap(["/tmp/b/runner", "run"], cpu_seconds=10, rw=[Path("/tmp/w")])
        joined = " ".join(argv)
        self.assertIn("--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID", joined)
        self.assertLess(argv.index("/usr/bin/bwrap"), argv.index("/usr/bin/setpriv"))
        self.assertLess(argv.index("/usr/bin/setpriv"), argv.index("/usr/bin/prlimit"))
        self.assertIn(f"--nproc={MAX_SANDBOX_TASKS}", argv)   # for the user: every grade at once

    def test_folder_bound_back_inside_a_hidden_one_gets_traversable_parents(self) -> None:
        sb = _jailed(hidden=(Path("/srv/course"),))
        argv = sb.wrap(["cmake"], cpu_seconds=10, rw=[Path("/srv/course/build/grading/slot-0/build")])
        joined = " ".join(argv)
        for parent in ("/srv/course/build", "/srv/course/build/grading", "/srv/course/build/grading/slot-0"):
            self.assertIn(f"--perms 0755 --dir {parent} ", joined)
        self.assertNotIn("--dir /srv/course ", joined)
        self.assertLess(joined.index("--tmpfs /srv/course"), joined.index("--bind /srv/course/build/grading"))

    def test_privileged_run_without_the_jail_fails_closed(self) -> None:
        with self.assertRaises(SandboxError):
            _sandbox().wrap(["ncu"], cpu_seconds=1, privileged=True)
        with mock.patch("os.geteuid", return_value=0):
            wrapper, why = _sandbox().profiler_wrap(Path("/tmp/b/runner"), self.tmp, 10)
        self.assertIsNone(wrapper)
        self.assertIn("bubblewrap", why)

    def test_profiling_as_the_sandbox_user_where_the_driver_allows_it(self) -> None:
        params = self.tmp / "params"
        params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 0\n")
        self.assertIs(profiling_restricted(params), False)
        params.write_text("RmProfilingAdminOnly: 1\n")
        self.assertIs(profiling_restricted(params), True)
        self.assertIsNone(profiling_restricted(self.tmp / "missing"))
        sb = _jailed(user=(os.getuid(), os.getgid()))
        scratch = self.tmp / "scratch"
        scratch.mkdir()
        with mock.patch("os.geteuid", return_value=0), \
                mock.patch("gpulab.sandbox.jail.profiling_restricted", return_value=False):
            wrapper, _ = sb.profiler_wrap(Path("/tmp/b/runner"), scratch, 10)
        self.assertIn("/usr/bin/setpriv", wrapper)
        self.assertNotIn("CAP_SYS_ADMIN", wrapper)
        with mock.patch("os.geteuid", return_value=0), \
                mock.patch("gpulab.sandbox.jail.profiling_restricted", return_value=True):
            wrapper, _ = sb.profiler_wrap(Path("/tmp/b/runner"), scratch, 10)
        self.assertIn("CAP_SYS_ADMIN", wrapper)
        self.assertNotIn("/usr/bin/setpriv", wrapper)

    def test_seccomp_filter_compiles(self) -> None:
        try:
            denied = seccomp.write_filter(self.tmp / "f.bpf")
        except seccomp.SeccompError as e:
            self.skipTest(str(e))
        for name in ("mount", "umount2", "pivot_root", "chroot", "setns", "unshare", "ptrace", "process_vm_writev",
                     "init_module", "finit_module", "delete_module", "kexec_load", "bpf", "reboot", "swapon"):
            self.assertIn(name, denied)
        size = (self.tmp / "f.bpf").stat().st_size
        self.assertEqual(size % 8, 0)   # whole BPF instructions
        self.assertGreater(size, 8 * len(denied))


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
        rep = compute_sanitizer.verdict("memcheck", "naive", log, killed)
        self.assertFalse(rep.clean)
        self.assertIn("killed", [f.kind for f in rep.findings])
        ok = compute_sanitizer.verdict("memcheck", "naive", log, proc.Result(["compute-sanitizer"], 0, "", "", 1.0))
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
        # Outside /tmp (the jail's /tmp is private: a folder missing there is simply empty), in a
        # read-only place once jailed, so that its mount point cannot be made.
        parent = self.course.build if self.sb.jailed and self.course.build else self.tmp
        if parent is None or not parent.is_dir():
            self.skipTest("no build tree to make the folder in")
        if self.sb.jailed:
            real = parent.resolve()
            # Under the jail's private /tmp (a CI clone in /tmp), or below a folder the jail
            # replaces with an empty tmpfs, a missing folder is only a new empty one: nothing to test.
            if any(_under(real, Path(t).resolve()) for t in PRIVATE_TMP if os.path.isdir(t)):
                self.skipTest(f"{real} lies in a folder the jail makes private")
            if self.sb._untraversable_ancestors([real / "x"], privileged=False):
                self.skipTest(f"{real} lies below a folder the sandbox user cannot enter")
        gone = Path(tempfile.mkdtemp(prefix="gpulab-test-gone-", dir=parent))
        self.sb.hide([gone])
        gone.rmdir()
        res = self.sb.run(["sh", "-c", "echo ran"], timeout=30)
        self.assertNotEqual(res.returncode, 0)
        self.assertNotIn("ran", res.stdout)
        if self.sb.jailed:
            self.assertIn("bwrap:", res.stderr)
        else:
            self.assertEqual(res.returncode, HIDE_EXIT)
            self.assertIn("could not hide", res.stderr)

    def test_saved_output_folder_and_workdir_are_usable(self) -> None:
        self.sb.hide([self.course.source, self.course.build])
        save = self.sb.mkdtemp("gpulab-out-")
        try:
            if self.sb.user:
                os.chown(save, *self.sb.user)
            res = self.sb.run(["sh", "-c", f'echo x > "{save}/copy.bin" && echo y > "$HOME/h" && cat "$HOME/h"'],
                              timeout=30, rw=[save])
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual(res.stdout.strip(), "y")
            self.assertEqual((save / "copy.bin").read_text(), "x\n")
        finally:
            shutil.rmtree(save)

    @staticmethod
    def _snapshot(folders: list[Path]) -> dict[str, tuple[int, int]]:
        """Listing and mtimes of the folders that are quiet on a shared machine (not /tmp, /, HOME)."""
        out = {}
        for f in folders:
            for p in sorted(f.iterdir()) if f.is_dir() else []:
                st = p.lstat()
                out[str(p)] = (st.st_mtime_ns, st.st_size)
        return out

    def _escape_script(self, targets: list[Path]) -> str:
        """Tries every way out a root student process could take; prints what worked."""
        lines = [f'touch "{t}" 2>/dev/null && echo "WROTE {t}"' for t in targets]
        lines += ['mount -t tmpfs x /mnt 2>/dev/null && echo MOUNTED',
                  'mount -o remount,rw / 2>/dev/null && echo REMOUNTED',
                  'unshare -m true 2>/dev/null && echo UNSHARED',
                  'nsenter -t 1 -m true 2>/dev/null && echo ENTERED',
                  'echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo SYSCTL',
                  'echo "pid1=$(cat /proc/1/comm)"',
                  'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status',
                  'echo "net=$(sed -n "3,\\$p" /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" " ")"',
                  'echo "dev=$(ls /dev | tr "\\n" " ")"',
                  'touch "$HOME/ok" && echo SCRATCH-OK']
        return "\n".join(lines)

    def test_profiling_jail_keeps_root_harmless(self) -> None:
        """What Nsight Compute's target gets where the counters need root: CAP_SYS_ADMIN, and
        nothing it can change outside its scratch folder (A)."""
        if not self.sb.jailed:
            self.skipTest("no jail here: " + "; ".join(self.sb.notes))
        src = self.course.source
        self.sb.hide([src, self.course.build])
        scratch = self.sb.mkdtemp("gpulab-ncu-")
        home = Path(os.environ.get("HOME", "/root"))
        folders = [Path("/"), home, Path("/tmp"), src.parent, src / "autograder" / "gpulab", Path("/usr/local/cuda")]
        name = f"gpulab-escape-{os.getpid()}"
        targets = [f / name for f in folders] + [Path("/etc") / name]
        quiet = [src / "autograder" / "gpulab", Path("/usr/local/cuda")]
        before = self._snapshot(quiet)
        try:
            wrapper = self.sb.wrap([], 60, rw=[scratch], privileged=True, chdir=scratch)
            res = proc.run(wrapper + ["sh", "-c", self._escape_script(targets)], timeout=60,
                           env=self.sb.env(scratch), cwd=scratch)
            out = res.stdout
            self.assertIn("SCRATCH-OK", out, res.stderr)
            for word in ("MOUNTED", "REMOUNTED", "UNSHARED", "ENTERED", "SYSCTL"):
                self.assertNotIn(word, out, out)
            # Its /tmp is a private tmpfs (written, then gone); everywhere else is read-only.
            self.assertEqual([ln for ln in out.splitlines() if ln.startswith("WROTE") and " /tmp/" not in ln], [])
            self.assertIn("CapEff:\t0000000000200000", out)   # CAP_SYS_ADMIN only
            self.assertRegex(out, r"NoNewPrivs:\s+1")
            self.assertRegex(out, r"Seccomp:\s+2")
            self.assertIn("pid1=bwrap", out)                  # its own PID namespace
            self.assertRegex(out, r"net=lo \n")                # no network but the loopback
            self.assertNotRegex(out, r"dev=.*\b(sd[a-z]|nvme\d|mem|kmsg)\b")
            for t in targets:
                self.assertFalse(t.exists(), t)
            self.assertEqual(self._snapshot(quiet), before)
            self.assertTrue((scratch / "ok").is_file())
        finally:
            shutil.rmtree(scratch)

    def test_student_build_cannot_reach_the_course(self) -> None:
        """The student build runs in the jail with the course hidden but its workspace bound
        back at the same path (B)."""
        if not self.sb.jailed:
            self.skipTest("no jail here: " + "; ".join(self.sb.notes))
        course = Path(tempfile.mkdtemp(prefix="gpulab-course-", dir=self.course.build or "/var/tmp"))
        try:
            (course / "solutions").mkdir()
            (course / "solutions" / "ref.cu").write_text("int reference_secret = 42;\n")
            ws = course / "build" / "grading" / "slot-0"
            (ws / "course" / "labs").mkdir(parents=True)
            (ws / "build").mkdir()
            (ws / "course" / "labs" / "a.cu").write_text('#include "../../../../../solutions/ref.cu"\n')
            self.sb.hide([course])
            script = (f'cd "{ws}/course/labs" && cat ../../../../../solutions/ref.cu; '
                      f'cat a.cu > "{ws}/build/out.txt" && echo BUILT; touch "{ws}/course/x" 2>/dev/null && echo SRC-WRITABLE')
            res = self.sb.build(["sh", "-c", script], 60, ws / "build", [ws / "course"])
            self.assertNotIn("reference_secret", res.stdout + res.stderr)
            self.assertIn("BUILT", res.stdout, res.stderr)
            self.assertNotIn("SRC-WRITABLE", res.stdout)
            self.assertTrue((ws / "build" / "out.txt").is_file())
            if self.sb.user:
                self.assertEqual((ws / "build" / "out.txt").stat().st_uid, self.sb.user[0])
        finally:
            shutil.rmtree(course)

    def test_student_build_under_a_folder_the_sandbox_user_cannot_enter(self) -> None:
        """A handout in a home of mode 0700 (Debian 12's default; /root on the GPU machine): the
        jailed build failed "…/slot-0/build is not a directory" for every self-grade there."""
        if not self.sb.jailed or not self.sb.user:
            self.skipTest("no jail dropping to a sandbox user here: " + "; ".join(self.sb.notes))
        # Not under /tmp or /var/tmp: the jail mounts a fresh tmpfs there, which hides the problem.
        home = Path(tempfile.mkdtemp(prefix="gpulab-home-", dir=self.course.build or self.course.source))
        try:
            home.chmod(0o700)
            ws = home / "handout" / "build" / "default" / "grading" / "slot-0"
            (ws / "course" / "labs").mkdir(parents=True)
            (ws / "build").mkdir()
            (ws / "course" / "labs" / "a.cu").write_text("int student = 1;\n")
            (home / "secret.txt").write_text("not for student code\n")
            self.sb.hide([home / "handout"])
            script = (f'cat "{ws}/course/labs/a.cu" > "{ws}/build/out.txt" && echo BUILT; '
                      f'cat "{home}/secret.txt" 2>/dev/null')
            res = self.sb.build(["sh", "-c", script], 60, ws / "build", [ws / "course"])
            self.assertIn("BUILT", res.stdout, res.stderr)
            self.assertEqual((ws / "build" / "out.txt").read_text(), "int student = 1;\n")
            self.assertNotIn("not for student code", res.stdout)
        finally:
            shutil.rmtree(home)

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
