"""The real runner's out-of-process verdict (run --save-output, verify --output-dir) on a CPU stage:
the reference binary passes an honest output and fails a corrupted, truncated or missing one.
Skipped when the build tree has no transpose reference runner."""

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


if __name__ == "__main__":
    unittest.main()
