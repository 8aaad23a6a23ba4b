"""The real runner's out-of-process verdict (run --save-output, verify --output-dir) on a CPU stage:
the reference binary passes an honest output and fails a corrupted, truncated or missing one. And
every lab's GPU stages are judged on the host (Stage::checked_on_host): a GPU stage's verdict
needs no GPU, so it is tested here on a CPU stage's output of the same values. Skipped when the
build tree has no reference runner."""

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

BUILD = Path(os.environ.get("GPULAB_BUILD_DIR", "build/ci"))
RUNNER = BUILD / "labs" / "transpose" / "gpulab-transpose-reference"
PROBLEM = ["--n", "31x33", "--seed", "5"]


@unittest.skipUnless(RUNNER.is_file(), f"{RUNNER} not built")
class RunnerVerifyTest(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="gpulab-verify-"))
        saved = subprocess.run([RUNNER, "run", "--stage", "cpu", *PROBLEM, "--no-time", "--save-output", self.dir,
                                "--format", "json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(saved.returncode, 0, saved.stderr)
        self.bin = self.dir / "cpu.bin"

    def verify(self, *problem):
        res = subprocess.run([RUNNER, "verify", "--stage", "cpu", *(problem or PROBLEM), "--output-dir", self.dir,
                              "--format", "json"], capture_output=True, text=True, timeout=60)
        return res.returncode, json.loads(res.stdout)["results"][0]

    def test_honest_output_passes(self):
        code, row = self.verify()
        self.assertEqual((code, row["status"]), (0, "pass"))

    def test_one_flipped_byte_fails_with_its_index(self):
        data = bytearray(self.bin.read_bytes())
        data[-1] ^= 0x40
        self.bin.write_bytes(bytes(data))
        code, row = self.verify()
        self.assertEqual((code, row["status"]), (1, "fail"))
        self.assertIn("first at index 1022", row["message"])

    def test_truncated_output_fails(self):
        self.bin.write_bytes(self.bin.read_bytes()[:-4])
        code, row = self.verify()
        self.assertEqual((code, row["status"]), (1, "fail"))
        self.assertIn("bytes", row["message"])

    def test_output_for_another_problem_fails(self):
        code, row = self.verify("--n", "31x33", "--seed", "6")
        self.assertEqual((code, row["status"]), (1, "fail"))

    def test_missing_output_fails(self):
        self.bin.unlink()
        code, row = self.verify()
        self.assertEqual((code, row["status"]), (1, "fail"))
        self.assertIn("did not write it", row["message"])

    def test_forged_header_fails(self):
        body = self.bin.read_bytes().split(b"\n", 1)[1]
        self.bin.write_bytes(b"gpulab-output 1 scan cpu " + str(len(body)).encode() + b"\n" + body)
        code, row = self.verify()
        self.assertEqual((code, row["status"]), (1, "fail"))
        self.assertIn("is for scan/cpu", row["message"])


# (lab, a CPU stage, GPU stages whose output is the same values, a problem): the CPU stage's saved
# output, relabelled, is what an honest GPU stage would have saved.
SAME_OUTPUT = [
    ("scan", "cpu", ["naive", "three-round", "single-pass"], ["--n", "1025", "--seed", "3"]),
    ("scan", "cpu-compact", ["compact"], ["--n", "1025", "--seed", "3", "--param", "zeros=30"]),
    ("transpose", "cpu", ["naive", "padded", "in-place-sweep"], PROBLEM),
    ("reduction", "cpu", ["pipeline", "matrix"], ["--n", "4099", "--seed", "2", "--param", "op=interval"]),
    ("reduction", "cpu", ["tree"], ["--n", "4099", "--seed", "2", "--param", "op=max"]),   # tree runs sum and max only
]


def runner_of(lab):
    return BUILD / "labs" / lab / f"gpulab-{lab}-reference"


class SavedOutputs:
    """A CPU stage's saved output relabelled as another stage's, and `verify`'s verdict on it."""

    def save_as(self, lab, cpu_stage, gpu_stage, problem, folder):
        runner = runner_of(lab)
        saved = subprocess.run([runner, "run", "--stage", cpu_stage, *problem, "--no-time", "--save-output", folder,
                                "--format", "json"], capture_output=True, text=True, timeout=60)
        self.assertEqual(saved.returncode, 0, saved.stdout + saved.stderr)
        head, body = (folder / f"{cpu_stage}.bin").read_bytes().split(b"\n", 1)
        fields = head.split(b" ")
        fields[3] = gpu_stage.encode()
        (folder / f"{gpu_stage}.bin").write_bytes(b" ".join(fields) + b"\n" + body)
        return folder / f"{gpu_stage}.bin"

    def verdict(self, lab, stage, problem, folder):
        res = subprocess.run([runner_of(lab), "verify", "--stage", stage, *problem, "--output-dir", folder,
                              "--format", "json", "--require-gpu"],
                             capture_output=True, text=True, timeout=60, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        self.assertNotEqual(res.returncode, 77, f"{lab}/{stage}: verify asked for a GPU: {res.stderr}")
        return res.returncode, json.loads(res.stdout)["results"][0]


class HostVerdictTest(SavedOutputs, unittest.TestCase):
    """`verify` judges a GPU stage's saved output without a GPU (no CUDA context per verdict)."""

    def test_gpu_stages_are_judged_on_the_host(self):
        for lab, cpu_stage, stages, problem in SAME_OUTPUT:
            if not runner_of(lab).is_file():
                continue
            for stage in stages:
                with self.subTest(lab=lab, stage=stage), tempfile.TemporaryDirectory() as tmp:
                    saved = self.save_as(lab, cpu_stage, stage, problem, Path(tmp))
                    self.assertEqual(self.verdict(lab, stage, problem, Path(tmp))[1]["status"], "pass")
                    data = bytearray(saved.read_bytes())
                    data[-1] ^= 0x40
                    saved.write_bytes(bytes(data))
                    code, row = self.verdict(lab, stage, problem, Path(tmp))
                    self.assertEqual((code, row["status"]), (1, "fail"), row)

    def test_every_graded_gpu_stage_is_verified_on_the_host(self):
        labs = sorted(p.parent.name for p in BUILD.glob("labs/*/gpulab-*-reference"))
        if not labs:
            self.skipTest(f"no reference runner under {BUILD}")
        for lab in labs:
            listed = subprocess.run([runner_of(lab), "list", "--format", "json"], capture_output=True, text=True,
                                    timeout=60)
            for stage in json.loads(listed.stdout)["stages"]:
                if stage["role"] == "student":
                    with self.subTest(lab=lab, stage=stage["id"]):
                        self.assertTrue(stage["verified_on_host"])


# (lab, a CPU stage, the stage its output is saved as, the extra problem options): the sort labs
# set ArrayOutput::copied, so verify says of each pass whether a copy of the input passes too.
COPIES = [
    ("radix-sort", "cpu", "onesweep", []),
    ("radix-sort", "cpu", "onesweep", ["--param", "pairs=1"]),
    ("radix-sort", "cpu", "onesweep", ["--param", "key=f32"]),
    ("bitonic", "cpu", "phase4", []),
    ("shearsort", "cpu", "merge-pairwise", ["--param", "pairs=1"]),
    ("shearsort", "cpu-shear", "tile-shear-padded", []),
]


class InputIsAnswerTest(SavedOutputs, unittest.TestCase):
    """`verify` of a pass says `input_is_answer` (a copy of the input passes too: n = 1, equal or
    sorted keys), the grader's signal that a pass proves nothing alone (checks/correctness.py)."""

    def input_is_answer(self, lab, cpu_stage, stage, problem):
        with tempfile.TemporaryDirectory() as tmp:
            self.save_as(lab, cpu_stage, stage, problem, Path(tmp))
            code, row = self.verdict(lab, stage, problem, Path(tmp))
            self.assertEqual((code, row["status"]), (0, "pass"), row)
            return row.get("input_is_answer")

    def test_the_sort_labs_say_which_inputs_are_already_the_answer(self):
        for lab, cpu_stage, stage, extra in COPIES:
            if not runner_of(lab).is_file():
                continue
            for problem, want in ((["--n", "1"], True), (["--n", "3000", "--dist", "all-equal"], True),
                                  (["--n", "4099", "--dist", "sorted"], True),
                                  (["--n", "4099", "--dist", "uniform"], False), (["--n", "1025", "--dist", "reverse"], False)):
                with self.subTest(lab=lab, stage=stage, problem=problem + extra):
                    self.assertIs(self.input_is_answer(lab, cpu_stage, stage, problem + extra), want)

    def test_an_output_that_is_not_its_inputs_kind_says_nothing(self):
        # scan's prefix sums and transpose's matrix set no `copied`.
        for lab, stage, problem in (("scan", "naive", ["--n", "1025", "--dist", "sorted"]),
                                    ("transpose", "naive", ["--n", "31x33"])):
            if runner_of(lab).is_file():
                with self.subTest(lab=lab):
                    self.assertIsNone(self.input_is_answer(lab, "cpu", stage, problem))


if __name__ == "__main__":
    unittest.main()
