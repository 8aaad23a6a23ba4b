"""Nothing the grader starts outlives it (issue 10, item 3): proc.run's timeout and end kill the
child's whole tree, including processes that left its session or process group, and a stopped
`gpulab grade` (SIGTERM, SIGINT) kills its build (cmake -> ninja in a session of its own ->
nvcc) before it exits, so nothing writes the workspace afterwards."""

import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

from gpulab import proc
from tests.test_workspace import WorkspaceCase
from tests.helpers import REFERENCE, TempDir, submission_dir

# A child that starts a grandchild in a new session (as ninja's jobs, or a daemon, would), and
# that grandchild one more process; each writes its pid and sleeps. The child waits for the whole
# tree to exist, then either waits too or exits (leaving the tree behind as orphans).
DETACHING = r"""
import os, sys, time
d = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(os.path.join(d, "great.pid.tmp"), "w").write(str(os.getpid()))
        os.rename(os.path.join(d, "great.pid.tmp"), os.path.join(d, "great.pid"))
        time.sleep(60)
        os._exit(0)
    open(os.path.join(d, "grand.pid.tmp"), "w").write(str(os.getpid()))
    os.rename(os.path.join(d, "grand.pid.tmp"), os.path.join(d, "grand.pid"))
    time.sleep(60)
    os._exit(0)
while not all(os.path.exists(os.path.join(d, n)) for n in ("grand.pid", "great.pid")):
    time.sleep(0.01)
if sys.argv[2] == "wait":
    time.sleep(60)
"""

# The command-line process's setting (cli.guard_process): proc.run in a gpulab process that is a
# child subreaper, as `gpulab grade` is.
IN_GPULAB = r"""
import sys
from gpulab import cli, proc
with cli.guard_process():
    res = proc.run([sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]], timeout=float(sys.argv[4]))
print(res.returncode, res.timed_out)
"""


def alive(pid: int) -> bool:
    """Running (a zombie has finished: only its parent's wait is missing)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_for(path: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not (path.is_file() and path.read_text().strip()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


class KillTreeTest(TempDir, unittest.TestCase):
    def pids(self) -> list[int]:
        for name in ("grand.pid", "great.pid"):
            wait_for(self.tmp / name)
        return [int((self.tmp / n).read_text()) for n in ("grand.pid", "great.pid")]

    def run_in_gpulab(self, mode: str, timeout: float) -> str:
        res = subprocess.run([sys.executable, "-c", IN_GPULAB, DETACHING, str(self.tmp), mode, str(timeout)],
                             capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONPATH=str(Path(proc.__file__).parents[1])))
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout.strip()

    def test_timeout_kills_processes_that_left_the_session(self):
        res = proc.run([sys.executable, "-c", DETACHING, str(self.tmp), "wait"], timeout=2)
        self.assertTrue(res.timed_out)
        left = [p for p in self.pids() if alive(p)]
        self.assertEqual(left, [], "processes started by a timed-out child are still running")

    def test_cancel_ends_the_whole_tree_early_and_says_so(self):
        import threading
        cancel = threading.Event()
        threading.Timer(1.0, cancel.set).start()
        res = proc.run([sys.executable, "-c", DETACHING, str(self.tmp), "wait"], timeout=60, cancel=cancel)
        self.assertTrue(res.cancelled)
        self.assertFalse(res.timed_out or res.ok)
        self.assertLess(res.seconds, 30)
        self.assertRegex(res.describe_exit(), r"^cancelled after \d+\.\d s$")
        self.assertEqual([p for p in self.pids() if alive(p)], [], "processes of a cancelled child still run")

    def test_background_work_runs_niced(self):
        res = proc.run(proc.background(["sh", "-c", "nice"]), timeout=10)
        self.assertEqual(res.stdout.strip(), str(os.nice(0) + proc.BUILD_NICENESS), res)

    def test_leftovers_of_a_finished_child_are_killed(self):
        """The child exits leaving a tree that left its session: re-parented to gpulab (the
        subreaper), and killed when the run ends."""
        self.assertEqual(self.run_in_gpulab("exit", 30), "0 False")
        self.assertEqual([p for p in self.pids() if alive(p)], [])


class StoppedGraderTest(WorkspaceCase):
    """`gpulab grade` stopped while the student build runs."""

    def stop_during_build(self, sig: int) -> None:
        pids = self.tmp / "pids"
        build_seconds = 3.0
        grader = self.cli(str(submission_dir(self.tmp, {}, "alice")), "--out", str(self.tmp / "o"),
                          extra_env={"FAKE_CMAKE_TREE": str(pids), "FAKE_CMAKE_BUILD_SECONDS": str(build_seconds)})
        try:
            for name in ("cmake.pid", "ninja.pid", "nvcc.pid"):
                wait_for(pids / name, 60)
            tree = {n: int((pids / f"{n}.pid").read_text()) for n in ("cmake", "ninja", "nvcc")}
            grader.send_signal(sig)
            _, err = grader.communicate(timeout=30)
        finally:
            if grader.poll() is None:
                grader.kill()
        self.assertEqual(grader.returncode, 128 + sig, err)
        self.assertIn(f"stopped by {signal.Signals(sig).name}", err)
        self.assertEqual({n: p for n, p in tree.items() if alive(p)}, {}, "build processes outlived the grader")
        slot = self.course.build / "grading" / "slot-0"
        time.sleep(build_seconds + 1)   # a surviving "nvcc" would write the workspace by now
        self.assertFalse((slot / "build" / "late-write").exists(), "the workspace was written after the grader stopped")

    def test_sigterm_kills_a_bank_conflict_profile_beside_correctness(self):
        """Stopped while ncu profiles a stage on the conflicts' own thread (checks/conflicts.Ahead):
        that ncu dies with the grader, which exits at once."""
        events = self.tmp / "events.log"
        grader = self.cli(str(submission_dir(self.tmp, REFERENCE, "alice")), "--out", str(self.tmp / "o"),
                          extra_env={"FAKE_NCU_EVENTS_LOG": str(events), "FAKE_NCU_PROFILE_SECONDS": "60"})
        try:
            deadline = time.monotonic() + 60
            while not (events.is_file() and "profile-start" in events.read_text()):
                self.assertLess(time.monotonic(), deadline, "no profile started")
                time.sleep(0.05)
            ncu_pid = int(events.read_text().split()[3])
            t0 = time.monotonic()
            grader.send_signal(signal.SIGTERM)
            _, err = grader.communicate(timeout=30)
        finally:
            if grader.poll() is None:
                grader.kill()
        self.assertEqual(grader.returncode, 128 + signal.SIGTERM, err)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertFalse(alive(ncu_pid), "the profile outlived the grader")

    def test_sigterm_kills_the_build(self):
        self.stop_during_build(signal.SIGTERM)

    def test_sigint_kills_the_build(self):
        self.stop_during_build(signal.SIGINT)


if __name__ == "__main__":
    unittest.main()
