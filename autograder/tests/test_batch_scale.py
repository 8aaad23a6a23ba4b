"""Grading a batch on several GPUs of one host (--gpus), the Slurm script (--slurm-dry-run), the
plan (--plan) and the progress lines: a fake nvidia-smi lists the GPUs, fake workers
(tests/fakes/fake_batch_worker.py) grade with fake runners that log their CUDA_VISIBLE_DEVICES.
The real Slurm cluster test is tests/slurm_cluster_test.py."""

import csv
import json
import os
import contextlib
import io
import sys
import unittest

from gpulab import gpulock
from gpulab.batch import gradebook, local, plan, queue, slurm
from gpulab.commands import grade
from gpulab.errors import GpulabError
from tests.helpers import HERE, TempDir, env, make_course, run_cli, submission_dir

FAKES = HERE / "fakes"
WORKER = FAKES / "fake_batch_worker.py"
GPUS = "0,NVIDIA H100 80GB HBM3,GPU-aaaa;1,NVIDIA H100 80GB HBM3,GPU-bbbb;2,NVIDIA H200,GPU-cccc"
GOOD = {"naive": {"status": "pass", "median_ms": 2.0}, "shared": {"status": "pass", "median_ms": 1.0}}
MAXIMA = {"scan": 34.0}


def read_rows(out):
    with open(out / "gradebook.csv") as f:
        table = list(csv.reader(f))
    return {r[0]: dict(zip(table[0], r)) for r in table[1:]}


class ScaleTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.env = env(PATH=f"{FAKES}{os.pathsep}{os.environ['PATH']}", FAKE_GPUS=GPUS, GPULAB_FAKE_GPU="1",
                       GPULAB_NO_GPU=None, CUDA_VISIBLE_DEVICES=None, GPULAB_GPU_LOCK=str(self.tmp / "gpu.lock"),
                       GPULAB_NCU=str(FAKES / "fake_ncu.py"), GPULAB_COMPUTE_SANITIZER=str(FAKES / "fake_sanitizer.py"),
                       FAKE_RUNNER_DEVICE_LOG=str(self.tmp / "devices.log"), FAKE_WORKER_MARKS=str(self.tmp),
                       FAKE_WORKER_DIE_ON=None, FAKE_WORKER_HANG_ON=None,
                       GPULAB_SANDBOX_KEEP_ENV="FAKE_RUNNER_DEVICE_LOG",
                       PYTHONPATH=os.pathsep.join([str(HERE.parent)] + sys.path))
        self.env.__enter__()
        self.subs, self.out = self.tmp / "subs", self.tmp / "out"
        self.names = [f"s{i}" for i in range(6)]
        for n in self.names:
            submission_dir(self.tmp, dict(GOOD, who=n), name=n)
        self.lines = []

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def run_workers(self, devices, force=False):
        self.lines.clear()
        argv = lambda d: [sys.executable, str(WORKER), "--batch", str(self.subs), "--out", str(self.out), "--worker"]
        return local.run_workers(self.subs, self.out, devices, argv, MAXIMA, force=force, log=self.lines.append)

    def test_devices_from_nvidia_smi(self):
        devs = gpulock.select_devices("all")
        self.assertEqual([d.index for d in devs], ["0", "1", "2"])
        self.assertEqual(devs[2].label(), "NVIDIA H200 (GPU 2, GPU-cccc)")
        self.assertEqual([d.index for d in gpulock.select_devices("2,0")], ["2", "0"])
        with self.assertRaisesRegex(GpulabError, "no GPU 7; this machine has 0, 1, 2"):
            gpulock.select_devices("0,7")
        with self.assertRaisesRegex(GpulabError, "twice"):
            gpulock.select_devices("1,1")
        with env(FAKE_GPUS=""), self.assertRaisesRegex(GpulabError, "lists no GPU"):
            gpulock.select_devices("all")

    def test_one_lock_per_device(self):
        with env(CUDA_VISIBLE_DEVICES="2,3"):
            self.assertEqual(gpulock.lock_path().name, "gpu.lock.2")
        self.assertEqual(gpulock.lock_path().name, "gpu.lock.0")   # CUDA's default device
        self.assertNotEqual(gpulock.lock_path("GPU-aa/bb"), gpulock.lock_path("0"))

    def test_one_worker_per_gpu_each_row_says_its_gpu(self):
        devs = gpulock.select_devices("0,2")
        self.assertEqual(self.run_workers(devs), 0)
        rows = read_rows(self.out)
        self.assertEqual(sorted(rows), self.names)
        labels = {d.index: d.label() for d in devs}
        seen = {}
        for line in (self.tmp / "devices.log").read_text().splitlines():
            who, cvd = line.split()[:2]
            if who.startswith("s"):
                seen.setdefault(who, set()).add(cvd)
        for n, r in rows.items():
            self.assertEqual(r["status"], "graded", r)
            self.assertEqual(r["scan"], "34")
            # Every run of a student's code happened on the device its row names, and only there.
            self.assertEqual(len(seen[n]), 1, seen[n])
            self.assertEqual(r["gpu"], labels[seen[n].pop()])
        self.assertTrue(any("different models" in l for l in self.lines), self.lines)
        self.assertTrue(any(l.startswith("[6/6]") for l in self.lines), self.lines)
        # Both workers took part (the queue is shared through the claims).
        self.assertEqual({r["gpu"] for r in rows.values()}, set(labels.values()))

    def test_force_with_several_workers_regrades_each_once(self):
        devs = gpulock.select_devices("0,1")
        self.assertEqual(self.run_workers(devs), 0)
        self.assertEqual(self.run_workers(devs, force=True), 0)
        done = [l for l in self.lines if l.startswith("[")]
        self.assertEqual(len(done), 6, self.lines)

    def test_a_dead_worker_loses_only_its_submission(self):
        with env(FAKE_WORKER_DIE_ON="*@0"):   # the worker on GPU 0 is killed as it starts its first one
            errors = self.run_workers(gpulock.select_devices("0,1"))
        self.assertGreaterEqual(errors, 1)
        self.assertTrue(any("worker on NVIDIA H100 80GB HBM3 (GPU 0, GPU-aaaa) died (signal 9)" in l
                            for l in self.lines), self.lines)
        rows = read_rows(self.out)
        lost = set(self.names) - set(rows)
        # The other worker graded every other submission (and the lost one, if it had not passed it yet).
        self.assertLessEqual(len(lost), 1, rows)
        self.assertTrue(all(r["status"] == "graded" and "GPU 1" in r["gpu"] for r in rows.values()), rows)
        # The rerun grades only what has no row.
        log = self.tmp / "devices.log"
        log.write_text("")
        self.assertEqual(self.run_workers(gpulock.select_devices("0,1")), 0)
        self.assertEqual({l.split()[0] for l in log.read_text().splitlines() if l.startswith("s")}, lost)
        self.assertEqual(sorted(read_rows(self.out)), self.names)

    def test_claimed_submission_is_left_to_its_grader(self):
        with queue.claim(self.out, "s1") as mine:
            self.assertTrue(mine)
            with queue.claim(self.out, "s1") as other:
                self.assertFalse(other)


class SlurmScriptTest(TempDir, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.subs, self.out = self.tmp / "subs", self.tmp / "out"
        for n in ("a", "b", "c", "d", "e"):
            submission_dir(self.tmp, GOOD, name=n)
        self.printed = []

    def launch(self, **opts):
        self.printed.clear()
        return slurm.launch(self.subs, self.out, MAXIMA, ["python3", "-m", "gpulab", "grade", "--worker"],
                            slurm.Options(**opts), dry_run=True, env={"PYTHONPATH": "/x y"},
                            log=self.printed.append)

    def test_dry_run_script(self):
        res = self.launch(partition="gpu", gres="gpu:h100:1", time="01:00:00", array_limit=2, per_task=2)
        text = "\n".join(self.printed)
        self.assertEqual(res["tasks"], [["a", "b"], ["c", "d"], ["e"]])
        for want in ("#SBATCH --array=0-2%2", "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:h100:1",
                     "#SBATCH --time=01:00:00", "0) only=(--only=a --only=b) ;;", "2) only=(--only=e) ;;",
                     "export PYTHONPATH='/x y'", '--work "$work" "${only[@]}"', "-m gpulab gradebook",
                     "nothing submitted"):
            self.assertIn(want, text)
        self.assertFalse((self.out / ".batch").exists())   # a dry run writes nothing

    def test_no_gres_and_only_ungraded(self):
        (self.out / "b").mkdir(parents=True)
        (self.out / "b" / "grade.json").write_text(json.dumps({"name": "b", "labs": [], "device": ""}))
        res = self.launch(gres=None)
        self.assertNotIn("--gres", "\n".join(self.printed))
        self.assertEqual(res["tasks"], [["a"], ["c"], ["d"], ["e"]])

    def test_worker_command_keeps_grading_options_only(self):
        from gpulab import cli
        args = cli._parser().parse_args(
            ["grade", "--batch", "subs", "--out", "o", "--gpus", "0,1", "--jobs=3", "--no-conflicts", "--slurm",
             "--partition", "p", "--lab", "scan", "--lab", "transpose", "--force", "--per-task=4", "--stage", "naive"])
        cmd = grade.worker_command(args, ["--worker"])
        self.assertEqual(cmd[1:], ["-m", "gpulab", "grade", "--lab", "scan", "--lab", "transpose", "--stage", "naive",
                                   "--no-conflicts", "--worker"])


class PlanTest(TempDir, unittest.TestCase):
    def test_plan_from_measured_grades(self):
        subs, out = self.tmp / "subs", self.tmp / "out"
        for n in ("a", "b", "c", "d"):
            submission_dir(self.tmp, GOOD, name=n)
        (out / "a").mkdir(parents=True)
        (out / "a" / "grade.json").write_text(json.dumps(
            {"name": "a", "device": "H100", "labs": [{"lab": "scan", "status": "graded", "points": 1,
                                                      "build_seconds": 30, "seconds": 90, "not_run": []}]}))
        p = plan.estimate(subs, out, {"scan": 34}, {"scan": 500.0}, gpus=2, width=3, per_task=1, gpu=True)
        self.assertEqual((p.found, len(p.todo)), (4, 3))
        self.assertEqual(p.gpu_seconds_per_sub["scan"], 60)     # measured: 90 s graded - 30 s build
        self.assertTrue(p.measured["scan"])
        text = plan.format_plan(p)
        for want in ("4 found", "3 to grade", "scan", "GPU-minutes", "1 GPU", "2 GPUs", "Slurm array of 3"):
            self.assertIn(want, text)
        self.assertEqual(p.wall_seconds(1), 3 * 60 + 30)   # GPU serial, builds overlap, the first does not
        guessed = plan.estimate(subs, self.tmp / "none", {"scan": 34}, {"scan": 500.0})
        self.assertEqual((guessed.gpu_seconds_per_sub["scan"], guessed.measured["scan"]), (500.0, False))
        self.assertIn("guessed from the rubric", plan.format_plan(guessed))
        self.assertLess(p.wall_seconds(2), p.wall_seconds(1))


    def test_each_submission_costs_the_labs_it_hands_in(self):
        # A class folder holds one lab per student: planned as every lab of the course each, a
        # batch of 12 came out 7.4x too long (H200, 2026-11-30).
        from gpulab.submission import labs_handed_in
        for n in ("a", "b"):
            submission_dir(self.tmp, GOOD, name=n, where="labs/scan/scan.cu")
        for n in ("c", "d"):
            submission_dir(self.tmp, GOOD, name=n, where="labs/transpose/transpose.cu")
        (self.tmp / "subs" / "e.zip").write_bytes(b"PK")   # an archive: every lab, until unpacked
        wanted = {"scan": ["scan.cu"], "transpose": ["transpose.cu"]}
        self.assertEqual(labs_handed_in(self.tmp / "subs" / "a", wanted), ["scan"])
        self.assertEqual(labs_handed_in(self.tmp / "subs" / "c", wanted), ["transpose"])
        self.assertEqual(labs_handed_in(self.tmp / "subs" / "e.zip", wanted), ["scan", "transpose"])
        maxima, guess = {"scan": 34, "transpose": 30}, {"scan": 100.0, "transpose": 50.0}
        p = plan.estimate(self.tmp / "subs", self.tmp / "none", maxima, guess, gpus=2,
                          labs_of=lambda sub: labs_handed_in(sub, wanted))
        self.assertEqual(p.submission_gpu_seconds(), [100.0, 100.0, 50.0, 50.0, 150.0])
        self.assertEqual(p.gpu_seconds, 450.0)
        self.assertEqual((p.submissions_of("scan"), p.submissions_of("transpose")), (3, 3))
        self.assertIn("to grade", plan.format_plan(p))
        # Two GPUs, largest first to the least loaded: 150 + 50 and 100 + 100 + 50.
        self.assertEqual(p.wall_seconds(2), 250.0 + plan.BUILD_GUESS_S)
        every = plan.estimate(self.tmp / "subs", self.tmp / "none", maxima, guess, gpus=2)
        self.assertEqual(every.gpu_seconds, 5 * 150.0)


class RubricGuessTest(unittest.TestCase):
    def test_bank_conflict_profiles_overlap_the_cases_and_sanitizers(self):
        from types import SimpleNamespace as NS
        stage = lambda c, p: NS(sanitizer=1, conflict_free=c, performance=p)   # noqa: E731
        few = NS(cases=[1, 2], stages=[stage(4, 3), stage(4, 0), stage(4, 0)])
        # cases + sanitizers = 2 x 1.5 + 5 = 8 s, beside 3 profiles of 5 s: 15 s; one timed stage: 3 s.
        self.assertEqual(plan.rubric_seconds(few), 15 + 3)
        many = NS(cases=list(range(20)), stages=[stage(4, 3)])
        self.assertEqual(plan.rubric_seconds(many), 20 * 1.5 + 5 + 3)


class CommandLineTest(TempDir, unittest.TestCase):
    """The new options through `gpulab` itself: --plan, --slurm-dry-run, gradebook, bad input."""

    def setUp(self):
        super().setUp()
        self.course = make_course(self.tmp)
        self.env = env(GPULAB_BUILD_DIR=str(self.course.build), GPULAB_SOURCE_DIR=str(self.course.source),
                       PATH=f"{FAKES}{os.pathsep}{os.environ['PATH']}", FAKE_GPUS=GPUS)
        self.env.__enter__()
        for n in ("a", "b", "c"):
            submission_dir(self.tmp, GOOD, name=n)
        self.subs, self.out = str(self.tmp / "subs"), str(self.tmp / "out")

    def tearDown(self):
        self.env.__exit__(None, None, None)
        super().tearDown()

    def main(self, *argv):
        return run_cli(*argv)

    def test_plan(self):
        code, out, err = self.main("grade", "--batch", self.subs, "--out", self.out, "--plan", "--array-limit", "8")
        self.assertEqual(code, 0, err)
        for want in ("3 found", "3 to grade", "scan", "guessed from the rubric", "1 GPU", "3 GPUs (--gpus)",
                     "Slurm array of 8"):
            self.assertIn(want, out)
        self.assertFalse((self.tmp / "out" / "gradebook.csv").exists())
        code, out, err = self.main("grade", "--batch", self.subs, "--out", self.out, "--plan", "--format", "json")
        self.assertEqual(code, 0, err)
        doc = json.loads(out)
        self.assertEqual((doc["found"], doc["to_grade"], doc["in_flight"], doc["overlap"]), (3, 3, 4, 1.0))
        self.assertEqual(set(doc["wall_seconds"]), {"1", "3"})

    def test_slurm_dry_run(self):
        code, out, err = self.main("grade", "--batch", self.subs, "--out", self.out, "--slurm-dry-run",
                                   "--partition", "gpu", "--per-task", "2", "--no-conflicts", "--lab", "scan")
        self.assertEqual(code, 0, err)
        self.assertIn("#SBATCH --array=0-1", out)
        self.assertIn("#SBATCH --gres=gpu:1", out)
        self.assertIn(f"-m gpulab grade --lab scan --no-conflicts --batch {self.tmp / 'subs'} --out {self.tmp / 'out'} "
                      "--worker --jobs 4", out)
        self.assertIn(f"export GPULAB_BUILD_DIR={self.course.build}", out)

    def test_gradebook_command(self):
        code, _, err = self.main("gradebook", self.out)
        self.assertEqual(code, 2)
        self.assertIn("is not a folder", err)
        gradebook.write_batch_info(self.tmp / "out", {"scan": 34.0})
        (self.tmp / "out" / "a").mkdir()
        (self.tmp / "out" / "a" / "grade.json").write_text(json.dumps(
            {"name": "a", "device": "H100", "labs": [{"lab": "scan", "status": "graded", "points": 30, "not_run": []}]}))
        code, out, err = self.main("gradebook", self.out)
        self.assertEqual(code, 0, err)
        self.assertIn("1 rows: 1 graded", out)
        self.assertEqual(read_rows(self.tmp / "out")["a"]["total"], "30")

    def test_worker_mode_grades_its_share_and_reports_events(self):
        from gpulab import cli
        from tests.helpers import fake_grader
        args = cli._parser().parse_args(["grade", "--batch", self.subs, "--out", self.out, "--worker",
                                         "--only", "b", "--only", "c"])
        gradebook.write_batch_info(self.tmp / "out", {"scan": 34.0})
        stdout = io.StringIO()
        with env(GPULAB_FAKE_GPU="1", CUDA_VISIBLE_DEVICES="2", GPULAB_GPU_LOCK=str(self.tmp / "gpu.lock"),
                 GPULAB_NCU=str(FAKES / "fake_ncu.py"), GPULAB_COMPUTE_SANITIZER=str(FAKES / "fake_sanitizer.py")), \
                contextlib.redirect_stdout(stdout):
            code = grade.grade_batch(self.course, args, lambda: fake_grader(self.course, self.tmp))
        self.assertEqual(code, 0)
        events = [json.loads(l) for l in stdout.getvalue().splitlines()]
        self.assertEqual(sorted(e["name"] for e in events if e["ev"] == "done"), ["b", "c"])
        rows = read_rows(self.tmp / "out")
        self.assertEqual(sorted(rows), ["b", "c"])
        self.assertEqual(rows["b"]["gpu"], "NVIDIA H200 (GPU 2, GPU-cccc)")   # the worker's device, not GPU 0
        # On a node without a GPU the task's log says so and the row is honest about it.
        args.only, err = ["a"], io.StringIO()
        with env(GPULAB_NO_GPU="1", GPULAB_FAKE_GPU=None), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            code = grade.grade_batch(self.course, args, lambda: fake_grader(self.course, self.tmp))
        self.assertEqual(code, 4)
        self.assertIn("no GPU on", err.getvalue())
        self.assertEqual((read_rows(self.tmp / "out")["a"]["status"], read_rows(self.tmp / "out")["a"]["gpu"]),
                         ("incomplete: no GPU", "none"))

    def test_bad_combinations(self):
        code, _, err = self.main("grade", "--batch", self.subs, "--out", self.out, "--gpus", "0", "--slurm")
        self.assertEqual(code, 2)
        self.assertIn("separate ways", err)
        code, _, err = self.main("grade", self.subs, "--gpus", "0")
        self.assertEqual(code, 2)
        self.assertIn("--gpus needs --batch", err)
        code, _, err = self.main("grade", "--batch", self.subs, "--out", self.out, "--gpus", "5")
        self.assertEqual(code, 2)
        self.assertIn("no GPU 5", err)


if __name__ == "__main__":
    unittest.main()
