#!/usr/bin/env python3
"""`gpulab grade --batch --slurm` on a real single-node Slurm cluster (tests/slurm_cluster.sh:
Debian's slurmctld, slurmd and munge on localhost, started here and stopped at the end).

Three submissions (good, broken, empty) and one whose task is cancelled while it grades (a node
failure or preemption) go through sbatch as a job array plus the dependent gradebook job; the
tasks grade with fake runners (tests/fakes/fake_batch_worker.py: a real build is minutes), on a
node without a GPU. Asserted: the rows, the honest no-GPU outcome, no row for the cancelled task,
and that a rerun after deleting one row submits and regrades exactly what has no row.
Exit 77 (skipped) with the reason when the Slurm packages cannot be installed."""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from gpulab.batch import gradebook, slurm  # noqa: E402
from tests.helpers import submission_dir  # noqa: E402

CLUSTER = HERE / "slurm_cluster.sh"
WORKER = HERE / "fakes" / "fake_batch_worker.py"
GOOD = {"naive": {"status": "pass", "median_ms": 2.0}, "shared": {"status": "pass", "median_ms": 1.0}}
WAIT_S = 150


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


class SlurmClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        inst = sh("bash", CLUSTER, "install", timeout=600)
        if inst.returncode == 77:
            raise unittest.SkipTest(inst.stderr.strip())
        if inst.returncode != 0:
            raise RuntimeError(f"slurm_cluster.sh install failed: {inst.stderr}")
        cls.tmp = Path(tempfile.mkdtemp(prefix="gpulab-slurm-"))
        cls.state = cls.tmp / "cluster"
        start = sh("bash", CLUSTER, "start", cls.state, timeout=120)
        if start.returncode != 0:
            sh("bash", CLUSTER, "stop", cls.state, timeout=120)
            raise RuntimeError(f"the Slurm cluster did not start: {start.stderr}")
        os.environ["SLURM_CONF"] = str(cls.state / "slurm.conf")

    @classmethod
    def tearDownClass(cls):
        stop = sh("bash", CLUSTER, "stop", cls.state, timeout=120)
        os.environ.pop("SLURM_CONF", None)
        left = sh("pgrep", "-f", str(cls.state))
        shutil.rmtree(cls.tmp, ignore_errors=True)
        assert stop.returncode == 0 and left.returncode != 0, f"Slurm daemons left running: {left.stdout}"

    def setUp(self):
        self.subs, self.out = self.tmp / "subs", self.tmp / "out"
        submission_dir(self.tmp, GOOD, name="good")
        submission_dir(self.tmp, "// broken\n#error does not build\n", name="broken")
        (self.subs / "empty").mkdir(parents=True)
        (self.subs / "empty" / "README.md").write_text("nothing here\n")
        submission_dir(self.tmp, GOOD, name="preempted")
        self.env = dict(os.environ, GPULAB_NO_GPU="1", GPULAB_FAKE_GPU="", FAKE_WORKER_HANG_ON="preempted",
                        FAKE_WORKER_MARKS=str(self.tmp), GPULAB_GPU_LOCK=str(self.tmp / "gpu.lock"),
                        PYTHONPATH=os.pathsep.join([str(HERE.parent)] + [p for p in sys.path if p]))
        gradebook.write_batch_info(self.out, {"scan": 34.0})

    def launch(self):
        worker = [sys.executable, str(WORKER), "--batch", str(self.subs), "--worker", "--out", str(self.out)]
        log = []
        res = slurm.launch(self.subs, self.out, {"scan": 34.0}, worker, slurm.Options(gres=None, time="00:05:00"),
                           env=self.env, log=log.append)
        return res, "\n".join(log)

    def wait(self, jobs, until=lambda: False):
        """Until none of the jobs is in the queue (or `until()` holds); the queue on timeout."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            q = sh("squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T", env=self.env)
            if until() or (q.returncode == 0 and not q.stdout.strip()):
                return
            time.sleep(0.5)
        self.fail(f"Slurm jobs {jobs} still queued after {WAIT_S} s:\n{q.stdout}\n" + self.logs())

    def logs(self):
        return "\n".join(f"== {p.name}\n{p.read_text()[-1500:]}" for p in sorted((self.out / ".batch" / "slurm").glob("*.log")))

    def rows(self):
        with open(self.out / "gradebook.csv") as f:
            table = list(csv.reader(f))
        return {r[0]: dict(zip(table[0], r)) for r in table[1:]}

    def test_array_grades_and_rerun_regrades_only_missing_rows(self):
        res, said = self.launch()
        self.assertEqual(sorted(n for t in res["tasks"] for n in t), ["broken", "empty", "good", "preempted"])
        self.assertIn(f"submitted job array {res['array']}", said)
        # The "preempted" task hangs while grading: cancel it like a node failure would end it.
        claim = self.out / ".batch" / "claims" / "preempted.lock"
        marks = self.tmp / "hang-preempted"
        self.wait([res["array"]], until=marks.exists)
        self.assertTrue(marks.exists(), self.logs())
        idx = next(i for i, t in enumerate(res["tasks"]) if "preempted" in t)
        sh("scancel", f"{res['array']}_{idx}", env=self.env)
        self.wait([res["array"], res["gradebook"]])
        self.assertTrue(claim.exists())
        rows = self.rows()   # written by the dependent gradebook job (and by the tasks)
        self.assertTrue(list((self.out / ".batch" / "slurm").glob(f"gradebook-{res['gradebook']}.log")), self.logs())
        self.assertEqual(sorted(rows), ["broken", "empty", "good"], self.logs())
        self.assertFalse((self.out / "preempted" / "grade.json").exists())   # no partial row
        self.assertEqual((rows["good"]["status"], rows["good"]["gpu"], rows["good"]["max"]),
                         ("incomplete: no GPU", "none", "34"), rows["good"])
        self.assertIn("not run scan: correctness (no GPU)", rows["good"]["detail"])
        self.assertEqual((rows["broken"]["status"], rows["broken"]["scan"]), ("compile-error", "0"))
        self.assertEqual(rows["empty"]["status"], "error")
        self.assertIn("no lab's student files found", rows["empty"]["detail"])

        # Rerun after deleting good's row: only good and the cancelled one are submitted and graded.
        kept = {n: (self.out / n / "grade.json").stat().st_mtime_ns for n in ("broken", "empty")}
        (self.out / "good" / "grade.json").unlink()
        res2, _ = self.launch()
        self.assertEqual(sorted(n for t in res2["tasks"] for n in t), ["good", "preempted"])
        self.wait([res2["array"], res2["gradebook"]])
        rows = self.rows()
        self.assertEqual(sorted(rows), ["broken", "empty", "good", "preempted"], self.logs())
        self.assertEqual(rows["preempted"]["status"], "incomplete: no GPU")
        self.assertEqual({n: (self.out / n / "grade.json").stat().st_mtime_ns for n in kept}, kept)
        # Nothing left to grade on a machine without GPUs: a third run submits nothing.
        res3, said3 = self.launch()
        self.assertEqual(res3, {})
        self.assertIn("nothing submitted", said3)


if __name__ == "__main__":
    result = unittest.main(exit=False).result
    # ctest reports 77 as skipped (SKIP_RETURN_CODE), never as passed.
    sys.exit(1 if not result.wasSuccessful() else 77 if result.skipped and not result.testsRun - len(result.skipped) else 0)
