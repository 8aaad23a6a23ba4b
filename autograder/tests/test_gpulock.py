"""The GPU lock (gpulock.py, locks.held_fair): untimed work of several submissions side by side,
a timing alone on its GPU and never starved; and a batch graded with it (the fake GPU tools),
where cases of different submissions overlap and no timed run overlaps anything."""

import itertools
import threading
import time
import unittest
from pathlib import Path

from gpulab import gpulock
from gpulab.batch import queue
from gpulab.grading import pipeline
from tests.helpers import REFERENCE as GOOD, FakeGrading, TempDir, env, fake_grader, submission_dir

SLOW = {"naive": {"status": "pass", "median_ms": 2.0, "sleep_s": 0.3},
        "shared": {"status": "pass", "median_ms": 1.0, "sleep_s": 0.3}}


class LockTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.env = env(GPULAB_GPU_LOCK=str(self.tmp / "gpu.lock"))
        self.env.__enter__()

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def hold(self, shared, order, name, entered=None, leave=None):
        """A thread that takes the lock, notes `name` in `order`, and holds it until `leave`."""
        def body():
            with gpulock.gpu_lock(shared=shared):
                order.append(name)
                if entered is not None:
                    entered.set()
                if leave is not None:
                    leave.wait(10)
        t = threading.Thread(target=body, daemon=True)
        t.start()
        return t

    def test_shared_holders_hold_it_together(self):
        both = threading.Barrier(2, timeout=5)

        def body():
            with gpulock.gpu_lock(shared=True):
                both.wait()   # raises BrokenBarrierError unless both hold the lock at once
        threads = [threading.Thread(target=body) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        self.assertFalse(both.broken)

    def test_a_timing_holds_it_alone(self):
        for first_shared, second_shared in itertools.product((True, False), repeat=2):
            if first_shared and second_shared:
                continue
            with self.subTest(first="shared" if first_shared else "alone",
                              second="shared" if second_shared else "alone"):
                order, entered, leave = [], threading.Event(), threading.Event()
                first = self.hold(first_shared, order, "first", entered, leave)
                self.assertTrue(entered.wait(5))
                second = self.hold(second_shared, order, "second")
                time.sleep(0.3)
                self.assertEqual(order, ["first"], "the second holder got in beside an exclusive one")
                leave.set()
                first.join(5)
                second.join(5)
                self.assertEqual(order, ["first", "second"])

    def test_a_waiting_timing_is_not_overtaken_by_later_untimed_work(self):
        # Without the turnstile, untimed work arriving while a timing waits would join the shared
        # holders ahead of it, and a busy batch could keep the timing waiting forever.
        order, entered, leave = [], threading.Event(), threading.Event()
        reader = self.hold(True, order, "untimed-1", entered, leave)
        self.assertTrue(entered.wait(5))
        writer = self.hold(False, order, "timing")
        time.sleep(0.3)
        late = self.hold(True, order, "untimed-2")
        time.sleep(0.3)
        self.assertEqual(order, ["untimed-1"])
        leave.set()
        for t in (reader, writer, late):
            t.join(5)
        self.assertEqual(order, ["untimed-1", "timing", "untimed-2"])

    def test_another_process_timing_keeps_untimed_work_out(self):
        import subprocess
        import sys
        hold = subprocess.Popen([sys.executable, "-c",
                                 "import sys, time\nfrom gpulab import gpulock\n"
                                 "with gpulock.gpu_lock():\n    print('held', flush=True)\n    time.sleep(0.6)\n"],
                                stdout=subprocess.PIPE, text=True, env=dict(__import__("os").environ,
                                PYTHONPATH=str(__import__("pathlib").Path(__file__).resolve().parents[1])))
        try:
            self.assertEqual(hold.stdout.readline().strip(), "held")
            t0 = time.monotonic()
            with gpulock.gpu_lock(shared=True):
                waited = time.monotonic() - t0
        finally:
            hold.wait(10)
            hold.stdout.close()
        self.assertGreater(waited, 0.3)


class ProfilerLockTest(LockTest):
    def profiler_held(self):
        """True when another holder has the profiler lock (a non-blocking try fails)."""
        from gpulab import locks
        lock = locks.FileLock(gpulock.profiler_lock_path())
        got = lock.acquire(wait=False)
        lock.release()
        return not got

    def test_profiles_hold_the_profiler_lock_and_reading_a_report_does_not(self):
        from gpulab import proc
        from gpulab.tools.ncu import run as ncu_run
        seen = []
        real = proc.run

        def spy(argv, **kw):
            seen.append(("--import" in argv, self.profiler_held()))
            return real(["true"], timeout=10)
        proc.run = spy
        try:
            ncu_run._run_ncu(Path("/usr/bin/ncu"), ["--metrics", "gpu__time_duration.sum", "runner"], 10, None, "t")
            ncu_run._run_ncu(Path("/usr/bin/ncu"), ["--import", "x.ncu-rep", "--page", "raw"], 10, None, "t")
        finally:
            proc.run = real
        self.assertEqual(seen, [(False, True), (True, False)])

    def test_a_profile_called_off_while_it_waits_for_the_lock_never_starts(self):
        # A starter's TODO stage waited 87 s for other rows' profiles, then was not counted (two
        # H200s, 2026-11-29): the wait now ends when the stage's gate calls the profile off.
        from gpulab import locks, proc
        from gpulab.tools.ncu import run as ncu_run
        started, real = [], proc.run

        def spy(argv, **kw):
            started.append(argv)
            return real(["true"], timeout=10)
        other = locks.FileLock(gpulock.profiler_lock_path())
        self.assertTrue(other.acquire(wait=False))   # another submission's profile
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        got = []
        call = threading.Thread(target=lambda: got.append(ncu_run._run_ncu(
            Path("/usr/bin/ncu"), ["--section", "SourceCounters", "runner"], 10, None, "t", cancel=cancel)), daemon=True)
        proc.run = spy
        try:
            call.start()
            call.join(3.0)                 # called off after 0.3 s: it must not wait for the lock
            waited_out = call.is_alive()
        finally:
            other.release()                # (a call still waiting would take it now and return)
            call.join(10)
            proc.run = real
        self.assertFalse(waited_out, "the profile waited for the lock after it was called off")
        self.assertTrue(got[0].cancelled)
        self.assertEqual(started, [])
        # Not called off: it waits for the lock and runs.
        with gpulock.profiler_lock(cancel=threading.Event()) as got:
            self.assertTrue(got)

    def test_two_profiles_never_run_at_once(self):
        # Each jailed ncu has its own TMPDIR, so ncu's own lock file no longer serialises them.
        spans, lock = [], threading.Lock()

        def body():
            with gpulock.gpu_lock(shared=True), gpulock.profiler_lock():
                t0 = time.monotonic()
                time.sleep(0.2)
                with lock:
                    spans.append((t0, time.monotonic()))
        threads = [threading.Thread(target=body) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        spans.sort()
        self.assertEqual(len(spans), 3)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            self.assertLessEqual(end, start + 0.01)


class BatchOverlapTest(FakeGrading, unittest.TestCase):
    def spans(self, path):
        rows = [l.split() for l in path.read_text().splitlines()]
        return [(kind, who, float(a), float(b)) for kind, who, a, b in rows]

    def test_untimed_phases_of_a_batch_overlap_and_timings_run_alone(self):
        log = self.tmp / "spans.log"
        subs = [submission_dir(self.tmp, dict(SLOW, who=f"s{i}"), name=f"s{i}") for i in range(3)]
        g = fake_grader(self.course, self.tmp, verify_timing=False)
        with env(FAKE_RUNNER_SPANS_LOG=str(log)):
            errors = queue.work(subs, self.tmp / "out", g.grade, {"scan": 34}, lambda ev: None, "GPU", jobs=3)
        self.assertEqual(errors, 0)
        spans = self.spans(log)
        self.assertTrue(any(k == "timed" for k, *_ in spans), spans)
        for (k1, w1, a1, b1), (k2, w2, a2, b2) in itertools.combinations(spans, 2):
            if "timed" in (k1, k2) and a1 < b2 and a2 < b1:
                self.fail(f"a timed run overlapped another run: {k1} {w1} [{a1}, {b1}] and {k2} {w2} [{a2}, {b2}]")
        cases = [(w, a, b) for k, w, a, b in spans if k == "case"]
        self.assertTrue(any(w1 != w2 and a1 < b2 and a2 < b1
                            for (w1, a1, b1), (w2, a2, b2) in itertools.combinations(cases, 2)),
                        "no two submissions' correctness cases ran side by side")
        for i in range(3):
            grade = (self.tmp / "out" / f"s{i}" / "grade.json").read_text()
            self.assertIn(f'"{pipeline.GPU_WAIT}"', grade)

    def test_each_check_holds_the_gpu_as_its_table_says(self):
        held = []
        real = gpulock.gpu_lock

        def recording(device=None, shared=False):
            held.append((threading.current_thread().name.startswith("gpulab-conflicts"), shared))
            return real(device, shared)
        gpulock.gpu_lock = recording
        try:
            sub = self.grade(dict(SLOW, naive=dict(SLOW["naive"], sleep_s=0)), verify_timing=False)
        finally:
            gpulock.gpu_lock = real
        self.assertEqual(sub.points, sub.max_points)
        on_pipeline = [shared for conflicts_thread, shared in held if not conflicts_thread]
        # correctness, sanitizers shared; performance alone; library shared
        self.assertEqual(on_pipeline, [True, True, False, True])
        self.assertIn((True, True), held, "the bank-conflict profile holds the GPU shared on its own thread")
        self.assertEqual([name for name, _, hold in pipeline.CHECKS if hold == pipeline.ALONE], ["performance"])


class RunAgainAloneTest(FakeGrading, unittest.TestCase):
    """Out of device memory (or time) beside other submissions is not the student's doing until
    the run, repeated with the GPU alone, says so (checks/lab_run.shared_gpu_suspect)."""

    OOM = {"status": "error", "message": "cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)"}

    def phases(self, sub):
        return list(sub.labs[0].phases)

    def test_a_case_out_of_memory_beside_others_passes_when_run_alone(self):
        sub = self.grade(dict(GOOD, naive=dict(GOOD["naive"], oom_unless_alone=True)), verify_timing=False)
        naive = self.stage(sub, "naive")
        self.assertEqual(naive.checks["correctness"].points, 10, naive.checks["correctness"].summary)
        self.assertIn("correctness-alone", self.phases(sub))
        times = (self.tmp / "out" / "logs" / "scan" / "correctness-alone-times.txt").read_text()
        self.assertIn("3 cases run again with the GPU alone", times)

    def test_the_students_own_out_of_memory_still_fails(self):
        sub = self.grade(dict(GOOD, naive=self.OOM), verify_timing=False)
        check = self.stage(sub, "naive").checks["correctness"]
        self.assertEqual(check.points, 0)
        self.assertIn("out of memory", "\n".join(check.details))
        self.assertIn("correctness-alone", self.phases(sub))   # it was given its run alone

    def test_an_ordinary_failure_is_not_run_again(self):
        sub = self.grade(dict(GOOD, naive=dict(GOOD["naive"], fail_n=[1025])), verify_timing=False)
        self.assertEqual(self.stage(sub, "naive").checks["correctness"].summary, "2/3 cases pass")
        self.assertNotIn("correctness-alone", self.phases(sub))

    def test_a_sanitizer_out_of_memory_beside_others_is_clean_when_run_alone(self):
        oom = str(Path(__file__).parent / "fixtures" / "memcheck-oom-synthetic.log")
        with env(FAKE_SANITIZER_MEMCHECK=oom, FAKE_SANITIZER_UNLESS_ALONE="1"):
            sub = self.grade(GOOD, verify_timing=False)
        for sid in ("naive", "shared"):
            self.assertEqual(self.stage(sub, sid).checks["sanitizer"].points, 2, self.stage(sub, sid).checks["sanitizer"])
        self.assertIn("sanitizers-alone", self.phases(sub))
        with env(FAKE_SANITIZER_MEMCHECK=oom):   # out of memory even alone: the finding stands
            sub = self.grade(GOOD, verify_timing=False)
        self.assertEqual(self.stage(sub, "naive").checks["sanitizer"].points, 0)

    def test_a_real_sanitizer_finding_is_not_run_again(self):
        oob = str(Path(__file__).parent / "fixtures" / "memcheck-oob-synthetic.log")
        with env(FAKE_SANITIZER_MEMCHECK=oob):
            sub = self.grade(GOOD, verify_timing=False)
        self.assertEqual(self.stage(sub, "naive").checks["sanitizer"].points, 0)
        self.assertNotIn("sanitizers-alone", self.phases(sub))


if __name__ == "__main__":
    unittest.main()
